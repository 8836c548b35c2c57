//! The `worker` section: vLLM scheduler limits and the step-time model.

use super::{num, Num, SectionProps};
use crate::components::form::FieldGroup;
use yew::prelude::*;

/// The scheduler's limits and memory share.
const BATCH_FIELDS: [Num; 4] = [
    num("max_num_batched_tokens", "Batched tokens per step")
        .whole()
        .unit("tokens")
        .step(256.0)
        .hint("Token budget of one step, all sequences together."),
    num("max_num_seqs", "Max running sequences")
        .whole()
        .unit("seqs")
        .hint("Most sequences running at once."),
    num("block_size", "KV block size")
        .whole()
        .unit("tokens")
        .hint("Tokens per KV block."),
    num("gpu_memory_utilization", "GPU memory utilisation")
        .step(0.05)
        .hint("Fraction of GPU memory for weights + KV cache, in (0, 1]."),
];

/// KV fetches in flight and the per-step overhead.
const OFFLOAD_STEP_FIELDS: [Num; 2] = [
    num("max_kvc_ready_requests", "KV fetches in flight")
        .whole()
        .unit("requests")
        .hint("Requests fetching from offload tiers, or fetched but not yet admitted."),
    num("step_overhead", "Step overhead")
        .unit("s")
        .step(0.0005)
        .hint("Fixed time added to every step, on top of the timing model's."),
];

/// The roofline model's efficiencies.
const ROOFLINE_FIELDS: [Num; 2] = [
    num("compute_efficiency", "Compute efficiency")
        .step(0.05)
        .hint("Fraction of peak FLOP/s achieved (MFU), in (0, 1]."),
    num("memory_efficiency", "Memory efficiency")
        .step(0.05)
        .hint("Fraction of peak HBM bandwidth achieved, in (0, 1]."),
];

const POLICIES: [(&str, &str); 2] = [
    ("fcfs", "First come, first served"),
    ("priority", "By the stages' priority, then arrival"),
];

const TIMING_MODELS: [(&str, &str); 4] = [
    (
        "calibrated",
        "Calibrated: kernel by kernel, fitted to real vLLM runs",
    ),
    ("roofline", "Roofline: max(compute, memory) over the batch"),
    ("opal-analytical", "Original Opal formula"),
    ("constant", "Constant step time"),
];

/// Scheduler limits, KV cache use and the timing model.
#[function_component(WorkerSection)]
pub fn worker_section(props: &SectionProps) -> Html {
    let c = &props.ctx;
    let timing = c.str("worker.timing.model");
    let chunked = c
        .get("worker.chunked_prefill")
        .and_then(|v| v.as_bool())
        .unwrap_or(true);
    html! {
        <FieldGroup title="Worker" description="Each worker's vLLM scheduler limits and step-time model." disabled={c.disabled}>
            { c.numbers("worker", &BATCH_FIELDS) }
            { c.toggle("worker.chunked_prefill", "Chunked prefill", "Split long prompts over several steps.") }
            if chunked {
                { c.number("worker.long_prefill_token_threshold", "Longest prefill chunk").whole().unit("tokens")
                    .hint("Per sequence per step; 0 means no limit.").html() }
            }
            { c.toggle("worker.enable_prefix_caching", "Prefix caching", "Keep every computed block, prompt or reply, for reuse (vLLM APC).") }
            { c.select("worker.scheduling_policy", "Scheduling policy", "Which waiting request runs next and which running one is preempted (vLLM's --scheduling-policy); set each stage's priority below.", &POLICIES, None) }
            { c.numbers("worker", &OFFLOAD_STEP_FIELDS) }
            { c.toggle("worker.async_scheduling", "Async scheduling", "vLLM's default since v0.14: a request arriving mid-step joins the batch after the next.") }
            { c.select("worker.timing.model", "Timing model", "How long one forward pass over the batch takes.", &TIMING_MODELS, None) }
            if timing == "calibrated" {
                <p class="field-hint" data-testid="calibration-source">
                    { "Uses the GPU's calibration (Hardware section): its kernel efficiencies and vLLM's overheads, fitted on measured kernels and real runs." }
                </p>
            }
            if timing == "roofline" {
                <div class="subfields">
                    { c.numbers("worker.timing", &ROOFLINE_FIELDS) }
                </div>
            }
            if timing == "constant" {
                <div class="subfields">
                    { c.number("worker.timing.constant_step_time", "Step time").unit("s").step(0.001)
                        .hint("Time of every step.").html() }
                </div>
            }
        </FieldGroup>
    }
}
