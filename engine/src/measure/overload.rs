//! Overload: a window whose arrivals outrun what the cluster serves. Two tests, either
//! enough: the throughput falls short of the offered load, or TTFT keeps growing across the
//! window (a trend, not a threshold on one percentile).

use super::config::MeasurementConfig;
use crate::stats::percentile::percentile_sorted;
use crate::stats::RequestRecord;
use serde::Serialize;

/// Why a window is overloaded.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Overload {
    /// Fewer requests finished over the window than arrived in it, beyond the tolerance
    /// and the arrivals' noise: a queue that grows without bound.
    Throughput {
        /// Arrivals per second.
        offered_rps: f64,
        /// Requests finished per second (completed or failed).
        served_rps: f64,
    },
    /// The median TTFT of each eighth of the window (by arrival) rises (Mann–Kendall
    /// S ≥ 20 of 28, p < 0.01), and the last eighth's is at least twice the first's.
    GrowingTtft {
        /// Median TTFT of the window's first eighth, ms.
        first_ms: f64,
        /// Median TTFT of its last eighth, ms (∞, `null` in JSON, when unfinished).
        last_ms: f64,
    },
}

impl Overload {
    /// One line for a person.
    pub fn describe(&self) -> String {
        match self {
            Overload::Throughput {
                offered_rps,
                served_rps,
            } => format!("served {served_rps:.2} req/s of {offered_rps:.2} offered"),
            Overload::GrowingTtft { first_ms, last_ms } => format!(
                "median TTFT grew from {} to {} across the window",
                ms(*first_ms),
                ms(*last_ms)
            ),
        }
    }
}

fn ms(x: f64) -> String {
    if x.is_infinite() {
        "unfinished".into()
    } else if x >= 1000.0 {
        format!("{:.2} s", x / 1000.0)
    } else {
        format!("{x:.1} ms")
    }
}

/// Blocks the trend test splits a window into.
const BLOCKS: usize = 8;
/// Mann–Kendall's S over 8 values is at most 28; S ≥ 20 has p ≈ 0.007 without a trend.
const MK_CRITICAL: i32 = 20;
/// The last block's median TTFT must be at least this many times the first's.
const GROWTH: f64 = 2.0;

/// Whether a window is overloaded: `inside` are its requests by arrival, `finished` the
/// stage's requests finished over the shifted window.
pub(crate) fn detect(
    config: &MeasurementConfig,
    inside: &[&RequestRecord],
    requests: u64,
    finished: u64,
    offered_rps: f64,
    served_rps: f64,
) -> Option<Overload> {
    // In steady state the shifted window's completions match the window's arrivals but
    // for the requests at its two edges: a shortfall of three standard deviations of those
    // (≤ √n) and more than the tolerance is a queue growing.
    let shortfall = requests.saturating_sub(finished) as f64;
    let n = requests as f64;
    if requests >= 2 && shortfall > (config.throughput_tolerance * n).max(3.0 * n.sqrt()) {
        return Some(Overload::Throughput {
            offered_rps,
            served_rps,
        });
    }
    growing_ttft(inside)
}

/// The trend test on TTFT.
fn growing_ttft(inside: &[&RequestRecord]) -> Option<Overload> {
    let n = inside.len();
    if n < BLOCKS * 8 {
        return None;
    }
    let medians: Vec<f64> = (0..BLOCKS)
        .map(|b| {
            let block = &inside[b * n / BLOCKS..(b + 1) * n / BLOCKS];
            let mut ttft: Vec<f64> = block
                .iter()
                .filter(|r| r.failed.is_none())
                .map(|r| {
                    if r.first_token.is_nan() {
                        f64::INFINITY
                    } else {
                        r.ttft()
                    }
                })
                .collect();
            ttft.sort_by(f64::total_cmp);
            percentile_sorted(&ttft, 50.0)
        })
        .collect();
    if medians.iter().any(|m| m.is_nan()) {
        return None;
    }
    let s: i32 = (0..BLOCKS)
        .flat_map(|i| (i + 1..BLOCKS).map(move |j| (i, j)))
        .map(|(i, j)| match medians[j].total_cmp(&medians[i]) {
            std::cmp::Ordering::Greater => 1,
            std::cmp::Ordering::Less => -1,
            std::cmp::Ordering::Equal => 0,
        })
        .sum();
    let (first, last) = (medians[0], medians[BLOCKS - 1]);
    (s >= MK_CRITICAL && last >= GROWTH * first).then_some(Overload::GrowingTtft {
        first_ms: first * 1000.0,
        last_ms: last * 1000.0,
    })
}
