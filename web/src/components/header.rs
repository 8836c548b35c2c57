//! The top bar: product name, engine version, and the app's main commands.

use crate::state::{Action, Theme};
use yew::prelude::*;

/// Props of [`Header`].
#[derive(Properties, PartialEq, Clone)]
pub struct HeaderProps {
    /// A run is in progress (the Run button becomes Stop).
    pub running: bool,
    /// Talk mode is on.
    pub talk: bool,
    /// The colour theme in force.
    pub theme: Theme,
    /// Sends reducer actions (Run, Stop, talk mode, theme, help).
    pub on_action: Callback<Action>,
    /// Make and show a share link.
    pub on_share: Callback<()>,
    /// Open the file picker to import a scenario.
    pub on_import: Callback<()>,
    /// Download the scenario as a file.
    pub on_export: Callback<()>,
}

/// The header bar.
#[function_component(Header)]
pub fn header(props: &HeaderProps) -> Html {
    let act = |a: Action| props.on_action.reform(move |_: MouseEvent| a.clone());
    let unit = |cb: &Callback<()>| cb.reform(|_: MouseEvent| ());
    html! {
        <header class="app-header">
            <h1>{ "Opal" }</h1>
            <span class="tagline">{ "LLM serving simulator, in your browser" }</span>
            <nav class="toolbar" aria-label="Commands">
                if props.running {
                    <button class="primary" onclick={act(Action::Stop)} title="Stop (Esc)">{ "Stop" }</button>
                } else {
                    <button class="primary" onclick={act(Action::Run)} title="Run (Ctrl/⌘+Enter)">{ "Run" }</button>
                }
                <button onclick={unit(&props.on_share)}>{ "Share" }</button>
                <button onclick={unit(&props.on_import)}>{ "Import" }</button>
                <button onclick={unit(&props.on_export)}>{ "Export" }</button>
                <button onclick={act(Action::ToggleTalk)} aria-pressed={props.talk.to_string()} title="Talk mode (t)">{ "Talk mode" }</button>
                <button onclick={act(Action::CycleTheme)} title="Colour theme">{ format!("Theme: {}", props.theme.name()) }</button>
                <button onclick={act(Action::ToggleHelp)} aria-label="Keyboard shortcuts" title="Keyboard shortcuts (?)">{ "?" }</button>
            </nav>
            <span class="version" data-testid="engine-version">{ format!("engine {}", opal::VERSION) }</span>
        </header>
    }
}
