//! GPU catalogue and the hardware section of a scenario (GPU type, tensor parallelism).

use crate::validate::{join, Problems};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One GPU's datasheet figures: dense peaks, HBM bandwidth, memory. (How efficiently vLLM's
/// kernels use them is the timing model's: `timing::calibration_for`.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuSpec {
    /// Display name, e.g. `H100-SXM`.
    pub name: String,
    /// Dense bf16 peak, TFLOP/s (10¹² FLOP/s).
    pub peak_tflops: f64,
    /// Dense FP8 peak, TFLOP/s; 0 when the GPU has no FP8 matrix units (then FP8 weights
    /// compute in bf16, as vLLM's weight-only FP8 kernels do). Default 0.
    #[serde(default)]
    pub fp8_tflops: f64,
    /// Dense FP4 peak (NVFP4 / MXFP4 on both operands), TFLOP/s; 0 when the GPU has no FP4
    /// matrix units (Blackwell's are the first): then FP4 weights dequantise and compute at
    /// the bf16 peak, as vLLM's weight-only FP4 kernels (Marlin) do. Default 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fp4_tflops: f64,
    /// HBM bandwidth, TB/s (10¹² bytes/s).
    pub hbm_tbps: f64,
    /// HBM capacity, GB (the spec's memory formula counts a GB as 2³⁰ bytes).
    pub memory_gb: f64,
    /// L2 cache, MB (2²⁰ bytes): activations up to this size stay on chip between kernels
    /// (see `Calibration::elementwise_l2_speedup`). Default 0.
    #[serde(default)]
    pub l2_cache_mb: f64,
}

impl GpuSpec {
    fn new(
        name: &str,
        [peak_tflops, fp8_tflops, fp4_tflops]: [f64; 3],
        hbm_tbps: f64,
        memory_gb: f64,
        l2_cache_mb: f64,
    ) -> Self {
        Self {
            name: name.to_string(),
            peak_tflops,
            fp8_tflops,
            fp4_tflops,
            hbm_tbps,
            memory_gb,
            l2_cache_mb,
        }
    }

    /// Checks that every figure is a positive number.
    pub fn validate(&self, path: &str, problems: &mut Problems) {
        problems.positive(path, "peak_tflops", self.peak_tflops);
        problems.non_negative(path, "fp8_tflops", self.fp8_tflops);
        problems.non_negative(path, "fp4_tflops", self.fp4_tflops);
        problems.positive(path, "hbm_tbps", self.hbm_tbps);
        problems.positive(path, "memory_gb", self.memory_gb);
        problems.non_negative(path, "l2_cache_mb", self.l2_cache_mb);
    }
}

