//! A sweep point for tests of what draws and tabulates sweeps.

use opal::slo::SloSummary;
use opal::stats::LatencySummary;
use opal::sweep::{PointMetrics, SweepPoint};
use serde_json::Value;

/// Point `index` with axis `values`, an offered load of `offered` it keeps up with, 90
/// measured requests (of 100) long enough to judge, and an SLO met or not (`None`: none).
pub(crate) fn sample_point(
    index: usize,
    values: Vec<Value>,
    offered: f64,
    met: Option<bool>,
) -> SweepPoint {
    let empty = LatencySummary::empty();
    SweepPoint {
        index,
        values,
        metrics: Some(PointMetrics {
            workers: 2,
            gpu: "H100-SXM".into(),
            gpus: 2,
            requests: 100,
            measured_requests: 90,
            offered_rps: offered,
            achieved_rps: offered,
            output_tps: 1.0,
            overloaded: None,
            settled: true,
            ttft: empty,
            tpot: empty,
            e2e: empty,
            slo: met.map(|met| SloSummary {
                requests: 90,
                attained: 90,
                attainment: 1.0,
                goodput_rps: offered,
                goodput_output_tps: 1.0,
                percentiles: Vec::new(),
                overloaded: false,
                met,
                settled: true,
            }),
            cost_per_gpu_hour: None,
            cost_per_million_output_tokens: None,
            gpu_seconds: 2.0,
            cost_per_million_good_tokens: None,
            truncated: false,
            scale: 1,
            seeds: None,
        }),
        search: None,
        error: None,
    }
}
