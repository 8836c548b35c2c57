//! The `deployment` section: worker pools with roles (prefill/decode disaggregation), each
//! pool's GPU, TP and scheduler overrides, the KV link between pools and the decode policy.

use super::{edit, SectionProps};
use crate::components::form::{FieldGroup, ListItem};
use opal::hardware;
use serde_json::{json, Map, Value};
use yew::prelude::*;

const ROLES: [(&str, &str); 3] = [
    ("mixed", "Mixed (prefill and decode)"),
    ("prefill", "Prefill only"),
    ("decode", "Decode only"),
];

/// The deployment a first click on "Disaggregate" writes: one prefill and one decode pool.
pub(crate) fn disaggregated_default() -> Value {
    json!({
        "pools": [
            {"name": "prefill", "role": "prefill", "num_workers": 1},
            {"name": "decode", "role": "decode", "num_workers": 1}
        ],
        "kv_transfer": serde_json::to_value(opal::deployment::KvTransferConfig::default())
            .unwrap_or(Value::Null),
        "decode_policy": edit::policy_default("least_loaded"),
    })
}

/// `pool` with its `section` override's `key` set to `value`, or removed (`None`); an empty
/// override is removed whole, so the pool inherits the top-level section again.
pub(crate) fn with_override(pool: &Value, section: &str, key: &str, value: Option<Value>) -> Value {
    let mut pool = pool.as_object().cloned().unwrap_or_default();
    let mut over = pool
        .get(section)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_else(Map::new);
    match value {
        Some(v) => over.insert(key.to_string(), v),
        None => over.remove(key),
    };
    if over.is_empty() {
        pool.remove(section);
    } else {
        pool.insert(section.to_string(), Value::Object(over));
    }
    Value::Object(pool)
}

/// Pools, KV link and decode policy; a button to disaggregate when the scenario has none.
#[function_component(DeploymentSection)]
pub fn deployment_section(props: &SectionProps) -> Html {
    let c = &props.ctx;
    let present = c.doc.get("deployment").is_some_and(|d| !d.is_null());
    let description =
        "Worker pools: mixed, or prefill and decode pools with KV moving between them.";
    if !present {
        let on_add = {
            let c = c.clone();
            Callback::from(move |_: MouseEvent| c.set("deployment", disaggregated_default()))
        };
        return html! {
            <FieldGroup title="Deployment" {description} disabled={c.disabled}>
                <p class="field-hint">{ "One mixed pool of the simulation's workers." }</p>
                <div class="list-add">
                    <button type="button" onclick={on_add} data-testid="add-deployment">{ "Disaggregate prefill and decode" }</button>
                </div>
            </FieldGroup>
        };
    }
    let pools: Vec<Value> = c
        .get("deployment.pools")
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default();
    let set_pools = {
        let c = c.clone();
        move |list: Vec<Value>| c.set("deployment.pools", Value::Array(list))
    };
    let on_add = {
        let (pools, set_pools) = (pools.clone(), set_pools.clone());
        Callback::from(move |_: MouseEvent| {
            let mut list = pools.clone();
            let name = format!("pool{}", list.len());
            list.push(json!({"name": name, "role": "decode", "num_workers": 1}));
            set_pools(list);
        })
    };
    let on_drop = {
        let c = c.clone();
        Callback::from(move |_: MouseEvent| c.set("deployment", Value::Null))
    };
    let on_policy = {
        let c = c.clone();
        Callback::from(move |name: String| {
            c.set("deployment.decode_policy", edit::policy_default(&name))
        })
    };
    let n = pools.len();
    html! {
        <FieldGroup title="Deployment" {description} disabled={c.disabled}>
            { c.text("deployment.name", "Name", "A label for comparisons, e.g. 1P:3D.") }
            { c.problems_under("deployment.pools", &[]) }
            { for (0..n).map(|i| {
                let on_move = {
                    let (pools, set_pools) = (pools.clone(), set_pools.clone());
                    Callback::from(move |to: usize| set_pools(edit::moved(&pools, i, to)))
                };
                let on_remove = {
                    let (pools, set_pools) = (pools.clone(), set_pools.clone());
                    Callback::from(move |()| {
                        let mut list = pools.clone();
                        list.remove(i);
                        set_pools(list);
                    })
                };
                html! { <PoolCard key={i} ctx={c.clone()} index={i} len={n} pool={pools[i].clone()} {on_move} {on_remove} /> }
            }) }
            <div class="list-add">
                <button type="button" onclick={on_add}>{ "+ Add pool" }</button>
                <button type="button" onclick={on_drop}>{ "Back to one mixed pool" }</button>
            </div>
            { c.number("deployment.kv_transfer.bandwidth_gbps", "KV link bandwidth").unit("GB/s")
                .hint("Per prefill worker, shared by its transfers.").html() }
            { c.number("deployment.kv_transfer.latency_s", "KV link latency").unit("s").step(0.0001)
                .hint("Paid once per transfer.").html() }
            { c.number("deployment.kv_transfer.concurrency", "Transfers at once").count()
                .hint("Per prefill worker; more wait in line.").html() }
            { c.select("deployment.decode_policy.policy", "Decode policy", "Which decode worker gets a prefilled request.", &edit::POLICIES, Some(on_policy)) }
        </FieldGroup>
    }
}

