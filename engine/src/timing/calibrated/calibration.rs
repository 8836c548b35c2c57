//! The fitted figures of one GPU type running vLLM: how efficiently its kernels use the
//! matrix units and HBM, what its collectives cost, and what the serving engine around the
//! GPU adds per step and per request.

use crate::validate::{join, Problems};
use serde::{Deserialize, Serialize};

/// Kernel efficiencies and engine overheads of one GPU type and serving-engine version.
///
/// Every figure depends on the GPU (and vLLM's version), never on the model: the model
/// enters the step time only through its shapes. The built-in values and where they come
/// from are in `hardware.rs`; `fidelity/` refits them with one command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Calibration {
    /// What the figures were fitted on (shown next to results).
    pub source: String,
    /// GEMMs: fraction of peak FLOP/s reached once compute-bound.
    pub gemm_compute_efficiency: f64,
    /// GEMMs: fraction of HBM bandwidth reached when bound by reading the weights.
    pub gemm_memory_efficiency: f64,
    /// GEMMs: how sharply the compute- and memory-bound regimes meet: time is the
    /// `p`-norm of the two times (large `p`: a sharp roofline; 2: a smooth knee).
    pub gemm_knee: f64,
    /// GEMMs: fixed cost of one GEMM kernel, µs.
    pub gemm_fixed_us: f64,
    /// Fused mixture-of-experts kernel: fraction of peak FLOP/s once compute-bound.
    pub moe_compute_efficiency: f64,
    /// Fused mixture-of-experts kernel: fraction of HBM bandwidth reading the experts.
    pub moe_memory_efficiency: f64,
    /// Fused mixture-of-experts kernel: its knee (as `gemm_knee`). Its own, because the MoE
    /// efficiencies were fitted with the knee of the GPU they were fitted on, and a GPU
    /// that carries them over must carry that knee with them, not its own GEMMs'.
    pub moe_knee: f64,
    /// Prefill attention (FlashAttention): fraction of peak FLOP/s reached by long chunks.
    pub prefill_attention_efficiency: f64,
    /// Prefill attention: the chunk length (query tokens) at which half that efficiency is
    /// reached (short chunks leave the tiles part empty).
    pub prefill_attention_half_tokens: f64,
    /// Decode attention: fraction of HBM bandwidth reading the KV cache.
    pub decode_attention_efficiency: f64,
    /// Decode attention in a step that also runs a prefill chunk (one varlen kernel, without
    /// the decode-only path's split of long KV over blocks): its bandwidth as a fraction of
    /// the decode-only one; 1 where no profile of such batches exists.
    pub mixed_decode_attention_factor: f64,
    /// Attention: fixed cost per layer, µs.
    pub attention_fixed_us: f64,
    /// Attention: cost per sequence in the batch per layer, ns.
    pub attention_per_seq_ns: f64,
    /// Norms, rotary embedding, activation and residual adds: fixed cost per layer, µs.
    pub elementwise_fixed_us: f64,
    /// Norms, rotary embedding, activation and residual adds: fraction of HBM bandwidth.
    pub elementwise_efficiency: f64,
    /// Norms, rotary embedding, activation and residual adds: how many times faster than HBM
    /// the bytes of a layer's elementwise kernels move while they fit in the GPU's L2 cache
    /// (the previous kernel's output is still on chip); 1 where no profile shows it.
    pub elementwise_l2_speedup: f64,
    /// Tensor-parallel all-reduce: latency of one all-reduce over 2 GPUs, µs.
    pub allreduce_latency_us: f64,
    /// Tensor-parallel all-reduce: added latency per GPU beyond 2, µs.
    pub allreduce_latency_per_gpu_us: f64,
    /// Tensor-parallel all-reduce: bus bandwidth, GB/s (10⁹ bytes/s).
    pub allreduce_bus_gbps: f64,
    /// Serving engine: CPU time of one step outside the GPU (schedule, prepare inputs,
    /// sample, process outputs), µs.
    pub step_overhead_us: f64,
    /// Serving engine: step CPU time per sequence in the batch, µs.
    pub step_overhead_per_seq_us: f64,
    /// Serving engine: step time added per tensor-parallel GPU beyond the first
    /// (broadcasting the batch to the workers and synchronising them), µs.
    pub step_overhead_per_gpu_us: f64,
    /// Serving engine: from a request's arrival at the server to its arrival at the
    /// scheduler (HTTP, tokenisation, hand-off to the engine), ms.
    pub request_overhead_ms: f64,
    /// Serving engine: tokenisation time per prompt token, µs.
    pub request_overhead_per_token_us: f64,
    /// Serving engine: from a token's step end to the client seeing it (detokenise,
    /// stream), ms.
    pub token_output_ms: f64,
    /// GPU memory the serving engine keeps besides weights, activations and KV cache (CUDA
    /// context, library workspaces, CUDA graphs), GB (2³⁰ bytes) per GPU.
    pub memory_reserved_gb: f64,
    /// GPU memory added per GPU when tensor-parallel (collective buffers), GB (2³⁰ bytes).
    pub memory_reserved_tp_gb: f64,
}

