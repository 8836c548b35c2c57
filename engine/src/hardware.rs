//! GPU catalogue and the hardware section of a scenario (GPU type, tensor parallelism).

use crate::timing::Calibration;
use crate::validate::{join, Problems};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One GPU's datasheet figures (dense peaks, HBM bandwidth, memory) and the fitted
/// efficiencies of vLLM's kernels on it.
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
    /// HBM bandwidth, TB/s (10¹² bytes/s).
    pub hbm_tbps: f64,
    /// HBM capacity, GB (the spec's memory formula counts a GB as 2³⁰ bytes).
    pub memory_gb: f64,
    /// L2 cache, MB (2²⁰ bytes): activations up to this size stay on chip between kernels
    /// (see `Calibration::elementwise_l2_speedup`). Default 0.
    #[serde(default)]
    pub l2_cache_mb: f64,
    /// Kernel efficiencies and serving overheads for the calibrated timing model.
    /// Default: the H100's.
    #[serde(default)]
    pub calibration: Calibration,
}

impl GpuSpec {
    fn new(
        name: &str,
        peak_tflops: f64,
        fp8_tflops: f64,
        hbm_tbps: f64,
        memory_gb: f64,
        l2_cache_mb: f64,
        calibration: Calibration,
    ) -> Self {
        Self {
            name: name.to_string(),
            peak_tflops,
            fp8_tflops,
            hbm_tbps,
            memory_gb,
            l2_cache_mb,
            calibration,
        }
    }

    /// Checks that every figure is a positive number.
    pub fn validate(&self, path: &str, problems: &mut Problems) {
        problems.positive(path, "peak_tflops", self.peak_tflops);
        problems.non_negative(path, "fp8_tflops", self.fp8_tflops);
        problems.positive(path, "hbm_tbps", self.hbm_tbps);
        problems.positive(path, "memory_gb", self.memory_gb);
        problems.non_negative(path, "l2_cache_mb", self.l2_cache_mb);
        self.calibration
            .validate(&join(path, "calibration"), problems);
    }
}

/// The H100 SXM's calibration. Kernel figures: fitted on the H100 per-layer profiles of
/// vLLM 0.14's kernels (AIConfigurator's database) and Vidur's H100 elementwise operators;
/// serving-engine figures: fitted on the 10 training runs of vLLM v0.15.1 on H100 SXM
/// (inference-sim's measurements). `cargo run --release -p opal-fidelity --bin fit`
/// reproduces them (see fidelity/README.md).
pub fn h100_calibration() -> Calibration {
    Calibration {
        source: "H100 SXM, vLLM v0.15.1: kernel profiles (AIConfigurator, Vidur) and 10 real runs"
            .into(),
        gemm_compute_efficiency: 0.803,
        gemm_memory_efficiency: 0.882,
        gemm_knee: 6.69,
        gemm_fixed_us: 3.11,
        // No bf16 fused-MoE profile with real routing exists: the compute side is the FP8
        // Scout profile's large-batch efficiency, the memory side fitted on the Mixtral runs.
        moe_compute_efficiency: 0.45,
        moe_memory_efficiency: 0.832,
        moe_knee: 6.69,
        prefill_attention_efficiency: 0.601,
        prefill_attention_half_tokens: 1316.0,
        decode_attention_efficiency: 0.955,
        // AIConfigurator's profiles time decode and prefill batches apart.
        mixed_decode_attention_factor: 1.0,
        attention_fixed_us: 11.8,
        attention_per_seq_ns: 54.4,
        elementwise_fixed_us: 18.1,
        elementwise_efficiency: 0.558,
        // Vidur's elementwise operators show no cache effect to fit.
        elementwise_l2_speedup: 1.0,
        allreduce_latency_us: 4.28,
        allreduce_latency_per_gpu_us: 0.40,
        allreduce_bus_gbps: 244.0,
        // With async scheduling (vLLM's default) the scheduler's CPU time overlaps the GPU;
        // what remains exposed per step is small.
        step_overhead_us: 145.0,
        step_overhead_per_seq_us: 1.30,
        step_overhead_per_gpu_us: 2.69,
        request_overhead_ms: 6.18,
        // The split of the front end's delay between input and output, and tokenisation's
        // cost per token, shift TTFT and E2E alike and cannot be fitted apart on these runs:
        // these two are nominal (one detokenise-and-stream hop; a fast tokenizer's ~1 µs).
        request_overhead_per_token_us: 1.0,
        token_output_ms: 2.0,
        // vLLM's KV block counts of the four H100 runs at gpu_memory_utilization 0.9 leave
        // 1.15 GiB (tp 1) and 1.60–1.64 GiB (tp 2, 4) per GPU besides weights and KV; less
        // the activation peak of a 2048-token profile step, 0.94 GiB plus 0.45 GiB with TP.
        memory_reserved_gb: 0.94,
        memory_reserved_tp_gb: 0.45,
    }
}

