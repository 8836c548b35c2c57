//! Hugging Face `config.json` import of mixture-of-experts models with shared experts, a
//! dense first few layers and multi-head latent attention (DeepSeek-V2/V3, Qwen-MoE): the
//! sizes must be the published ones, and what cannot be modelled is refused by its key.

use engine::model::hf::from_config_json;
use engine::model::Model;

/// DeepSeek-V3's config.json (deepseek-ai/DeepSeek-V3), without `quantization_config`.
const DEEPSEEK_V3: &str = r#"{
    "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
    "hidden_size": 7168, "intermediate_size": 18432, "moe_intermediate_size": 2048,
    "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128,
    "n_shared_experts": 1, "n_routed_experts": 256, "num_experts_per_tok": 8,
    "first_k_dense_replace": 3, "moe_layer_freq": 1, "n_group": 8, "topk_group": 4,
    "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 129280,
    "max_position_embeddings": 163840, "tie_word_embeddings": false,
    "num_nextn_predict_layers": 1, "routed_scaling_factor": 2.5,
    "torch_dtype": "bfloat16"}"#;

fn model(text: &str) -> Model {
    Model::new("imported", from_config_json(text).unwrap())
}

/// `x` within `tolerance` of the published figure `published`.
fn about(x: u64, published: f64, tolerance: f64) {
    assert!(
        (x as f64 - published).abs() <= tolerance,
        "{x} is not {published} ± {tolerance}"
    );
}

#[test]
fn deepseek_v3_has_its_published_size_and_a_latent_kv_cache() {
    let m = model(DEEPSEEK_V3);
    // DeepSeek's own count: 671B in the main model (the MTP module aside); 36.6B activated,
    // including the 0.9B output head, i.e. ours (which also counts the 0.93B input
    // embedding, 129,280 · 7,168) minus that embedding.
    about(m.params, 671e9, 0.5e9);
    about(m.active_params - 129_280 * 7_168, 36.6e9, 0.05e9);
    // vLLM's MLA cache: (kv_lora_rank 512 + qk_rope_head_dim 64) · 61 layers · 2 bytes =
    // 70,272 bytes a token, not 2 · 128 heads · 56 · 61 · 2 = 1,748,992.
    assert_eq!(m.kv_bytes_per_token, 70_272);
    assert_eq!(m.arch.first_dense_layers, 3);
    assert_eq!(m.arch.shared_expert_intermediate_size, 2048);
    // Routed expert weights: 58 MoE layers · 256 experts · 3 · 7168 · 2048 · 2 bytes.
    assert_eq!(m.arch.expert_weight_bytes(), 58 * 256 * 3 * 7168 * 2048 * 2);
}

#[test]
fn deepseek_v2_lite_without_query_compression() {
    let m = model(
        r#"{"model_type": "deepseek_v2", "hidden_size": 2048, "intermediate_size": 10944,
            "moe_intermediate_size": 1408, "num_hidden_layers": 27, "num_attention_heads": 16,
            "num_key_value_heads": 16, "n_shared_experts": 2, "n_routed_experts": 64,
            "num_experts_per_tok": 6, "first_k_dense_replace": 1, "kv_lora_rank": 512,
            "q_lora_rank": null, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
            "v_head_dim": 128, "vocab_size": 102400, "max_position_embeddings": 163840,
            "tie_word_embeddings": false, "torch_dtype": "bfloat16"}"#,
    );
    // Published: 15.7B total, 2.4B activated (without the 0.21B input embedding).
    about(m.params, 15.7e9, 0.05e9);
    about(m.active_params - 102_400 * 2_048, 2.4e9, 0.1e9);
    assert_eq!(m.arch.q_lora_rank, 0);
    assert_eq!(m.kv_bytes_per_token, (512 + 64) * 27 * 2);
}

