//! Import of a Hugging Face `config.json` into an [`Architecture`].

use super::{Architecture, Dtype};
use serde_json::{Map, Value};

/// Builds an architecture from the text of a Hugging Face `config.json`.
pub fn from_config_json(text: &str) -> Result<Architecture, String> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| format!("config.json is not valid JSON: {e}"))?;
    from_config_value(&value)
}

/// Builds an architecture from a parsed Hugging Face `config.json`; errors name the field.
pub fn from_config_value(value: &Value) -> Result<Architecture, String> {
    let obj = value
        .as_object()
        .ok_or("config.json must be a JSON object")?;
    let root = obj;
    // Multimodal configs nest the language model under `text_config`.
    let obj = match obj.get("text_config").and_then(Value::as_object) {
        Some(text) if !obj.contains_key("num_hidden_layers") => text,
        _ => obj,
    };
    let model_type = obj.get("model_type").and_then(Value::as_str).unwrap_or("");
    let num_layers = required(obj, "num_hidden_layers")?;
    let hidden_size = required(obj, "hidden_size")?;
    let num_heads = required(obj, "num_attention_heads")?;
    let num_experts = match optional(obj, "num_local_experts")? {
        Some(n) => n,
        None => match optional(obj, "n_routed_experts")? {
            Some(n) => n,
            None => optional(obj, "num_experts")?.unwrap_or(0),
        },
    };
    let llama4 = model_type.starts_with("llama4");
    // Llama 4 calls the expert width `intermediate_size` and the dense MLP's
    // `intermediate_size_mlp`, and adds one shared expert of the expert width.
    let (dense_ffn_key, expert_ffn_key) = if llama4 {
        ("intermediate_size_mlp", "intermediate_size")
    } else {
        ("intermediate_size", "moe_intermediate_size")
    };
    let expert_ffn = optional(obj, expert_ffn_key)?.unwrap_or(0);
    let shared = if llama4 && num_experts > 0 {
        expert_ffn
    } else if let Some(n) = optional(obj, "n_shared_experts")? {
        n.saturating_mul(expert_ffn)
    } else {
        optional(obj, "shared_expert_intermediate_size")?.unwrap_or(0)
    };
    let arch = Architecture {
        num_layers,
        hidden_size,
        num_heads,
        num_kv_heads: optional(obj, "num_key_value_heads")?.unwrap_or(num_heads),
        head_dim: optional(obj, "head_dim")?.unwrap_or(0),
        intermediate_size: if num_experts > 0 {
            optional(obj, dense_ffn_key)?.unwrap_or(0)
        } else {
            required(obj, dense_ffn_key)?
        },
        vocab_size: required(obj, "vocab_size")?,
        tie_word_embeddings: flag(obj, "tie_word_embeddings")?.unwrap_or(false),
        num_experts,
        experts_per_token: if num_experts > 0 {
            required(obj, "num_experts_per_tok")?
        } else {
            0
        },
        expert_intermediate_size: expert_ffn,
        shared_expert_intermediate_size: shared,
        first_dense_layers: dense_prefix(obj)?,
        moe_layer_step: optional(obj, "interleave_moe_layer_step")?
            .or(optional(obj, "decoder_sparse_step")?)
            .unwrap_or(1),
        kv_lora_rank: optional(obj, "kv_lora_rank")?.unwrap_or(0),
        q_lora_rank: optional(obj, "q_lora_rank")?.unwrap_or(0),
        qk_rope_head_dim: optional(obj, "qk_rope_head_dim")?.unwrap_or(0),
        qk_nope_head_dim: optional(obj, "qk_nope_head_dim")?.unwrap_or(0),
        v_head_dim: optional(obj, "v_head_dim")?.unwrap_or(0),
        qkv_bias: flag(obj, "attention_bias")?.unwrap_or(model_type == "qwen2"),
        qk_norm: model_type.starts_with("qwen3") || flag(obj, "use_qk_norm")?.unwrap_or(false),
        max_model_len: optional(obj, "max_position_embeddings")?.unwrap_or(4096),
        bytes_per_param: if fp8_checkpoint(root) {
            1
        } else {
            dtype_bytes(obj)?
        },
    };
    let mut problems = crate::validate::Problems::new();
    arch.validate("", &mut problems);
    match problems.as_slice().first() {
        Some(p) => Err(format!("config.json {p}")),
        None => Ok(arch),
    }
}

