//! The `sweep` section: one or two fields varied (a range or a list of values), a search
//! for the SLO's edge (highest rate, fewest workers), and the price of a GPU-hour the cost
//! column uses. Absent from the document until "Add a sweep".

use super::{edit, field_id, FormCtx, SectionProps};
use crate::components::form::{FieldGroup, ListItem, SelectField, SelectOption, TextField};
use serde_json::{json, Value};
use yew::prelude::*;

/// What "Add a sweep" writes: the request rate over a range, like the docs' example.
fn new_sweep() -> Value {
    json!({ "vary": [ new_axis(0) ] })
}

/// A new axis: the first stage's rate for the first, the routing policy for the second.
fn new_axis(k: usize) -> Value {
    if k == 0 {
        json!({ "path": "workload.stages[0].request_rate", "from": 5, "to": 60, "steps": 12 })
    } else {
        json!({ "path": "router.policy",
                "values": [ { "policy": "round_robin" }, { "policy": "max_prefix" } ] })
    }
}

/// What a search of `kind` starts as (a rate search in the range of the first axis' example).
fn new_search(kind: &str) -> Value {
    match kind {
        "max_rate" => json!({ "type": "max_rate", "path": "workload.stages[0].request_rate",
                              "low": 1, "high": 100, "tolerance": 1 }),
        "min_workers" => json!({ "type": "min_workers", "min": 1, "max": 16 }),
        _ => Value::Null,
    }
}

/// `values` as the list field shows them: each value's JSON, comma-separated.
pub(crate) fn values_text(values: &[Value]) -> String {
    values
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// What was typed in the list field, read as JSON values separated by commas.
pub(crate) fn parse_values(text: &str) -> Result<Vec<Value>, String> {
    serde_json::from_str::<Vec<Value>>(&format!("[{text}]"))
        .map_err(|e| format!("not a list of JSON values: {e}"))
}

/// The first problem at `path` or under it, with where under it when deeper.
fn error_under(c: &FormCtx, path: &str) -> Option<AttrValue> {
    c.scenario
        .problems
        .iter()
        .find(|p| {
            p.path == path
                || p.path.starts_with(&format!("{path}["))
                || p.path.starts_with(&format!("{path}."))
        })
        .map(|p| {
            let rest = &p.path[path.len()..];
            if rest.is_empty() {
                AttrValue::from(p.message.clone())
            } else {
                AttrValue::from(format!("{rest}: {}", p.message))
            }
        })
}

/// Vary, search and cost.
#[function_component(SweepSection)]
pub fn sweep_section(props: &SectionProps) -> Html {
    let c = &props.ctx;
    let Some(sweep) = c.doc.get("sweep").cloned() else {
        let on_add = {
            let c = c.clone();
            Callback::from(move |_: MouseEvent| c.set("sweep", new_sweep()))
        };
        return html! {
            <FieldGroup title="Sweep" open={false}
                description="Run the scenario at many values of one or two fields, or search for the SLO's edge." disabled={c.disabled}>
                <div class="list-add">
                    <button type="button" onclick={on_add} data-testid="add-sweep">{ "+ Add a sweep" }</button>
                </div>
            </FieldGroup>
        };
    };
    let axes: Vec<Value> = sweep
        .get("vary")
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default();
    let set_axes = {
        let c = c.clone();
        move |list: Vec<Value>| c.set("sweep.vary", Value::Array(list))
    };
    let on_add_axis = {
        let (axes, set_axes) = (axes.clone(), set_axes.clone());
        Callback::from(move |_: MouseEvent| {
            let mut list = axes.clone();
            list.push(new_axis(list.len()));
            set_axes(list);
        })
    };
    let on_remove_sweep = {
        let c = c.clone();
        Callback::from(move |_: MouseEvent| c.on_action.emit(remove_sweep(&c)))
    };
    let n = axes.len();
    html! {
        <FieldGroup title="Sweep" description="Every combination of the varied values is a full run; the sweep panel under the results runs them." disabled={c.disabled}>
            { c.problems_under("sweep", &[]) }
            { for (0..n).map(|k| {
                let on_remove = {
                    let (axes, set_axes) = (axes.clone(), set_axes.clone());
                    Callback::from(move |()| {
                        let mut list = axes.clone();
                        list.remove(k);
                        set_axes(list);
                    })
                };
                let on_move = {
                    let (axes, set_axes) = (axes.clone(), set_axes.clone());
                    Callback::from(move |to: usize| set_axes(edit::moved(&axes, k, to)))
                };
                let title = if k == 0 { "Field 1 (the x axis)" } else { "Field 2 (a curve per value)" };
                html! {
                    <ListItem key={k} {title} index={k} len={n} {on_move} {on_remove}
                        disabled={c.disabled} testid={format!("sweep-axis-{k}")}>
                        <AxisFields ctx={c.clone()} index={k} />
                    </ListItem>
                }
            }) }
            if n < opal::sweep::MAX_AXES {
                <div class="list-add">
                    <button type="button" onclick={on_add_axis} data-testid="add-axis">
                        { if n == 0 { "+ Vary a field" } else { "+ Vary a second field (a curve per value)" } }
                    </button>
                </div>
            }
            { search_fields(c) }
            { c.number("hardware.cost_per_gpu_hour", "Cost per GPU-hour").unit("$/h")
                .step(0.1).hint(cost_hint(c)).html() }
            <div class="list-add">
                <button type="button" onclick={on_remove_sweep} data-testid="remove-sweep">{ "Remove the sweep" }</button>
            </div>
        </FieldGroup>
    }
}

/// The action removing the `sweep` section from the document.
fn remove_sweep(c: &FormCtx) -> crate::state::Action {
    let mut doc = (*c.doc).clone();
    if let Some(o) = doc.as_object_mut() {
        o.remove("sweep");
    }
    crate::state::Action::EditScenario(serde_json::to_string_pretty(&doc).unwrap_or_default())
}

/// The hint under the cost: the catalogue's price the field overrides.
fn cost_hint(c: &FormCtx) -> &'static str {
    let gpu = c.str("hardware.gpu");
    if opal::hardware::list_price(&gpu).is_some() {
        "For the cost per million output tokens. Empty: your hardware.gpu_prices entry for the GPU type, else the catalogue's nominal price (a sweep over hardware.gpu prices each type so)."
    } else {
        "For the cost per million output tokens; this GPU has no catalogue price."
    }
}

