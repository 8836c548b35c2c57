//! Calibration: fits a GPU's kernel figures to kernel profiles, then its serving-engine
//! figures to real runs, each by minimising the log error of the simulator's own prediction.
//!
//! `cargo run --release -p opal-fidelity --bin fit` reruns both stages for the H100 and
//! prints the figures that go into `engine/src/hardware.rs`.

pub mod kernels;
mod nelder_mead;

use crate::report::median;
use crate::run::Run;
use engine::timing::Calibration;
use kernels::Profiles;
pub use nelder_mead::minimise;
use serde_json::{json, Value};

/// A calibration field and the range it may take.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    /// Field name in [`Calibration`].
    pub field: &'static str,
    /// Smallest value.
    pub lo: f64,
    /// Largest value.
    pub hi: f64,
}

const fn param(field: &'static str, lo: f64, hi: f64) -> Param {
    Param { field, lo, hi }
}

/// The kernel figures, by the profile group that determines them.
pub const KERNEL_GROUPS: [(&str, &[Param]); 6] = [
    (
        "gemm",
        &[
            param("gemm_compute_efficiency", 0.2, 1.0),
            param("gemm_memory_efficiency", 0.2, 1.0),
            param("gemm_knee", 1.0, 8.0),
            param("gemm_fixed_us", 0.0, 30.0),
        ],
    ),
    (
        "attention",
        &[
            param("prefill_attention_efficiency", 0.05, 1.0),
            param("prefill_attention_half_tokens", 0.0, 10000.0),
            // Fitted only where a profile has chunks over a cached prefix (see fit_kernels).
            param("prefix_attention_min_rows", 0.0, 50000.0),
            param("decode_attention_efficiency", 0.2, 1.0),
            param("attention_fixed_us", 0.0, 60.0),
            param("attention_per_seq_ns", 0.0, 2000.0),
        ],
    ),
    (
        "mixed attention",
        &[param("mixed_decode_attention_factor", 0.1, 1.0)],
    ),
    (
        "allreduce",
        &[
            param("allreduce_latency_us", 0.0, 60.0),
            param("allreduce_latency_per_gpu_us", 0.0, 20.0),
            param("allreduce_bus_gbps", 10.0, 2000.0),
        ],
    ),
    (
        "elementwise",
        &[
            param("elementwise_fixed_us", 0.0, 100.0),
            param("elementwise_efficiency", 0.05, 1.0),
        ],
    ),
    (
        // A per-kernel profile timed in a running layer (each kernel's input fresh from the
        // one before, so what fits in L2 is read from there). The `elementwise` group
        // (Vidur's H100 and A100 operators) leaves the speedup at 1, as those GPUs ship.
        "layer elementwise",
        &[
            param("elementwise_fixed_us", 0.0, 100.0),
            param("elementwise_efficiency", 0.05, 1.0),
            param("elementwise_l2_speedup", 1.0, 20.0),
        ],
    ),
];

/// The serving-engine figures fitted on real runs. The front end's split between input
/// and output delay, and its per-token tokenisation cost, cannot be told apart by end-to-end
/// latencies (both shift TTFT and E2E alike), so they keep their documented values.
pub const ENGINE_PARAMS: [Param; 5] = [
    param("step_overhead_us", 0.0, 5000.0),
    param("step_overhead_per_seq_us", 0.0, 100.0),
    param("step_overhead_per_gpu_us", 0.0, 3000.0),
    param("request_overhead_ms", 0.0, 60.0),
    param("moe_memory_efficiency", 0.3, 1.0),
];

/// `cal` with `values` written into `params`' fields.
pub fn with_values(cal: &Calibration, params: &[Param], values: &[f64]) -> Calibration {
    let mut v = serde_json::to_value(cal).expect("a calibration serialises");
    for (p, x) in params.iter().zip(values) {
        v[p.field] = json!(x);
    }
    serde_json::from_value(v).expect("the fields exist")
}

/// The current values of `params`' fields in `cal`.
pub fn values(cal: &Calibration, params: &[Param]) -> Vec<f64> {
    let v = serde_json::to_value(cal).expect("a calibration serialises");
    params
        .iter()
        .map(|p| v[p.field].as_f64().expect("numeric field"))
        .collect()
}

