//! What one run of a sweep reports: load, throughput, latency percentiles, the SLO and cost.

use super::bill::Bill;
use crate::scenario::Scenario;
use crate::simulation::SimulationResults;
use crate::slo::SloSummary;
use crate::stats::LatencySummary;
use serde::Serialize;

/// One run's figures, pooled over every stage.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PointMetrics {
    /// Workers that existed in the run (every one an autoscaler added counts).
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
    /// What the GPUs cost, per million output tokens: each pool's GPUs at its own GPU's
    /// price for the seconds they were provisioned from the first arrival to the end (see
    /// `sweep::Bill`), over the output tokens of completed requests.
    pub cost_per_million_output_tokens: Option<f64>,
    /// GPU-seconds billed (workers an autoscaler added from their request to their release).
    pub gpu_seconds: f64,
    /// The same cost over only the output tokens of requests that met the SLO (none
    /// without an SLO, or when none met it).
    pub cost_per_million_good_tokens: Option<f64>,
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
        let bill = Bill::new(scenario, r, first, r.end_time);
        let (workers, gpus) = (bill.workers(), bill.gpus());
        let output_tps = per_s(tokens as f64);
        let cost = bill.per_million(tokens);
        let good_tokens: Option<u64> = scenario.slo.as_ref().map(|c| {
            done.iter()
                .filter(|q| c.attains(q))
                .map(|q| q.output_tokens as u64)
                .sum()
        });
        let good_cost = good_tokens.and_then(|t| bill.per_million(t));
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
            gpu_seconds: bill.gpu_seconds(),
            cost_per_million_good_tokens: good_cost,
            truncated: r.truncated,
        }
    }

    /// Whether the run met its SLO (false without one).
    pub fn slo_met(&self) -> bool {
        self.slo.as_ref().is_some_and(|s| s.met)
    }
}
