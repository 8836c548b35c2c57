//! A collapsible, titled section of fields (a [`Disclosure`]: Enter or Space on its title
//! folds it).

use crate::components::disclosure::Disclosure;
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
        <Disclosure class="field-group" title={props.title.clone()} open={props.open}>
            if let Some(d) = &props.description {
                <p class="field-group-description">{ d }</p>
            }
            <fieldset disabled={props.disabled}>
                <legend class="visually-hidden">{ &props.title }</legend>
                { props.children.clone() }
            </fieldset>
        </Disclosure>
    }
}
