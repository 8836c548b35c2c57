//! A transformer's shape, and the sizes derived from it (parameters, weight and KV bytes).

use crate::validate::{join, Problems};
use serde::{Deserialize, Serialize};

/// A decoder-only transformer's shape (the fields a Hugging Face `config.json` carries).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Architecture {
    /// Transformer layers. Default 40 (granite-3.3-8b).
    pub num_layers: u32,
    /// Hidden (model) dimension. Default 4096.
    pub hidden_size: u32,
    /// Attention (query) heads. Default 32.
    pub num_heads: u32,
    /// Key/value heads (grouped-query attention). Default 8.
    pub num_kv_heads: u32,
    /// Dimension of one head; 0 means `hidden_size / num_heads`. Default 0.
    pub head_dim: u32,
    /// Dense MLP inner dimension (SwiGLU: three matrices). Default 12800.
    pub intermediate_size: u32,
    /// Vocabulary size. Default 49159.
    pub vocab_size: u32,
    /// Input embedding and LM head share one matrix. Default true.
    pub tie_word_embeddings: bool,
    /// Mixture-of-experts: experts per layer; 0 means a dense MLP. Default 0.
    pub num_experts: u32,
    /// Mixture-of-experts: experts each token is routed to. Default 0.
    pub experts_per_token: u32,
    /// Mixture-of-experts: inner dimension of one expert; 0 means `intermediate_size`. Default 0.
    pub expert_intermediate_size: u32,
    /// Mixture-of-experts: inner width of the shared experts every token also passes through
    /// (DeepSeek: `n_shared_experts · moe_intermediate_size`); 0 means none. Default 0.
    pub shared_expert_intermediate_size: u32,
    /// Mixture-of-experts: leading layers that keep a dense MLP (DeepSeek's
    /// `first_k_dense_replace`). Default 0.
    pub first_dense_layers: u32,
    /// Mixture-of-experts: every `moe_layer_step`-th layer after the dense ones has experts,
    /// the others a dense MLP (Llama 4's `interleave_moe_layer_step`). Default 1.
    pub moe_layer_step: u32,
    /// Multi-head latent attention (DeepSeek): rank of the compressed key/value, which is what
    /// the KV cache holds; 0 means ordinary attention. Default 0.
    pub kv_lora_rank: u32,
    /// Multi-head latent attention: rank of the compressed query; 0 means a full query
    /// projection. Default 0.
    pub q_lora_rank: u32,
    /// Multi-head latent attention: rotary part of each query/key head (cached next to the
    /// compressed KV). Default 0.
    pub qk_rope_head_dim: u32,
    /// Multi-head latent attention: non-rotary part of each query/key head. Default 0.
    pub qk_nope_head_dim: u32,
    /// Multi-head latent attention: dimension of each value head. Default 0.
    pub v_head_dim: u32,
    /// Q/K/V projections carry biases (Qwen2). Default false.
    pub qkv_bias: bool,
    /// Per-head RMS norm on queries and keys (Qwen3). Default false.
    pub qk_norm: bool,
    /// Longest sequence (prompt + output) the model accepts, tokens. Default 131072.
    pub max_model_len: u32,
    /// Bytes per weight and per KV element (bf16 = 2). Default 2.
    pub bytes_per_param: u32,
}

impl Default for Architecture {
    fn default() -> Self {
        super::catalogue::granite_3_3_8b()
    }
}

impl Architecture {
    /// Dimension of one attention head.
    pub fn head_dim(&self) -> u32 {
        if self.head_dim > 0 {
            self.head_dim
        } else {
            self.hidden_size / self.num_heads.max(1)
        }
    }

    /// True for a mixture-of-experts model.
    pub fn is_moe(&self) -> bool {
        self.num_experts > 0
    }

    /// True for multi-head latent attention (DeepSeek-style compressed KV).
    pub fn is_mla(&self) -> bool {
        self.kv_lora_rank > 0
    }

    /// True when layer `layer` (from 0) has routed experts rather than a dense MLP.
    pub fn is_moe_layer(&self, layer: u32) -> bool {
        self.is_moe()
            && layer >= self.first_dense_layers
            && (layer - self.first_dense_layers + 1) % self.moe_layer_step.max(1) == 0
    }

    /// Layers with routed experts: of the layers after the dense ones, counted from 1, every
    /// `moe_layer_step`-th (as [`is_moe_layer`](Self::is_moe_layer) says, in O(1): this runs
    /// before validation has bounded `num_layers`).
    pub fn num_moe_layers(&self) -> u32 {
        if !self.is_moe() {
            return 0;
        }
        self.num_layers.saturating_sub(self.first_dense_layers) / self.moe_layer_step.max(1)
    }

