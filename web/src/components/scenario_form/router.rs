//! The `router` section: routing policy with its parameters, KV event interval, autoscaler.

use super::{edit, SectionProps};
use crate::components::form::FieldGroup;
use yew::prelude::*;

/// Policy, KV view staleness and autoscaling.
#[function_component(RouterSection)]
pub fn router_section(props: &SectionProps) -> Html {
    let c = &props.ctx;
    let policy = c.str("router.policy.policy");
    let on_policy = {
        let c = c.clone();
        Callback::from(move |name: String| c.set("router.policy", edit::policy_default(&name)))
    };
    let autoscale = c
        .get("router.autoscaler.enabled")
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    html! {
        <FieldGroup title="Router" description="How requests are spread over workers, and autoscaling." disabled={c.disabled}>
            { c.select("router.policy.policy", "Routing policy", "Which worker gets each request.", &edit::POLICIES, Some(on_policy)) }
            if policy == "prefix_load" {
                <div class="subfields">
                    { c.number("router.policy.w_prefix", "Prefix weight").step(0.1)
                        .hint("Weight of the cached-prefix fraction.").html() }
                    { c.number("router.policy.w_load", "Load weight").step(0.1)
                        .hint("Weight of the normalised load.").html() }
                </div>
            }
            if policy == "cache_aware" {
                <div class="subfields">
                    { c.number("router.policy.cache_threshold", "Cache threshold").step(0.05)
                        .hint("Follow the tree when a worker's match is more than this fraction of the prompt; else the worker with the smallest tree.").html() }
                    { c.number("router.policy.balance_abs_threshold", "Imbalance, absolute").unit("requests")
                        .hint("Least loaded instead when the outstanding requests differ by more than this…").html() }
                    { c.number("router.policy.balance_rel_threshold", "Imbalance, relative").step(0.1)
                        .hint("…and the busiest has more than this many times the least busy's.").html() }
                    { c.number("router.policy.eviction_interval", "Eviction interval").unit("s")
                        .hint("Between cutting each worker's tree back to its size limit.").html() }
                    { c.number("router.policy.max_tree_tokens", "Tree size limit").count().unit("tokens")
                        .hint("Per worker, after each cut (SGLang: 2^24 characters).").html() }
                </div>
            }
            if policy == "llm_d" {
                <div class="subfields">
                    { c.select("router.policy.prefix_mode", "Prefix scorer",
                        "precise: from the pods' KV events; approximate: the scheduler's own LRU index of what it sent each pod.",
                        &[("precise", "Precise (KV events)"), ("approximate", "Approximate (own index)")], None) }
                    { c.number("router.policy.prefix_weight", "Prefix weight").step(0.5)
                        .hint("Weight of the fraction of the prompt's blocks a pod holds.").html() }
                    { c.number("router.policy.queue_weight", "Queue weight").step(0.5)
                        .hint("Weight of (max − queue) / (max − min).").html() }
                    { c.number("router.policy.kv_cache_weight", "KV cache weight").step(0.5)
                        .hint("Weight of 1 − the pod's KV usage.").html() }
                    if c.str("router.policy.prefix_mode") == "approximate" {
                        { c.number("router.policy.lru_capacity_per_server", "Index capacity").count().unit("blocks")
                            .hint("Blocks the approximate index keeps per pod.").html() }
                    }
                </div>
            }
            if policy == "dynamo" {
                <div class="subfields">
                    { c.number("router.policy.overlap_score_weight", "Overlap weight").step(0.25)
                        .hint("Weight of the prefill blocks a worker would compute against its decode blocks.").html() }
                    { c.number("router.policy.router_temperature", "Temperature").step(0.1)
                        .hint("0: the cheapest worker; higher: a softmax draw over the normalised costs.").html() }
                </div>
            }
            { c.number("router.kv_event_interval", "KV event interval").unit("s").step(0.1)
                .hint("Between a worker's KV event flushes: how stale the router's view may be.").html() }
            { c.toggle("router.autoscaler.enabled", "Autoscaler", "Add workers under load, remove them when idle.") }
            if autoscale {
                <div class="subfields">
                    { c.number("router.autoscaler.min_workers", "Min workers").count().hint("Never fewer.").html() }
                    { c.number("router.autoscaler.max_workers", "Max workers").whole().hint("Never more, pending ones included.").html() }
                    { c.number("router.autoscaler.max_queue_threshold", "Scale-up queue").whole().unit("requests")
                        .hint("Scale up when a worker has more outstanding.").html() }
                    { c.number("router.autoscaler.scale_down_threshold", "Scale-down queue").whole().unit("requests")
                        .hint("Load is low while no worker has more.").html() }
                    { c.number("router.autoscaler.scale_latency", "Scale-up latency").unit("s")
                        .hint("Until a new worker accepts requests.").html() }
                    { c.number("router.autoscaler.cooldown", "Cooldown").unit("s")
                        .hint("Low load this long before scaling down.").html() }
                </div>
            }
        </FieldGroup>
    }
}
