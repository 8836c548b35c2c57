//! The `hardware` section: GPU type (catalogue or custom figures), tensor, data and expert
//! parallelism.

use super::{edit, SectionProps};
use crate::components::form::FieldGroup;
use opal::hardware;
use serde_json::Value;
use yew::prelude::*;

/// GPU, tensor-parallel degree and all-reduce cost.
#[function_component(HardwareSection)]
pub fn hardware_section(props: &SectionProps) -> Html {
    let c = &props.ctx;
    let gpus: Vec<(String, String)> = hardware::catalogue()
        .into_iter()
        .map(|g| {
            let label = format!(
                "{} — {} TFLOP/s, {} TB/s, {} GB",
                g.name, g.peak_tflops, g.hbm_tbps, g.memory_gb
            );
            (g.name, label)
        })
        .chain([("custom".to_string(), "Custom figures".to_string())])
        .collect();
    let options: Vec<(&str, &str)> = gpus.iter().map(|(v, l)| (v.as_str(), l.as_str())).collect();
    let on_gpu = {
        let c = c.clone();
        Callback::from(move |name: String| {
            let old = c.get("hardware").unwrap_or(Value::Null);
            c.set("hardware", edit::switch_gpu(&old, &name));
        })
    };
    let custom = c.str("hardware.gpu").eq_ignore_ascii_case("custom");
    let roofline = c.str("worker.timing.model") == "roofline";
    let calibration = if custom {
        None
    } else {
        hardware::lookup(&c.str("hardware.gpu")).map(|g| opal::timing::calibration_for(&g).source)
    };
    html! {
        <FieldGroup title="Hardware" description="The GPU each worker runs on." disabled={c.disabled}>
            { c.select("hardware.gpu", "GPU", "Datasheet dense bf16 peak, HBM bandwidth and memory.", &options, Some(on_gpu)) }
            if custom {
                <div class="subfields">
                    { c.number("hardware.custom.peak_tflops", "Peak compute").unit("TFLOP/s")
                        .hint("Dense bf16 peak.").html() }
                    { c.number("hardware.custom.fp8_tflops", "FP8 peak").unit("TFLOP/s")
                        .hint("Dense FP8 peak; 0 when the GPU has no FP8 units.").html() }
                    { c.number("hardware.custom.fp4_tflops", "FP4 peak").unit("TFLOP/s")
                        .hint("Dense FP4 peak; 0 when the GPU has no FP4 units.").html() }
                    { c.number("hardware.custom.hbm_tbps", "HBM bandwidth").unit("TB/s").step(0.1)
                        .hint("Datasheet memory bandwidth.").html() }
                    { c.number("hardware.custom.memory_gb", "Memory").unit("GB")
                        .hint("HBM capacity per GPU.").html() }
                </div>
            }
            { c.number("hardware.tp", "Tensor parallel").count().unit("GPUs")
                .hint("GPUs per worker (per data-parallel rank); multiplies memory, FLOP/s and bandwidth.").html() }
            { c.number("hardware.dp", "Data parallel").count().unit("ranks")
                .hint("MoE models: attention ranks of tp GPUs each, with their own KV cache and batch limits; the experts span all dp × tp GPUs.").html() }
            { c.toggle("hardware.expert_parallel", "Expert parallel",
                "MoE models: each GPU holds whole experts (vLLM --enable-expert-parallel); a layer waits for the GPU routed the most.") }
            if roofline {
                { c.number("hardware.allreduce_latency_per_layer", "All-reduce latency").unit("s/layer").step(0.00001)
                    .hint("Roofline: cost per transformer layer per step when tp > 1.").html() }
            }
            if let Some(source) = calibration {
                <p class="field-hint" data-testid="gpu-calibration">{ format!("Calibration: {source}.") }</p>
            }
        </FieldGroup>
    }
}
