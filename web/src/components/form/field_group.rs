//! A collapsible, titled section of fields (`<details>`: Enter/Space on the title toggles it).

use yew::prelude::*;

/// Props of [`FieldGroup`].
#[derive(Properties, PartialEq, Clone)]
pub struct FieldGroupProps {
    /// Section title.
    pub title: AttrValue,
    /// One line under the title saying what the section is for.
    #[prop_or_default]
    pub description: Option<AttrValue>,
    /// Whether it starts open.
    #[prop_or(true)]
    pub open: bool,
    /// Disables every field inside (a disabled `<fieldset>`).
    #[prop_or_default]
    pub disabled: bool,
    /// The fields.
    #[prop_or_default]
    pub children: Html,
}

/// A collapsible group of fields.
#[function_component(FieldGroup)]
pub fn field_group(props: &FieldGroupProps) -> Html {
    html! {
        <details class="field-group" open={props.open}>
            <summary>{ &props.title }</summary>
            if let Some(d) = &props.description {
                <p class="field-group-description">{ d }</p>
            }
            <fieldset disabled={props.disabled}>
                <legend class="visually-hidden">{ &props.title }</legend>
                { props.children.clone() }
            </fieldset>
        </details>
    }
}