/// The A100's calibration: GEMM and elementwise figures fitted on Vidur's A100 operator
/// profiles (Llama-3-8B, tp 1–8); attention efficiencies as on the H100 (no A100 profile);
/// all-reduce bus bandwidth scaled from the H100's by NVLink 3 over NVLink 4 (600/900 GB/s);
/// serving-engine figures as on the H100 (same vLLM; no A100 run to fit them on), and so are
/// the MoE efficiencies with their knee.
pub fn a100_calibration() -> Calibration {
    Calibration {
        source: "A100 80GB: Vidur operator profiles; attention and serving engine as H100".into(),
        gemm_compute_efficiency: 0.726,
        gemm_memory_efficiency: 0.787,
        gemm_knee: 1.71,
        gemm_fixed_us: 4.66,
        elementwise_fixed_us: 17.2,
        elementwise_efficiency: 0.461,
        allreduce_bus_gbps: 244.0 * 600.0 / 900.0,
        ..h100_calibration()
    }
}

/// The L40S's calibration: no kernel profile or run exists for it here, so the H100's
/// efficiencies apply to its own peaks, and its all-reduce runs over PCIe Gen4 (no NVLink):
/// about 25 GB/s of bus bandwidth and 10 µs of latency.
pub fn l40s_calibration() -> Calibration {
    Calibration {
        source: "L40S: H100 efficiencies on the L40S datasheet; PCIe all-reduce".into(),
        allreduce_latency_us: 10.0,
        allreduce_bus_gbps: 25.0,
        ..h100_calibration()
    }
}

/// The RTX PRO 6000 Blackwell's calibration (Server Edition; no NVLink). Kernel figures:
/// fitted on the per-kernel profile of vLLM 0.19 on this GPU (casys-kaist/LLMServingSim's
/// profiler: a one-layer Llama-3.1-8B's GEMMs, LM head, elementwise kernels and attention
/// grid) by `cargo run --release -p opal-fidelity --bin fit -- --gpu "RTX PRO 6000 Blackwell"`.
/// Not fittable from a kernel profile, so carried over: the serving engine's CPU and
/// front-end figures, the MoE efficiencies with the knee they were fitted with (the H100's),
/// and the all-reduce, which runs over PCIe Gen5: the L40S's Gen4 figures with twice the
/// bus bandwidth.
pub fn rtx_pro_6000_calibration() -> Calibration {
    Calibration {
        source: "RTX PRO 6000 Blackwell: vLLM 0.19 kernel profile; serving engine as H100".into(),
        gemm_compute_efficiency: 0.788,
        gemm_memory_efficiency: 0.891,
        gemm_knee: 1.62,
        gemm_fixed_us: 6.56,
        prefill_attention_efficiency: 0.601,
        prefill_attention_half_tokens: 307.0,
        decode_attention_efficiency: 0.786,
        // vLLM 0.19 runs a step's decodes with a prefill chunk in one varlen kernel, without
        // the decode-only path's KV splits: 1.9x slower (median 16 % off on the profile's
        // 1,000 mixed batches; 28 % when priced as decodes alone).
        mixed_decode_attention_factor: 0.533,
        attention_fixed_us: 9.52,
        attention_per_seq_ns: 143.0,
        // A layer's elementwise bytes up to its 128 MB L2 (~780 tokens of Llama-3.1-8B) move
        // 3.6x faster than HBM (median 4.3 % off on the profile's 152 token counts; 58 %
        // with HBM alone, whose fit stopped at its bound); past it, HBM at full speed.
        elementwise_fixed_us: 10.2,
        elementwise_efficiency: 1.0,
        elementwise_l2_speedup: 3.64,
        allreduce_latency_us: 10.0,
        allreduce_bus_gbps: 50.0,
        ..h100_calibration()
    }
}

/// The RTX 4090's calibration: no kernel profile or run exists for it here, so as the L40S
/// (the same AD102 die, its all-reduce over PCIe Gen4): the H100's efficiencies on its own
/// datasheet peaks.
pub fn rtx_4090_calibration() -> Calibration {
    Calibration {
        source: "RTX 4090: H100 efficiencies on the RTX 4090 datasheet; PCIe all-reduce".into(),
        ..l40s_calibration()
    }
}

