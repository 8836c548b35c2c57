//! Step-time models: how long one scheduler step (one forward pass over the batch) takes.
//!
//! Three models (SPEC §4): a [`Roofline`] over the whole batch (default), the
//! original Opal's [`OpalAnalytical`] formula for side-by-side comparison, and
//! a constant step time for teaching and tests.

mod analytical;
mod calibrated;
mod roofline;

pub use analytical::OpalAnalytical;
pub use calibrated::calibration::ErrorBand;
pub use calibrated::calibration::{
    a100_calibration, b200_calibration, b300_calibration, h100_calibration, h200_calibration,
    l40s_calibration, rtx_4090_calibration, rtx_pro_6000_calibration,
};
pub use calibrated::{Calibrated, Calibration, StepBreakdown};
pub use roofline::{Roofline, StepWork};

use crate::hardware::{GpuSpec, Hardware};
use crate::model::Model;
use crate::validate::{join, Problems};
use serde::{Deserialize, Serialize};

/// Longest a single scheduler step may take, seconds: an hour, far beyond any real step,
/// so a mistyped figure is caught before it makes a run cover years.
pub const MAX_STEP_SECONDS: f64 = 3600.0;

/// Which step-time model a worker uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TimingKind {
    /// Kernel by kernel from the model's shapes, with per-GPU fitted efficiencies and the
    /// serving engine's overheads (see [`Calibrated`]).
    #[default]
    Calibrated,
    /// `max(compute time, memory time)` over the whole batch, plus overhead.
    Roofline,
    /// The original Opal formula: `max(longest prefill, decode batch)`.
    OpalAnalytical,
    /// A fixed time per step.
    Constant,
}

/// The timing part of the worker section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TimingConfig {
    /// `calibrated`, `roofline`, `opal-analytical` or `constant`. Default `calibrated`.
    pub model: TimingKind,
    /// Roofline: fraction of peak FLOP/s achieved (model FLOPs utilisation), in (0, 1].
    /// Default 0.5: well-tuned prefill kernels reach 40–60 % MFU on H100-class GPUs.
    pub compute_efficiency: f64,
    /// Roofline: fraction of peak HBM bandwidth achieved, in (0, 1]. Default 0.8: decode
    /// streams weights and KV sequentially, which sustains about 80 % of datasheet bandwidth.
    pub memory_efficiency: f64,
    /// Constant model: time of every step, seconds. Default 0.01.
    pub constant_step_time: f64,
    /// Opal-analytical model: attention coefficient `a` of the prefill formula. Default 4.
    pub opal_a: f64,
    /// Opal-analytical model: dense-matmul coefficient `b` (b·d² FLOPs per token per layer).
    /// Default 24.
    pub opal_b: f64,
    /// Calibrated model: the GPU's fitted figures, for a GPU the catalogue has no fit for
    /// or a refit of one. Default: the catalogue GPU's own (see [`calibration_for`]); the
    /// H100's for a custom GPU. Omitted fields keep the H100's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calibration: Option<Calibration>,
}

impl Default for TimingConfig {
    fn default() -> Self {
        Self {
            model: TimingKind::Calibrated,
            compute_efficiency: 0.5,
            memory_efficiency: 0.8,
            constant_step_time: 0.01,
            opal_a: analytical::DEFAULT_A,
            opal_b: analytical::DEFAULT_B,
            calibration: None,
        }
    }
}

/// The fitted figures of catalogue GPU `gpu` running vLLM: its own where it has a fit, else,
/// and for a custom GPU, the H100's (without the H100's error band: no real run measured
/// a custom GPU).
pub fn calibration_for(gpu: &GpuSpec) -> Calibration {
    if crate::hardware::lookup(&gpu.name).as_ref() != Some(gpu) {
        return Calibration::default();
    }
    match gpu.name.as_str() {
        "H200" => h200_calibration(),
        "B200" => b200_calibration(),
        "B300" => b300_calibration(),
        "A100-80GB" => a100_calibration(),
        "L40S" => l40s_calibration(),
        "RTX PRO 6000 Blackwell" => rtx_pro_6000_calibration(),
        "RTX 4090" => rtx_4090_calibration(),
        _ => h100_calibration(),
    }
}

impl TimingConfig {
    /// The calibrated model's figures for `hw`: this section's, else the GPU's own.
    pub fn calibration(&self, hw: &Hardware) -> Calibration {
        self.calibration
            .clone()
            .unwrap_or_else(|| calibration_for(&hw.gpu))
    }

    /// How far this section's predictions on `hw` land from real runs: the calibrated
    /// model's error band for its GPU, when real runs have measured one (none for the other
    /// models).
    pub fn error_band(&self, hw: &Hardware) -> Option<ErrorBand> {
        match self.model {
            TimingKind::Calibrated => self.calibration(hw).error_band,
            _ => None,
        }
    }

