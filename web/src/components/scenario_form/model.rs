//! The `model` section: a catalogue model, a custom shape, or a pasted (or dropped) Hugging
//! Face `config.json`.

use super::{edit, SectionProps};
use crate::components::form::FieldGroup;
use crate::state::{Action, Level};
use opal::model::{catalogue, Model};
use serde_json::Value;
use yew::prelude::*;

/// Every number format (weights may be integer-quantised).
const DTYPES: [(&str, &str); 9] = [
    ("auto", "Auto (the checkpoint's)"),
    ("bfloat16", "bfloat16"),
    ("float16", "float16"),
    ("float32", "float32"),
    ("fp8", "FP8"),
    ("nvfp4", "NVFP4"),
    ("mxfp4", "MXFP4"),
    ("int8", "int8 (weight-only)"),
    ("int4", "int4 (weight-only)"),
];

/// Formats the GEMMs may compute in.
const COMPUTE_DTYPES: [(&str, &str); 7] = [
    ("auto", "Auto"),
    ("bfloat16", "bfloat16"),
    ("float16", "float16"),
    ("float32", "float32"),
    ("fp8", "FP8"),
    ("nvfp4", "NVFP4"),
    ("mxfp4", "MXFP4"),
];

/// Formats the KV cache may take.
const FLOAT_DTYPES: [(&str, &str); 5] = [
    ("auto", "Auto"),
    ("bfloat16", "bfloat16"),
    ("float16", "float16"),
    ("float32", "float32"),
    ("fp8", "FP8"),
];

/// Billions, one decimal: 8_030_261_248 → "8.0B".
fn billions(n: u64) -> String {
    format!("{:.1}B", n as f64 / 1e9)
}

