//! A labelled drop-down of fixed choices.

use super::{described_by, notes};
use yew::prelude::*;

/// One choice of a [`SelectField`].
#[derive(Debug, Clone, PartialEq)]
pub struct SelectOption {
    /// The value written to the document.
    pub value: AttrValue,
    /// What the user reads.
    pub label: AttrValue,
}

impl SelectOption {
    /// Options from fixed (value, label) pairs.
    pub fn fixed(choices: &[(&'static str, &'static str)]) -> Vec<SelectOption> {
        choices
            .iter()
            .map(|&(value, label)| SelectOption {
                value: AttrValue::Static(value),
                label: AttrValue::Static(label),
            })
            .collect()
    }
}

/// Props of [`SelectField`].
#[derive(Properties, PartialEq, Clone)]
pub struct SelectFieldProps {
    /// DOM id; the label points at it.
    pub id: AttrValue,
    /// What the field is, in words.
    pub label: AttrValue,
    /// The chosen value.
    pub value: AttrValue,
    /// The choices, in display order.
    pub options: Vec<SelectOption>,
    /// Called with the newly chosen value.
    pub on_change: Callback<String>,
    /// One-line hint under the control.
    #[prop_or_default]
    pub hint: Option<AttrValue>,
    /// The engine's problem for this field's path.
    #[prop_or_default]
    pub error: Option<AttrValue>,
    /// Read-only for now.
    #[prop_or_default]
    pub disabled: bool,
}

/// A labelled `<select>`.
#[function_component(SelectField)]
pub fn select_field(props: &SelectFieldProps) -> Html {
    let onchange = props.on_change.reform(|e: Event| {
        let select: web_sys::HtmlSelectElement = e.target_unchecked_into();
        select.value()
    });
    let id = props.id.to_string();
    let error = props.error.as_deref();
    // A value the list does not know (typed in the JSON) is shown, not silently replaced.
    let known = props.options.iter().any(|o| o.value == props.value);
    html! {
        <div class={classes!("field", "select-field", error.is_some().then_some("invalid"))}>
            <label for={props.id.clone()}>{ &props.label }</label>
            <select
                id={props.id.clone()}
                disabled={props.disabled}
                aria-invalid={if error.is_some() { "true" } else { "false" }}
                aria-describedby={described_by(&id, props.hint.is_some(), error.is_some())}
                {onchange}
            >
                if !known {
                    <option value={props.value.clone()} selected=true>{ format!("{} (unknown)", props.value) }</option>
                }
                { for props.options.iter().map(|o| html! {
                    <option value={o.value.clone()} selected={o.value == props.value}>{ &o.label }</option>
                }) }
            </select>
            { notes(&id, props.hint.as_ref(), error) }
        </div>
    }
}