/// The dense layers before the MoE ones: DeepSeek's `first_k_dense_replace`, or Qwen-MoE's
/// `mlp_only_layers` when they are the first k. DeepSeek's `moe_layer_freq` other than 1, and
/// dense layers between MoE ones, cannot be expressed: refused rather than sized wrong.
fn dense_prefix(obj: &Map<String, Value>) -> Result<u32, String> {
    match optional(obj, "moe_layer_freq")? {
        None | Some(1) => {}
        Some(n) => {
            return Err(format!(
                "config.json field `moe_layer_freq` is {n} (DeepSeek experts only every {n} \
                 layers) cannot be modelled; only 1 can"
            ))
        }
    }
    let mut first = optional(obj, "first_k_dense_replace")?.unwrap_or(0);
    if let Some(v) = obj.get("mlp_only_layers").filter(|v| !v.is_null()) {
        let layers: Vec<u64> = v
            .as_array()
            .and_then(|a| a.iter().map(Value::as_u64).collect())
            .ok_or_else(|| {
                format!(
                    "config.json field `mlp_only_layers` must be a list of layer numbers, got {v}"
                )
            })?;
        if layers.iter().enumerate().any(|(i, &l)| l != i as u64) {
            return Err(format!(
                "config.json field `mlp_only_layers` is {v}: dense layers between MoE layers \
                 cannot be modelled, only a dense first few"
            ));
        }
        first = first.max(layers.len() as u32);
    }
    Ok(first)
}

fn optional(obj: &Map<String, Value>, field: &str) -> Result<Option<u32>, String> {
    match obj.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| {
                format!("config.json field `{field}` must be a non-negative integer, got {v}")
            }),
    }
}

fn required(obj: &Map<String, Value>, field: &str) -> Result<u32, String> {
    optional(obj, field)?.ok_or_else(|| format!("config.json is missing field `{field}`"))
}

fn flag(obj: &Map<String, Value>, field: &str) -> Result<Option<bool>, String> {
    match obj.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(v) => Err(format!(
            "config.json field `{field}` must be true or false, got {v}"
        )),
    }
}

/// True when the checkpoint's linear weights are stored as FP8 (`quant_method: fp8`,
/// ModelOpt's `quant_algo: FP8`, or a compressed-tensors float format of 8 bits).
fn fp8_checkpoint(root: &Map<String, Value>) -> bool {
    let Some(q) = root.get("quantization_config").and_then(Value::as_object) else {
        return false;
    };
    match q.get("quant_method").and_then(Value::as_str) {
        Some("fp8") => true,
        Some("modelopt") => q
            .get("quant_algo")
            .and_then(Value::as_str)
            .is_some_and(|a| a.eq_ignore_ascii_case("fp8")),
        Some("compressed-tensors") => compressed_float_weights(q, 8),
        _ => false,
    }
}

/// True when a compressed-tensors `quantization_config` stores some group's weights as
/// floats of `bits` bits.
fn compressed_float_weights(q: &Map<String, Value>, bits: u32) -> bool {
    q.get("config_groups")
        .and_then(Value::as_object)
        .is_some_and(|groups| {
            groups.values().any(|g| {
                let w = &g["weights"];
                w["type"] == "float" && w["num_bits"] == bits
            })
        })
}

/// The 4-bit float format of a checkpoint's linear weights, if it has one: NVFP4 (ModelOpt's
/// `quant_algo: NVFP4`, or a compressed-tensors float format of 4 bits in groups of 16) or
/// MXFP4 (`quant_method: mxfp4`, gpt-oss's).
pub fn fp4_checkpoint(config: &Value) -> Option<Dtype> {
    let q = config.get("quantization_config")?.as_object()?;
    match q.get("quant_method").and_then(Value::as_str)? {
        "mxfp4" => Some(Dtype::Mxfp4),
        "modelopt" => q
            .get("quant_algo")
            .and_then(Value::as_str)
            .filter(|a| a.eq_ignore_ascii_case("nvfp4"))
            .map(|_| Dtype::Nvfp4),
        "compressed-tensors" => compressed_float_weights(q, 4).then_some(Dtype::Nvfp4),
        _ => None,
    }
}

fn dtype_bytes(obj: &Map<String, Value>) -> Result<u32, String> {
    let dtype = match obj.get("torch_dtype").or_else(|| obj.get("dtype")) {
        None | Some(Value::Null) => return Ok(2),
        Some(Value::String(s)) => s.as_str(),
        Some(v) => {
            return Err(format!(
                "config.json field `torch_dtype` must be a string, got {v}"
            ))
        }
    };
    match dtype {
        "bfloat16" | "float16" | "half" => Ok(2),
        "float32" | "float" => Ok(4),
        "float8_e4m3fn" | "float8_e5m2" | "int8" => Ok(1),
        other => Err(format!(
            "config.json field `torch_dtype`: unsupported dtype \"{other}\" (use bfloat16, float16, float32 or float8)"
        )),
    }
}
