//! One workload stage: its type, stop conditions and its generator's fields.

use super::data_files::{drop_handlers, DataFileField};
use super::length::length_fields;
use super::{edit, FormCtx};
use crate::components::form::{ListItem, Toggle};
use serde_json::Value;
use yew::prelude::*;

const POPULARITY: [(&str, &str); 2] = [("uniform", "Uniform"), ("zipf", "Zipf (few popular)")];

/// Props of [`StageCard`].
#[derive(Properties, PartialEq, Clone)]
pub(crate) struct StageCardProps {
    /// The form context.
    pub ctx: FormCtx,
    /// Position in `workload.stages`.
    pub index: usize,
    /// Number of stages.
    pub len: usize,
    /// Called with the position to move this stage to.
    pub on_move: Callback<usize>,
    /// Called to remove this stage.
    pub on_remove: Callback<()>,
}

/// The popularity select (and Zipf exponent) at `path`.
fn popularity(c: &FormCtx, path: &str, label: &'static str, hint: &'static str) -> Html {
    let ty = c.str(&format!("{path}.type"));
    let on_type = {
        let c = c.clone();
        let path = path.to_string();
        Callback::from(move |t: String| c.set(&path, edit::popularity_default(&t)))
    };
    html! {
        <>
            { c.select(&format!("{path}.type"), label, hint, &POPULARITY, Some(on_type)) }
            if ty == "zipf" {
                { c.number(&format!("{path}.s"), "Zipf exponent").step(0.1)
                    .hint("≥ 0; 0 is uniform, about 1 is typical of real popularity.").html() }
            }
            { c.problems_under(path, &[]) }
        </>
    }
}

/// A switch's callback that adds the optional `key` to the stage at `stage` (with
/// `on_value`) or removes it.
fn toggle_key(c: &FormCtx, stage: &str, key: &'static str, on_value: Value) -> Callback<bool> {
    let c = c.clone();
    let stage = stage.to_string();
    Callback::from(move |on: bool| {
        let mut doc = c.get(&stage).unwrap_or(Value::Null);
        if let Some(obj) = doc.as_object_mut() {
            if on {
                obj.insert(key.into(), on_value.clone());
            } else {
                obj.remove(key);
            }
        }
        c.set(&stage, doc);
    })
}

/// Rate, lengths and shared prefix of the synthetic-rate types.
fn synthetic(c: &FormCtx, p: &str, ty: &str) -> Html {
    let sp = format!("{p}.shared_prefix");
    let has_prefix = c.get(&sp).is_some_and(|v| v.is_object());
    let on_prefix = toggle_key(
        c,
        p,
        "shared_prefix",
        serde_json::json!({ "groups": 8, "length": 1024, "popularity": { "type": "uniform" } }),
    );
    let pool = format!("{p}.prompt_pool");
    let has_pool = c.get(&pool).is_some_and(|v| v.is_object());
    let on_pool = toggle_key(
        c,
        p,
        "prompt_pool",
        serde_json::json!({ "size": 100, "order": "cycle" }),
    );
    html! {
        <>
            { c.number(&format!("{p}.request_rate"), "Request rate").unit("req/s").step(0.5)
                .hint("Mean arrivals per second.").html() }
            if ty == "ExponentialReqRate" {
                { c.number(&format!("{p}.jitter"), "Jitter").step(0.1)
                    .hint("Random share of the gap, 0..1; 1 is Poisson.").html() }
            }
            if ty == "Gamma" {
                { c.number(&format!("{p}.cv"), "Gap CV").step(0.1)
                    .hint("Coefficient of variation of the gaps; > 1 is bursty.").html() }
            }
            { length_fields(c, &format!("{p}.input_length"), "Prompt length", "tokens") }
            { length_fields(c, &format!("{p}.output_length"), "Output length", "tokens") }
            <Toggle id={format!("{}-on", super::field_id(&sp))} label="Shared system prompts" checked={has_prefix}
                on_change={on_prefix} disabled={c.disabled}
                hint="Every request starts with one group's prefix (prefix-cache hits)." />
            if has_prefix {
                <div class="subfields">
                    { c.number(&format!("{sp}.groups"), "Groups").whole().hint("Distinct prefixes.").html() }
                    { c.number(&format!("{sp}.length"), "Prefix length").whole().unit("tokens").html() }
                    { popularity(c, &format!("{sp}.popularity"), "Group popularity", "How requests pick a group.") }
                </div>
            }
            <Toggle id={format!("{}-on", super::field_id(&pool))} label="Fixed prompt pool" checked={has_pool}
                on_change={on_pool} disabled={c.disabled}
                hint="Requests send prompts from a fixed pool, as a benchmark client's dataset; repeats hit the cache whole." />
            if has_pool {
                <div class="subfields">
                    { c.number(&format!("{pool}.size"), "Pool size").count().unit("prompts").html() }
                    { c.select(&format!("{pool}.order"), "Order", "Which prompt each request sends.", &POOL_ORDERS, None) }
                </div>
            }
        </>
    }
}

