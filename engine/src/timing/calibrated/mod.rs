//! The calibrated step time (the default): a transformer step priced kernel by kernel from
//! the model's shapes, with efficiencies and overheads fitted per GPU on measured kernel
//! profiles and real vLLM runs (see `fidelity/`).
//!
//! One step of vLLM v1 runs, per layer: the attention projections, one varlen attention
//! kernel over every sequence's new tokens (prefill chunks and decodes together), the dense
//! MLP or the fused mixture-of-experts kernel, the norms / rotary / activation kernels, and
//! with tensor parallelism two all-reduces; then the LM head for one row per sequence.
//! Around the GPU, the engine spends CPU time per step (scheduling, input preparation,
//! sampling) that grows with the batch and with the number of GPUs it drives.

pub(super) mod calibration;
mod kernels;

pub use calibration::Calibration;
use kernels::{Experts, Gemm, Kernels};

use super::SeqWork;
use crate::hardware::Hardware;
use crate::model::{Dtype, Model};
use serde::Serialize;

/// Where one step's time goes, seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct StepBreakdown {
    /// Dense GEMMs of all layers (projections, dense MLPs, shared experts, LM head).
    pub gemm: f64,
    /// Fused mixture-of-experts kernels.
    pub moe: f64,
    /// Attention kernels.
    pub attention: f64,
    /// Norms, rotary embedding, activations, residual adds.
    pub elementwise: f64,
    /// Tensor-parallel all-reduces.
    pub allreduce: f64,
    /// CPU time of the serving engine.
    pub cpu: f64,
}

impl StepBreakdown {
    /// The whole step.
    pub fn total(&self) -> f64 {
        self.gemm + self.moe + self.attention + self.elementwise + self.allreduce + self.cpu
    }
}

/// A step-time model for one model on one GPU type and tensor-parallel degree.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibrated {
    kernels: Kernels,
    tp: u32,
    /// Data-parallel ranks: each runs an even share of the batch through attention and the
    /// dense layers; the MoE layers take every rank's tokens.
    dp: f64,
    /// GPUs the routed experts are spread over (`dp × tp`).
    expert_gpus: u32,
    /// Whole experts per GPU (expert parallelism) rather than a slice of every expert.
    expert_parallel: bool,
    dense_layers: f64,
    moe_layers: f64,
    /// Attention projections of one layer, on one GPU.
    attention_gemms: Vec<Gemm>,
    /// Dense MLP of one layer (gate and up fused, down), on one GPU.
    mlp_gemms: [Gemm; 2],
    /// Router, shared experts (empty when none), on one GPU.
    moe_gemms: Vec<Gemm>,
    /// The routed experts of a MoE layer, on one GPU.
    experts: Experts,
    lm_head: Gemm,
    weight_bytes: f64,
    hidden_bytes: f64,
    /// Attention FLOPs per query-key pair per layer on one GPU (QKᵀ and AV).
    flops_per_pair: f64,
    /// KV cache bytes per token per layer on one GPU.
    kv_bytes: f64,
    /// Bytes of one token through the elementwise kernels of a dense / MoE layer.
    elementwise_dense: f64,
    elementwise_moe: f64,
    /// Bytes of one token's hidden state (what an all-reduce moves).
    hidden_state: f64,
    /// Prefill attention's half-efficiency chunk length, tokens.
    prefill_half_tokens: f64,
    /// The fewest query rows (tokens, all of this GPU's query heads) a pass over a cached
    /// prefix costs.
    prefix_min_rows: f64,
    /// Step CPU time independent of the batch, seconds.
    cpu_fixed: f64,
    cpu_per_seq: f64,
}

