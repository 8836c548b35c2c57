//! The preset picker: the engine's built-in scenarios (title and description), each loaded
//! with its data files in one click.

use crate::state::Action;
use yew::prelude::*;

/// Props of [`Presets`].
#[derive(Properties, PartialEq, Clone)]
pub struct PresetsProps {
    /// Sends `LoadPreset`.
    pub on_action: Callback<Action>,
}

/// A collapsible list of presets.
#[function_component(Presets)]
pub fn presets(props: &PresetsProps) -> Html {
    let presets = opal::document::presets();
    html! {
        <details class="field-group presets" data-testid="presets">
            <summary>{ "Presets" }</summary>
            <p class="field-group-description">{ "Start from a built-in scenario; its data files come with it. This replaces the scenario being edited." }</p>
            <div class="preset-list">
                { for presets.iter().map(|p| {
                    let id = p.id.to_string();
                    let onclick = props.on_action.reform(move |_: MouseEvent| Action::LoadPreset(id.clone()));
                    html! {
                        <button type="button" class="preset-card" {onclick} data-preset={p.id}>
                            <strong>{ p.title }</strong>
                            <span>{ p.description }</span>
                        </button>
                    }
                }) }
            </div>
        </details>
    }
}
