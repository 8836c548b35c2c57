//! The editor's race section: the entrants (label and merge patch each), quick entrants per
//! routing policy, and Start race.

use crate::components::disclosure::Disclosure;
use crate::components::scenario_form::edit::{policy_default, POLICIES};
use crate::state::{Action, Level, Scenario};
use opal::race::MAX_ENTRANTS;
use serde_json::{json, Value};
use yew::prelude::*;

/// Props of [`RacePanel`].
#[derive(Properties, PartialEq, Clone)]
pub struct RacePanelProps {
    /// The scenario being edited.
    pub scenario: Scenario,
    /// Sends field edits and `StartRace`.
    pub on_action: Callback<Action>,
}

/// The patch that makes the router use policy `name`, over a document whose policy object
/// is `base`: merge patches merge objects, so each parameter of the old policy that the new
/// one does not set is removed.
fn policy_patch(name: &str, base: &Value) -> Value {
    let mut policy = policy_default(name);
    if let (Some(old), Some(new)) = (base.as_object(), policy.as_object_mut()) {
        for key in old.keys() {
            new.entry(key.as_str()).or_insert(Value::Null);
        }
    }
    json!({ "router": { "policy": policy } })
}

fn policy_label(name: &str) -> String {
    name.replace('_', " ")
}

