//! The `simulation` section: seed, global bound, initial cluster size, and the limits that
//! keep any run finite.

use crate::validate::{join, Problems};
use serde::{Deserialize, Serialize};

/// Seed, global time bound, cluster size and work limits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimulationConfig {
    /// Seed every random stream derives from. Default 42.
    pub seed: u64,
    /// Stop the whole run at this simulated time (seconds); `null` runs until the workload
    /// is done. Default `null`.
    pub simulation_time: Option<f64>,
    /// Workers at the start (the autoscaler may change it). Default 1.
    pub num_workers: u32,
    /// Most requests a run may issue: a scenario expected to issue more is rejected, and a
    /// run that gets there stops. Default 10,000,000.
    #[serde(skip_serializing_if = "is_default_max_requests")]
    pub max_requests: u64,
    /// Most simulated seconds a run may cover: a scenario expected to need longer is
    /// rejected, and a run whose clock gets there stops. Default 100,000,000 (~3 years).
    #[serde(skip_serializing_if = "is_default_max_simulated_seconds")]
    pub max_simulated_seconds: f64,
    /// Most kernel events a run may process: a scenario expected to need more is rejected,
    /// and a run that gets there stops. Default 1,000,000,000.
    #[serde(skip_serializing_if = "is_default_max_events")]
    pub max_events: u64,
}

// The limits stay out of written documents (and share links) unless changed.
fn is_default_max_requests(n: &u64) -> bool {
    *n == DEFAULT_MAX_REQUESTS
}
fn is_default_max_simulated_seconds(s: &f64) -> bool {
    *s == DEFAULT_MAX_SIMULATED_SECONDS
}
fn is_default_max_events(n: &u64) -> bool {
    *n == DEFAULT_MAX_EVENTS
}

impl Default for SimulationConfig {
    fn default() -> Self {
        Self {
            seed: 42,
            simulation_time: None,
            num_workers: 1,
            max_requests: DEFAULT_MAX_REQUESTS,
            max_simulated_seconds: DEFAULT_MAX_SIMULATED_SECONDS,
            max_events: DEFAULT_MAX_EVENTS,
        }
    }
}

pub use crate::worker::MAX_WORKERS;
/// Default of `simulation.max_requests`.
pub const DEFAULT_MAX_REQUESTS: u64 = 10_000_000;
/// Default of `simulation.max_simulated_seconds`.
pub const DEFAULT_MAX_SIMULATED_SECONDS: f64 = 1e8;
/// Default of `simulation.max_events`.
pub const DEFAULT_MAX_EVENTS: u64 = 1_000_000_000;
/// Largest `max_simulated_seconds` (~32 years): the clock, an f64 of seconds, still
/// resolves a microsecond there (its spacing at 1e9 s is 1.2e-7 s).
pub(super) const MAX_SIMULATED_SECONDS_CEILING: f64 = 1e9;

impl SimulationConfig {
    /// Records every problem under `path`.
    pub fn validate(&self, path: &str, problems: &mut Problems) {
        if let Some(t) = self.simulation_time {
            problems.positive(path, "simulation_time", t);
        }
        if self.num_workers == 0 || self.num_workers > MAX_WORKERS {
            problems.push(
                join(path, "num_workers"),
                format!("must be between 1 and {MAX_WORKERS}"),
            );
        }
        if self.max_requests == 0 {
            problems.push(join(path, "max_requests"), "must be >= 1");
        }
        if self.max_events == 0 {
            problems.push(join(path, "max_events"), "must be >= 1");
        }
        let s = self.max_simulated_seconds;
        if s.is_nan() || s <= 0.0 || s > MAX_SIMULATED_SECONDS_CEILING {
            problems.push(
                join(path, "max_simulated_seconds"),
                format!(
                    "must be > 0 and at most {MAX_SIMULATED_SECONDS_CEILING:e} (past that the \
                     clock no longer resolves a microsecond)"
                ),
            );
        }
    }

    /// The time the run stops at: `simulation_time` or `max_simulated_seconds`, whichever
    /// comes first.
    pub fn time_bound(&self) -> f64 {
        self.simulation_time
            .unwrap_or(f64::INFINITY)
            .min(self.max_simulated_seconds)
    }
}