#[test]
fn qwen_moe_shared_experts_count() {
    let qwen15 = model(
        r#"{"model_type": "qwen2_moe", "hidden_size": 2048, "intermediate_size": 5632,
            "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632,
            "num_experts": 60, "num_experts_per_tok": 4, "num_hidden_layers": 24,
            "num_attention_heads": 16, "num_key_value_heads": 16, "vocab_size": 151936,
            "max_position_embeddings": 8192, "decoder_sparse_step": 1,
            "mlp_only_layers": [], "tie_word_embeddings": false, "torch_dtype": "bfloat16"}"#,
    );
    // Qwen1.5-MoE-A2.7B: 14.3B total, 2.7B activated.
    about(qwen15.params, 14.3e9, 0.05e9);
    about(qwen15.active_params, 2.7e9, 0.05e9);
    // Without its shared expert it would be 24 · 3 · 2048 · 5632 = 0.83B smaller.
    let qwen2 = model(
        r#"{"model_type": "qwen2_moe", "hidden_size": 3584, "intermediate_size": 18944,
            "moe_intermediate_size": 2560, "shared_expert_intermediate_size": 20480,
            "num_experts": 64, "num_experts_per_tok": 8, "num_hidden_layers": 28,
            "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 151936,
            "max_position_embeddings": 32768, "tie_word_embeddings": false}"#,
    );
    // Qwen2-57B-A14B: 57.4B total, 14B activated.
    about(qwen2.params, 57.4e9, 0.05e9);
    about(qwen2.active_params, 14.2e9, 0.1e9);
}

#[test]
fn what_the_architecture_cannot_express_is_refused_by_its_key() {
    let err = |text: String| from_config_json(&text).unwrap_err();
    assert_eq!(
        err(DEEPSEEK_V3.replace(r#""moe_layer_freq": 1"#, r#""moe_layer_freq": 2"#)),
        "config.json field `moe_layer_freq` is 2 (DeepSeek experts only every 2 layers) \
         cannot be modelled; only 1 can"
    );
    let qwen = |layers: &str| {
        format!(
            r#"{{"model_type": "qwen2_moe", "hidden_size": 2048, "intermediate_size": 5632,
                "moe_intermediate_size": 1408, "num_experts": 60, "num_experts_per_tok": 4,
                "num_hidden_layers": 24, "num_attention_heads": 16, "vocab_size": 151936,
                "mlp_only_layers": {layers}}}"#
        )
    };
    assert!(err(qwen("[0, 5]")).starts_with(
        "config.json field `mlp_only_layers` is [0,5]: dense layers between MoE layers"
    ));
    // A leading run of dense layers is what first_k_dense_replace says.
    let leading = from_config_json(&qwen("[0, 1]")).unwrap();
    assert_eq!(leading.first_dense_layers, 2);
}

#[test]
fn a_scenario_serves_deepseek_v3_on_eight_h200s() {
    // 671B · 2 bytes = 1.34 TB (1249.9 GB of 2³⁰ bytes) of weights: 8 H200s cannot hold
    // them, 16 can; the message says so with the numbers rather than sizing a 38B model.
    let hf: serde_json::Value = serde_json::from_str(DEEPSEEK_V3).unwrap();
    let doc = |tp: u32| {
        serde_json::json!({"model": {"name": "custom", "hf_config": hf},
            "hardware": {"gpu": "H200", "tp": tp}})
        .to_string()
    };
    let p = opal::parse_scenario(&doc(8)).unwrap_err();
    assert_eq!(p[0].path, "hardware");
    assert!(p[0].message.contains("needs 1249.9 GB of weights"), "{p:?}");
    let ok = opal::parse_scenario(&doc(16)).unwrap();
    assert_eq!(ok.model.resolve().unwrap().kv_bytes_per_token, 70_272);
}

#[test]
fn the_catalogue_deepseek_v3_is_its_config_json_at_its_fp8_checkpoint() {
    let mut imported = from_config_json(DEEPSEEK_V3).unwrap();
    // The published checkpoint stores its linear weights as FP8 (block-scaled).
    imported.bytes_per_param = 1;
    assert_eq!(
        Some(imported),
        engine::model::catalogue::lookup("deepseek-ai/DeepSeek-R1")
    );
}
