//! An on/off switch (a checkbox with the switch role: Space toggles it).

use super::{described_by, notes};
use yew::prelude::*;

/// Props of [`Toggle`].
#[derive(Properties, PartialEq, Clone)]
pub struct ToggleProps {
    /// DOM id; the label points at it.
    pub id: AttrValue,
    /// What is switched, in words.
    pub label: AttrValue,
    /// Whether it is on.
    pub checked: bool,
    /// Called with the new state.
    pub on_change: Callback<bool>,
    /// One-line hint under the switch.
    #[prop_or_default]
    pub hint: Option<AttrValue>,
    /// The engine's problem for this field's path.
    #[prop_or_default]
    pub error: Option<AttrValue>,
    /// Read-only for now.
    #[prop_or_default]
    pub disabled: bool,
}

/// A labelled switch.
#[function_component(Toggle)]
pub fn toggle(props: &ToggleProps) -> Html {
    let onchange = props.on_change.reform(|e: Event| {
        let input: web_sys::HtmlInputElement = e.target_unchecked_into();
        input.checked()
    });
    let id = props.id.to_string();
    let error = props.error.as_deref();
    html! {
        <div class={classes!("field", "toggle", error.is_some().then_some("invalid"))}>
            <input
                id={props.id.clone()}
                type="checkbox"
                role="switch"
                checked={props.checked}
                disabled={props.disabled}
                aria-invalid={if error.is_some() { "true" } else { "false" }}
                aria-describedby={described_by(&id, props.hint.is_some(), error.is_some())}
                {onchange}
            />
            <label for={props.id.clone()}>{ &props.label }</label>
            { notes(&id, props.hint.as_ref(), error) }
        </div>
    }
}
