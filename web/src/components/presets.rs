//! The preset gallery: the engine's built-in scenarios (the question each answers, a small
//! picture of its answer, and how), open at the top of the editor; one click loads one with
//! its data files and runs it.

use crate::components::disclosure::Disclosure;
use crate::components::preset_picture::{PresetLegend, PresetPicture};
use crate::state::Action;
use yew::prelude::*;

/// Props of [`Presets`].
#[derive(Properties, PartialEq, Clone)]
pub struct PresetsProps {
    /// Sends `LoadPreset`.
    pub on_action: Callback<Action>,
}

/// The gallery of presets, open until folded away.
#[function_component(Presets)]
pub fn presets(props: &PresetsProps) -> Html {
    let presets = opal::document::presets();
    html! {
        <Disclosure class={classes!("field-group", "presets")} testid="presets" title="Presets: questions it answers">
            <p class="field-group-description">{ "One click loads a built-in scenario, with its data files, and runs it. This replaces the scenario being edited." }</p>
            <div class="preset-list">
                { for presets.iter().map(|p| {
                    let id = p.id.to_string();
                    let onclick = props.on_action.reform(move |_: MouseEvent| Action::LoadPreset(id.clone()));
                    let picture = opal::gallery::pictures().iter().find(|pic| pic.id == p.id);
                    html! {
                        <button type="button" class="preset-card" {onclick} data-preset={p.id} title={p.description}>
                            <strong>{ p.title }</strong>
                            { for picture.map(|picture| html! { <PresetPicture {picture} /> }) }
                            <span class="preset-text">
                                { for picture.map(|picture| html! { <>
                                    <span class="preset-answer">{ &*picture.answer }</span>
                                    <PresetLegend {picture} />
                                </> }) }
                                <span class="preset-description">{ p.description }</span>
                            </span>
                        </button>
                    }
                }) }
            </div>
        </Disclosure>
    }
}
