//! Built-in models. Only shapes are typed in; sizes are derived (see `Architecture`).

use super::Architecture;

/// A dense bf16 shape with the defaults the catalogue shares.
#[allow(clippy::too_many_arguments)]
fn dense(
    layers: u32,
    hidden: u32,
    heads: u32,
    kv_heads: u32,
    intermediate: u32,
    vocab: u32,
    tied: bool,
    max_model_len: u32,
) -> Architecture {
    Architecture {
        num_layers: layers,
        hidden_size: hidden,
        num_heads: heads,
        num_kv_heads: kv_heads,
        head_dim: 0,
        intermediate_size: intermediate,
        vocab_size: vocab,
        tie_word_embeddings: tied,
        num_experts: 0,
        experts_per_token: 0,
        expert_intermediate_size: 0,
        shared_expert_intermediate_size: 0,
        first_dense_layers: 0,
        moe_layer_step: 1,
        kv_lora_rank: 0,
        q_lora_rank: 0,
        qk_rope_head_dim: 0,
        qk_nope_head_dim: 0,
        v_head_dim: 0,
        qkv_bias: false,
        qk_norm: false,
        max_model_len,
        bytes_per_param: 2,
    }
}

/// Multi-head latent attention over `base`: compressed KV of rank `kv_rank` (plus a 64-wide
/// rotary key), query rank `q_rank` (0: full), `nope`-wide non-rotary query/key heads and
/// `v`-wide value heads.
fn mla(base: Architecture, kv_rank: u32, q_rank: u32, nope: u32, v: u32) -> Architecture {
    Architecture {
        kv_lora_rank: kv_rank,
        q_lora_rank: q_rank,
        qk_rope_head_dim: 64,
        qk_nope_head_dim: nope,
        v_head_dim: v,
        ..base
    }
}

/// Llama 4 Scout: every layer has 16 experts (top-1) plus a shared expert of the same width;
/// `bytes` per linear weight (2: bf16, 1: the FP8 checkpoint).
fn llama4_scout(bytes: u32) -> Architecture {
    Architecture {
        head_dim: 128,
        num_experts: 16,
        experts_per_token: 1,
        expert_intermediate_size: 8192,
        shared_expert_intermediate_size: 8192,
        qk_norm: true,
        bytes_per_param: bytes,
        ..dense(48, 5120, 40, 8, 16384, 202_048, false, 10_485_760)
    }
}

/// IBM granite-3.3-8b-instruct, Opal's default model.
pub fn granite_3_3_8b() -> Architecture {
    dense(40, 4096, 32, 8, 12800, 49159, true, 131_072)
}

