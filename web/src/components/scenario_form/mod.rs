//! The scenario's form view: a section per part of the scenario document, every field bound
//! to its JSON path, showing the engine's default when the document leaves it out and the
//! engine's validation problem for that path next to it.

mod data_files;
mod deployment;
pub mod edit;
mod hardware;
mod kv_cache;
mod length;
mod model;
mod router;
mod simulation;
mod stage;
mod sweep;
mod worker;
mod workload;

use super::form::{NumberField, SelectField, SelectOption, TextField, Toggle};
use crate::json_path::number_value;
use crate::state::{Action, Level, Scenario};
use serde_json::Value;
use std::rc::Rc;
use yew::prelude::*;

/// Props of [`ScenarioForm`].
#[derive(Properties, PartialEq, Clone)]
pub struct ScenarioFormProps {
    /// The scenario being edited.
    pub scenario: Scenario,
    /// Trace and sessions files picked in this tab, by name.
    #[prop_or_default]
    pub data_files: Rc<crate::state::DataFiles>,
    /// Sends `SetField` (and data-file) actions.
    pub on_action: Callback<Action>,
}

/// What every section needs: the document, its problems, and a way to change it.
#[derive(Clone)]
pub struct FormCtx {
    /// The parsed document (an empty object while the JSON does not parse).
    pub doc: Rc<Value>,
    /// The scenario, for its problems.
    pub scenario: Scenario,
    /// Picked data files.
    pub data_files: Rc<crate::state::DataFiles>,
    /// Where actions go.
    pub on_action: Callback<Action>,
    /// The JSON does not parse: fields are read-only.
    pub disabled: bool,
}

/// Contexts are equal when they hold the same document, not an equal one: every section and
/// stage card compares its context on each render, and comparing contents walked the whole
/// document each time.
impl PartialEq for FormCtx {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.doc, &other.doc)
            && self.scenario == other.scenario
            && Rc::ptr_eq(&self.data_files, &other.data_files)
            && self.on_action == other.on_action
            && self.disabled == other.disabled
    }
}

/// A DOM id for the field at `path`: `workload.stages[1].type` → `workload-stages-1-type`.
pub fn field_id(path: &str) -> String {
    path.replace(['.', '['], "-").replace(']', "")
}

impl FormCtx {
    /// The value the field at `path` shows (document, else default).
    pub fn get(&self, path: &str) -> Option<Value> {
        edit::value_at(&self.doc, path)
    }

    /// The number at `path`.
    pub fn num(&self, path: &str) -> Option<f64> {
        self.get(path).and_then(|v| v.as_f64())
    }

    /// The string at `path`, or "".
    pub fn str(&self, path: &str) -> String {
        self.get(path)
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default()
    }

    /// The engine's problem at exactly `path`.
    pub fn error(&self, path: &str) -> Option<AttrValue> {
        self.scenario
            .problem_at(path)
            .map(|m| AttrValue::from(m.to_string()))
    }

    /// The action writing `value` at `path`; sections and list entries the document leaves
    /// to their defaults are written out first (see [`edit::write`]).
    pub fn set_action(&self, path: &str, value: Value) -> Action {
        if crate::json_path::get_json_path(&self.doc, parent(path)).is_some() {
            return Action::SetField {
                path: path.into(),
                value,
            };
        }
        match edit::write(&self.doc, path, value) {
            Ok(doc) => {
                let section = edit::section_of(path).to_string();
                let value = doc.get(&section).cloned().unwrap_or(Value::Null);
                Action::SetField {
                    path: section,
                    value,
                }
            }
            Err(e) => Action::Notify {
                level: Level::Error,
                message: format!("Could not set {path}: {e}."),
            },
        }
    }

    /// Writes `value` at `path` now.
    pub fn set(&self, path: &str, value: Value) {
        self.on_action.emit(self.set_action(path, value));
    }

