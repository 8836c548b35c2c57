//! The scenario's form view: fields bound to paths in the JSON document.
//!
//! Sections arrive with the engine's scenario schema; for now the fields present in the
//! default scenario.

use super::form::{FieldGroup, NumberField};
use crate::json_path::{get_json_path, number_value};
use crate::state::{Action, Scenario};
use yew::prelude::*;

/// Props of [`ScenarioForm`].
#[derive(Properties, PartialEq, Clone)]
pub struct ScenarioFormProps {
    /// The scenario being edited.
    pub scenario: Scenario,
    /// Sends `SetField` actions.
    pub on_action: Callback<Action>,
}

/// Binds a number field to `path`: reads its value and writes edits back as `SetField`.
fn number_at(
    scenario: &Scenario,
    path: &'static str,
    on_action: &Callback<Action>,
) -> (Option<f64>, Callback<f64>, Option<AttrValue>) {
    let value = scenario
        .document
        .as_deref()
        .and_then(|d| get_json_path(d, path))
        .and_then(|v| v.as_f64());
    let on_change = on_action.reform(move |x: f64| Action::SetField {
        path: path.to_string(),
        value: number_value(x),
    });
    let error = scenario
        .problem_at(path)
        .map(|m| AttrValue::from(m.to_string()));
    (value, on_change, error)
}

/// The form.
#[function_component(ScenarioForm)]
pub fn scenario_form(props: &ScenarioFormProps) -> Html {
    let disabled = props.scenario.document.is_none();
    let (seed, on_seed, seed_error) =
        number_at(&props.scenario, "simulation.seed", &props.on_action);
    html! {
        <div class="scenario-form">
            if disabled {
                <p class="form-blocked">{ "The form is paused until the JSON below parses again." }</p>
            }
            <FieldGroup title="Simulation" description="What makes a run repeatable." {disabled}>
                <NumberField id="simulation-seed" label="Seed" value={seed} on_change={on_seed}
                    error={seed_error} min={0.0} step={1.0} integer=true {disabled}
                    hint="Same scenario and seed, same run, on any machine." />
            </FieldGroup>
        </div>
    }
}
