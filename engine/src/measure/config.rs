//! The `measurement` section: which part of each stage a run is judged on.

use crate::validate::{join, Problems};
use serde::{Deserialize, Serialize};

/// A part of a stage kept out of the measurement, at its start (warm-up) or its end:
/// a share of its requests, a number of them, or the requests arriving within some seconds
/// of its first (or last) arrival. JSON: `{"fraction": 0.1}`, `{"requests": 200}` or
/// `{"seconds": 30}`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Span {
    /// This share (0 ≤ f < 1) of the stage's requests, rounded down.
    Fraction(f64),
    /// This many of the stage's requests.
    Requests(u64),
    /// The requests arriving within this many seconds of the stage's first (warm-up) or
    /// last (cool-down) arrival.
    Seconds(f64),
}

impl Span {
    fn validate(&self, path: &str, field: &str, p: &mut Problems) {
        let at = join(path, field);
        match *self {
            Span::Fraction(f) => {
                if f.is_nan() || !(0.0..1.0).contains(&f) {
                    p.push(join(&at, "fraction"), "must be at least 0 and below 1");
                }
            }
            Span::Requests(_) => {}
            Span::Seconds(s) => {
                if !(s.is_finite() && s >= 0.0) {
                    p.push(join(&at, "seconds"), "must be a finite number >= 0");
                }
            }
        }
    }
}

/// How a run is measured, as benchmarks do it: each stage's warm-up and cool-down are left
/// out, and so is the drain after its last arrival (only requests arriving inside the window
/// count). The window's requests give the latencies, the SLO's verdict and the rates; a
/// window whose throughput falls short of its offered load, or whose TTFT keeps growing,
/// is overloaded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MeasurementConfig {
    /// Left out at each stage's start: caches are cold and queues still filling. Default
    /// the first 10 % of its requests.
    pub warmup: Span,
    /// Left out at each stage's end, before its last arrival. Default none.
    pub cooldown: Span,
    /// Share of the offered load the window may fall short of before it counts as
    /// overloaded (beyond the arrivals' own noise). Default 0.05.
    pub throughput_tolerance: f64,
    /// Fewest requests in a window for a sweep or search to judge it (fewer: the run is
    /// lengthened). Default 2,000.
    pub min_requests: u64,
    /// Fewest window requests per worker, likewise. Default 100.
    pub min_requests_per_worker: u64,
    /// Shortest window for a sweep or search to judge it, in median end-to-end latencies
    /// of its requests: a queue that fills slowly (a batch growing until the KV cache is
    /// full) shows only once the requests in flight have turned over several times.
    /// Default 10.
    pub min_latencies: f64,
}

/// Warm-up share by default.
pub const DEFAULT_WARMUP_FRACTION: f64 = 0.1;

impl Default for MeasurementConfig {
    fn default() -> Self {
        Self {
            warmup: Span::Fraction(DEFAULT_WARMUP_FRACTION),
            cooldown: Span::Requests(0),
            throughput_tolerance: 0.05,
            min_requests: 2000,
            min_requests_per_worker: 100,
            min_latencies: 10.0,
        }
    }
}

impl MeasurementConfig {
    /// Whether this is the default (a document without the section).
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }

    /// Fewest window requests to judge a run on `workers` workers.
    pub fn enough_requests(&self, workers: u32) -> u64 {
        self.min_requests.max(
            self.min_requests_per_worker
                .saturating_mul(u64::from(workers)),
        )
    }

    /// Reports every problem in this section under `path`.
    pub fn validate(&self, path: &str, p: &mut Problems) {
        self.warmup.validate(path, "warmup", p);
        self.cooldown.validate(path, "cooldown", p);
        if let (Span::Fraction(a), Span::Fraction(b)) = (self.warmup, self.cooldown) {
            if a + b >= 1.0 {
                p.push(
                    join(path, "cooldown"),
                    "warm-up and cool-down together must leave some of each stage",
                );
            }
        }
        p.non_negative(path, "min_latencies", self.min_latencies);
        if self.min_latencies > 1000.0 {
            p.push(join(path, "min_latencies"), "must be at most 1000");
        }
        p.in_range(
            path,
            "throughput_tolerance",
            self.throughput_tolerance,
            0.0,
            1.0,
        );
    }
}