/// The built-in GPUs, in display order.
pub fn catalogue() -> Vec<GpuSpec> {
    // Peaks are dense (no 2:4 sparsity), bf16 / FP8 / FP4, TFLOP/s.
    vec![
        GpuSpec::new("H100-SXM", [989.5, 1979.0, 0.0], 3.35, 80.0, 50.0),
        // Same Hopper die and NVLink as the H100, more and faster HBM.
        GpuSpec::new("H200", [989.0, 1979.0, 0.0], 4.8, 141.0, 50.0),
        // HGX B200 at 1,000 W: two dies as one GPU, 180 GB of HBM3e (NVIDIA's datasheet).
        GpuSpec::new("B200", [2250.0, 4500.0, 9000.0], 8.0, 180.0, 126.0),
        // HGX B300 (Blackwell Ultra): the B200's bf16 and FP8, 1.5x its FP4, 288 GB of
        // HBM3e, of which CUDA reports 268.6 GB (2^30 bytes).
        GpuSpec::new("B300", [2250.0, 4500.0, 14000.0], 8.0, 268.6, 126.0),
        GpuSpec::new("A100-80GB", [312.0, 0.0, 0.0], 2.039, 80.0, 40.0),
        GpuSpec::new("L40S", [362.0, 733.0, 0.0], 0.864, 48.0, 96.0),
        // Bf16 and FP8 with FP32 accumulation (vLLM's), dense; memory as CUDA reports it.
        GpuSpec::new(
            "RTX PRO 6000 Blackwell",
            [503.8, 1007.6, 2015.2],
            1.792,
            94.97,
            128.0,
        ),
        // GeForce: FP32 accumulation runs at half the FP16-accumulate rate.
        GpuSpec::new("RTX 4090", [165.2, 330.3, 0.0], 1.008, 23.52, 72.0),
    ]
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

fn is_one(v: &u32) -> bool {
    *v == 1
}

/// Most data-parallel ranks in one worker (vLLM's wide expert-parallel deployments reach
/// 32-72 GPUs in one group).
pub const MAX_DP: u32 = 128;

/// The catalogue entry called `name` (case-insensitive).
pub fn lookup(name: &str) -> Option<GpuSpec> {
    catalogue()
        .into_iter()
        .find(|g| g.name.eq_ignore_ascii_case(name))
}

/// The `hardware` section: which GPU each worker has and how many (tensor parallel).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HardwareConfig {
    /// Catalogue GPU name (`H100-SXM`, `H200`, `B200`, `B300`, `A100-80GB`, `L40S`,
    /// `RTX PRO 6000 Blackwell`, `RTX 4090`) or `custom`. Default `H100-SXM`.
    pub gpu: String,
    /// Figures of a custom GPU; required when `gpu` is `custom`. Default none.
    pub custom: Option<GpuSpec>,
    /// Tensor-parallel degree: GPUs per data-parallel rank (multiplies memory, FLOP/s,
    /// bandwidth). Default 1.
    pub tp: u32,
    /// Data-parallel attention ranks in one worker (vLLM `--data-parallel-size`, for
    /// mixture-of-experts models): each rank holds the attention and dense weights (over its
    /// `tp` GPUs) and its own KV cache and batch limits, and every MoE layer spans all
    /// `dp × tp` GPUs. Default 1.
    #[serde(skip_serializing_if = "is_one")]
    pub dp: u32,
    /// Expert parallelism (vLLM `--enable-expert-parallel`): each of the `dp × tp` GPUs holds
    /// whole experts, a share of them, and a layer waits for the GPU routed the most work;
    /// otherwise every expert is split over those GPUs. Default false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub expert_parallel: bool,
    /// All-reduce cost per transformer layer per step when `tp > 1`, seconds. Default 0.
    pub allreduce_latency_per_layer: f64,
    /// Price of one GPU for an hour, for cost per million tokens. Default: the catalogue's
    /// nominal figure for the GPU (see [`list_price`]); none for a custom GPU.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_per_gpu_hour: Option<f64>,
    /// Your price of each GPU type for an hour, by catalogue name (e.g. `{"H100-SXM": 2.4,
    /// "L40S": 0.9}`), replacing the catalogue's figure where `cost_per_gpu_hour` is not set;
    /// so a sweep over `hardware.gpu` prices every type at your rates. Default none.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub gpu_prices: BTreeMap<String, f64>,
}

/// Nominal on-demand cloud price of one catalogue GPU for an hour, US dollars: round
/// figures for comparing GPU types, not quotes; set `hardware.cost_per_gpu_hour` for yours.
pub fn list_price(gpu: &str) -> Option<f64> {
    const PRICES: [(&str, f64); 8] = [
        ("H100-SXM", 3.0),
        ("H200", 3.8),
        ("B200", 6.0),
        ("B300", 7.5),
        ("A100-80GB", 1.8),
        ("L40S", 1.0),
        ("RTX PRO 6000 Blackwell", 1.8),
        ("RTX 4090", 0.7),
    ];
    PRICES
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(gpu))
        .map(|&(_, p)| p)
}

impl Default for HardwareConfig {
    fn default() -> Self {
        Self {
            gpu: "H100-SXM".into(),
            custom: None,
            tp: 1,
            dp: 1,
            expert_parallel: false,
            allreduce_latency_per_layer: 0.0,
            cost_per_gpu_hour: None,
            gpu_prices: BTreeMap::new(),
        }
    }
}

impl HardwareConfig {
    /// Reads a `hardware` section from a JSON tree (types only; see [`Self::validate`]).
    pub fn from_tree(tree: &serde_json::Value) -> Result<Self, String> {
        crate::tracked::read(tree).map_err(|e| e.to_string())
    }