    /// Inner dimension of one routed expert.
    pub fn expert_ffn(&self) -> u64 {
        if self.expert_intermediate_size > 0 {
            self.expert_intermediate_size as u64
        } else {
            self.intermediate_size as u64
        }
    }

    /// Attention parameters of one layer: Q, K, V, O projections (+ biases, + q/k norms), or
    /// MLA's down- and up-projections.
    fn attention_params(&self) -> u64 {
        if self.is_mla() {
            return self.mla_params();
        }
        let (h, hd) = (self.hidden_size as u64, self.head_dim() as u64);
        let q = self.num_heads as u64 * hd;
        let kv = self.num_kv_heads as u64 * hd;
        let mut n = h * q + 2 * h * kv + q * h;
        if self.qkv_bias {
            n += q + 2 * kv;
        }
        if self.qk_norm {
            n += 2 * hd;
        }
        n
    }

    /// MLA projections of one layer: query (through its compressed rank when it has one), the
    /// joint KV down-projection with the rotary key, the KV up-projection, the output, and the
    /// norms of the compressed ranks.
    fn mla_params(&self) -> u64 {
        let h = self.hidden_size as u64;
        let heads = self.num_heads as u64;
        let (rope, nope, v) = (
            self.qk_rope_head_dim as u64,
            self.qk_nope_head_dim as u64,
            self.v_head_dim as u64,
        );
        let (kv_rank, q_rank) = (self.kv_lora_rank as u64, self.q_lora_rank as u64);
        let q_out = heads * (nope + rope);
        let q = if q_rank > 0 {
            h * q_rank + q_rank + q_rank * q_out
        } else {
            h * q_out
        };
        q + h * (kv_rank + rope) + kv_rank + kv_rank * heads * (nope + v) + heads * v * h
    }

    /// MLP parameters of all layers with `experts` routed experts counted in each MoE layer
    /// (the router matrix and shared experts always count).
    fn mlp_params(&self, experts: u64) -> u64 {
        let h = self.hidden_size as u64;
        let moe = self.num_moe_layers() as u64;
        let dense = self.num_layers as u64 - moe;
        let moe_layer = experts * 3 * h * self.expert_ffn()
            + h * self.num_experts as u64
            + 3 * h * self.shared_expert_intermediate_size as u64;
        dense * 3 * h * self.intermediate_size as u64 + moe * moe_layer
    }

    fn params_with_experts(&self, experts: u64) -> u64 {
        let h = self.hidden_size as u64;
        // Two RMS norms per layer.
        let layers = self.num_layers as u64 * (self.attention_params() + 2 * h);
        layers + self.mlp_params(experts) + h + self.embedding_params() + self.lm_head_params()
    }

    /// Parameters of the input embedding table.
    pub fn embedding_params(&self) -> u64 {
        self.vocab_size as u64 * self.hidden_size as u64
    }

    /// Parameters of the LM head (0 when it shares the embedding's matrix).
    pub fn lm_head_params(&self) -> u64 {
        if self.tie_word_embeddings {
            0
        } else {
            self.embedding_params()
        }
    }

    /// Total parameters.
    pub fn params(&self) -> u64 {
        self.params_with_experts(self.num_experts as u64)
    }

    /// Parameters one token passes through (MoE: only its routed experts).
    pub fn active_params(&self) -> u64 {
        self.params_with_experts(self.experts_per_token as u64)
    }

    /// Bytes of all weights.
    pub fn weight_bytes(&self) -> u64 {
        self.params() * self.bytes_per_param as u64
    }

    /// Parameters of the routed experts of all layers (0 for a dense model).
    pub fn expert_params(&self) -> u64 {
        let per_expert = 3 * self.hidden_size as u64 * self.expert_ffn();
        self.num_moe_layers() as u64 * self.num_experts as u64 * per_expert
    }

    /// Bytes of the routed-expert weights of all layers (0 for a dense model).
    pub fn expert_weight_bytes(&self) -> u64 {
        self.expert_params() * self.bytes_per_param as u64
    }

    /// KV cache elements per token and layer: K and V of every KV head, or MLA's compressed
    /// KV plus its rotary key.
    pub fn kv_elements_per_token_per_layer(&self) -> u64 {
        if self.is_mla() {
            self.kv_lora_rank as u64 + self.qk_rope_head_dim as u64
        } else {
            2 * self.num_kv_heads as u64 * self.head_dim() as u64
        }
    }

