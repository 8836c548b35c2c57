//! Share links pasted into the address bar of an open page.

use crate::link::{link_action, location_hash};
use crate::state::Action;
use gloo_events::EventListener;
use yew::prelude::*;

/// Opens (and runs) the scenario of a share link pasted into the address bar.
#[hook]
pub fn use_link_listener(on_action: Callback<Action>) {
    use_effect_with((), move |_| {
        let listener = web_sys::window().map(|w| {
            EventListener::new(&w, "hashchange", move |_| {
                if let Some(a) = link_action(&location_hash(), "Your scenario is unchanged") {
                    on_action.emit(a);
                }
            })
        });
        move || drop(listener)
    });
}