/// The built-in models by name, in display order.
pub fn catalogue() -> Vec<(&'static str, Architecture)> {
    vec![
        ("granite-3.3-8b-instruct", granite_3_3_8b()),
        (
            "Llama-3.1-8B",
            dense(32, 4096, 32, 8, 14336, 128_256, false, 131_072),
        ),
        (
            "Llama-2-7B",
            Architecture {
                num_kv_heads: 32,
                ..dense(32, 4096, 32, 32, 11008, 32_000, false, 4096)
            },
        ),
        (
            "Llama-2-70B",
            dense(80, 8192, 64, 8, 28672, 32_000, false, 4096),
        ),
        (
            "CodeLlama-34B",
            dense(48, 8192, 64, 8, 22016, 32_000, false, 16_384),
        ),
        (
            "Llama-3.1-70B",
            dense(80, 8192, 64, 8, 28672, 128_256, false, 131_072),
        ),
        (
            "Qwen2.5-7B",
            Architecture {
                qkv_bias: true,
                ..dense(28, 3584, 28, 4, 18944, 152_064, false, 32_768)
            },
        ),
        (
            "Mixtral-8x7B",
            Architecture {
                num_experts: 8,
                experts_per_token: 2,
                ..dense(32, 4096, 32, 8, 14336, 32_000, false, 32_768)
            },
        ),
        (
            "Mistral-Nemo-12B",
            Architecture {
                head_dim: 128,
                ..dense(40, 5120, 32, 8, 14336, 131_072, false, 131_072)
            },
        ),
        (
            "Qwen3-14B",
            Architecture {
                head_dim: 128,
                qk_norm: true,
                ..dense(40, 5120, 40, 8, 17408, 151_936, false, 40_960)
            },
        ),
        ("Yi-34B", dense(60, 7168, 56, 8, 20480, 64_000, false, 4096)),
        ("Llama-4-Scout-17B-16E", llama4_scout(2)),
        ("Llama-4-Scout-17B-16E-FP8", llama4_scout(1)),
        (
            "DeepSeek-V2-Lite",
            Architecture {
                num_experts: 64,
                experts_per_token: 6,
                expert_intermediate_size: 1408,
                shared_expert_intermediate_size: 2 * 1408,
                first_dense_layers: 1,
                ..mla(
                    dense(27, 2048, 16, 16, 10944, 102_400, false, 163_840),
                    512,
                    0,
                    128,
                    128,
                )
            },
        ),
        (
            "GLM-5.2-FP8",
            Architecture {
                head_dim: 192,
                num_experts: 256,
                experts_per_token: 8,
                expert_intermediate_size: 2048,
                shared_expert_intermediate_size: 2048,
                first_dense_layers: 3,
                bytes_per_param: 1,
                ..mla(
                    dense(78, 6144, 64, 64, 12288, 154_880, false, 1_048_576),
                    512,
                    2048,
                    192,
                    256,
                )
            },
        ),
        (
            "Qwen3-30B-A3B",
            Architecture {
                head_dim: 128,
                num_experts: 128,
                experts_per_token: 8,
                expert_intermediate_size: 768,
                qk_norm: true,
                ..dense(48, 2048, 32, 4, 6144, 151_936, false, 40_960)
            },
        ),
        ("Qwen3-235B-A22B", qwen3_235b(2)),
        ("Qwen3-235B-A22B-FP8", qwen3_235b(1)),
        (
            "DeepSeek-V3",
            Architecture {
                num_experts: 256,
                experts_per_token: 8,
                expert_intermediate_size: 2048,
                shared_expert_intermediate_size: 2048,
                first_dense_layers: 3,
                bytes_per_param: 1,
                ..mla(
                    dense(61, 7168, 128, 128, 18432, 129_280, false, 163_840),
                    512,
                    1536,
                    128,
                    128,
                )
            },
        ),
        (
            "MiniMax-M2",
            Architecture {
                head_dim: 128,
                num_experts: 256,
                experts_per_token: 8,
                expert_intermediate_size: 1536,
                qk_norm: true,
                bytes_per_param: 1,
                ..dense(62, 3072, 48, 8, 1536, 200_064, false, 196_608)
            },
        ),
    ]
}

/// Qwen3-235B-A22B: 94 layers of 128 experts (top-8), grouped-query attention with 4 KV
/// heads; `bytes` per linear weight (2: bf16, 1: the FP8 checkpoint).
fn qwen3_235b(bytes: u32) -> Architecture {
    Architecture {
        head_dim: 128,
        num_experts: 128,
        experts_per_token: 8,
        expert_intermediate_size: 1536,
        qk_norm: true,
        bytes_per_param: bytes,
        ..dense(94, 4096, 64, 4, 12288, 151_936, false, 40_960)
    }
}