    /// KV cache bytes per token at the checkpoint's dtype: layers · elements per layer · bytes.
    pub fn kv_bytes_per_token(&self) -> u64 {
        self.num_layers as u64
            * self.kv_elements_per_token_per_layer()
            * self.bytes_per_param as u64
    }

    /// Width of the attention (query) projection: heads · head_dim (MLA: heads · the
    /// query/key head's full width).
    pub fn attention_dim(&self) -> u64 {
        if self.is_mla() {
            self.num_heads as u64 * (self.qk_nope_head_dim + self.qk_rope_head_dim) as u64
        } else {
            self.num_heads as u64 * self.head_dim() as u64
        }
    }

    /// Reports every problem with this shape under `path`.
    pub fn validate(&self, path: &str, problems: &mut Problems) {
        let positive = [
            ("num_layers", self.num_layers),
            ("hidden_size", self.hidden_size),
            ("num_heads", self.num_heads),
            ("num_kv_heads", self.num_kv_heads),
            ("vocab_size", self.vocab_size),
            ("max_model_len", self.max_model_len),
            ("bytes_per_param", self.bytes_per_param),
        ];
        for (field, v) in positive {
            if v == 0 {
                problems.push(join(path, field), "must be >= 1");
            }
        }
        // Far above any real model, and low enough that the size arithmetic (u64) cannot
        // overflow: the largest term, MoE MLP weights, is at most
        // 2¹⁰ layers · 2¹² experts · 3 · 2¹⁶ hidden · 2²⁰ ffn · 2³ bytes = 3 · 2⁶¹ < 2⁶⁴.
        let at_most = [
            ("num_layers", self.num_layers, 1 << 10),
            ("hidden_size", self.hidden_size, 1 << 16),
            ("num_heads", self.num_heads, 1 << 10),
            ("head_dim", self.head_dim, 1 << 12),
            ("intermediate_size", self.intermediate_size, 1 << 20),
            (
                "expert_intermediate_size",
                self.expert_intermediate_size,
                1 << 20,
            ),
            ("vocab_size", self.vocab_size, 1 << 22),
            ("num_experts", self.num_experts, 1 << 12),
            (
                "shared_expert_intermediate_size",
                self.shared_expert_intermediate_size,
                1 << 20,
            ),
            ("first_dense_layers", self.first_dense_layers, 1 << 10),
            ("moe_layer_step", self.moe_layer_step, 1 << 10),
            ("kv_lora_rank", self.kv_lora_rank, 1 << 16),
            ("q_lora_rank", self.q_lora_rank, 1 << 16),
            ("qk_rope_head_dim", self.qk_rope_head_dim, 1 << 12),
            ("qk_nope_head_dim", self.qk_nope_head_dim, 1 << 12),
            ("v_head_dim", self.v_head_dim, 1 << 12),
            ("max_model_len", self.max_model_len, super::MAX_MODEL_LEN),
            ("bytes_per_param", self.bytes_per_param, 8),
        ];
        for (field, v, max) in at_most {
            if v > max {
                problems.push(
                    join(path, field),
                    format!("must be at most {max} (beyond any real model)"),
                );
            }
        }
        if self.is_mla() && (self.qk_rope_head_dim == 0 || self.v_head_dim == 0) {
            problems.push(
                join(path, "kv_lora_rank"),
                "latent attention also needs qk_rope_head_dim and v_head_dim",
            );
        }
        if self.num_kv_heads > 0 && self.num_heads % self.num_kv_heads != 0 {
            problems.push(
                join(path, "num_kv_heads"),
                format!("must divide num_heads ({})", self.num_heads),
            );
        }
        if self.head_dim == 0 && self.num_heads > 0 && self.hidden_size % self.num_heads != 0 {
            problems.push(
                join(path, "head_dim"),
                "must be given when hidden_size is not a multiple of num_heads",
            );
        }
        if self.is_moe() {
            if self.experts_per_token == 0 || self.experts_per_token > self.num_experts {
                problems.push(
                    join(path, "experts_per_token"),
                    format!("must be between 1 and num_experts ({})", self.num_experts),
                );
            }
            if self.expert_ffn() == 0 {
                problems.push(join(path, "expert_intermediate_size"), "must be >= 1");
            }
            if self.moe_layer_step == 0 {
                problems.push(join(path, "moe_layer_step"), "must be >= 1");
            }
            if self.num_moe_layers() == 0 {
                problems.push(
                    join(path, "first_dense_layers"),
                    "leaves no layer with experts; lower it or set num_experts to 0",
                );
            }
        } else if self.intermediate_size == 0 {
            problems.push(join(path, "intermediate_size"), "must be >= 1");
        }
    }
}
