//! A labelled single-line text input.

use super::{described_by, notes};
use yew::prelude::*;

/// Props of [`TextField`].
#[derive(Properties, PartialEq, Clone)]
pub struct TextFieldProps {
    /// DOM id; the label points at it.
    pub id: AttrValue,
    /// What the field is, in words.
    pub label: AttrValue,
    /// The current text.
    pub value: AttrValue,
    /// Called with the text on every edit.
    pub on_change: Callback<String>,
    /// One-line hint under the input.
    #[prop_or_default]
    pub hint: Option<AttrValue>,
    /// The engine's problem for this field's path.
    #[prop_or_default]
    pub error: Option<AttrValue>,
    /// Shown while empty.
    #[prop_or_default]
    pub placeholder: Option<AttrValue>,
    /// Read-only for now.
    #[prop_or_default]
    pub disabled: bool,
}

/// A labelled text input.
#[function_component(TextField)]
pub fn text_field(props: &TextFieldProps) -> Html {
    let oninput = props.on_change.reform(|e: InputEvent| {
        let input: web_sys::HtmlInputElement = e.target_unchecked_into();
        input.value()
    });
    let id = props.id.to_string();
    let error = props.error.as_deref();
    html! {
        <div class={classes!("field", "text-field", error.is_some().then_some("invalid"))}>
            <label for={props.id.clone()}>{ &props.label }</label>
            <input
                id={props.id.clone()}
                type="text"
                value={props.value.clone()}
                placeholder={props.placeholder.clone()}
                disabled={props.disabled}
                aria-invalid={if error.is_some() { "true" } else { "false" }}
                aria-describedby={described_by(&id, props.hint.is_some(), error.is_some())}
                {oninput}
            />
            { notes(&id, props.hint.as_ref(), error) }
        </div>
    }
}
