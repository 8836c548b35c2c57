//! What one run of a sweep reports: load, throughput, latency percentiles, the SLO and cost,
//! all over the run's measurement windows (warm-up and drain left out).

use super::bill::Bill;
use engine::measure::{window_of, MeasuredWindow, Pooled};
use engine::scenario::Scenario;
use engine::simulation::SimulationResults;
use engine::slo::SloSummary;
use engine::stats::{LatencySummary, RequestRecord};
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
    /// Requests measured: those arriving in their stage's measurement window.
    pub measured_requests: u64,
    /// Offered load: arrivals per second of the windows (time-weighted over stages).
    pub offered_rps: f64,
    /// Requests completed per second of the windows (see `MeasuredWindow::served`).
    pub achieved_rps: f64,
    /// Output tokens of those completions per second.
    pub output_tps: f64,
    /// Why the load outran the cluster, when it did (the first overloaded stage): such a
    /// point misses every SLO whatever its percentiles say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overloaded: Option<String>,
    /// Long enough to judge: enough measured requests, and the verdict (the SLO's, or p99
    /// TTFT without one) the same on each half of the windows; an overloaded run is judged.
    pub settled: bool,
    /// Time to first token of measured, completed requests.
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
    /// How many times the requests its stages name the run made, lengthened until it could
    /// be judged (1: as written).
    pub scale: u32,
    /// With several seeds (`sweep.seeds`): how the figures spread across them. The figures
    /// above are the first seed's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seeds: Option<SeedSpread>,
}

/// How a point's figures spread across seeds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeedSpread {
    /// Seeds run.
    pub seeds: u32,
    /// Seeds meeting the SLO.
    pub met: u32,
    /// Seeds overloaded.
    pub overloaded: u32,
    /// Lowest and highest p99 TTFT, ms.
    pub p99_ttft_ms: [f64; 2],
    /// Lowest and highest p99 TPOT, ms.
    pub p99_tpot_ms: [f64; 2],
    /// Lowest and highest attainment (NaN without an SLO).
    pub attainment: [f64; 2],
}

impl SeedSpread {
    /// The spread of `runs` (one per seed).
    pub(crate) fn of(runs: &[PointMetrics]) -> Self {
        let range = |f: &dyn Fn(&PointMetrics) -> f64| {
            runs.iter()
                .map(f)
                .fold([f64::INFINITY, f64::NEG_INFINITY], |[lo, hi], x| {
                    [lo.min(x), hi.max(x)]
                })
        };
        Self {
            seeds: runs.len() as u32,
            met: runs.iter().filter(|r| r.slo_met()).count() as u32,
            overloaded: runs.iter().filter(|r| r.overloaded.is_some()).count() as u32,
            p99_ttft_ms: range(&|r| r.ttft.p99_ms),
            p99_tpot_ms: range(&|r| r.tpot.p99_ms),
            attainment: range(&|r| r.slo.as_ref().map_or(f64::NAN, |s| s.attainment)),
        }
    }
}

impl PointMetrics {
    /// The figures of a finished run of `scenario`.
    pub fn new(scenario: &Scenario, r: &SimulationResults) -> Self {
        let pooled = Pooled::of(&r.windows);
        let measured = |q: &&RequestRecord| window_of(&r.windows, q).is_some();
        let done: Vec<_> = r
            .requests
            .iter()
            .filter(measured)
            .filter(|q| q.is_completed())
            .collect();
        let lat = |f: fn(&RequestRecord) -> f64| {
            LatencySummary::from_seconds(done.iter().map(|q| f(q)).collect())
        };
        let price = scenario.hardware.cost_per_gpu_hour();
        // The GPUs over the measured span, against the tokens served in it.
        let from = r
            .windows
            .iter()
            .map(|w| w.start)
            .fold(f64::INFINITY, f64::min);
        let to = r
            .windows
            .iter()
            .map(|w| w.end)
            .fold(f64::NEG_INFINITY, f64::max);
        let bill = Bill::new(scenario, r, from, to);
        let (workers, gpus) = (bill.workers(), bill.gpus());
        let output_tps = pooled.output_tps;
        let cost = bill.per_million(output_tps);
        let good_cost = r
            .slo
            .as_ref()
            .and_then(|s| bill.per_million(s.overall.goodput_output_tps));
        Self {
            workers,
            gpu: scenario.hardware.gpu.clone(),
            gpus,
            requests: r.requests.len() as u64,
            measured_requests: pooled.requests,
            offered_rps: pooled.offered_rps,
            achieved_rps: pooled.achieved_rps,
            output_tps,
            overloaded: overload_note(&r.windows),
            settled: settled(scenario, r, pooled.requests),
            ttft: lat(RequestRecord::ttft),
            tpot: lat(RequestRecord::tpot),
            e2e: lat(RequestRecord::e2e),
            slo: r.slo.as_ref().map(|s| s.overall.clone()),
            cost_per_gpu_hour: price,
            cost_per_million_output_tokens: cost,
            gpu_seconds: bill.gpu_seconds(),
            cost_per_million_good_tokens: good_cost,
            truncated: r.truncated,
            scale: 1,
            seeds: None,
        }
    }