    /// Reports every problem in this section under `path`.
    pub fn validate(&self, path: &str, problems: &mut Problems) {
        if self.tp == 0 {
            problems.push(join(path, "tp"), "must be >= 1");
        }
        if !(1..=MAX_DP).contains(&self.dp) {
            problems.push(
                join(path, "dp"),
                format!("must be between 1 and {MAX_DP} ranks"),
            );
        }
        if self.expert_parallel && self.tp.saturating_mul(self.dp) < 2 {
            problems.push(
                join(path, "expert_parallel"),
                "needs at least 2 GPUs to spread the experts over (tp × dp)",
            );
        }
        problems.non_negative(
            path,
            "allreduce_latency_per_layer",
            self.allreduce_latency_per_layer,
        );
        if let Some(c) = self.cost_per_gpu_hour {
            problems.non_negative(path, "cost_per_gpu_hour", c);
        }
        let prices = join(path, "gpu_prices");
        for (gpu, &price) in &self.gpu_prices {
            if list_price(gpu).is_none() {
                problems.push(
                    join(&prices, gpu),
                    format!(
                        "no catalogue GPU is called \"{gpu}\" (a custom GPU is priced by cost_per_gpu_hour)"
                    ),
                );
            } else {
                problems.non_negative(&prices, gpu, price);
            }
        }
        if self.gpu.eq_ignore_ascii_case("custom") {
            match &self.custom {
                Some(spec) => spec.validate(&join(path, "custom"), problems),
                None => problems.push(
                    join(path, "custom"),
                    "required when gpu is \"custom\" (peak_tflops, hbm_tbps, memory_gb)",
                ),
            }
        } else if lookup(&self.gpu).is_none() {
            problems.push(join(path, "gpu"), unknown_gpu(&self.gpu));
        }
    }

    /// GPUs in one worker: `dp × tp`.
    pub fn gpus(&self) -> u32 {
        self.tp.max(1).saturating_mul(self.dp.max(1))
    }

    /// The price of one GPU for an hour: `cost_per_gpu_hour`, else this GPU type's entry
    /// in `gpu_prices`, else the catalogue's figure.
    pub fn cost_per_gpu_hour(&self) -> Option<f64> {
        self.cost_per_gpu_hour.or_else(|| {
            self.gpu_prices
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case(&self.gpu))
                .map(|(_, &price)| price)
                .or_else(|| list_price(&self.gpu))
        })
    }

    /// The worker's hardware, or a message saying what is wrong.
    pub fn resolve(&self) -> Result<Hardware, String> {
        let mut problems = Problems::new();
        self.validate("hardware", &mut problems);
        if let Some(p) = problems.as_slice().first() {
            return Err(p.to_string());
        }
        let gpu = match &self.custom {
            Some(spec) if self.gpu.eq_ignore_ascii_case("custom") => spec.clone(),
            _ => lookup(&self.gpu).ok_or_else(|| unknown_gpu(&self.gpu))?,
        };
        Ok(Hardware {
            gpu,
            tp: self.tp,
            dp: self.dp,
            expert_parallel: self.expert_parallel,
            allreduce_latency_per_layer: self.allreduce_latency_per_layer,
        })
    }
}

fn unknown_gpu(name: &str) -> String {
    let names: Vec<String> = catalogue().into_iter().map(|g| g.name).collect();
    format!(
        "unknown GPU \"{name}\"; choose one of {} or \"custom\"",
        names.join(", ")
    )
}

/// A worker's resolved hardware: one GPU type times the tensor-parallel degree.
#[derive(Debug, Clone, PartialEq)]
pub struct Hardware {
    /// The GPU type.
    pub gpu: GpuSpec,
    /// Tensor-parallel degree of each data-parallel rank (≥ 1).
    pub tp: u32,
    /// Data-parallel attention ranks (≥ 1); the MoE layers span `dp × tp` GPUs.
    pub dp: u32,
    /// Whether those GPUs hold whole experts (expert parallelism) or a slice of each.
    pub expert_parallel: bool,
    /// All-reduce cost per layer per step when `tp > 1`, seconds.
    pub allreduce_latency_per_layer: f64,
}

impl Hardware {
    /// `tp` GPUs of type `gpu` in one rank, no expert or data parallelism, all-reduces priced
    /// by the timing model.
    pub fn tensor_parallel(gpu: GpuSpec, tp: u32) -> Self {
        Self {
            gpu,
            tp,
            dp: 1,
            expert_parallel: false,
            allreduce_latency_per_layer: 0.0,
        }
    }

    /// GPUs in one worker: `dp × tp`.
    pub fn gpus(&self) -> u32 {
        self.tp.max(1).saturating_mul(self.dp.max(1))
    }

    /// Peak dense FLOP/s of one rank's `tp` GPUs together.
    pub fn peak_flops(&self) -> f64 {
        self.gpu.peak_tflops * 1e12 * self.tp as f64
    }

    /// HBM bandwidth of one rank's `tp` GPUs together, bytes/s.
    pub fn bandwidth(&self) -> f64 {
        self.gpu.hbm_tbps * 1e12 * self.tp as f64
    }

