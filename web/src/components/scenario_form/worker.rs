//! The `worker` section: vLLM scheduler limits and the step-time model.

use super::SectionProps;
use crate::components::form::FieldGroup;
use yew::prelude::*;

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
            { c.number("worker.max_num_batched_tokens", "Batched tokens per step").whole().unit("tokens").step(256.0)
                .hint("Token budget of one step, all sequences together.").html() }
            { c.number("worker.max_num_seqs", "Max running sequences").whole().unit("seqs")
                .hint("Most sequences running at once.").html() }
            { c.number("worker.block_size", "KV block size").whole().unit("tokens")
                .hint("Tokens per KV block.").html() }
            { c.number("worker.gpu_memory_utilization", "GPU memory utilisation").step(0.05)
                .hint("Fraction of GPU memory for weights + KV cache, in (0, 1].").html() }
            { c.toggle("worker.chunked_prefill", "Chunked prefill", "Split long prompts over several steps.") }
            if chunked {
                { c.number("worker.long_prefill_token_threshold", "Longest prefill chunk").whole().unit("tokens")
                    .hint("Per sequence per step; 0 means no limit.").html() }
            }
            { c.toggle("worker.enable_prefix_caching", "Prefix caching", "Keep every computed block, prompt or reply, for reuse (vLLM APC).") }
            { c.select("worker.scheduling_policy", "Scheduling policy", "Which waiting request runs next and which running one is preempted (vLLM's --scheduling-policy); set each stage's priority below.", &POLICIES, None) }
            { c.number("worker.max_kvc_ready_requests", "KV fetches in flight").whole().unit("requests")
                .hint("Requests fetching from offload tiers, or fetched but not yet admitted.").html() }
            { c.number("worker.step_overhead", "Step overhead").unit("s").step(0.0005)
                .hint("Fixed time added to every step, on top of the timing model's.").html() }
            { c.toggle("worker.async_scheduling", "Async scheduling", "vLLM's default since v0.14: a request arriving mid-step joins the batch after the next.") }
            { c.select("worker.timing.model", "Timing model", "How long one forward pass over the batch takes.", &TIMING_MODELS, None) }
            if timing == "calibrated" {
                <p class="field-hint" data-testid="calibration-source">
                    { "Uses the GPU's calibration (Hardware section): its kernel efficiencies and vLLM's overheads, fitted on measured kernels and real runs." }
                </p>
            }
            if timing == "roofline" {
                <div class="subfields">
                    { c.number("worker.timing.compute_efficiency", "Compute efficiency").step(0.05)
                        .hint("Fraction of peak FLOP/s achieved (MFU), in (0, 1].").html() }
                    { c.number("worker.timing.memory_efficiency", "Memory efficiency").step(0.05)
                        .hint("Fraction of peak HBM bandwidth achieved, in (0, 1].").html() }
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
