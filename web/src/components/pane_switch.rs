//! On a narrow screen (a phone) the page shows one pane at a time, the results first; these
//! two tabs switch to the scenario editor and back. A wide screen shows both panes and hides
//! the tabs (the style sheet decides, by width).

use crate::state::{Action, Pane};
use yew::prelude::*;

/// Props of [`PaneSwitch`].
#[derive(Properties, PartialEq)]
pub struct PaneSwitchProps {
    /// The pane shown.
    pub pane: Pane,
    /// Dispatches [`Action::ShowPane`].
    pub on_action: Callback<Action>,
}

/// The results / scenario tabs of a narrow screen.
#[function_component(PaneSwitch)]
pub fn pane_switch(props: &PaneSwitchProps) -> Html {
    let tab = |pane: Pane, label: &'static str, controls: &'static str| {
        let selected = props.pane == pane;
        let onclick = props
            .on_action
            .reform(move |_: MouseEvent| Action::ShowPane(pane));
        html! {
            // Both in the tab order: two tabs need no roving focus.
            <button type="button" role="tab" class={classes!("tab", selected.then_some("selected"))} aria-selected={selected.to_string()}
                aria-controls={controls} {onclick}>
                { label }
            </button>
        }
    };
    html! {
        <div class="pane-switch tabs" role="tablist" aria-label="Pane" data-testid="pane-switch">
            { tab(Pane::Results, "Results", "pane-results") }
            { tab(Pane::Scenario, "Scenario", "pane-scenario") }
        </div>
    }
}