/// Props of [`PoolCard`].
#[derive(Properties, PartialEq, Clone)]
struct PoolCardProps {
    ctx: super::FormCtx,
    index: usize,
    len: usize,
    pool: Value,
    on_move: Callback<usize>,
    on_remove: Callback<()>,
}

/// One pool: name, role, size, GPU and TP, and its scheduler overrides.
#[function_component(PoolCard)]
fn pool_card(props: &PoolCardProps) -> Html {
    let c = &props.ctx;
    let at = format!("deployment.pools[{}]", props.index);
    let f = |k: &str| format!("{at}.{k}");
    let name = props
        .pool
        .get("name")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .or_else(|| props.pool.get("role").and_then(Value::as_str))
        .unwrap_or("mixed")
        .to_string();
    let top_gpu = c.str("hardware.gpu");
    let inherit = format!("As the Hardware section ({top_gpu})");
    let gpus: Vec<String> = hardware::catalogue().into_iter().map(|g| g.name).collect();
    let options: Vec<(&str, &str)> = std::iter::once(("", inherit.as_str()))
        .chain(gpus.iter().map(|g| (g.as_str(), g.as_str())))
        .collect();
    let on_gpu = {
        let (c, pool, path) = (c.clone(), props.pool.clone(), at.clone());
        Callback::from(move |gpu: String| {
            let v = (!gpu.is_empty()).then_some(Value::String(gpu));
            c.set(&path, with_override(&pool, "hardware", "gpu", v));
        })
    };
    let gpu_value = props
        .pool
        .pointer("/hardware/gpu")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let gpu_path = f("hardware.gpu");
    let gpu_options: Vec<crate::components::form::SelectOption> = options
        .iter()
        .map(|(v, l)| crate::components::form::SelectOption {
            value: AttrValue::from(v.to_string()),
            label: AttrValue::from(l.to_string()),
        })
        .collect();
    html! {
        <ListItem title={format!("Pool {}: {name}", props.index + 1)} index={props.index} len={props.len}
            on_move={props.on_move.clone()} on_remove={props.on_remove.clone()} disabled={c.disabled}
            testid={AttrValue::from("pool-card")}>
            { c.problems_under(&at, &[]) }
            { c.text(&f("name"), "Name", "Unique in the deployment; defaults to the role.") }
            { c.select(&f("role"), "Role", "Mixed pools take new requests and decode them; prefill pools hand each to a decode pool.", &ROLES, None) }
            { c.number(&f("num_workers"), "Workers").count().hint("At the start.").html() }
            <crate::components::form::SelectField id={super::field_id(&gpu_path)} label="GPU"
                value={gpu_value} options={gpu_options} hint="Replaces the Hardware section's GPU for this pool."
                error={c.error(&gpu_path).or_else(|| c.error(&f("hardware")))} disabled={c.disabled} on_change={on_gpu} />
            { c.number(&f("hardware.tp"), "Tensor parallel").count().unit("GPUs")
                .hint("GPUs per worker (per data-parallel rank) of this pool.").html() }
            { c.number(&f("hardware.dp"), "Data parallel").count().unit("ranks")
                .hint("MoE models: attention ranks per worker of this pool.").html() }
            { c.number(&f("worker.max_num_seqs"), "Max sequences").count()
                .hint("Requests one worker runs at once.").html() }
            { c.number(&f("worker.max_num_batched_tokens"), "Max batched tokens").count()
                .hint("Tokens per step.").html() }
        </ListItem>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_override_is_set_key_by_key_and_dropped_when_empty() {
        let pool = json!({"role": "decode", "hardware": {"gpu": "A100-80GB"}});
        let tp = with_override(&pool, "hardware", "tp", Some(json!(2)));
        assert_eq!(tp["hardware"], json!({"gpu": "A100-80GB", "tp": 2}));
        let back = with_override(&pool, "hardware", "gpu", None);
        assert_eq!(back, json!({"role": "decode"}));
    }

    #[test]
    fn the_disaggregated_default_is_valid() {
        let doc = json!({"deployment": disaggregated_default()});
        let scenario = opal::parse_scenario(&doc.to_string());
        assert!(scenario.is_ok(), "{:?}", scenario.err());
    }
}
