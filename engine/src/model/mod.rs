//! The model being served: catalogue entries, custom shapes and Hugging Face `config.json` import.

mod architecture;
pub mod catalogue;
mod dtype;
pub mod hf;

pub use architecture::Architecture;
pub use dtype::{Dtype, Dtypes};

use crate::validate::{join, Problems};
use serde::{Deserialize, Serialize};

/// Longest `max_model_len` accepted (16M tokens): beyond any real model, and small enough
/// that KV sizes in bytes stay far from overflowing.
pub const MAX_MODEL_LEN: u32 = 1 << 24;

/// The `model` section: a catalogue name, a custom shape, or a pasted `config.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelConfig {
    /// Catalogue model name, or `custom`. Default `granite-3.3-8b-instruct`.
    pub name: String,
    /// Shape of a custom model (used when `name` is `custom` and `hf_config` is absent). Default none.
    pub custom: Option<Architecture>,
    /// A Hugging Face `config.json` object defining a custom model (used when `name` is `custom`). Default none.
    pub hf_config: Option<serde_json::Value>,
    /// Overrides the model's maximum sequence length, tokens; 0 keeps the model's own. Default 0.
    pub max_model_len: u32,
    /// Format of the linear layers' weights (vLLM `--quantization`): `auto` (the
    /// checkpoint's), `bfloat16`, `float16`, `float32`, `fp8`, `nvfp4`, `mxfp4`, `int8` or
    /// `int4`. Default `auto`.
    pub weight_dtype: Dtype,
    /// Format the GEMMs compute in (vLLM `--dtype`; `fp8` means W8A8 on the FP8 matrix units,
    /// `nvfp4` / `mxfp4` W4A4 on the FP4 ones): `auto` is `fp8` with FP8 weights, `nvfp4`
    /// with NVFP4 weights, else 16-bit. On a GPU without such units the GEMMs run at its
    /// 16-bit peak (vLLM's weight-only kernels). Default `auto`.
    pub activation_dtype: Dtype,
    /// Format of the KV cache (vLLM `--kv-cache-dtype`): `auto` follows the activations
    /// (16-bit), or `fp8`. Default `auto`.
    pub kv_cache_dtype: Dtype,
}

impl Default for ModelConfig {
    fn default() -> Self {
        Self {
            name: "granite-3.3-8b-instruct".into(),
            custom: None,
            hf_config: None,
            max_model_len: 0,
            weight_dtype: Dtype::Auto,
            activation_dtype: Dtype::Auto,
            kv_cache_dtype: Dtype::Auto,
        }
    }
}

impl ModelConfig {
    /// Reports every problem in this section under `path`.
    pub fn validate(&self, path: &str, problems: &mut Problems) {
        for (field, dtype) in [
            ("activation_dtype", self.activation_dtype),
            ("kv_cache_dtype", self.kv_cache_dtype),
        ] {
            if matches!(dtype, Dtype::Int8 | Dtype::Int4) {
                problems.push(
                    join(path, field),
                    "integer formats are for weights only; use auto, bfloat16, float16, float32 or fp8",
                );
            }
        }
        if self.kv_cache_dtype.is_fp4() {
            problems.push(
                join(path, "kv_cache_dtype"),
                "4-bit floats are for weights and activations; use auto, bfloat16, float16, float32 or fp8",
            );
        }
        if self.max_model_len > MAX_MODEL_LEN {
            problems.push(
                join(path, "max_model_len"),
                format!("must be at most {MAX_MODEL_LEN} tokens"),
            );
        }
        if !self.name.eq_ignore_ascii_case("custom") {
            if catalogue::lookup(&self.name).is_none() {
                problems.push(join(path, "name"), unknown_model(&self.name));
            }
            return;
        }
        match (&self.hf_config, &self.custom) {
            (Some(hf), _) => {
                if let Err(e) = hf::from_config_value(hf) {
                    problems.push(join(path, "hf_config"), e);
                }
            }
            (None, Some(arch)) => arch.validate(&join(path, "custom"), problems),
            (None, None) => problems.push(
                join(path, "custom"),
                "a custom model needs `custom` (its shape) or `hf_config` (a config.json)",
            ),
        }
    }

