//! The fitted figures of one GPU type running vLLM: how efficiently its kernels use the
//! matrix units and HBM, what its collectives cost, and what the serving engine around the
//! GPU adds per step and per request.

use crate::validate::{join, Problems};
use serde::{Deserialize, Serialize};

/// Kernel efficiencies and engine overheads of one GPU type and serving-engine version.
///
/// Every figure depends on the GPU (and vLLM's version), never on the model: the model
/// enters the step time only through its shapes. The built-in values and where they come
/// from are below, one table per GPU; `fidelity/` refits them with one command.
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
    /// W8A8 GEMMs on the FP8 matrix units: fraction of the FP8 peak reached once
    /// compute-bound (vLLM's FP8 kernels need not reach what its bf16 ones do); 0 = as
    /// `gemm_compute_efficiency`.
    #[serde(skip_serializing_if = "is_zero")]
    pub fp8_gemm_compute_efficiency: f64,
    /// W4A4 GEMMs on the FP4 matrix units: fraction of the FP4 peak reached once
    /// compute-bound; 0 = as `gemm_compute_efficiency`.
    #[serde(skip_serializing_if = "is_zero")]
    pub fp4_gemm_compute_efficiency: f64,
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
    /// reached (short chunks leave the tiles part empty). It prices the chunk's own causal
    /// part only: query-key pairs against a cached prefix are priced as full tiles (see
    /// `prefix_attention_min_rows`) and the prefix's KV as a decode reads it.
    pub prefill_attention_half_tokens: f64,
    /// Prefill attention over a cached prefix: the fewest query rows, summed over the GPU's
    /// query heads, that one pass over a prefix costs however short the chunk. Where the
    /// kernel runs each tile of one head's query rows on one SM over the whole prefix
    /// (FlashAttention 2: no split of a prefill chunk's KV), a short chunk leaves SMs idle and
    /// its pass takes as long as about SMs × tile rows would; 0 where the kernel splits the
    /// KV over SMs (vLLM's FlashAttention 3 on Hopper), so the pass is bound by its FLOPs or
    /// by reading the prefix's KV.
    pub prefix_attention_min_rows: f64,
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
    /// How far these figures' predictions land from real runs on this GPU; absent when no
    /// real run has measured it. Measured, never written: a calibration read from a
    /// scenario has none.
    #[serde(skip)]
    pub error_band: Option<ErrorBand>,
}

/// How far a calibration's predictions landed from real vLLM runs on its GPU: per metric,
/// the 10th and 90th percentiles of measured ÷ predicted over those runs. A prediction
/// times the two is the range that held eight in ten of them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ErrorBand {
    /// Real runs the percentiles are taken over.
    pub runs: u32,
    /// How often the band held a run left out of it: for each run, the band of the others;
    /// the smallest share, over the metrics, of runs inside theirs. Eight in ten is the
    /// aim; fewer runs give less.
    pub held_out: f64,
    /// Mean TTFT: measured ÷ predicted at the 10th and 90th percentiles.
    pub ttft_mean: [f64; 2],
    /// p99 TTFT, likewise.
    pub ttft_p99: [f64; 2],
    /// Mean E2E latency, likewise.
    pub e2e_mean: [f64; 2],
    /// p99 E2E latency, likewise.
    pub e2e_p99: [f64; 2],
    /// Mean inter-token latency (Σ decode time ÷ Σ tokens after the first), likewise.
    pub itl_mean: [f64; 2],
}