/// Soft-L1 loss of a log error `r` (scale 0.1): quadratic near 0, linear for outliers, so
/// a few noisy profile points do not pull the fit.
fn soft_l1(r: f64) -> f64 {
    let s = 0.1;
    2.0 * s * s * ((1.0 + (r / s).powi(2)).sqrt() - 1.0)
}

/// How well `cal` prices one profile group: median and 90th percentile of the absolute
/// percentage error, and the points.
pub fn group_errors(profiles: &Profiles, cal: &Calibration, group: &str) -> (f64, f64, usize) {
    let mut errs: Vec<f64> = profiles
        .predict(cal, group)
        .iter()
        .map(|(p, pt)| ((p - pt.measured) / pt.measured).abs() * 100.0)
        .collect();
    errs.sort_by(f64::total_cmp);
    let p90 = errs
        .get((errs.len() as f64 * 0.9) as usize)
        .copied()
        .unwrap_or(f64::NAN);
    (median(errs.clone()), p90, errs.len())
}

/// Fits each kernel group's figures to the profiles, starting from `start`.
pub fn fit_kernels(profiles: &Profiles, start: &Calibration) -> Calibration {
    let mut cal = start.clone();
    for (group, params) in KERNEL_GROUPS {
        if !profiles.points.iter().any(|p| p.group == group) {
            continue;
        }
        // Without a chunk over a cached prefix nothing constrains the prefix's figure, and
        // without all-reduces on more than one GPU count nothing constrains the latency's
        // per-GPU term: they keep their values.
        let params: Vec<Param> = params
            .iter()
            .copied()
            .filter(|p| p.field != "prefix_attention_min_rows" || profiles.has_prefix_chunks())
            .filter(|p| {
                p.field != "allreduce_latency_per_gpu_us" || profiles.has_allreduce_gpu_counts()
            })
            .collect();
        let params = params.as_slice();
        let base = cal.clone();
        let mut f = |x: &[f64]| {
            let c = with_values(&base, params, x);
            let preds = profiles.predict(&c, group);
            preds
                .iter()
                .map(|(p, pt)| soft_l1((p / pt.measured).ln()))
                .sum::<f64>()
                / preds.len() as f64
        };
        let lo: Vec<f64> = params.iter().map(|p| p.lo).collect();
        let hi: Vec<f64> = params.iter().map(|p| p.hi).collect();
        let (x, _) = minimise(&mut f, &values(&cal, params), &lo, &hi, 600);
        cal = with_values(&cal, params, &x);
    }
    cal
}

/// The scenario patch that replays a run on `gpu` (a catalogue name) with `cal`.
pub fn calibration_patch(gpu: &str, cal: &Calibration) -> Value {
    let cal = serde_json::to_value(cal).expect("a calibration serialises");
    json!({ "hardware": { "gpu": gpu }, "worker": { "timing": { "calibration": cal } } })
}

/// The runs' error under `cal`: the mean over runs of the squared log errors of mean TTFT,
/// p90 TTFT, mean E2E and mean ITL.
pub fn run_loss(runs: &[Run], gpu: &str, cal: &Calibration) -> f64 {
    let comparisons = crate::compare_all(runs, &calibration_patch(gpu, cal));
    comparisons
        .iter()
        .map(|c| {
            let p = c.pairs();
            [p[0], p[1], p[3], p[6]]
                .iter()
                .map(|(m, pr)| (pr / m).ln().powi(2))
                .sum::<f64>()
        })
        .sum::<f64>()
        / comparisons.len() as f64
}

/// Fits the serving-engine figures on `runs` (the scored training runs), starting from `start`.
pub fn fit_engine(runs: &[Run], gpu: &str, start: &Calibration, evals: usize) -> Calibration {
    let lo: Vec<f64> = ENGINE_PARAMS.iter().map(|p| p.lo).collect();
    let hi: Vec<f64> = ENGINE_PARAMS.iter().map(|p| p.hi).collect();
    let mut f = |x: &[f64]| run_loss(runs, gpu, &with_values(start, &ENGINE_PARAMS, x));
    let (x, _) = minimise(&mut f, &values(start, &ENGINE_PARAMS), &lo, &hi, evals);
    with_values(start, &ENGINE_PARAMS, &x)
}