/// The search's type and its fields.
fn search_fields(c: &FormCtx) -> Html {
    let kind = c.str("sweep.search.type");
    let kind = if kind.is_empty() {
        "none".to_string()
    } else {
        kind
    };
    let on_kind = {
        let c = c.clone();
        Callback::from(move |k: String| match new_search(&k) {
            Value::Null => c.on_action.emit(without(&c, "search")),
            s => c.set("sweep.search", s),
        })
    };
    let options = SelectOption::fixed(&[
        ("none", "No search: run every point as it is"),
        ("max_rate", "Highest request rate meeting the SLO"),
        ("min_workers", "Fewest workers meeting the SLO"),
    ]);
    html! {
        <>
            <SelectField id="sweep-search-type" label="Search" value={kind.clone()} {options}
                hint="At each point, bisect for the SLO's edge (each probe a full run)."
                error={error_under(c, "sweep.search")} disabled={c.disabled} on_change={on_kind} />
            if kind == "max_rate" {
                <div class="subfields">
                    { c.text("sweep.search.path", "Rate field", "The request rate searched; usually workload.stages[0].request_rate.") }
                    { c.number("sweep.search.low", "Low").unit("req/s").hint("Lowest rate tried; must meet the SLO.").html() }
                    { c.number("sweep.search.high", "High").unit("req/s").hint("Highest rate tried.").html() }
                    { c.number("sweep.search.tolerance", "Tolerance").unit("req/s").step(0.1)
                        .hint("Bisection stops when low and high are this close.").html() }
                </div>
            }
            if kind == "min_workers" {
                <div class="subfields">
                    { c.number("sweep.search.min", "Fewest workers").whole().hint("Fewest tried.").html() }
                    { c.number("sweep.search.max", "Most workers").whole().hint("Most tried; must meet the SLO.").html() }
                </div>
            }
        </>
    }
}

/// The action removing `sweep.<key>`.
fn without(c: &FormCtx, key: &str) -> crate::state::Action {
    let mut sweep = c.doc.get("sweep").cloned().unwrap_or_else(|| json!({}));
    if let Some(o) = sweep.as_object_mut() {
        o.remove(key);
    }
    c.set_action("sweep", sweep)
}