    /// The model with its derived sizes, or a message saying what is wrong.
    pub fn resolve(&self) -> Result<Model, String> {
        let mut problems = Problems::new();
        self.validate("model", &mut problems);
        if let Some(p) = problems.as_slice().first() {
            return Err(p.to_string());
        }
        let mut arch = if !self.name.eq_ignore_ascii_case("custom") {
            catalogue::lookup(&self.name).ok_or_else(|| unknown_model(&self.name))?
        } else if let Some(hf) = &self.hf_config {
            hf::from_config_value(hf)?
        } else {
            self.custom.clone().unwrap_or_default()
        };
        if self.max_model_len > 0 {
            arch.max_model_len = self.max_model_len;
        }
        // A 4-bit checkpoint's format is not a whole number of bytes per weight: the
        // config.json names it.
        let weight = match (self.weight_dtype, &self.hf_config) {
            (Dtype::Auto, Some(hf)) if self.name.eq_ignore_ascii_case("custom") => {
                hf::fp4_checkpoint(hf).unwrap_or(Dtype::Auto)
            }
            (w, _) => w,
        };
        let dtypes = Dtypes::resolve(
            weight,
            self.activation_dtype,
            self.kv_cache_dtype,
            arch.bytes_per_param,
        );
        Ok(Model::with_dtypes(self.name.clone(), arch, dtypes))
    }
}

fn unknown_model(name: &str) -> String {
    let names: Vec<&str> = catalogue::catalogue().into_iter().map(|(n, _)| n).collect();
    format!(
        "unknown model \"{name}\"; choose one of {} or \"custom\"",
        names.join(", ")
    )
}

/// A resolved model: its shape plus the sizes every other component needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// Display name.
    pub name: String,
    /// The shape.
    pub arch: Architecture,
    /// Total parameters.
    pub params: u64,
    /// Parameters each token passes through (MoE: routed experts only).
    pub active_params: u64,
    /// Bytes of all weights.
    pub weight_bytes: u64,
    /// KV cache bytes per token.
    pub kv_bytes_per_token: u64,
    /// Formats of weights, activations and KV cache.
    pub dtypes: Dtypes,
}

impl Model {
    /// Derives the sizes of `arch` at its checkpoint's format.
    pub fn new(name: impl Into<String>, arch: Architecture) -> Self {
        let dtypes = Dtypes::resolve(Dtype::Auto, Dtype::Auto, Dtype::Auto, arch.bytes_per_param);
        Self::with_dtypes(name, arch, dtypes)
    }

    /// Derives the sizes of `arch` deployed with `dtypes`: linear layers at the weight format,
    /// embeddings and LM head at the activations' 16 (or 32) bits, KV at the cache format.
    pub fn with_dtypes(name: impl Into<String>, arch: Architecture, dtypes: Dtypes) -> Self {
        let params = arch.params();
        let vocab = arch.embedding_params() + arch.lm_head_params();
        let weight_bytes = ((params - vocab) as f64 * dtypes.weight.bytes()
            + vocab as f64 * dtypes.hidden_bytes()) as u64;
        let kv_bytes_per_token = (arch.num_layers as u64 * arch.kv_elements_per_token_per_layer())
            as f64
            * dtypes.kv_cache.bytes();
        Self {
            name: name.into(),
            params,
            active_params: arch.active_params(),
            weight_bytes,
            kv_bytes_per_token: kv_bytes_per_token as u64,
            dtypes,
            arch,
        }
    }

    /// KV cache bytes per token on each of `tp` GPUs: KV heads are split between the GPUs,
    /// or replicated when there are fewer heads than GPUs; MLA's compressed KV is replicated.
    pub fn kv_bytes_per_token_per_gpu(&self, tp: u32) -> f64 {
        let a = &self.arch;
        let share = if a.is_mla() {
            1.0
        } else {
            (a.num_kv_heads as f64 / tp.max(1) as f64).max(1.0) / a.num_kv_heads.max(1) as f64
        };
        self.kv_bytes_per_token as f64 * share
    }

    /// Bytes of the routed experts' weights at the deployed weight format (0 for a dense
    /// model).
    pub fn expert_weight_bytes(&self) -> u64 {
        (self.arch.expert_params() as f64 * self.dtypes.weight.bytes()) as u64
    }

