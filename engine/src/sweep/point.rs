//! What one run of a sweep reports: load, throughput, latency percentiles, the SLO and cost.

use crate::scenario::Scenario;
use crate::simulation::SimulationResults;
use crate::slo::SloSummary;
use crate::stats::LatencySummary;
use serde::Serialize;

/// One run's figures, pooled over every stage.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PointMetrics {
    /// Workers that existed in the run.
    pub workers: u32,
    /// The GPU type.
    pub gpu: String,
    /// GPUs in the run: workers × tensor parallelism.
    pub gpus: u32,
    /// Requests issued.
    pub requests: u64,
    /// Offered load: arrivals per second, (n − 1) / (last − first arrival).
    pub offered_rps: f64,
    /// Completed requests per second, first arrival to the end.
    pub achieved_rps: f64,
    /// Output tokens of completed requests per second.
    pub output_tps: f64,
    /// Time to first token of completed requests.
    pub ttft: LatencySummary,
    /// Time per output token.
    pub tpot: LatencySummary,
    /// End-to-end latency.
    pub e2e: LatencySummary,
    /// The whole run against the scenario's SLO, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slo: Option<SloSummary>,
    /// Price of one GPU for an hour (`hardware.cost_per_gpu_hour`, or the catalogue's).
    pub cost_per_gpu_hour: Option<f64>,
    /// GPUs × price per hour over output tokens per hour, per million tokens.
    pub cost_per_million_output_tokens: Option<f64>,
    /// The run ended before its workload did (a bound or limit; see `simulation.*`).
    pub truncated: bool,
}

impl PointMetrics {
    /// The figures of a finished run of `scenario`.
    #[inline]
    pub fn new(scenario: &Scenario, r: &SimulationResults) -> Self {
        let first = r
            .requests
            .iter()
            .map(|q| q.created)
            .fold(f64::INFINITY, f64::min);
        let last = r
            .requests
            .iter()
            .map(|q| q.created)
            .fold(f64::NEG_INFINITY, f64::max);
        let n = r.requests.len() as u64;
        let offered = if n >= 2 && last > first {
            (n - 1) as f64 / (last - first)
        } else {
            f64::NAN
        };
        let span = r.end_time - first;
        let done: Vec<_> = r.requests.iter().filter(|q| q.is_completed()).collect();
        let per_s = |x: f64| if span > 0.0 { x / span } else { f64::NAN };
        let tokens: u64 = done.iter().map(|q| q.output_tokens as u64).sum();
        let lat = |f: fn(&crate::stats::RequestRecord) -> f64| {
            LatencySummary::from_seconds(done.iter().map(|q| f(q)).collect())
        };
        let price = scenario.hardware.cost_per_gpu_hour();
        let (workers, gpus, dollars_per_hour) = match (&scenario.deployment, &r.deployment) {
            // Each pool's workers at its own tensor parallelism and its own GPU's price.
            (Some(d), Some(report)) => d.pools.iter().zip(&report.pools).fold(
                (0, 0, Some(0.0)),
                |(w, g, dollars), (pool, row)| {
                    let hw = pool
                        .effective_hardware(&scenario.hardware)
                        .unwrap_or_else(|_| scenario.hardware.clone());
                    let gpus = row.workers * hw.tp;
                    let cost = dollars
                        .zip(pool.cost_per_gpu_hour(&scenario.hardware))
                        .map(|(d, p)| d + gpus as f64 * p);
                    (w + row.workers, g + gpus, cost)
                },
            ),
            _ => {
                let workers = (r.workers.workers.len() as u32).max(scenario.simulation.num_workers);
                let gpus = workers * scenario.hardware.tp;
                (workers, gpus, price.map(|p| gpus as f64 * p))
            }
        };
        let output_tps = per_s(tokens as f64);
        let cost = dollars_per_hour
            .filter(|_| output_tps > 0.0)
            .map(|d| d / (output_tps * 3600.0) * 1e6);
        Self {
            workers,
            gpu: scenario.hardware.gpu.clone(),
            gpus,
            requests: n,
            offered_rps: offered,
            achieved_rps: per_s(done.len() as f64),
            output_tps,
            ttft: lat(crate::stats::RequestRecord::ttft),
            tpot: lat(crate::stats::RequestRecord::tpot),
            e2e: lat(crate::stats::RequestRecord::e2e),
            slo: r.slo.as_ref().map(|s| s.overall.clone()),
            cost_per_gpu_hour: price,
            cost_per_million_output_tokens: cost,
            truncated: r.truncated,
        }
    }

    /// Whether the run met its SLO (false without one).
    pub fn slo_met(&self) -> bool {
        self.slo.as_ref().is_some_and(|s| s.met)
    }
}
