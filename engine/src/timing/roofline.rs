//! Roofline step time: a batch is bound by either compute or memory traffic.

use super::{attention_flops, SeqWork, TimingConfig};
use crate::hardware::Hardware;
use crate::model::Model;

/// `t = max(F / (η_c·P_peak), B / (η_m·BW)) + overhead (+ all-reduce when tp > 1)`.
///
/// - F = 2·(active_params − embedding − LM head)·T + 2·hidden·vocab·S + attention FLOPs
///   (see `attention_flops`), T = new tokens, S = sequences: the embedding is a lookup, not a
///   matmul, and vLLM computes logits only for each sequence's last token.
/// - B = weight bytes read once per step (without an untied embedding table, of which only
///   the T rows looked up are read) + KV bytes read (each sequence's context) plus KV bytes
///   written (T · kv_bytes_per_token).
///
/// For a mixture-of-experts model only the experts the step's tokens touch are read:
/// with uniform routing of T tokens to k of E experts, the expected touched fraction
/// is `1 − (1 − k/E)^T`.
#[derive(Debug, Clone, PartialEq)]
pub struct Roofline {
    /// FLOPs per new token through the transformer layers: 2·their active parameters.
    flops_per_token: f64,
    /// FLOPs of one sequence's logits: 2·hidden·vocab.
    flops_per_logits: f64,
    /// Bytes of one embedding row (read per new token).
    embedding_row_bytes: f64,
    /// 2·layers·attention_dim (see `attention_flops`).
    attention_coeff: f64,
    /// Weight bytes read every step outside the routed experts (all but an untied embedding
    /// table for a dense model).
    shared_weight_bytes: f64,
    /// Weight bytes of all routed experts.
    expert_weight_bytes: f64,
    /// Probability one token skips a given expert: 1 − k/E (1 for dense).
    expert_miss: f64,
    kv_bytes_per_token: f64,
    /// η_c · peak FLOP/s.
    flops: f64,
    /// η_m · bandwidth, bytes/s.
    bandwidth: f64,
    /// Step overhead plus all-reduce time, seconds.
    fixed: f64,
}

impl Roofline {
    /// Prices steps of `model` on `hw` with the efficiencies in `cfg`.
    pub fn new(cfg: &TimingConfig, model: &Model, hw: &Hardware, step_overhead: f64) -> Self {
        let arch = &model.arch;
        let expert = arch.expert_params() as f64 * model.dtypes.weight.bytes();
        let hidden_bytes = model.dtypes.hidden_bytes();
        let embedding = arch.embedding_params() as f64;
        // A tied table is read whole as the LM head; an untied one only row by row.
        let table_bytes = if arch.tie_word_embeddings {
            0.0
        } else {
            embedding * hidden_bytes
        };
        let layers = model.active_params - arch.embedding_params() - arch.lm_head_params();
        let expert_miss = if arch.is_moe() {
            1.0 - arch.experts_per_token as f64 / arch.num_experts as f64
        } else {
            1.0
        };
        Self {
            flops_per_token: 2.0 * layers as f64,
            flops_per_logits: 2.0 * embedding,
            embedding_row_bytes: arch.hidden_size as f64 * hidden_bytes,
            attention_coeff: 2.0 * arch.num_layers as f64 * arch.attention_dim() as f64,
            shared_weight_bytes: model.weight_bytes as f64 - expert - table_bytes,
            expert_weight_bytes: expert,
            expert_miss,
            kv_bytes_per_token: model.kv_bytes_per_token as f64,
            flops: cfg.compute_efficiency * hw.peak_flops(),
            bandwidth: cfg.memory_efficiency * hw.bandwidth(),
            fixed: step_overhead + hw.allreduce_time(arch.num_layers),
        }
    }

    /// Duration of one step over `batch`, seconds (0 for an empty batch).
    pub fn step_time<I: IntoIterator<Item = SeqWork>>(&self, batch: I) -> f64 {
        self.time_of(self.work(batch))
    }

    /// Duration of a step that needs `w` (from [`Roofline::work`]), seconds.
    pub fn time_of(&self, w: StepWork) -> f64 {
        if w.flops == 0.0 {
            return 0.0;
        }
        (w.flops / self.flops).max(w.bytes / self.bandwidth) + self.fixed
    }

    /// True when `other` computes the same [`Roofline::work`] for every batch (same model
    /// and GPU, whatever the efficiencies and overheads): one pass can then serve both.
    pub fn same_work(&self, other: &Roofline) -> bool {
        let key = |r: &Roofline| {
            [
                r.flops_per_token,
                r.flops_per_logits,
                r.embedding_row_bytes,
                r.attention_coeff,
                r.shared_weight_bytes,
                r.expert_weight_bytes,
                r.expert_miss,
                r.kv_bytes_per_token,
            ]
            .map(f64::to_bits)
        };
        key(self) == key(other)
    }

    /// The FLOPs and HBM bytes a step over `batch` needs (zero for an empty batch).
    pub fn work<I: IntoIterator<Item = SeqWork>>(&self, batch: I) -> StepWork {
        let (mut tokens, mut seqs) = (0u64, 0u64);
        let mut attention = 0.0;
        let mut kv_read = 0u64;
        for w in batch {
            tokens += w.new_tokens as u64;
            seqs += 1;
            kv_read += w.context as u64;
            attention += attention_flops(self.attention_coeff, w.context, w.context + w.new_tokens);
        }
        if tokens == 0 {
            return StepWork::default();
        }
        // Converted as i64, one instruction rather than u64's several: the counts are far
        // below 2^63, so the values are the same.
        let t = tokens as i64 as f64;
        let flops =
            self.flops_per_token * t + self.flops_per_logits * seqs as i64 as f64 + attention;
        let experts_touched = if self.expert_weight_bytes > 0.0 {
            1.0 - libm::pow(self.expert_miss, t)
        } else {
            0.0
        };
        let bytes = self.shared_weight_bytes
            + self.embedding_row_bytes * t
            + self.expert_weight_bytes * experts_touched
            + (kv_read + tokens) as i64 as f64 * self.kv_bytes_per_token;
        StepWork { flops, bytes }
    }
}

/// What one step asks of the GPU, whatever model prices its time.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StepWork {
    /// Floating-point operations.
    pub flops: f64,
    /// Bytes moved to and from HBM (weights, KV read and written).
    pub bytes: f64,
}