    /// What priced the steps on `hw`, in a line: the model and its figures (for the
    /// calibrated model, where its calibration comes from).
    pub fn describe(&self, hw: &Hardware) -> String {
        match self.model {
            TimingKind::Calibrated => format!("calibrated ({})", self.calibration(hw).source),
            TimingKind::Roofline => format!(
                "roofline (compute efficiency {}, memory efficiency {})",
                self.compute_efficiency, self.memory_efficiency
            ),
            TimingKind::OpalAnalytical => {
                format!("opal-analytical (a = {}, b = {})", self.opal_a, self.opal_b)
            }
            TimingKind::Constant => format!("constant ({} s per step)", self.constant_step_time),
        }
    }

    /// Reports every problem in this section under `path`.
    pub fn validate(&self, path: &str, problems: &mut Problems) {
        for (field, v) in [
            ("compute_efficiency", self.compute_efficiency),
            ("memory_efficiency", self.memory_efficiency),
        ] {
            if !(v > 0.0 && v <= 1.0) {
                problems.push(join(path, field), "must be in (0, 1]");
            }
        }
        let step = self.constant_step_time;
        if !(step > 0.0 && step <= MAX_STEP_SECONDS) {
            problems.push(
                join(path, "constant_step_time"),
                format!("must be > 0 and at most {} s", MAX_STEP_SECONDS),
            );
        }
        problems.non_negative(path, "opal_a", self.opal_a);
        problems.non_negative(path, "opal_b", self.opal_b);
        if let Some(cal) = &self.calibration {
            cal.validate(&join(path, "calibration"), problems);
        }
    }
}

/// The work one sequence does in a step, as the timing models see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeqWork {
    /// Tokens computed in this step (1 for decode, a chunk for prefill).
    pub new_tokens: u32,
    /// Tokens already in the KV cache before them (prefix or decode context).
    pub context: u32,
    /// True for a decode step (one generated token), false for (a chunk of) prefill.
    pub decode: bool,
}

/// What the serving engine's front end adds around the GPU, per request (all zero for the
/// models that price only the GPU).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FrontendDelays {
    /// From arrival at the server to arrival at the scheduler, seconds.
    pub request: f64,
    /// Added per prompt token (tokenisation), seconds.
    pub per_prompt_token: f64,
    /// From a token's step end to the client, seconds.
    pub token_output: f64,
}

/// A worker's step-time model, ready to price batches.
#[derive(Debug, Clone, PartialEq)]
pub enum TimingModel {
    /// See [`Calibrated`].
    Calibrated(Box<Calibrated>),
    /// See [`Roofline`].
    Roofline(Roofline),
    /// See [`OpalAnalytical`].
    OpalAnalytical(OpalAnalytical),
    /// Every non-empty step takes this long (seconds, overhead included).
    Constant(f64),
}

impl TimingModel {
    /// Builds the configured model for `model` on `hw`; `step_overhead` (s) is added to every step.
    pub fn new(cfg: &TimingConfig, model: &Model, hw: &Hardware, step_overhead: f64) -> Self {
        match cfg.model {
            TimingKind::Calibrated => {
                let cal = cfg.calibration(hw);
                TimingModel::Calibrated(Box::new(Calibrated::new(
                    model,
                    hw,
                    Some(&cal),
                    step_overhead,
                )))
            }
            TimingKind::Roofline => {
                TimingModel::Roofline(Roofline::new(cfg, model, hw, step_overhead))
            }
            TimingKind::OpalAnalytical => TimingModel::OpalAnalytical(
                OpalAnalytical::new(model, hw, step_overhead)
                    .with_coefficients(cfg.opal_a, cfg.opal_b),
            ),
            TimingKind::Constant => TimingModel::Constant(cfg.constant_step_time + step_overhead),
        }
    }

    /// The front end's per-request delays (calibrated model only).
    pub fn frontend(&self) -> FrontendDelays {
        match self {
            TimingModel::Calibrated(c) => {
                let cal = c.calibration();
                FrontendDelays {
                    request: cal.request_overhead_ms * 1e-3,
                    per_prompt_token: cal.request_overhead_per_token_us * 1e-6,
                    token_output: cal.token_output_ms * 1e-3,
                }
            }
            _ => FrontendDelays::default(),
        }
    }