    /// Whether the run met its SLO (false without one, or overloaded; with several seeds,
    /// every seed must).
    pub fn slo_met(&self) -> bool {
        self.overloaded.is_none()
            && self.slo.as_ref().is_some_and(|s| s.met)
            && self.seeds.as_ref().is_none_or(|s| s.met == s.seeds)
    }
}

/// The first overloaded stage, in words.
fn overload_note(windows: &[MeasuredWindow]) -> Option<String> {
    let w = windows.iter().find(|w| w.overload.is_some())?;
    let o = w.overload.as_ref()?;
    Some(format!("stage {}: {}", w.stage, o.describe()))
}

/// Requests a judged tail must hold.
const TAIL_REQUESTS: f64 = 20.0;
/// Most measured requests the tail rule asks for (a p99.99 target would ask for 200,000).
const MAX_TAIL_NEED: f64 = 20_000.0;

/// A later half's p99 may rise this much (relatively, or in ms) over the first's.
const P99_AGREEMENT: f64 = 0.25;
const P99_AGREEMENT_MS: f64 = 5.0;

/// Whether a run is long enough to judge (see [`PointMetrics::settled`]).
fn settled(scenario: &Scenario, r: &SimulationResults, measured: u64) -> bool {
    if r.windows.iter().any(|w| w.overload.is_some()) {
        return true;
    }
    // A shortfall past the tolerance that the arrivals' noise could still explain.
    let tolerance = scenario.measurement.throughput_tolerance;
    if r.windows.iter().any(|w| w.shortfall > tolerance) {
        return false;
    }
    let workers = (r.workers.workers.len() as u32).max(scenario.simulation.num_workers);
    if measured < scenario.measurement.enough_requests(workers) {
        return false;
    }
    // A tail is judged on the requests in it: 20 beyond each percentile target (2,000
    // measured for a p99), and 20 misses' worth of room under `min_attainment`.
    if let Some(slo) = &scenario.slo {
        let tails = slo
            .targets()
            .filter_map(|(_, t)| t.p)
            .chain(slo.min_attainment.map(|a| a * 100.0));
        if tails
            .map(|p| TAIL_REQUESTS / (1.0 - p / 100.0).max(1e-6))
            .any(|need| (measured as f64) < need.min(MAX_TAIL_NEED))
        {
            return false;
        }
    }
    let k = scenario.measurement.min_latencies;
    if r.windows
        .iter()
        .any(|w| w.duration() < k * w.e2e.median_ms / 1000.0)
    {
        return false;
    }
    if r.slo.as_ref().is_some_and(|slo| !slo.overall.settled) {
        return false;
    }
    // p99 TTFT and TPOT no worse in the windows' later halves than in their first: a
    // system still drifting (decode memory filling, a queue building slowly) is not yet in
    // its steady state, even while its verdict holds. A fall is the warm-up's tail.
    let half = |later: bool, f: fn(&RequestRecord) -> f64| {
        let values: Vec<f64> = r
            .requests
            .iter()
            .filter(|q| q.is_completed())
            .filter(|q| window_of(&r.windows, q).is_some_and(|w| w.in_later_half(q) == later))
            .map(f)
            .collect();
        LatencySummary::from_seconds(values).p99_ms
    };
    [
        RequestRecord::ttft as fn(&RequestRecord) -> f64,
        RequestRecord::tpot,
    ]
    .into_iter()
    .all(|f| {
        let (a, b) = (half(false, f), half(true, f));
        let most = a + P99_AGREEMENT_MS.max(P99_AGREEMENT * a);
        // A half without values (NaN) is no rise.
        b.partial_cmp(&most) != Some(std::cmp::Ordering::Greater)
    })
}