const POOL_ORDERS: [(&str, &str); 2] = [
    ("cycle", "In turn, starting over at the end"),
    ("random", "At random"),
];

fn rag(c: &FormCtx, p: &str) -> Html {
    let f = |k: &str| format!("{p}.{k}");
    html! {
        <>
            { c.number(&f("request_rate"), "Request rate").unit("req/s").step(0.5).hint("Mean arrivals per second.").html() }
            { c.number(&f("jitter"), "Jitter").step(0.1).hint("Random share of the gap, 0..1; 1 is Poisson.").html() }
            { c.number(&f("system_prompt_length"), "System prompt").whole().unit("tokens").hint("Shared by every request.").html() }
            { c.number(&f("num_documents"), "Corpus size").whole().unit("docs").html() }
            { c.number(&f("document_size"), "Document size").whole().unit("tokens").html() }
            { c.number(&f("docs_per_request"), "Docs per request").whole().hint("Distinct; at most the corpus size.").html() }
            { popularity(c, &f("document_popularity"), "Document popularity", "Which documents get retrieved.") }
            { length_fields(c, &f("query_length"), "Query length", "tokens") }
            { c.number(&f("output_length"), "Output length").whole().unit("tokens").hint("Tokens to generate, fixed.").html() }
            { c.number(&f("max_concurrent_requests"), "Max in flight").whole().unit("requests").hint("0 means no cap.").html() }
        </>
    }
}

fn synthetic_sessions(c: &FormCtx, p: &str) -> Html {
    let f = |k: &str| format!("{p}.{k}");
    html! {
        <>
            { c.number(&f("num_sessions"), "Sessions").whole().hint("Sessions to run.").html() }
            { c.number(&f("session_rate"), "Session rate").unit("sessions/s").step(0.1).hint("New sessions per second, Poisson.").html() }
            { c.number(&f("think_time"), "Think time").unit("s").step(0.5).hint("Mean pause before each later turn; 0 is none.").html() }
            { c.number(&f("system_prompt_length"), "System prompt").whole().unit("tokens").hint("Shared by all sessions.").html() }
            { c.number(&f("max_concurrent_sessions"), "Max active sessions").whole().hint("0 means no cap.").html() }
            { c.toggle(&f("open_loop"), "Open loop", "Send each turn its think time after the previous one was sent, not after its reply.") }
            { length_fields(c, &f("turns"), "Turns per session", "turns") }
            { length_fields(c, &f("input_length"), "User tokens per turn", "tokens") }
            { length_fields(c, &f("output_length"), "Reply tokens per turn", "tokens") }
        </>
    }
}