    /// A callback writing what it is given at `path`, converted by `f`.
    pub fn setter<T: 'static>(&self, path: &str, f: impl Fn(T) -> Value + 'static) -> Callback<T> {
        let ctx = self.clone();
        let path = path.to_string();
        Callback::from(move |x: T| ctx.set(&path, f(x)))
    }

    /// What a field at `path` reports its invalid typed text with.
    fn draft_reporter(&self, path: &str, label: &str) -> Callback<Option<String>> {
        let (path, label) = (path.to_string(), label.to_string());
        self.on_action.reform(move |error| Action::FieldDraft {
            path: path.clone(),
            label: label.clone(),
            error,
        })
    }

    /// A number field bound to `path`.
    pub fn number(&self, path: &str, label: &'static str) -> NumberSpec {
        NumberSpec {
            ctx: self.clone(),
            path: path.into(),
            label,
            unit: None,
            hint: None,
            min: None,
            step: None,
            integer: false,
        }
    }

    /// An on/off switch bound to the boolean at `path`.
    pub fn toggle(&self, path: &str, label: &'static str, hint: &'static str) -> Html {
        let checked = self.get(path).and_then(|v| v.as_bool()).unwrap_or(false);
        html! {
            <Toggle id={field_id(path)} {label} {checked} hint={hint} error={self.error(path)}
                disabled={self.disabled} on_change={self.setter(path, Value::Bool)} />
        }
    }

    /// A text field bound to the string at `path`.
    pub fn text(&self, path: &str, label: &'static str, hint: &'static str) -> Html {
        html! {
            <TextField id={field_id(path)} {label} value={self.str(path)} hint={hint}
                error={self.error(path)} disabled={self.disabled}
                on_change={self.setter(path, Value::String)} />
        }
    }

    /// A select of fixed string values bound to `path` (for choices that do not change the
    /// shape of anything; those pass their own `on_change`).
    pub fn select(
        &self,
        path: &str,
        label: &'static str,
        hint: &'static str,
        options: &[(&str, &str)],
        on_change: Option<Callback<String>>,
    ) -> Html {
        let options: Vec<SelectOption> = options
            .iter()
            .map(|(v, l)| SelectOption {
                value: AttrValue::from(v.to_string()),
                label: AttrValue::from(l.to_string()),
            })
            .collect();
        let on_change = on_change.unwrap_or_else(|| self.setter(path, Value::String));
        html! {
            <SelectField id={field_id(path)} {label} value={self.str(path)} {options} hint={hint}
                error={self.error(path)} disabled={self.disabled} {on_change} />
        }
    }

    /// Problems at `path` itself or anywhere under it that no field shows, e.g. a stage
    /// that needs a bound or a field of the wrong type.
    pub fn problems_under(&self, path: &str, shown: &[&str]) -> Html {
        let list: Vec<_> = self
            .scenario
            .problems
            .iter()
            .filter(|p| p.path == path && !shown.contains(&p.path.as_str()))
            .collect();
        html! {
            { for list.into_iter().map(|p| html! {
                <p class="section-problem" role="alert">{ &p.message }</p>
            }) }
        }
    }
}

/// The path without its last segment (`a.b[2]` → `a.b`, `a` → ``).
fn parent(path: &str) -> &str {
    let end = path.rfind(['.', '[']).unwrap_or(0);
    &path[..end]
}

/// A number field being described; `.html()` renders it.
pub struct NumberSpec {
    ctx: FormCtx,
    path: String,
    label: &'static str,
    unit: Option<&'static str>,
    hint: Option<&'static str>,
    min: Option<f64>,
    step: Option<f64>,
    integer: bool,
}

impl NumberSpec {
    /// The unit shown after the input.
    pub fn unit(mut self, unit: &'static str) -> Self {
        self.unit = Some(unit);
        self
    }
    /// The one-line hint.
    pub fn hint(mut self, hint: &'static str) -> Self {
        self.hint = Some(hint);
        self
    }
    /// Whole, non-negative numbers (a count). Other limits are the engine's to check, so
    /// its message shows next to the field.
    pub fn whole(mut self) -> Self {
        self.integer = true;
        self.min = Some(0.0);
        self
    }
    /// A count of at least one (workers, GPUs, tokens, sequences): the engine's own minimum.
    pub fn count(mut self) -> Self {
        self.integer = true;
        self.min = Some(1.0);
        self
    }
    /// Arrow-key step.
    pub fn step(mut self, step: f64) -> Self {
        self.step = Some(step);
        self
    }
    /// Renders the field.
    pub fn html(self) -> Html {
        let c = &self.ctx;
        let p = self.path.as_str();
        html! {
            <NumberField id={field_id(p)} label={self.label} value={c.num(p)}
                unit={self.unit.map(AttrValue::from)} hint={self.hint.map(AttrValue::from)}
                error={c.error(p)} min={self.min} step={self.step}
                integer={self.integer} disabled={c.disabled}
                on_change={c.setter(p, number_value)} on_draft={c.draft_reporter(p, self.label)} />
        }
    }
}

/// Props of one form section.
#[derive(Properties, PartialEq, Clone)]
pub struct SectionProps {
    /// The shared form context.
    pub ctx: FormCtx,
}

/// The form.
#[function_component(ScenarioForm)]
pub fn scenario_form(props: &ScenarioFormProps) -> Html {
    let disabled = props.scenario.document.is_none();
    let ctx = FormCtx {
        doc: props
            .scenario
            .document
            .clone()
            .unwrap_or_else(|| Rc::new(Value::Object(Default::default()))),
        scenario: props.scenario.clone(),
        data_files: props.data_files.clone(),
        on_action: props.on_action.clone(),
        disabled,
    };
    html! {
        <div class="scenario-form">
            if disabled {
                <p class="form-blocked">{ "The form is paused until the JSON below parses again." }</p>
            }
            <simulation::SimulationSection ctx={ctx.clone()} />
            <model::ModelSection ctx={ctx.clone()} />
            <hardware::HardwareSection ctx={ctx.clone()} />
            <worker::WorkerSection ctx={ctx.clone()} />
            <kv_cache::KvCacheSection ctx={ctx.clone()} />
            <router::RouterSection ctx={ctx.clone()} />
            <deployment::DeploymentSection ctx={ctx.clone()} />
            <workload::WorkloadSection ctx={ctx.clone()} />
            <sweep::SweepSection ctx={ctx} />
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_ids_are_dom_safe() {
        assert_eq!(
            field_id("workload.stages[1].type"),
            "workload-stages-1-type"
        );
        assert_eq!(field_id("simulation.seed"), "simulation-seed");
    }

    #[test]
    fn parents_drop_the_last_segment() {
        assert_eq!(parent("a.b[2]"), "a.b");
        assert_eq!(parent("a.b[2].c"), "a.b[2]");
        assert_eq!(parent("a"), "");
    }
}