    /// Duration of one step over `batch`, seconds (0 for an empty batch).
    pub fn step_time<I: IntoIterator<Item = SeqWork>>(&self, batch: I) -> f64 {
        match self {
            TimingModel::Calibrated(c) => c.step_time(batch),
            TimingModel::Roofline(r) => r.step_time(batch),
            TimingModel::OpalAnalytical(a) => a.step_time(batch),
            TimingModel::Constant(t) => {
                if batch.into_iter().next().is_some() {
                    *t
                } else {
                    0.0
                }
            }
        }
    }

    /// True when this model counts a batch's work as `peak` (a roofline at 100 % of a GPU's
    /// figures) does: a roofline of the same model and GPU, which can then price a step from
    /// that work alone (see [`TimingModel::step_time_of_work`]). Fixed for a run: asked once.
    pub fn counts_work_as(&self, peak: &Roofline) -> bool {
        matches!(self, TimingModel::Roofline(r) if r.same_work(peak))
    }

    /// Duration of one step over `batch` whose `work` at peak is already known: a model that
    /// [counts work as the peak roofline does](TimingModel::counts_work_as) (`same_work`)
    /// only divides it by its rates, without going over the batch again; the other models
    /// price the batch.
    pub fn step_time_of_work<I: IntoIterator<Item = SeqWork>>(
        &self,
        batch: I,
        same_work: bool,
        work: StepWork,
    ) -> f64 {
        match self {
            TimingModel::Roofline(r) if same_work => r.time_of(work),
            _ => self.step_time(batch),
        }
    }
}

/// Attention FLOPs of computing tokens `p+1..=n` with causal attention, over all layers.
///
/// Token `i` attends to `i` positions: QKᵀ and A·V each cost `2·d_attn·i` FLOPs per layer,
/// so the chunk costs `4·L·d_attn·Σ_{i=p+1..n} i = 2·L·d_attn·(n(n+1) − p(p+1))`.
/// A decode step (n = p + 1) is the special case `4·L·d_attn·(p + 1)`.
pub(crate) fn attention_flops(coeff: f64, p: u32, n: u32) -> f64 {
    let (p, n) = (p as f64, n as f64);
    coeff * (n * (n + 1.0) - p * (p + 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hardware::{catalogue, lookup, HardwareConfig};

    #[test]
    fn every_catalogue_gpu_has_a_valid_calibration_of_its_own_kind() {
        for g in catalogue() {
            let mut p = Problems::new();
            calibration_for(&g).validate("calibration", &mut p);
            assert!(p.as_slice().is_empty(), "{}: {:?}", g.name, p.as_slice());
        }
        let gpu = |name: &str| lookup(name).unwrap();
        assert_eq!(
            calibration_for(&gpu("rtx 4090")).allreduce_bus_gbps,
            25.0,
            "a PCIe Gen4 estimate"
        );
        // These have kernel figures of their own, the H100's serving engine.
        for (name, own) in [
            ("H200", h200_calibration()),
            ("B200", b200_calibration()),
            ("B300", b300_calibration()),
            ("A100-80GB", a100_calibration()),
            ("L40S", l40s_calibration()),
        ] {
            assert_eq!(calibration_for(&gpu(name)), own);
            assert_eq!(own.step_overhead_us, h100_calibration().step_overhead_us);
        }
    }

    #[test]
    fn a_custom_gpu_is_priced_with_the_h100_s_figures_unless_the_section_gives_its_own() {
        // A custom GPU named like a catalogue one, with other figures, is not that GPU.
        let mut custom = lookup("L40S").unwrap();
        custom.hbm_tbps = 2.0;
        let hw = HardwareConfig {
            gpu: "custom".into(),
            custom: Some(custom),
            ..Default::default()
        }
        .resolve()
        .unwrap();
        let mut cfg = TimingConfig::default();
        // The H100's figures, but not its error band: its real runs did not measure this GPU.
        assert_eq!(
            cfg.calibration(&hw),
            Calibration {
                error_band: None,
                ..h100_calibration()
            }
        );
        assert!(cfg.error_band(&hw).is_none());
        let mut own = l40s_calibration();
        own.source = "my fit".into();
        cfg.calibration = Some(own.clone());
        assert_eq!(cfg.calibration(&hw), own);
        assert_eq!(cfg.describe(&hw), "calibrated (my fit)");
    }

    #[test]
    fn the_section_s_calibration_is_checked_at_its_path() {
        let mut cal = h100_calibration();
        cal.gemm_compute_efficiency = 0.0;
        let cfg = TimingConfig {
            calibration: Some(cal),
            ..Default::default()
        };
        let mut p = Problems::new();
        cfg.validate("worker.timing", &mut p);
        let paths: Vec<&str> = p.as_slice().iter().map(|p| p.path.as_str()).collect();
        assert_eq!(paths, ["worker.timing.calibration.gemm_compute_efficiency"]);
    }
}