/// The built-in GPUs, in display order.
pub fn catalogue() -> Vec<GpuSpec> {
    vec![
        GpuSpec::new(
            "H100-SXM",
            989.5,
            1979.0,
            3.35,
            80.0,
            50.0,
            h100_calibration(),
        ),
        // Same Hopper die and NVLink as the H100, more and faster HBM.
        GpuSpec::new("H200", 989.0, 1979.0, 4.8, 141.0, 50.0, h100_calibration()),
        GpuSpec::new(
            "A100-80GB",
            312.0,
            0.0,
            2.039,
            80.0,
            40.0,
            a100_calibration(),
        ),
        GpuSpec::new("L40S", 362.0, 733.0, 0.864, 48.0, 96.0, l40s_calibration()),
        // Bf16 and FP8 with FP32 accumulation (vLLM's), dense; memory as CUDA reports it.
        GpuSpec::new(
            "RTX PRO 6000 Blackwell",
            503.8,
            1007.6,
            1.792,
            94.97,
            128.0,
            rtx_pro_6000_calibration(),
        ),
        // GeForce: FP32 accumulation runs at half the FP16-accumulate rate.
        GpuSpec::new(
            "RTX 4090",
            165.2,
            330.3,
            1.008,
            23.52,
            72.0,
            rtx_4090_calibration(),
        ),
    ]
}

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
    /// Catalogue GPU name (`H100-SXM`, `H200`, `A100-80GB`, `L40S`, `RTX PRO 6000 Blackwell`,
    /// `RTX 4090`) or `custom`. Default `H100-SXM`.
    pub gpu: String,
    /// Figures of a custom GPU; required when `gpu` is `custom`. Default none.
    pub custom: Option<GpuSpec>,
    /// Tensor-parallel degree: GPUs per worker (multiplies memory, FLOP/s, bandwidth). Default 1.
    pub tp: u32,
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
    const PRICES: [(&str, f64); 6] = [
        ("H100-SXM", 3.0),
        ("H200", 3.8),
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
            allreduce_latency_per_layer: 0.0,
            cost_per_gpu_hour: None,
            gpu_prices: BTreeMap::new(),
        }
    }
}

impl HardwareConfig {
    /// Reads a `hardware` section from a JSON tree (types only; see [`Self::validate`]).
    #[inline]
    pub fn from_tree(tree: &serde_json::Value) -> Result<Self, String> {
        crate::scenario::tracked::read(tree).map_err(|e| e.to_string())
    }

    /// Reports every problem in this section under `path`.
    pub fn validate(&self, path: &str, problems: &mut Problems) {
        if self.tp == 0 {
            problems.push(join(path, "tp"), "must be >= 1");
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
    /// Tensor-parallel degree (≥ 1).
    pub tp: u32,
    /// All-reduce cost per layer per step when `tp > 1`, seconds.
    pub allreduce_latency_per_layer: f64,
}

impl Hardware {
    /// Peak dense FLOP/s of all `tp` GPUs together.
    pub fn peak_flops(&self) -> f64 {
        self.gpu.peak_tflops * 1e12 * self.tp as f64
    }

    /// HBM bandwidth of all `tp` GPUs together, bytes/s.
    pub fn bandwidth(&self) -> f64 {
        self.gpu.hbm_tbps * 1e12 * self.tp as f64
    }

    /// HBM capacity of all `tp` GPUs together, bytes (GB = 2³⁰ bytes).
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
            custom: Some(GpuSpec::new(
                "x",
                0.0,
                0.0,
                1.0,
                1.0,
                0.0,
                h100_calibration(),
            )),
            tp: 0,
            ..Default::default()
        };
        let mut p = Problems::new();
        cfg.validate("hardware", &mut p);
        let paths: Vec<&str> = p.as_slice().iter().map(|p| p.path.as_str()).collect();
        assert_eq!(paths, ["hardware.tp", "hardware.custom.peak_tflops"]);
        let unknown = HardwareConfig {
            gpu: "B200".into(),
            ..Default::default()
        };
        assert!(unknown
            .resolve()
            .unwrap_err()
            .contains("unknown GPU \"B200\""));
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
    fn every_catalogue_gpu_has_a_price_and_a_valid_calibration() {
        for g in catalogue() {
            assert!(list_price(&g.name).is_some(), "{}", g.name);
            let mut p = Problems::new();
            g.validate("gpu", &mut p);
            assert!(p.as_slice().is_empty(), "{}: {:?}", g.name, p.as_slice());
        }
        assert_eq!(
            lookup("rtx 4090").map(|g| g.calibration.allreduce_bus_gbps),
            Some(25.0),
            "PCIe Gen4, as the L40S"
        );
    }

    #[test]
    fn gpu_prices_name_catalogue_gpus_and_are_not_negative() {
        let cfg = HardwareConfig {
            gpu_prices: [("B200".to_string(), 5.0), ("H200".to_string(), -1.0)].into(),
            ..Default::default()
        };
        let mut p = Problems::new();
        cfg.validate("hardware", &mut p);
        let paths: Vec<&str> = p.as_slice().iter().map(|p| p.path.as_str()).collect();
        assert_eq!(
            paths,
            ["hardware.gpu_prices.B200", "hardware.gpu_prices.H200"]
        );
        assert!(p.as_slice()[0].message.contains("no catalogue GPU"));
    }

    #[test]
    fn unknown_fields_are_rejected() {
        let e = serde_json::from_str::<HardwareConfig>(r#"{"gpus": "H200"}"#).unwrap_err();
        assert!(e.to_string().contains("unknown field `gpus`"));
        let ok: HardwareConfig = serde_json::from_str(r#"{"gpu": "H200"}"#).unwrap();
        assert_eq!(ok.tp, 1);
    }
}