impl Calibrated {
    /// Prices steps of `model` on `hw` with `calibration`, or the GPU's own when none is
    /// given; `step_overhead` (the worker's fixed extra per step, seconds) is added.
    pub fn new(
        model: &Model,
        hw: &Hardware,
        calibration: Option<&Calibration>,
        step_overhead: f64,
    ) -> Self {
        let cal = calibration
            .cloned()
            .unwrap_or_else(|| super::calibration_for(&hw.gpu));
        let a = &model.arch;
        let tp = hw.tp.max(1) as f64;
        let bf16_flops = hw.gpu.peak_tflops * 1e12;
        // Low-precision activations run on their matrix units where the GPU has them;
        // elsewhere the weights dequantise to 16-bit (vLLM's weight-only kernels).
        let or_bf16 = |e: f64| {
            if e > 0.0 {
                e
            } else {
                cal.gemm_compute_efficiency
            }
        };
        let gemm = match model.dtypes.activation {
            Dtype::Fp8 if hw.gpu.fp8_tflops > 0.0 => (
                hw.gpu.fp8_tflops * 1e12,
                or_bf16(cal.fp8_gemm_compute_efficiency),
            ),
            a if a.is_fp4() && hw.gpu.fp4_tflops > 0.0 => (
                hw.gpu.fp4_tflops * 1e12,
                or_bf16(cal.fp4_gemm_compute_efficiency),
            ),
            _ => (bf16_flops, cal.gemm_compute_efficiency),
        };
        // The cache is per GPU, as the bandwidth is (elementwise bytes are per GPU too).
        let kernels = Kernels::new(
            gemm,
            bf16_flops,
            hw.gpu.hbm_tbps * 1e12,
            hw.gpu.l2_cache_mb * 1_048_576.0,
            &cal,
        );
        let h = a.hidden_size as f64;
        let heads = a.num_heads as f64 / tp;
        // KV heads are sharded over the GPUs, or replicated when there are fewer than GPUs;
        // MLA's compressed KV is replicated on every GPU.
        let kv_share = if a.is_mla() {
            1.0
        } else {
            (a.num_kv_heads as f64 / tp).max(1.0) / a.num_kv_heads as f64
        };
        let g = |k: f64, n: f64| Gemm { k, n };
        let (attention_gemms, qk_dim) = if a.is_mla() {
            let (rope, nope, v) = (
                a.qk_rope_head_dim as f64,
                a.qk_nope_head_dim as f64,
                a.v_head_dim as f64,
            );
            let (q_rank, kv_rank) = (a.q_lora_rank as f64, a.kv_lora_rank as f64);
            let mut gemms = if q_rank > 0.0 {
                vec![g(h, q_rank), g(q_rank, heads * (nope + rope))]
            } else {
                vec![g(h, heads * (nope + rope))]
            };
            gemms.extend([
                g(h, kv_rank + rope),
                g(kv_rank, heads * (nope + v)),
                g(heads * v, h),
            ]);
            (gemms, nope + rope)
        } else {
            let hd = a.head_dim() as f64;
            let kv_heads = a.num_kv_heads as f64 * kv_share;
            (
                vec![g(h, (heads + 2.0 * kv_heads) * hd), g(heads * hd, h)],
                hd,
            )
        };
        let ffn = a.intermediate_size as f64 / tp;
        // Experts are split over every rank's GPUs, unless each GPU holds whole ones.
        let expert_gpus = hw.gpus();
        let expert_ffn = if hw.expert_parallel {
            a.expert_ffn() as f64
        } else {
            a.expert_ffn() as f64 / expert_gpus as f64
        };
        let shared = a.shared_expert_intermediate_size as f64 / tp;
        let mut moe_gemms = vec![g(h, a.num_experts as f64)];
        if shared > 0.0 {
            moe_gemms.extend([g(h, 2.0 * shared), g(shared, h)]);
        }
        let hidden_bytes = model.dtypes.hidden_bytes();
        let rope_width = qk_dim * (heads + a.num_kv_heads as f64 * kv_share);
        // Two fused residual-add + RMS norms (read and write x and the residual), rotary on
        // queries and keys, SiLU-and-multiply over the MLP's inner width.
        let norms = 8.0 * h + 2.0 * rope_width;
        let moe_layers = a.num_moe_layers() as f64;
        Self {
            kernels,
            tp: hw.tp,
            dp: hw.dp.max(1) as f64,
            expert_gpus,
            expert_parallel: hw.expert_parallel,
            dense_layers: a.num_layers as f64 - moe_layers,
            moe_layers,
            attention_gemms,
            mlp_gemms: [g(h, 2.0 * ffn), g(ffn, h)],
            moe_gemms,
            experts: Experts {
                count: a.num_experts as f64,
                top_k: a.experts_per_token as f64,
                up: g(h, 2.0 * expert_ffn),
                down: g(expert_ffn, h),
            },
            lm_head: g(h, a.vocab_size as f64 / tp),
            weight_bytes: model.dtypes.weight.bytes(),
            hidden_bytes,
            flops_per_pair: 4.0 * heads * qk_dim,
            kv_bytes: a.kv_elements_per_token_per_layer() as f64
                * kv_share
                * model.dtypes.kv_cache.bytes(),
            elementwise_dense: (norms + 3.0 * ffn) * hidden_bytes,
            elementwise_moe: (norms + 3.0 * shared) * hidden_bytes,
            hidden_state: h * hidden_bytes,
            cpu_fixed: (cal.step_overhead_us + cal.step_overhead_per_gpu_us * (tp - 1.0)) * 1e-6
                + step_overhead,
            cpu_per_seq: cal.step_overhead_per_seq_us * 1e-6,
            prefill_half_tokens: cal.prefill_attention_half_tokens,
            prefix_min_rows: cal.prefix_attention_min_rows / heads,
        }
    }

