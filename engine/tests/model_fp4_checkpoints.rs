//! 4-bit float checkpoints read from their Hugging Face `config.json`: NVFP4 (NVIDIA ModelOpt,
//! and llm-compressor's compressed-tensors) and MXFP4 (gpt-oss) weights are sized at their
//! bits and compute as vLLM runs them.

use engine::model::{Dtype, ModelConfig};
use serde_json::{json, Value};

/// Llama-3.1-8B-Instruct's shape (meta-llama/Llama-3.1-8B-Instruct's config.json).
fn llama_3_1_8b(quantization: Value) -> Value {
    json!({
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
        "max_position_embeddings": 131072, "tie_word_embeddings": false,
        "torch_dtype": "bfloat16", "quantization_config": quantization
    })
}

fn resolve(hf: Value) -> engine::model::Model {
    ModelConfig {
        name: "custom".into(),
        hf_config: Some(hf),
        ..Default::default()
    }
    .resolve()
    .unwrap()
}

#[test]
fn an_nvfp4_checkpoint_is_w4a4_at_four_and_a_half_bits_a_weight() {
    // nvidia/Llama-3.1-8B-Instruct-FP4's quantization_config (ModelOpt).
    let m = resolve(llama_3_1_8b(json!({
        "quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16,
        "kv_cache_quant_algo": null, "exclude_modules": ["lm_head"]
    })));
    assert_eq!(m.dtypes.weight, Dtype::Nvfp4);
    assert_eq!(m.dtypes.activation, Dtype::Nvfp4);
    assert_eq!(m.dtypes.kv_cache, Dtype::Bfloat16);
    // Linear weights a layer: q 4096², k and v 4096·1024 each, o 4096², gate and up
    // 4096·14336 each, down 14336·4096 = 218_103_808; 32 layers at 0.5625 B:
    // 3_925_868_544 B. Embedding and LM head (128256·4096 each) at 2 B: 2_101_346_304 B.
    // Norms (2·4096 a layer, 4096 at the end: 266_240 weights) stay in the 16-bit count.
    let want = 3_925_868_544.0 + 2_101_346_304.0 + 266_240.0 * 0.5625;
    assert!(
        (m.weight_bytes as f64 - want).abs() < 1e3,
        "{} vs {want}",
        m.weight_bytes
    );
}

#[test]
fn compressed_tensors_4_bit_floats_are_nvfp4_and_modelopt_fp8_is_fp8() {
    let m = resolve(llama_3_1_8b(json!({
        "quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized",
        "config_groups": {"group_0": {"weights": {"type": "float", "num_bits": 4, "group_size": 16}}}
    })));
    assert_eq!(m.dtypes.weight, Dtype::Nvfp4);
    let m = resolve(llama_3_1_8b(
        json!({"quant_method": "modelopt", "quant_algo": "FP8"}),
    ));
    assert_eq!(
        (m.dtypes.weight, m.dtypes.activation),
        (Dtype::Fp8, Dtype::Fp8)
    );
}

#[test]
fn an_mxfp4_checkpoint_keeps_16_bit_activations_unless_told_and_fp4_kv_is_refused() {
    let hf = llama_3_1_8b(json!({"quant_method": "mxfp4"}));
    let m = resolve(hf.clone());
    assert_eq!(m.dtypes.weight, Dtype::Mxfp4);
    assert_eq!(m.dtypes.activation, Dtype::Bfloat16);
    let told = ModelConfig {
        name: "custom".into(),
        hf_config: Some(hf.clone()),
        activation_dtype: Dtype::Mxfp4,
        ..Default::default()
    };
    assert_eq!(told.resolve().unwrap().dtypes.activation, Dtype::Mxfp4);
    let err = ModelConfig {
        name: "custom".into(),
        hf_config: Some(hf),
        kv_cache_dtype: Dtype::Nvfp4,
        ..Default::default()
    }
    .resolve()
    .unwrap_err();
    assert!(err.contains("model.kv_cache_dtype"), "{err}");
}