/// Hugging Face ids accepted for catalogue models (the shape does not depend on the
/// instruct or base variant).
const HF_IDS: [(&str, &str); 45] = [
    ("meta-llama/Meta-Llama-3-8B", "Llama-3.1-8B"),
    (
        "ibm-granite/granite-3.3-8b-instruct",
        "granite-3.3-8b-instruct",
    ),
    ("meta-llama/Llama-2-7b-hf", "Llama-2-7B"),
    ("meta-llama/Llama-2-7b-chat-hf", "Llama-2-7B"),
    ("llama-2-7b-hf", "Llama-2-7B"),
    ("meta-llama/Llama-2-70b-hf", "Llama-2-70B"),
    ("meta-llama/Llama-2-70b-chat-hf", "Llama-2-70B"),
    ("codellama/CodeLlama-34b-Instruct-hf", "CodeLlama-34B"),
    ("codellama/CodeLlama-34b-hf", "CodeLlama-34B"),
    ("codellama-34b-instruct-hf", "CodeLlama-34B"),
    ("meta-llama/Llama-3.1-8B", "Llama-3.1-8B"),
    ("meta-llama/Llama-3.1-8B-Instruct", "Llama-3.1-8B"),
    ("llama-3.1-8b-instruct", "Llama-3.1-8B"),
    ("meta-llama/Llama-3.1-70B", "Llama-3.1-70B"),
    ("meta-llama/Llama-3.1-70B-Instruct", "Llama-3.1-70B"),
    ("llama-3.1-70b-instruct", "Llama-3.1-70B"),
    ("Qwen/Qwen2.5-7B", "Qwen2.5-7B"),
    ("Qwen/Qwen2.5-7B-Instruct", "Qwen2.5-7B"),
    ("qwen2.5-7b-instruct", "Qwen2.5-7B"),
    ("mistralai/Mixtral-8x7B-v0.1", "Mixtral-8x7B"),
    ("mistralai/Mixtral-8x7B-Instruct-v0.1", "Mixtral-8x7B"),
    ("mixtral-8x7b-v0.1", "Mixtral-8x7B"),
    ("Qwen/Qwen3-30B-A3B", "Qwen3-30B-A3B"),
    ("Qwen/Qwen3-30B-A3B-Instruct-2507", "Qwen3-30B-A3B"),
    ("mistralai/Mistral-Nemo-Instruct-2407", "Mistral-Nemo-12B"),
    ("mistralai/Mistral-Nemo-Base-2407", "Mistral-Nemo-12B"),
    ("mistral-nemo-instruct-2407", "Mistral-Nemo-12B"),
    ("Qwen/Qwen3-14B", "Qwen3-14B"),
    ("01-ai/Yi-34B", "Yi-34B"),
    ("01-ai/Yi-34B-Chat", "Yi-34B"),
    (
        "meta-llama/Llama-4-Scout-17B-16E-Instruct",
        "Llama-4-Scout-17B-16E",
    ),
    (
        "RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic",
        "Llama-4-Scout-17B-16E-FP8",
    ),
    (
        "llama-4-scout-17b-16e-instruct-fp8-dynamic",
        "Llama-4-Scout-17B-16E-FP8",
    ),
    ("deepseek-ai/DeepSeek-V2-Lite", "DeepSeek-V2-Lite"),
    ("deepseek-ai/DeepSeek-V2-Lite-Chat", "DeepSeek-V2-Lite"),
    ("zai-org/GLM-5.2-FP8", "GLM-5.2-FP8"),
    ("Qwen/Qwen3-235B-A22B", "Qwen3-235B-A22B"),
    ("Qwen/Qwen3-235B-A22B-Instruct-2507", "Qwen3-235B-A22B"),
    ("Qwen/Qwen3-235B-A22B-FP8", "Qwen3-235B-A22B-FP8"),
    (
        "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8",
        "Qwen3-235B-A22B-FP8",
    ),
    ("deepseek-ai/DeepSeek-V3", "DeepSeek-V3"),
    ("deepseek-ai/DeepSeek-V3-0324", "DeepSeek-V3"),
    ("deepseek-ai/DeepSeek-R1", "DeepSeek-V3"),
    ("MiniMaxAI/MiniMax-M2", "MiniMax-M2"),
    ("glm-5.2-fp8", "GLM-5.2-FP8"),
];

/// The catalogue model called `name`, or whose Hugging Face id is `name` (case-insensitive).
pub fn lookup(name: &str) -> Option<Architecture> {
    let name = HF_IDS
        .iter()
        .find(|(id, _)| id.eq_ignore_ascii_case(name))
        .map_or(name, |(_, n)| n);
    catalogue()
        .into_iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, a)| a)
}