    /// The calibration in force (also read by the worker for per-request overheads).
    pub fn calibration(&self) -> &Calibration {
        self.kernels.calibration()
    }

    /// Duration of one step over `batch`, seconds (0 for an empty batch).
    pub fn step_time<I: IntoIterator<Item = SeqWork>>(&self, batch: I) -> f64 {
        self.breakdown(batch).total()
    }

    /// Where one step over `batch` spends its time (all zero for an empty batch).
    pub fn breakdown<I: IntoIterator<Item = SeqWork>>(&self, batch: I) -> StepBreakdown {
        let mut tokens = 0u64;
        let mut attention = AttentionWork::default();
        for w in batch {
            tokens += w.new_tokens as u64;
            attention.add(w, self.prefill_half_tokens);
        }
        if tokens == 0 {
            return StepBreakdown::default();
        }
        let m = tokens as f64;
        let k = &self.kernels;
        let (wb, ab) = (self.weight_bytes, self.hidden_bytes);
        let layers = self.dense_layers + self.moe_layers;
        // One rank's share: data-parallel ranks step together, each over its part of the
        // batch (vLLM balances requests over them), and the step waits for all of them.
        let (rank_m, rank) = if self.dp > 1.0 {
            (m / self.dp, attention.share(self.dp))
        } else {
            (m, attention)
        };
        let projections: f64 = self
            .attention_gemms
            .iter()
            .map(|&g| k.gemm(rank_m, g, wb, ab))
            .sum();
        let mlp: f64 = self
            .mlp_gemms
            .iter()
            .map(|&g| k.gemm(rank_m, g, wb, ab))
            .sum();
        let router_and_shared: f64 = self
            .moe_gemms
            .iter()
            .map(|&g| k.gemm(rank_m, g, wb, ab))
            .sum();
        let allreduce = if self.dp > 1.0 {
            // Within a rank, after attention and a dense MLP; a MoE layer gathers every
            // rank's tokens to the experts and scatters the sums back (vLLM's default
            // all-gather / reduce-scatter, which moves what an all-reduce of them does).
            let rank_allreduce = self.allreduce_time(rank_m);
            let gather_scatter = k.allreduce(m * self.hidden_state, self.expert_gpus);
            layers * rank_allreduce
                + self.dense_layers * rank_allreduce
                + self.moe_layers * gather_scatter
        } else {
            layers * 2.0 * self.allreduce_time(m)
        };
        StepBreakdown {
            gemm: layers * projections
                + self.dense_layers * mlp
                + self.moe_layers * router_and_shared
                + self.lm_head_time(rank.seqs),
            moe: self.moe_layers * self.experts_time(m),
            attention: layers * self.attention_work_time(&rank),
            elementwise: self.dense_layers * k.elementwise(rank_m * self.elementwise_dense)
                + self.moe_layers * k.elementwise(rank_m * self.elementwise_moe),
            allreduce,
            cpu: self.cpu_fixed + self.cpu_per_seq * rank.seqs,
        }
    }

    /// One dense layer's GEMMs (attention projections and MLP) over `tokens` rows, seconds.
    pub fn dense_layer_gemm_time(&self, tokens: f64) -> f64 {
        let (k, wb, ab) = (&self.kernels, self.weight_bytes, self.hidden_bytes);
        self.attention_gemms
            .iter()
            .chain(&self.mlp_gemms)
            .map(|&g| k.gemm(tokens, g, wb, ab))
            .sum()
    }

    /// One GEMM `[tokens × k] · [k × n]` at this model's weight format, seconds.
    pub fn gemm_time(&self, tokens: f64, k: f64, n: f64) -> f64 {
        self.kernels
            .gemm(tokens, Gemm { k, n }, self.weight_bytes, self.hidden_bytes)
    }

    /// The LM head over `rows` rows (one per sequence), seconds.
    pub fn lm_head_time(&self, rows: f64) -> f64 {
        self.kernels
            .gemm(rows, self.lm_head, self.hidden_bytes, self.hidden_bytes)
    }