/// Stop conditions: a request count and/or a duration, each optional.
fn stop_conditions(c: &FormCtx, p: &str, ty: &str) -> Html {
    let optional = |key: &'static str,
                    label: &'static str,
                    unit: Option<&'static str>,
                    hint: &'static str,
                    on_value: Value| {
        let path = format!("{p}.{key}");
        let set = c.get(&path).is_some_and(|v| !v.is_null());
        let on_toggle = toggle_key(c, p, key, on_value);
        let mut field = c.number(&path, label).hint(hint);
        if let Some(u) = unit {
            field = field.unit(u);
        }
        if key == "total_requests" {
            field = field.whole();
        }
        html! {
            <>
                <Toggle id={format!("{}-on", super::field_id(&path))} label={format!("Stop after a {}", if key == "total_requests" { "request count" } else { "duration" })}
                    checked={set} on_change={on_toggle} disabled={c.disabled} error={(!set).then(|| c.error(&path)).flatten()} />
                if set { { field.html() } }
            </>
        }
    };
    let sessions = matches!(ty, "Sessions" | "SyntheticSessions");
    html! {
        <div class="stop-conditions">
            if !sessions || c.get(&format!("{p}.total_requests")).is_some_and(|v| !v.is_null()) {
                { optional("total_requests", "Total requests", Some("requests"), "Stop after this many requests.", serde_json::json!(100)) }
            }
            { optional("time_duration_sec", "Duration", Some("s"), "No new request at or after this time from the stage start.", serde_json::json!(60.0)) }
            if c.str("worker.scheduling_policy") == "priority" {
                { c.number(&format!("{p}.priority"), "Priority").whole()
                    .hint("Lower runs first and is preempted last (the workers' priority policy); empty means 0. A weighted mix is set in the JSON view.").html() }
            }
        </div>
    }
}

/// One stage's box.
#[function_component(StageCard)]
pub(crate) fn stage_card(props: &StageCardProps) -> Html {
    let c = &props.ctx;
    let p = format!("workload.stages[{}]", props.index);
    let ty = c.str(&format!("{p}.type"));
    let on_type = {
        let c = c.clone();
        let p = p.clone();
        Callback::from(move |t: String| {
            let old = c.get(&p).unwrap_or(Value::Null);
            c.set(&p, edit::switch_stage_type(&old, &t));
        })
    };
    let label = edit::STAGE_TYPES
        .iter()
        .find(|(t, _)| *t == ty)
        .map_or(ty.as_str(), |(t, _)| t);
    let title = format!("Stage {}: {label}", props.index + 1);
    let data_key = match ty.as_str() {
        "Trace" => Some("trace_file"),
        "Sessions" => Some("sessions_file"),
        _ => None,
    };
    let (ondragover, ondrop) = match data_key {
        Some(key) => {
            let (over, drop) = drop_handlers(c, &format!("{p}.{key}"));
            (Some(over), Some(drop))
        }
        None => (None, None),
    };
    html! {
        <ListItem title={title} index={props.index} len={props.len} on_move={props.on_move.clone()}
            on_remove={props.on_remove.clone()} disabled={c.disabled} testid={format!("stage-{}", props.index)}
            class={classes!(data_key.map(|_| "drop-target"))} {ondragover} {ondrop}>
            { c.select(&format!("{p}.type"), "Type", "What generates the requests.", &edit::STAGE_TYPES, Some(on_type)) }
            { c.problems_under(&p, &[]) }
            if let Some(key) = data_key {
                <DataFileField ctx={c.clone()} path={format!("{p}.{key}")} />
            }
            if ty == "Trace" {
                { c.number(&format!("{p}.time_scale"), "Time scale").step(0.1).hint("Multiplies every timestamp: 2 replays at half the rate.").html() }
                { c.number(&format!("{p}.hash_block_size"), "Hash block size").whole().unit("tokens").hint("Tokens per hash id (512 in Mooncake traces).").html() }
            }
            if ty == "Sessions" {
                { c.number(&format!("{p}.max_concurrent_sessions"), "Max active sessions").whole().hint("0 means no cap.").html() }
                { c.toggle(&format!("{p}.open_loop"), "Open loop", "Send each turn on its schedule (gap after the previous one was sent), not after its reply.") }
            }
            if matches!(ty.as_str(), "UniformReqRate" | "ExponentialReqRate" | "Gamma") {
                { synthetic(c, &p, &ty) }
            }
            if ty == "RAGWorkload" { { rag(c, &p) } }
            if ty == "SyntheticSessions" { { synthetic_sessions(c, &p) } }
            { stop_conditions(c, &p, &ty) }
        </ListItem>
    }
}