/// Model choice, custom shape and maximum length.
#[function_component(ModelSection)]
pub fn model_section(props: &SectionProps) -> Html {
    let c = &props.ctx;
    let hf_text = use_state(String::new);
    let hf_error = use_state(|| None::<String>);
    let models: Vec<(String, String)> = catalogue::catalogue()
        .into_iter()
        .map(|(name, arch)| {
            let m = Model::new(name, arch);
            let label = if m.active_params != m.params {
                format!(
                    "{name} — {} ({} active)",
                    billions(m.params),
                    billions(m.active_params)
                )
            } else {
                format!("{name} — {}", billions(m.params))
            };
            (name.to_string(), label)
        })
        .chain([("custom".into(), "Custom shape".into())])
        .collect();
    let options: Vec<(&str, &str)> = models
        .iter()
        .map(|(v, l)| (v.as_str(), l.as_str()))
        .collect();
    let on_name = {
        let c = c.clone();
        Callback::from(move |name: String| {
            let old = c.get("model").unwrap_or(Value::Null);
            c.set("model", edit::switch_model(&old, &name));
        })
    };
    // Applies a config.json text: fills the custom model, or says what is wrong with it.
    let apply_hf = {
        let c = c.clone();
        let hf_error = hf_error.clone();
        Callback::from(move |(text, source): (String, String)| {
            let old = c.get("model").unwrap_or(Value::Null);
            match edit::model_from_hf(&old, &text) {
                Ok(model) => {
                    hf_error.set(None);
                    c.set("model", model);
                    c.on_action.emit(Action::Notify {
                        level: Level::Info,
                        message: format!("Defined a custom model from {source}."),
                    });
                }
                Err(e) => hf_error.set(Some(e)),
            }
        })
    };
    let on_hf_input = {
        let hf_text = hf_text.clone();
        Callback::from(move |e: InputEvent| {
            let area: web_sys::HtmlTextAreaElement = e.target_unchecked_into();
            hf_text.set(area.value());
        })
    };
    let on_hf_apply = {
        let hf_text = hf_text.clone();
        let apply_hf = apply_hf.clone();
        Callback::from(move |_: MouseEvent| {
            apply_hf.emit(((*hf_text).clone(), "the pasted config.json".into()))
        })
    };
    let ondragover = Callback::from(|e: DragEvent| e.prevent_default());
    let ondrop = {
        let apply_hf = apply_hf.clone();
        let hf_error = hf_error.clone();
        Callback::from(move |e: DragEvent| {
            // Handled here: the page-level drop (open as scenario) sees defaultPrevented.
            e.prevent_default();
            let Some(file) = e
                .data_transfer()
                .and_then(|d| d.files())
                .and_then(|f| f.get(0))
            else {
                return;
            };
            let apply_hf = apply_hf.clone();
            let hf_error = hf_error.clone();
            wasm_bindgen_futures::spawn_local(async move {
                match super::data_files::read_file(&file).await {
                    Ok(text) => apply_hf.emit((text, file.name())),
                    Err(e) => hf_error.set(Some(e)),
                }
            });
        })
    };
    let custom = c.str("model.name").eq_ignore_ascii_case("custom");
    let has_hf = c.get("model.hf_config").is_some_and(|v| !v.is_null());
    html! {
        <div class="drop-target" {ondragover} {ondrop} data-testid="model-section">
        <FieldGroup title="Model" description="The served model. Drop a Hugging Face config.json here to define a custom one." disabled={c.disabled}>
            { c.select("model.name", "Model", "Catalogue model, or a custom shape.", &options, Some(on_name)) }
            if custom && has_hf {
                <p class="field-hint">{ "This model is defined by the hf_config object in the JSON." }</p>
                { c.problems_under("model.hf_config", &[]) }
            } else if custom {
                <div class="subfields">
                    { c.number("model.custom.num_layers", "Layers").count().hint("Transformer layers.").html() }
                    { c.number("model.custom.hidden_size", "Hidden size").count().hint("Model dimension.").html() }
                    { c.number("model.custom.num_heads", "Attention heads").count().hint("Query heads.").html() }
                    { c.number("model.custom.num_kv_heads", "KV heads").count().hint("Grouped-query attention.").html() }
                    { c.number("model.custom.head_dim", "Head dimension").whole().hint("0 means hidden size / heads.").html() }
                    { c.number("model.custom.intermediate_size", "MLP size").whole().hint("Dense MLP inner dimension (SwiGLU).").html() }
                    { c.number("model.custom.vocab_size", "Vocabulary").count().unit("tokens").hint("Vocabulary size.").html() }
                    { c.number("model.custom.num_experts", "Experts").whole().hint("Mixture of experts per layer; 0 is dense.").html() }
                    { c.number("model.custom.experts_per_token", "Experts per token").whole().hint("Experts each token is routed to.").html() }
                    { c.number("model.custom.expert_intermediate_size", "Expert MLP size").whole().hint("0 means the MLP size.").html() }
                    { c.number("model.custom.shared_expert_intermediate_size", "Shared experts size").whole().hint("Inner width of the experts every token passes; 0 is none.").html() }
                    { c.number("model.custom.first_dense_layers", "Leading dense layers").whole().hint("Layers before the first with experts.").html() }
                    { c.number("model.custom.kv_lora_rank", "Latent KV rank").whole().hint("Multi-head latent attention (DeepSeek); 0 is ordinary attention.").html() }
                    { c.number("model.custom.max_model_len", "Native max length").count().unit("tokens").hint("Longest sequence the model accepts.").html() }
                    { c.number("model.custom.bytes_per_param", "Bytes per parameter").count().unit("B").hint("bf16 = 2.").html() }
                    { c.toggle("model.custom.tie_word_embeddings", "Tied embeddings", "Input embedding and LM head share one matrix.") }
                    { c.toggle("model.custom.qkv_bias", "QKV bias", "Q/K/V projections carry biases (Qwen2).") }
                    { c.toggle("model.custom.qk_norm", "QK norm", "Per-head RMS norm on queries and keys (Qwen3).") }
                </div>
            }
            { c.select("model.weight_dtype", "Weight format", "vLLM --quantization: the linear layers' weights.", &DTYPES, None) }
            { c.select("model.activation_dtype", "Compute format", "vLLM --dtype: fp8 runs the GEMMs on FP8 units (W8A8), nvfp4 / mxfp4 on FP4 units (Blackwell; elsewhere at 16-bit speed).", &COMPUTE_DTYPES, None) }
            { c.select("model.kv_cache_dtype", "KV cache format", "vLLM --kv-cache-dtype.", &FLOAT_DTYPES, None) }
            <div class="field hf-paste">
                <label for="model-hf-config">{ "Hugging Face config.json" }</label>
                <textarea id="model-hf-config" rows="3" spellcheck="false" placeholder="{ \"num_hidden_layers\": 32, … }"
                    value={(*hf_text).clone()} oninput={on_hf_input}
                    aria-describedby={hf_error.is_some().then_some("model-hf-config-error")} />
                <span class="field-actions">
                    <button type="button" onclick={on_hf_apply} disabled={hf_text.trim().is_empty()}>{ "Use as custom model" }</button>
                </span>
                if let Some(e) = &*hf_error {
                    <small class="field-error" id="model-hf-config-error" role="alert">{ e.clone() }</small>
                }
            </div>
            { c.number("model.max_model_len", "Max model length").whole().unit("tokens")
                .hint("Overrides the model's maximum sequence length; 0 keeps its own.").html() }
        </FieldGroup>
        </div>
    }
}