    /// Peak activation memory of a step of `tokens` tokens and `seqs` sampled sequences on
    /// one of `tp` GPUs, bytes: the hidden states and residual, the MLP's (or experts')
    /// inner activations, and the float32 logits — what vLLM's profiling step measures.
    pub fn activation_bytes(&self, tokens: u32, seqs: u32, tp: u32) -> f64 {
        let a = &self.arch;
        let tp = tp.max(1) as f64;
        let inner = (a.intermediate_size as f64).max(
            a.experts_per_token as f64 * a.expert_ffn() as f64
                + a.shared_expert_intermediate_size as f64,
        ) / tp;
        let hidden = self.dtypes.hidden_bytes();
        tokens as f64 * (4.0 * a.hidden_size as f64 + 3.0 * inner) * hidden
            + seqs as f64 * a.vocab_size as f64 / tp * 4.0
    }

    /// The catalogue model called `name`.
    pub fn from_catalogue(name: &str) -> Option<Self> {
        catalogue::lookup(name).map(|a| Self::new(name, a))
    }

    /// Longest sequence (prompt + output) accepted, tokens.
    pub fn max_model_len(&self) -> u32 {
        self.arch.max_model_len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(name: &str) -> Model {
        Model::from_catalogue(name).unwrap()
    }

    #[test]
    fn derived_parameter_counts_match_published_sizes() {
        // granite: per layer attn 4096·4096·2 + 2·4096·1024 = 41_943_040, MLP 3·4096·12800 =
        // 157_286_400, norms 8192 → 199_237_632 · 40 = 7_969_505_280; + final norm 4096
        // + tied embeddings 49159·4096 = 201_355_264 → 8_170_864_640 (≈ 8.2B).
        assert_eq!(model("granite-3.3-8b-instruct").params, 8_170_864_640);
        // Published exact counts of the Hugging Face checkpoints.
        assert_eq!(model("Llama-3.1-8B").params, 8_030_261_248);
        assert_eq!(model("Llama-3.1-70B").params, 70_553_706_496);
        assert_eq!(model("Qwen2.5-7B").params, 7_615_616_512);
        let mixtral = model("Mixtral-8x7B");
        assert_eq!(mixtral.params, 46_702_792_704); // 46.7B
                                                    // Active: 2 of 8 experts: 32·(41_943_040 + 2·176_160_768 + 32_768 + 8192) + 4096
                                                    // + 2·32000·4096 = 12_879_925_248 (12.9B).
        assert_eq!(mixtral.active_params, 12_879_925_248);
        let qwen3 = model("Qwen3-30B-A3B");
        assert_eq!(qwen3.params, 30_532_122_624); // 30.5B
        assert_eq!(qwen3.active_params, 3_353_032_704); // 3.3B
        assert_eq!(model("Llama-3.1-8B").active_params, 8_030_261_248);
        // Qwen3-235B-A22B, per layer: attention 4096·(64+2·4)·128 + 64·128·4096 =
        // 71_303_168, 128 experts of 3·4096·1536 = 2_415_919_104, router 524_288, norms
        // 8192 + q/k norms 256; 94 layers, the final norm and 2·151936·4096 of embeddings:
        // 235.1B in all; active, 8 experts: 94·222_830_848 + 4096 + 1_244_659_712 = 22.2B —
        // Qwen's "235B, 22B activated".
        let qwen3 = model("Qwen3-235B-A22B");
        assert_eq!(qwen3.params, 235_093_634_560);
        assert_eq!(qwen3.active_params, 22_190_763_520);
        // MiniMax-M2: "230B total, 10B active" (its embeddings, 1.2B, are outside the 10).
        let minimax = model("MiniMax-M2");
        assert!(
            (minimax.params as f64 / 230e9 - 1.0).abs() < 0.01,
            "{}",
            minimax.params
        );
        let embeddings = 2 * 200_064 * 3072;
        assert!(((minimax.active_params - embeddings) as f64 / 10e9 - 1.0).abs() < 0.05);
        // DeepSeek-V3: 671B without its multi-token-prediction module, 37B activated.
        let v3 = model("DeepSeek-V3");
        assert!(
            (v3.params as f64 / 671e9 - 1.0).abs() < 0.002,
            "{}",
            v3.params
        );
        assert!(
            (v3.active_params as f64 / 37.6e9 - 1.0).abs() < 0.01,
            "{}",
            v3.active_params
        );
    }

    #[test]
    fn kv_bytes_per_token_follow_the_formula() {
        // 2 · layers · kv_heads · head_dim · 2 bytes.
        assert_eq!(
            model("granite-3.3-8b-instruct").kv_bytes_per_token,
            2 * 40 * 8 * 128 * 2
        );
        assert_eq!(
            model("Llama-3.1-70B").kv_bytes_per_token,
            2 * 80 * 8 * 128 * 2
        );
        assert_eq!(model("Qwen2.5-7B").kv_bytes_per_token, 2 * 28 * 4 * 128 * 2);
        assert_eq!(
            model("Qwen3-30B-A3B").kv_bytes_per_token,
            2 * 48 * 4 * 128 * 2
        );
        assert_eq!(
            model("granite-3.3-8b-instruct").weight_bytes,
            2 * 8_170_864_640
        );
    }

    #[test]
    fn hugging_face_config_imports_like_the_catalogue_entry() {
        let text = r#"{
            "architectures": ["MixtralForCausalLM"], "model_type": "mixtral",
            "num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
            "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000,
            "tie_word_embeddings": false, "num_local_experts": 8, "num_experts_per_tok": 2,
            "max_position_embeddings": 32768, "torch_dtype": "bfloat16"
        }"#;
        let arch = hf::from_config_json(text).unwrap();
        assert_eq!(arch, catalogue::lookup("Mixtral-8x7B").unwrap());
        let qwen3 = r#"{"model_type": "qwen3_moe", "num_hidden_layers": 48, "hidden_size": 2048,
            "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
            "intermediate_size": 6144, "vocab_size": 151936, "tie_word_embeddings": false,
            "num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768,
            "max_position_embeddings": 40960, "torch_dtype": "bfloat16"}"#;
        assert_eq!(
            hf::from_config_json(qwen3).unwrap(),
            catalogue::lookup("Qwen3-30B-A3B").unwrap()
        );
    }

    #[test]
    fn hugging_face_errors_name_the_field() {
        let missing = r#"{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
            "intermediate_size": 128}"#;
        assert_eq!(
            hf::from_config_json(missing).unwrap_err(),
            "config.json is missing field `vocab_size`"
        );
        let bad = r#"{"num_hidden_layers": -2}"#;
        assert!(hf::from_config_json(bad)
            .unwrap_err()
            .contains("`num_hidden_layers` must be a non-negative integer"));
        let dtype = r#"{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
            "intermediate_size": 128, "vocab_size": 10, "torch_dtype": "complex64"}"#;
        assert!(hf::from_config_json(dtype)
            .unwrap_err()
            .contains("torch_dtype"));
        let moe = r#"{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
            "vocab_size": 10, "num_experts": 4}"#;
        assert_eq!(
            hf::from_config_json(moe).unwrap_err(),
            "config.json is missing field `num_experts_per_tok`"
        );
    }

    #[test]
    fn config_section_resolves_names_customs_and_reports_paths() {
        assert_eq!(
            ModelConfig::default().resolve().unwrap().arch.num_layers,
            40
        );
        let cfg: ModelConfig = serde_json::from_str(
            r#"{"name": "custom", "hf_config": {"num_hidden_layers": 2}, "max_model_len": 0}"#,
        )
        .unwrap();
        let mut p = Problems::new();
        cfg.validate("model", &mut p);
        assert_eq!(p.as_slice()[0].path, "model.hf_config");
        let custom = ModelConfig {
            name: "custom".into(),
            custom: Some(Architecture {
                num_kv_heads: 5,
                ..Architecture::default()
            }),
            ..Default::default()
        };
        let mut p = Problems::new();
        custom.validate("model", &mut p);
        assert_eq!(p.as_slice()[0].path, "model.custom.num_kv_heads");
        let short = ModelConfig {
            max_model_len: 8192,
            ..Default::default()
        };
        assert_eq!(short.resolve().unwrap().max_model_len(), 8192);
        assert!(ModelConfig {
            name: "gpt-5".into(),
            ..Default::default()
        }
        .resolve()
        .unwrap_err()
        .starts_with("model.name: unknown model"));
    }
}