/// The race section of the editor.
#[function_component(RacePanel)]
pub fn race_panel(props: &RacePanelProps) -> Html {
    let doc = props.scenario.document.as_deref();
    let entrants: Vec<Value> = doc
        .and_then(|d| d.pointer("/race/entrants"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let has_race = doc.is_some_and(|d| d.get("race").is_some_and(|r| !r.is_null()));
    let base_object = doc
        .and_then(|d| d.pointer("/router/policy"))
        .cloned()
        .unwrap_or(Value::Null);
    let base_policy = base_object
        .get("policy")
        .and_then(Value::as_str)
        .unwrap_or("round_robin")
        .to_string();
    let set = |path: String, value: Value| Action::SetField { path, value };
    let set_entrants = {
        let on_action = props.on_action.clone();
        move |list: Vec<Value>| on_action.emit(set("race.entrants".into(), Value::Array(list)))
    };
    let seeds = doc
        .and_then(|d| d.pointer("/race/seeds"))
        .and_then(Value::as_u64)
        .unwrap_or(1);
    let on_seeds = props.on_action.reform(move |ev: Event| {
        let el: web_sys::HtmlInputElement = ev.target_unchecked_into();
        // Out of range, the scenario's check says so at race.seeds.
        match el.value().trim().parse::<u64>() {
            Ok(n) => set("race.seeds".into(), json!(n)),
            Err(_) => Action::Notify {
                level: Level::Error,
                message: "Seeds is a whole number, 1 to 8; it is unchanged.".into(),
            },
        }
    });
    let selected = use_state(|| "max_prefix".to_string());
    let problems: Vec<String> = props
        .scenario
        .problems
        .iter()
        .filter(|p| p.path == "race" || p.path.starts_with("race."))
        .map(ToString::to_string)
        .collect();

    let start_quick = {
        let on_action = props.on_action.clone();
        let (base, base_object) = (base_policy.clone(), base_object.clone());
        Callback::from(move |_: MouseEvent| {
            let other = if base == "max_prefix" {
                "round_robin"
            } else {
                "max_prefix"
            };
            let entrant = |p: &str| json!({ "label": policy_label(p), "patch": policy_patch(p, &base_object) });
            on_action.emit(set(
                "race".into(),
                json!({ "entrants": [entrant(&base), entrant(other)] }),
            ));
        })
    };
    let add = {
        let (entrants, set_entrants, selected) =
            (entrants.clone(), set_entrants.clone(), selected.clone());
        let base_object = base_object.clone();
        Callback::from(move |_: MouseEvent| {
            let mut list = entrants.clone();
            let name = (*selected).clone();
            let mut label = policy_label(&name);
            // Labels are unique within a race.
            let taken = |l: &str| list.iter().any(|e| e["label"].as_str() == Some(l));
            let mut k = 2;
            while taken(&label) {
                label = format!("{} {k}", policy_label(&name));
                k += 1;
            }
            list.push(json!({ "label": label, "patch": policy_patch(&name, &base_object) }));
            set_entrants(list);
        })
    };
    let on_select = {
        let selected = selected.clone();
        Callback::from(move |e: Event| {
            let el: web_sys::HtmlSelectElement = e.target_unchecked_into();
            selected.set(el.value());
        })
    };

    html! {
        <Disclosure class={classes!("field-group", "race-panel")} testid="race-panel" title="Race" open={has_race}>
            <p class="field-group-description">
                { "Race 2 to 4 variants of this scenario on the same arrivals, played back side by side. \
                   Each entrant is a label and a JSON merge patch over the scenario (null removes a field)." }
            </p>
            if !has_race {
                <button type="button" onclick={start_quick} data-testid="add-race">
                    { format!("Race {} against {}", policy_label(&base_policy),
                        policy_label(if base_policy == "max_prefix" { "round_robin" } else { "max_prefix" })) }
                </button>
            } else {
                <ol class="race-entrants">
                    { for entrants.iter().enumerate().map(|(i, e)| {
                        let label = e["label"].as_str().unwrap_or_default().to_string();
                        let patch = e.get("patch").map(Value::to_string).unwrap_or_else(|| "{}".into());
                        let on_label = props.on_action.reform(move |ev: Event| {
                            let el: web_sys::HtmlInputElement = ev.target_unchecked_into();
                            Action::SetField { path: format!("race.entrants[{i}].label"), value: Value::String(el.value()) }
                        });
                        let on_patch = props.on_action.reform(move |ev: Event| {
                            let el: web_sys::HtmlTextAreaElement = ev.target_unchecked_into();
                            match serde_json::from_str::<Value>(&el.value()) {
                                Ok(value) => Action::SetField { path: format!("race.entrants[{i}].patch"), value },
                                Err(err) => Action::Notify {
                                    level: Level::Error,
                                    message: format!("Entrant {}'s patch is not JSON ({err}); it is unchanged.", i + 1),
                                },
                            }
                        });
                        let remove = {
                            let (entrants, set_entrants) = (entrants.clone(), set_entrants.clone());
                            Callback::from(move |_: MouseEvent| {
                                let mut list = entrants.clone();
                                list.remove(i);
                                set_entrants(list);
                            })
                        };
                        html! {
                            <li class="race-entrant">
                                <label>{ "Label" }
                                    <input type="text" value={label} onchange={on_label} />
                                </label>
                                <button type="button" class="link" onclick={remove}>{ "Remove" }</button>
                                <label>{ "Patch (JSON merge patch)" }
                                    <textarea class="race-patch" spellcheck="false" rows="2" value={patch} onchange={on_patch} />
                                </label>
                            </li>
                        }
                    }) }
                </ol>
                if !problems.is_empty() {
                    <ul class="problems" role="alert">
                        { for problems.iter().map(|p| html! { <li>{ p.clone() }</li> }) }
                    </ul>
                }
                <div class="race-actions">
                    <select aria-label="Policy of a new entrant" onchange={on_select}>
                        { for POLICIES.iter().map(|(name, title)| html! {
                            <option value={*name} selected={*name == selected.as_str()}>{ *title }</option>
                        }) }
                    </select>
                    <button type="button" onclick={add} disabled={entrants.len() >= MAX_ENTRANTS}>{ "Add entrant" }</button>
                    <label title="The entrants also run at seed + 1, …; a winner is named only if it wins at every seed">
                        { "Seeds " }
                        <input type="number" min="1" max={opal::race::MAX_SEEDS.to_string()} value={seeds.to_string()}
                            onchange={on_seeds} data-testid="race-seeds" />
                    </label>
                    <button type="button" class="primary" data-testid="start-race"
                        disabled={!props.scenario.is_runnable()}
                        onclick={props.on_action.reform(|_: MouseEvent| Action::StartRace)}>
                        { "Start race" }
                    </button>
                    <button type="button" class="link"
                        onclick={props.on_action.reform(|_: MouseEvent| Action::SetField { path: "race".into(), value: Value::Null })}>
                        { "Remove race" }
                    </button>
                </div>
            }
        </Disclosure>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_patch_removes_every_parameter_of_the_old_policy_it_does_not_set() {
        let base =
            json!({"policy": "llm_d", "prefix_mode": "approximate", "lru_capacity_per_server": 9});
        let patch = policy_patch("cache_aware", &base);
        let policy = &patch["router"]["policy"];
        assert_eq!(policy["policy"], "cache_aware");
        assert_eq!(policy["cache_threshold"], 0.5, "its own defaults");
        assert_eq!(policy["prefix_mode"], Value::Null);
        assert_eq!(policy["lru_capacity_per_server"], Value::Null);
        // Over a policy without parameters, only the new policy's own.
        let patch = policy_patch("round_robin", &json!({"policy": "random"}));
        assert_eq!(
            patch,
            json!({"router": {"policy": {"policy": "round_robin"}}})
        );
    }
}