/// Props of [`AxisFields`].
#[derive(Properties, PartialEq, Clone)]
struct AxisProps {
    ctx: FormCtx,
    index: usize,
}

/// One varied field: its path, and a range (from, to, steps) or a list of values.
#[function_component(AxisFields)]
fn axis_fields(props: &AxisProps) -> Html {
    let c = &props.ctx;
    let at = format!("sweep.vary[{}]", props.index);
    let axis = c.get(&at).unwrap_or(Value::Null);
    let list = axis.get("values").is_some();
    let on_mode = {
        let (c, at, axis) = (c.clone(), at.clone(), axis.clone());
        Callback::from(move |mode: String| {
            let path = axis.get("path").cloned().unwrap_or(Value::Null);
            let next = if mode == "list" {
                let first = axis.get("from").cloned().unwrap_or(json!(1));
                let last = axis.get("to").cloned().unwrap_or(json!(2));
                json!({ "path": path, "values": [first, last] })
            } else {
                json!({ "path": path, "from": 1, "to": 10, "steps": 10 })
            };
            c.set(&at, next);
        })
    };
    let modes = SelectOption::fixed(&[
        ("range", "A range: from, to, steps"),
        ("list", "A list of values"),
    ]);
    html! {
        <>
            { c.problems_under(&at, &[]) }
            { c.text(&format!("{at}.path"), "Field path", "Any scenario field, e.g. workload.stages[0].request_rate, router.policy, hardware.gpu.") }
            <SelectField id={field_id(&format!("{at}.mode"))} label="Values" value={if list { "list" } else { "range" }}
                options={modes} disabled={c.disabled} on_change={on_mode} />
            if list {
                <ValuesField ctx={c.clone()} path={format!("{at}.values")} />
            } else {
                <div class="subfields">
                    { c.number(&format!("{at}.from"), "From").hint("First value.").html() }
                    { c.number(&format!("{at}.to"), "To").hint("Last value.").html() }
                    { c.number(&format!("{at}.steps"), "Steps").whole().hint("Values from first to last, evenly spaced.").html() }
                </div>
            }
        </>
    }
}

/// Props of [`ValuesField`].
#[derive(Properties, PartialEq, Clone)]
struct ValuesProps {
    ctx: FormCtx,
    /// `sweep.vary[k].values`.
    path: String,
}

/// The list of an axis' values as comma-separated JSON (`5, 10, 20` or
/// `{"policy": "round_robin"}, {"policy": "max_prefix"}`); what does not read as JSON is
/// kept and said, the document keeps its last good list.
#[function_component(ValuesField)]
fn values_field(props: &ValuesProps) -> Html {
    let c = &props.ctx;
    let values: Vec<Value> = c
        .get(&props.path)
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default();
    let shown = values_text(&values);
    let draft_error = use_state(|| None::<String>);
    let on_change = {
        let (c, path, draft_error) = (c.clone(), props.path.clone(), draft_error.clone());
        Callback::from(move |text: String| match parse_values(&text) {
            Ok(list) => {
                draft_error.set(None);
                c.set(&path, Value::Array(list));
            }
            Err(e) => draft_error.set(Some(e)),
        })
    };
    let error = (*draft_error)
        .clone()
        .map(AttrValue::from)
        .or_else(|| error_under(c, &props.path));
    html! {
        <TextField id={field_id(&props.path)} label="Values" value={shown} {error}
            hint="JSON values, comma-separated: 5, 10, 20 or {\"policy\": \"round_robin\"}, {\"policy\": \"max_prefix\"}."
            disabled={c.disabled} {on_change} />
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_back_as_they_are_shown() {
        let v = vec![
            json!(5),
            json!(12.5),
            json!({ "policy": "max_prefix" }),
            json!("L40S"),
        ];
        let text = values_text(&v);
        assert_eq!(text, r#"5, 12.5, {"policy":"max_prefix"}, "L40S""#);
        assert_eq!(parse_values(&text).unwrap(), v);
        assert!(parse_values("5, ").is_err());
        assert!(parse_values("H100").is_err());
    }
}