    /// One MoE layer's fused routed experts over `tokens` tokens, seconds (0 for dense).
    pub fn experts_time(&self, tokens: f64) -> f64 {
        if self.moe_layers == 0.0 {
            return 0.0;
        }
        if !self.expert_parallel {
            return self.kernels.fused_moe(
                tokens,
                &self.experts,
                self.weight_bytes,
                self.hidden_bytes,
            );
        }
        // Each GPU holds count / n whole experts and runs the token-expert pairs routed to
        // them; the layer waits for the busiest GPU. Under uniform routing a GPU's pairs are
        // binomial, and the largest of n such counts is about the mean plus sqrt(2 ln n)
        // standard deviations (no more than every token sending it all its local experts).
        let e = &self.experts;
        let n = self.expert_gpus as f64;
        let local = e.count / n;
        let mean = tokens * e.top_k / n;
        let spread = libm::sqrt(2.0 * libm::log(n) * mean * (1.0 - 1.0 / n));
        let busiest = (mean + spread).min(tokens * e.top_k.min(local));
        let on_one_gpu = Experts {
            count: local,
            top_k: 1.0,
            up: e.up,
            down: e.down,
        };
        self.kernels
            .fused_moe(busiest, &on_one_gpu, self.weight_bytes, self.hidden_bytes)
    }

    /// One layer's attention over `batch`, seconds.
    pub fn attention_time<I: IntoIterator<Item = SeqWork>>(&self, batch: I) -> f64 {
        let mut work = AttentionWork::default();
        for w in batch {
            work.add(w, self.prefill_half_tokens);
        }
        self.attention_work_time(&work)
    }

    fn attention_work_time(&self, w: &AttentionWork) -> f64 {
        self.kernels.attention(
            w.prefill_pairs(self.prefix_min_rows) * self.flops_per_pair,
            w.decode_kv * self.kv_bytes,
            w.prefill_kv * self.kv_bytes,
            w.prefix_kv * self.kv_bytes,
            w.seqs,
        )
    }

    /// One tensor-parallel all-reduce of `tokens` hidden states, seconds (0 without TP).
    pub fn allreduce_time(&self, tokens: f64) -> f64 {
        self.kernels.allreduce(tokens * self.hidden_state, self.tp)
    }

    /// One dense layer's norms, rotary, activation and residual adds over `tokens`, seconds.
    pub fn elementwise_time(&self, tokens: f64) -> f64 {
        self.kernels.elementwise(tokens * self.elementwise_dense)
    }
}

/// What one layer's attention kernel does for a batch.
#[derive(Debug, Clone, Copy, Default)]
struct AttentionWork {
    /// Query-key pairs of the prefill chunks among their own tokens (causal), each weighted
    /// by the inverse of its chunk's relative tile efficiency `n / (n + n½)`.
    pairs: f64,
    /// Query-key pairs of the prefill chunks against their cached prefixes (full tiles).
    prefix_pairs: f64,
    /// The longest cached prefix of a prefill chunk, tokens.
    longest_prefix: f64,
    /// KV tokens read by prefill chunks: their own, their cached prefixes'.
    prefill_kv: f64,
    prefix_kv: f64,
    /// KV tokens read by decodes.
    decode_kv: f64,
    seqs: f64,
}

impl AttentionWork {
    /// One of `ranks` even shares of this work (the longest prefix is the same in each).
    fn share(&self, ranks: f64) -> Self {
        Self {
            pairs: self.pairs / ranks,
            prefix_pairs: self.prefix_pairs / ranks,
            longest_prefix: self.longest_prefix,
            prefill_kv: self.prefill_kv / ranks,
            prefix_kv: self.prefix_kv / ranks,
            decode_kv: self.decode_kv / ranks,
            seqs: self.seqs / ranks,
        }
    }

    fn add(&mut self, w: SeqWork, half_tokens: f64) {
        let (n, c) = (w.new_tokens as f64, w.context as f64);
        self.seqs += 1.0;
        if w.decode {
            self.decode_kv += c + 1.0;
        } else {
            // Causal: new token j of the chunk attends to the c cached positions and to j of
            // its own. Only its own part carries the short-chunk penalty: the tiles it leaves
            // part empty are the diagonal ones (over a long prefix a chunk's rows still fill
            // their tiles, or the kernel packs heads into them).
            self.pairs += n * (n + 1.0) / 2.0 * (n + half_tokens) / n;
            self.prefix_pairs += n * c;
            self.longest_prefix = self.longest_prefix.max(c);
            self.prefill_kv += n;
            self.prefix_kv += c;
        }
    }

    /// The query-key pairs the prefill chunks cost: their own (penalised) and their
    /// prefixes', at least `min_rows` query rows over the longest prefix.
    fn prefill_pairs(&self, min_rows: f64) -> f64 {
        self.pairs + self.prefix_pairs.max(min_rows * self.longest_prefix)
    }
}
