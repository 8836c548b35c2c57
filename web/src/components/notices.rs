//! Dismissable messages, announced to screen readers as they appear.

use crate::state::{Level, Notice};
use yew::prelude::*;

/// Props of [`Notices`].
#[derive(Properties, PartialEq, Clone)]
pub struct NoticesProps {
    /// Notices to show, oldest first.
    pub notices: Vec<Notice>,
    /// Dismiss the notice with this id.
    pub on_dismiss: Callback<u64>,
}

/// The notice area.
#[function_component(Notices)]
pub fn notices(props: &NoticesProps) -> Html {
    html! {
        <div class="notices" role="status" aria-live="polite" data-testid="notices">
            { for props.notices.iter().map(|n| {
                let id = n.id;
                let level = match n.level {
                    Level::Info => "info",
                    Level::Warning => "warning",
                    Level::Error => "error",
                };
                html! {
                    <div class={classes!("notice", level)} key={id}>
                        <span>{ &n.message }</span>
                        <button class="dismiss" aria-label="Dismiss" onclick={props.on_dismiss.reform(move |_: MouseEvent| id)}>{ "×" }</button>
                    </div>
                }
            }) }
        </div>
    }
}