    /// HBM capacity of one rank's `tp` GPUs together, bytes (GB = 2³⁰ bytes).
    pub fn memory_bytes(&self) -> f64 {
        self.gpu.memory_gb * (1u64 << 30) as f64 * self.tp as f64
    }

    /// All-reduce time added to every step of a model with `layers` layers, seconds.
    pub fn allreduce_time(&self, layers: u32) -> f64 {
        if self.tp > 1 {
            self.allreduce_latency_per_layer * layers as f64
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_one_h100() {
        let hw = HardwareConfig::default().resolve().unwrap();
        assert_eq!(hw.gpu.name, "H100-SXM");
        // 989.5 TFLOP/s, 3.35 TB/s, 80·2³⁰ bytes.
        assert_eq!(hw.peak_flops(), 989.5e12);
        assert_eq!(hw.bandwidth(), 3.35e12);
        assert_eq!(hw.memory_bytes(), 85_899_345_920.0);
    }

    #[test]
    fn tensor_parallel_multiplies_everything() {
        let cfg = HardwareConfig {
            gpu: "a100-80gb".into(),
            tp: 4,
            ..Default::default()
        };
        let hw = cfg.resolve().unwrap();
        assert_eq!(hw.peak_flops(), 1248e12);
        assert!((hw.bandwidth() / 8.156e12 - 1.0).abs() < 1e-15);
        assert_eq!(hw.memory_bytes(), 4.0 * 85_899_345_920.0);
    }

    #[test]
    fn problems_name_their_fields() {
        let cfg = HardwareConfig {
            gpu: "custom".into(),
            custom: Some(GpuSpec::new("x", [0.0, 0.0, 0.0], 1.0, 1.0, 0.0)),
            tp: 0,
            ..Default::default()
        };
        let mut p = Problems::new();
        cfg.validate("hardware", &mut p);
        let paths: Vec<&str> = p.as_slice().iter().map(|p| p.path.as_str()).collect();
        assert_eq!(paths, ["hardware.tp", "hardware.custom.peak_tflops"]);
        let unknown = HardwareConfig {
            gpu: "MI355X".into(),
            ..Default::default()
        };
        assert!(unknown
            .resolve()
            .unwrap_err()
            .contains("unknown GPU \"MI355X\""));
    }

    #[test]
    fn a_gpu_is_priced_by_the_field_then_your_table_then_the_catalogue() {
        let mut cfg = HardwareConfig {
            gpu: "L40S".into(),
            ..Default::default()
        };
        assert_eq!(cfg.cost_per_gpu_hour(), Some(1.0));
        cfg.gpu_prices = [("H100-SXM".to_string(), 2.4), ("l40s".to_string(), 0.8)].into();
        assert_eq!(cfg.cost_per_gpu_hour(), Some(0.8));
        cfg.gpu = "H100-SXM".into();
        assert_eq!(cfg.cost_per_gpu_hour(), Some(2.4));
        cfg.gpu = "H200".into();
        assert_eq!(cfg.cost_per_gpu_hour(), Some(3.8));
        cfg.cost_per_gpu_hour = Some(5.0);
        assert_eq!(cfg.cost_per_gpu_hour(), Some(5.0));
    }

    #[test]
    fn every_catalogue_gpu_has_a_price_and_valid_figures() {
        for g in catalogue() {
            assert!(list_price(&g.name).is_some(), "{}", g.name);
            let mut p = Problems::new();
            g.validate("gpu", &mut p);
            assert!(p.as_slice().is_empty(), "{}: {:?}", g.name, p.as_slice());
        }
    }

    #[test]
    fn gpu_prices_name_catalogue_gpus_and_are_not_negative() {
        let cfg = HardwareConfig {
            gpu_prices: [("MI355X".to_string(), 5.0), ("H200".to_string(), -1.0)].into(),
            ..Default::default()
        };
        let mut p = Problems::new();
        cfg.validate("hardware", &mut p);
        let paths: Vec<&str> = p.as_slice().iter().map(|p| p.path.as_str()).collect();
        assert_eq!(
            paths,
            ["hardware.gpu_prices.H200", "hardware.gpu_prices.MI355X"]
        );
        assert!(p.as_slice()[1].message.contains("no catalogue GPU"));
    }

    #[test]
    fn unknown_fields_are_rejected() {
        let e = serde_json::from_str::<HardwareConfig>(r#"{"gpus": "H200"}"#).unwrap_err();
        assert!(e.to_string().contains("unknown field `gpus`"));
        let ok: HardwareConfig = serde_json::from_str(r#"{"gpu": "H200"}"#).unwrap();
        assert_eq!(ok.tp, 1);
    }
}