impl Default for Calibration {
    /// The H100 SXM figures (the GPU every other built-in calibration starts from).
    fn default() -> Self {
        crate::hardware::h100_calibration()
    }
}

impl Calibration {
    /// Reports every problem under `path`.
    pub fn validate(&self, path: &str, problems: &mut Problems) {
        for (field, v) in [
            ("gemm_compute_efficiency", self.gemm_compute_efficiency),
            ("gemm_memory_efficiency", self.gemm_memory_efficiency),
            ("moe_compute_efficiency", self.moe_compute_efficiency),
            ("moe_memory_efficiency", self.moe_memory_efficiency),
            (
                "prefill_attention_efficiency",
                self.prefill_attention_efficiency,
            ),
            (
                "decode_attention_efficiency",
                self.decode_attention_efficiency,
            ),
            (
                "mixed_decode_attention_factor",
                self.mixed_decode_attention_factor,
            ),
            ("elementwise_efficiency", self.elementwise_efficiency),
        ] {
            if !(v > 0.0 && v <= 1.0) {
                problems.push(join(path, field), "must be in (0, 1]");
            }
        }
        problems.in_range(path, "gemm_knee", self.gemm_knee, 1.0, 64.0);
        problems.in_range(path, "moe_knee", self.moe_knee, 1.0, 64.0);
        problems.in_range(
            path,
            "elementwise_l2_speedup",
            self.elementwise_l2_speedup,
            1.0,
            100.0,
        );
        problems.positive(path, "allreduce_bus_gbps", self.allreduce_bus_gbps);
        for (field, v) in [
            ("gemm_fixed_us", self.gemm_fixed_us),
            (
                "prefill_attention_half_tokens",
                self.prefill_attention_half_tokens,
            ),
            ("attention_fixed_us", self.attention_fixed_us),
            ("attention_per_seq_ns", self.attention_per_seq_ns),
            ("elementwise_fixed_us", self.elementwise_fixed_us),
            ("allreduce_latency_us", self.allreduce_latency_us),
            (
                "allreduce_latency_per_gpu_us",
                self.allreduce_latency_per_gpu_us,
            ),
            ("step_overhead_us", self.step_overhead_us),
            ("step_overhead_per_seq_us", self.step_overhead_per_seq_us),
            ("step_overhead_per_gpu_us", self.step_overhead_per_gpu_us),
            ("request_overhead_ms", self.request_overhead_ms),
            (
                "request_overhead_per_token_us",
                self.request_overhead_per_token_us,
            ),
            ("token_output_ms", self.token_output_ms),
            ("memory_reserved_gb", self.memory_reserved_gb),
            ("memory_reserved_tp_gb", self.memory_reserved_tp_gb),
        ] {
            // Bounded so no calibration can make a step take longer than a second.
            problems.in_range(path, field, v, 0.0, 1e5);
        }
    }
}
