//! The `kv_cache` section: the ordered offload tiers behind the GPU prefix cache.

use super::{edit, SectionProps};
use crate::components::form::{FieldGroup, ListItem};
use serde_json::Value;
use yew::prelude::*;

const STORE_WHEN: [(&str, &str); 2] = [
    (
        "as_computed",
        "Each chunk as it is computed (vLLM's offloading connector)",
    ),
    (
        "on_completion",
        "A request's prompt when it completes (original Opal)",
    ),
];

const SCOPES: [(&str, &str); 2] = [
    ("per_worker", "Per worker"),
    ("shared", "Shared by all workers"),
];

const TIER_PRESETS: [(&str, &str); 3] = [
    ("cpu_dram", "CPU DRAM"),
    ("local_nvme", "Local NVMe"),
    ("distributed_fs", "Distributed FS"),
];

/// Offload tiers (add, remove, reorder, edit) and chunk size.
#[function_component(KvCacheSection)]
pub fn kv_cache_section(props: &SectionProps) -> Html {
    let c = &props.ctx;
    let tiers: Vec<Value> = c
        .get("kv_cache.tiers")
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default();
    let set_tiers = {
        let c = c.clone();
        move |list: Vec<Value>| c.set("kv_cache.tiers", Value::Array(list))
    };
    let add = |preset: &'static str| {
        let tiers = tiers.clone();
        let set_tiers = set_tiers.clone();
        Callback::from(move |_: MouseEvent| {
            let mut list = tiers.clone();
            list.push(edit::tier_preset(preset));
            set_tiers(list);
        })
    };
    let n = tiers.len();
    html! {
        <FieldGroup title="KV cache offload" description="Tiers behind the GPU prefix cache, looked up fastest first." disabled={c.disabled}>
            if tiers.is_empty() {
                <p class="field-hint">{ "No offload tiers: evicted blocks are gone (vLLM without a KV connector)." }</p>
            }
            { for (0..n).map(|i| {
                let p = format!("kv_cache.tiers[{i}]");
                let title = c.str(&format!("{p}.name"));
                let on_move = {
                    let tiers = tiers.clone();
                    let set_tiers = set_tiers.clone();
                    Callback::from(move |to: usize| set_tiers(edit::moved(&tiers, i, to)))
                };
                let on_remove = {
                    let tiers = tiers.clone();
                    let set_tiers = set_tiers.clone();
                    Callback::from(move |()| {
                        let mut list = tiers.clone();
                        list.remove(i);
                        set_tiers(list);
                    })
                };
                html! {
                    <ListItem key={format!("tier-{i}")} title={format!("Tier {}: {title}", i + 1)} index={i} len={n}
                        {on_move} {on_remove} disabled={c.disabled} testid={format!("tier-{i}")}>
                        { c.text(&format!("{p}.name"), "Name", "Shown in results.") }
                        { c.number(&format!("{p}.bandwidth_gbps"), "Bandwidth").unit("GB/s").hint("Shared by concurrent transfers.").html() }
                        { c.number(&format!("{p}.latency_s"), "Latency").unit("s").step(0.000001).hint("Paid once per transfer.").html() }
                        { c.number(&format!("{p}.concurrency"), "Concurrency").count().unit("transfers").hint("Served at once; more queue.").html() }
                        { c.number(&format!("{p}.capacity_gb"), "Capacity").unit("GB").hint("Per worker or in total, by scope.").html() }
                        { c.select(&format!("{p}.scope"), "Scope", "Who can read the tier.", &SCOPES, None) }
                    </ListItem>
                }
            }) }
            <div class="list-add" role="group" aria-label="Add an offload tier">
                <span class="muted">{ "Add tier:" }</span>
                { for TIER_PRESETS.iter().map(|(name, label)| html! {
                    <button type="button" onclick={add(name)}>{ format!("+ {label}") }</button>
                }) }
            </div>
            { c.number("kv_cache.chunk_size", "Chunk size").count().unit("tokens")
                .hint("Tokens per offloaded chunk (the tiers' hash granularity).").html() }
            { c.select("kv_cache.store", "Store", "When KV reaches the tiers.", &STORE_WHEN, None) }
        </FieldGroup>
    }
}
