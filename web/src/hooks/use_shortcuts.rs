//! Keyboard shortcuts on the whole page (the table is in [`crate::shortcuts`]).

use crate::shortcuts::{command_for, Command, KeyPress, SEEK_STEP_S};
use crate::state::{Action, AppState, RunStatus, View};
use gloo_events::{EventListener, EventListenerOptions};
use wasm_bindgen::JsCast;
use yew::prelude::*;

/// Whether a key press lands in a place where letters are text, not commands.
fn is_typing(target: Option<web_sys::EventTarget>) -> bool {
    let Some(el) = target.and_then(|t| t.dyn_into::<web_sys::Element>().ok()) else {
        return false;
    };
    match el.tag_name().as_str() {
        "TEXTAREA" | "SELECT" => true,
        "INPUT" => !matches!(
            el.get_attribute("type").as_deref(),
            Some("checkbox" | "radio" | "button" | "range" | "submit" | "file")
        ),
        _ => el
            .get_attribute("contenteditable")
            .is_some_and(|v| v != "false"),
    }
}

/// The action a key press means in the current state, if any.
fn key_action(state: &AppState, e: &web_sys::KeyboardEvent) -> Option<Action> {
    let key = e.key();
    let command = command_for(KeyPress {
        key: &key,
        command_key: e.ctrl_key() || e.meta_key(),
        typing: is_typing(e.target()),
        talk: state.view.plays_back(),
    })?;
    Some(match command {
        Command::Run => Action::Run,
        Command::StopOrClose if state.help_open || state.share_link.is_some() => {
            Action::CloseOverlays
        }
        Command::StopOrClose if state.view == View::Race => Action::LeaveRace,
        Command::StopOrClose if state.run.is_running() => Action::Stop,
        Command::StopOrClose => return None,
        Command::ToggleTalk => Action::ToggleTalk,
        Command::ToggleHelp => Action::ToggleHelp,
        Command::PlayPause => Action::TalkPlayPause,
        Command::Faster => Action::TalkFaster,
        Command::Slower => Action::TalkSlower,
        Command::Back => Action::TalkSeek(state.talk.position_s - SEEK_STEP_S),
        Command::Forward => {
            let end = match (&state.run, &state.race) {
                (_, Some(race)) if state.view == View::Race => {
                    race.end_s().unwrap_or(f64::INFINITY)
                }
                (RunStatus::Finished { sim_end_s, .. }, _) => *sim_end_s,
                _ => f64::INFINITY,
            };
            Action::TalkSeek((state.talk.position_s + SEEK_STEP_S).min(end))
        }
    })
}

/// Turns key presses on the page into actions. The listener is registered once and reads
/// the latest state through a cell.
#[hook]
pub fn use_shortcuts(state: &UseReducerHandle<AppState>, on_action: Callback<Action>) {
    let latest = use_mut_ref(|| state.clone());
    *latest.borrow_mut() = state.clone();
    use_effect_with((), move |_| {
        let document = web_sys::window().and_then(|w| w.document());
        // Not passive: a shortcut's key must not also do its default (e.g. scroll).
        let listener = document.map(|d| {
            EventListener::new_with_options(
                &d,
                "keydown",
                EventListenerOptions::enable_prevent_default(),
                move |e| {
                    let Some(e) = e.dyn_ref::<web_sys::KeyboardEvent>() else {
                        return;
                    };
                    if let Some(action) = key_action(&latest.borrow(), e) {
                        e.prevent_default();
                        on_action.emit(action);
                    }
                },
            )
        });
        move || drop(listener)
    });
}