impl ErrorBand {
    /// Each metric's name and its two factors, in table order.
    pub fn factors(&self) -> [(&'static str, [f64; 2]); 5] {
        [
            ("ttft_mean", self.ttft_mean),
            ("ttft_p99", self.ttft_p99),
            ("e2e_mean", self.e2e_mean),
            ("e2e_p99", self.e2e_p99),
            ("itl_mean", self.itl_mean),
        ]
    }
}

impl Default for Calibration {
    /// The H100 SXM figures (the GPU every other built-in calibration starts from), without
    /// its error band: figures someone changed have no measured error.
    fn default() -> Self {
        h100_figures()
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
        for (field, v) in [
            (
                "fp8_gemm_compute_efficiency",
                self.fp8_gemm_compute_efficiency,
            ),
            (
                "fp4_gemm_compute_efficiency",
                self.fp4_gemm_compute_efficiency,
            ),
        ] {
            problems.in_range(path, field, v, 0.0, 1.0);
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
            ("prefix_attention_min_rows", self.prefix_attention_min_rows),
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

/// The H100 SXM's calibration. Kernel figures: fitted on the H100 per-layer profiles of
/// vLLM 0.14's kernels (AIConfigurator's database) and Vidur's H100 elementwise operators;
/// serving-engine figures: fitted on the 10 training runs of vLLM v0.15.1 on H100 SXM
/// (inference-sim's measurements). `cargo run --release -p opal-fidelity --bin fit`
/// reproduces them (see fidelity/README.md).
pub fn h100_calibration() -> Calibration {
    Calibration {
        // The 13 scored real runs replayed as these figures price them (`cargo run --release
        // -p opal-fidelity --bin fidelity` prints it and `--check` holds it to them).
        error_band: Some(ErrorBand {
            runs: 13,
            held_out: 0.61,
            ttft_mean: [0.956, 1.224],
            ttft_p99: [1.038, 2.237],
            e2e_mean: [0.962, 1.065],
            e2e_p99: [0.978, 1.092],
            itl_mean: [0.962, 1.064],
        }),
        ..h100_figures()
    }
}

/// The H100's fitted figures alone: where the other GPUs' calibrations start, and a custom
/// GPU's, neither of which its real runs measured.
fn h100_figures() -> Calibration {
    Calibration {
        source: "H100 SXM, vLLM v0.15.1: kernel profiles (AIConfigurator, Vidur) and 10 real runs"
            .into(),
        gemm_compute_efficiency: 0.803,
        gemm_memory_efficiency: 0.882,
        gemm_knee: 6.69,
        gemm_fixed_us: 3.11,
        fp8_gemm_compute_efficiency: 0.0,
        fp4_gemm_compute_efficiency: 0.0,
        // No bf16 fused-MoE profile with real routing exists: the compute side is the FP8
        // Scout profile's large-batch efficiency, the memory side fitted on the Mixtral runs.
        moe_compute_efficiency: 0.45,
        moe_memory_efficiency: 0.832,
        moe_knee: 6.69,
        prefill_attention_efficiency: 0.601,
        prefill_attention_half_tokens: 1316.0,
        // No H100 profile has a chunk over a cached prefix. vLLM's FlashAttention 3 splits a
        // small grid's KV over SMs: one decode over 32,768 tokens reads its KV at 2.25 TB/s
        // (AIConfigurator's vLLM 0.14 table), which its 8 KV heads could not on 8 SMs, and a
        // chunk of up to 128 / (query heads per KV head) tokens packs into the same tile.
        prefix_attention_min_rows: 0.0,
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
        error_band: None,
    }
}

/// The A100's calibration (SXM 80 GB). Kernel figures: GEMM, attention and all-reduce fitted
/// on AIConfigurator's per-operation measurements of vLLM 0.14's kernels on the A100 SXM
/// (bf16 GEMMs, FlashAttention 2 prefill and decode batches at bf16 KV, vLLM's custom
/// all-reduce under CUDA graphs on 2–8 GPUs over NVLink 3), the version of the H100's tables,
/// by `cargo run --release -p opal-fidelity --bin fit -- --gpu A100-80GB`; elementwise fitted
/// on Vidur's A100 operator profiles (Llama-3-8B, tp 1–8), whose GEMMs that command prints as
/// a held-out check. Not fittable from kernel tables, so the H100's: the serving engine's CPU
/// and front-end figures and memory reserve (no A100 run to fit them on), and the MoE
/// efficiencies with their knee. No FP8 units: no FP8 efficiency.
pub fn a100_calibration() -> Calibration {
    Calibration {
        source: "A100 80GB: AIConfigurator vLLM 0.14 kernel tables, Vidur elementwise; serving engine as H100".into(),
        gemm_compute_efficiency: 0.841,
        gemm_memory_efficiency: 0.758,
        gemm_knee: 1.66,
        gemm_fixed_us: 5.47,
        fp8_gemm_compute_efficiency: 0.0,
        fp4_gemm_compute_efficiency: 0.0,
        // The tables time decode and prefill batches apart, none over a cached prefix: those
        // two figures stay 0 and 1.
        prefill_attention_efficiency: 0.576,
        prefill_attention_half_tokens: 528.0,
        decode_attention_efficiency: 0.709,
        attention_fixed_us: 15.7,
        attention_per_seq_ns: 81.2,
        elementwise_fixed_us: 17.2,
        elementwise_efficiency: 0.461,
        allreduce_latency_us: 5.03,
        allreduce_latency_per_gpu_us: 0.279,
        allreduce_bus_gbps: 180.0,
        ..h100_figures()
    }
}

/// The L40S's calibration (PCIe Gen4, no NVLink). Kernel figures: GEMM, attention and
/// all-reduce fitted on AIConfigurator's per-operation measurements of vLLM 0.14's kernels on
/// the L40S (bf16 GEMMs; per-tensor FP8 GEMMs for the FP8 efficiency, on their compute-bound
/// rows; FlashAttention 2 prefill and decode batches at bf16 KV; vLLM's custom all-reduce
/// under CUDA graphs on 2 GPUs) by `cargo run --release -p opal-fidelity --bin fit -- --gpu
/// L40S`. The table's 4- and 8-GPU all-reduces (3.7 and 2.0 GB/s of bus bandwidth, where 2
/// GPUs reach 19) fit no single bandwidth with the 2-GPU ones and are held out: at TP 4 and 8
/// a large all-reduce is priced about 5x and 10x too fast. Not fittable from kernel tables, so the H100's: the
/// serving engine's CPU and front-end figures and memory reserve (no L40S run to fit them
/// on), the elementwise kernels and the MoE efficiencies with their knee.
pub fn l40s_calibration() -> Calibration {
    Calibration {
        source: "L40S: AIConfigurator vLLM 0.14 kernel tables; serving engine as H100".into(),
        gemm_compute_efficiency: 0.729,
        gemm_memory_efficiency: 0.799,
        gemm_knee: 4.25,
        gemm_fixed_us: 0.822,
        // vLLM 0.14's per-tensor W8A8 GEMMs reach 0.245 of the FP8 peak (180 TFLOPS), below
        // its bf16 GEMMs' 264.
        fp8_gemm_compute_efficiency: 0.245,
        fp4_gemm_compute_efficiency: 0.0,
        // As on the A100: no chunk over a prefix, no mixed batch in the tables.
        prefill_attention_efficiency: 0.495,
        prefill_attention_half_tokens: 424.0,
        decode_attention_efficiency: 0.917,
        attention_fixed_us: 8.18,
        attention_per_seq_ns: 64.1,
        // Fitted on 2 GPUs only: the latency's per-GPU term stays the H100's.
        allreduce_latency_us: 5.32,
        allreduce_bus_gbps: 19.1,
        ..h100_figures()
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
        fp8_gemm_compute_efficiency: 0.0,
        fp4_gemm_compute_efficiency: 0.0,
        // Its 214 chunks over a cached prefix (16-2048 tokens over 16-16384) cost the same for
        // every chunk of up to ~273 tokens (369 us over 16,384, 6x one decode of that KV):
        // its FlashAttention 2 runs a 64-row tile of one head per SM over the whole prefix.
        // The pass over a prefix costs at least 9,400 query rows x heads (~188 SMs x 64);
        // the 404 points of decodes, chunks and chunks over a prefix: median 7.0 % off (the
        // prefix's pairs under the chunk's own penalty, as before: 9.3 %).
        prefill_attention_efficiency: 0.464,
        prefill_attention_half_tokens: 225.0,
        prefix_attention_min_rows: 9400.0,
        decode_attention_efficiency: 0.784,
        // vLLM 0.19 runs a step's decodes with a prefill chunk in one varlen kernel, without
        // the decode-only path's KV splits: 1.9x slower (median 14.7 % off on the profile's
        // 1,000 mixed batches; 26 % when priced as decodes alone).
        mixed_decode_attention_factor: 0.538,
        attention_fixed_us: 9.19,
        attention_per_seq_ns: 148.0,
        // A layer's elementwise bytes up to its 128 MB L2 (~780 tokens of Llama-3.1-8B) move
        // 3.6x faster than HBM (median 4.3 % off on the profile's 152 token counts; 58 %
        // with HBM alone, whose fit stopped at its bound); past it, HBM at full speed.
        elementwise_fixed_us: 10.2,
        elementwise_efficiency: 1.0,
        elementwise_l2_speedup: 3.64,
        allreduce_latency_us: 10.0,
        allreduce_bus_gbps: 50.0,
        ..h100_figures()
    }
}

/// The H200's calibration. Kernel figures: fitted on AIConfigurator's per-operation
/// measurements of vLLM 0.14's kernels on the H200 SXM (bf16 GEMMs, FlashAttention 3 prefill
/// and decode batches at bf16 KV, vLLM's custom all-reduce under CUDA graphs on 2–8 GPUs), the
/// version of the H100's per-layer tables, by
/// `cargo run --release -p opal-fidelity --bin fit -- --gpu H200`. Not fittable from kernel
/// tables, so the H100's: the serving engine's CPU and front-end figures and memory reserve
/// (no real run on this GPU here), the elementwise kernels and the MoE efficiencies with
/// their knee.
pub fn h200_calibration() -> Calibration {
    Calibration {
        source: "H200 SXM: AIConfigurator vLLM 0.14 kernel tables; serving engine as H100".into(),
        gemm_compute_efficiency: 0.790,
        gemm_memory_efficiency: 0.832,
        gemm_knee: 4.69,
        gemm_fixed_us: 3.86,
        fp8_gemm_compute_efficiency: 0.0,
        fp4_gemm_compute_efficiency: 0.0,
        // The tables time decode and prefill batches apart, none over a cached prefix: the
        // H100's FlashAttention 3 figures for those two (0 and 1) stand.
        prefill_attention_efficiency: 0.606,
        prefill_attention_half_tokens: 1082.0,
        decode_attention_efficiency: 0.762,
        attention_fixed_us: 12.1,
        attention_per_seq_ns: 46.6,
        allreduce_latency_us: 4.46,
        allreduce_latency_per_gpu_us: 0.187,
        allreduce_bus_gbps: 291.0,
        ..h100_figures()
    }
}

/// The B200's calibration. Kernel figures: fitted on AIConfigurator's per-operation
/// measurements of vLLM 0.19's kernels on the B200 SXM (bf16 GEMMs; per-tensor FP8 and NVFP4
/// GEMMs for the FP8 and FP4 efficiencies, on their compute-bound rows; FlashInfer prefill and
/// decode batches at bf16 KV, vLLM's custom all-reduce under CUDA graphs on 2–8 GPUs) by
/// `cargo run --release -p opal-fidelity --bin fit -- --gpu B200`. Not fittable from kernel
/// tables, so the H100's: the serving engine's CPU and front-end figures and memory reserve
/// (no real run on this GPU here), the elementwise kernels and the MoE efficiencies with
/// their knee.
pub fn b200_calibration() -> Calibration {
    Calibration {
        source: "B200: AIConfigurator vLLM 0.19 kernel tables; serving engine as H100".into(),
        gemm_compute_efficiency: 0.711,
        gemm_memory_efficiency: 0.792,
        gemm_knee: 3.21,
        gemm_fixed_us: 3.45,
        fp8_gemm_compute_efficiency: 0.34,
        fp4_gemm_compute_efficiency: 0.495,
        // No table has a chunk over a cached prefix or decodes sharing a kernel with a chunk:
        // those two figures stay 0 and 1.
        prefill_attention_efficiency: 0.737,
        prefill_attention_half_tokens: 1278.0,
        decode_attention_efficiency: 0.946,
        attention_fixed_us: 8.10,
        attention_per_seq_ns: 19.7,
        allreduce_latency_us: 7.22,
        allreduce_latency_per_gpu_us: 0.180,
        allreduce_bus_gbps: 510.0,
        ..h100_figures()
    }
}

/// The B300's calibration. Kernel figures: fitted on AIConfigurator's per-operation
/// measurements of vLLM 0.19's kernels on the B300 SXM (as the B200's) by
/// `cargo run --release -p opal-fidelity --bin fit -- --gpu B300`. Not fittable from kernel
/// tables, so the H100's: the serving engine's CPU and front-end figures and memory reserve
/// (no real run on this GPU here), the elementwise kernels and the MoE efficiencies with
/// their knee.
pub fn b300_calibration() -> Calibration {
    Calibration {
        source: "B300: AIConfigurator vLLM 0.19 kernel tables; serving engine as H100".into(),
        gemm_compute_efficiency: 0.766,
        gemm_memory_efficiency: 0.782,
        gemm_knee: 3.51,
        gemm_fixed_us: 3.17,
        fp8_gemm_compute_efficiency: 0.345,
        fp4_gemm_compute_efficiency: 0.27,
        // As on the B200: no chunk over a prefix, no mixed batch in the tables.
        prefill_attention_efficiency: 0.889,
        prefill_attention_half_tokens: 1402.0,
        decode_attention_efficiency: 0.934,
        attention_fixed_us: 8.17,
        attention_per_seq_ns: 17.7,
        allreduce_latency_us: 7.08,
        allreduce_latency_per_gpu_us: 0.132,
        allreduce_bus_gbps: 504.0,
        ..h100_figures()
    }
}

/// The RTX 4090's calibration: no kernel profile or run exists for it here, so the H100's
/// efficiencies on its own datasheet peaks, and its all-reduce over PCIe Gen4 estimated at
/// about 25 GB/s of bus bandwidth and 10 µs of latency (the L40S's figures before its
/// kernel tables were fitted; the cross-GPU check of docs/accuracy.md ran on these).
pub fn rtx_4090_calibration() -> Calibration {
    Calibration {
        source: "RTX 4090: H100 efficiencies on the RTX 4090 datasheet; PCIe all-reduce".into(),
        allreduce_latency_us: 10.0,
        allreduce_bus_gbps: 25.0,
        ..h100_figures()
    }
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}
