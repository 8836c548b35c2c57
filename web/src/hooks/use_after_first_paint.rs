//! Lets the page's costly secondary panels render after its first frame, and after a run
//! that is on its way when the page opens (a share link's) has shown its results.

use crate::worker::runner::queue_task;
use gloo_timers::callback::Timeout;
use std::cell::Cell;
use std::rc::Rc;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use yew::prelude::*;

/// How long a run on its way may hold the panels back, ms after the first render: a long
/// run's page still gets its editor soon, and a short one's results are not queued behind it.
const HOLD_AT_MOST_MS: u32 = 1000;

/// False until the page has painted once and `hold` (e.g. "a run is on its way") has been
/// false since, or [`HOLD_AT_MOST_MS`] passed; then true for good. The first render is one
/// task on the page's thread, and the worker's results (decoded, drawn) wait behind it:
/// the scenario form, four fifths of the page's elements and cold code on first use, would
/// otherwise hold a share link's results back by a third of a second.
#[hook]
pub fn use_after_first_paint(hold: bool) -> bool {
    let ready = use_state_eq(|| false);
    let expired = use_state_eq(|| false);
    {
        let expired = expired.setter();
        use_effect_with((), move |()| {
            let timeout = Timeout::new(HOLD_AT_MOST_MS, move || expired.set(true));
            move || drop(timeout)
        });
    }
    let waiting = hold && !*expired;
    {
        let ready_now = *ready;
        let ready = ready.setter();
        use_effect_with((ready_now, waiting), move |&(ready_now, waiting)| {
            if !ready_now && !waiting {
                after_next_paint(move || ready.set(true));
            }
        });
    }
    *ready
}

/// Runs `f` in a task of its own after the next frame is painted: from an animation frame
/// callback (which runs just before that paint), a task queued behind it.
fn after_next_paint(f: impl FnOnce() + 'static) {
    let Some(window) = web_sys::window() else {
        return queue_task(f);
    };
    let once = Rc::new(Cell::new(Some(f)));
    let pending = once.clone();
    let frame =
        Closure::once_into_js(move || queue_task(move || pending.take().map_or((), |f| f())));
    if window
        .request_animation_frame(frame.unchecked_ref())
        .is_err()
    {
        // No frames to wait for: the panels still come.
        if let Some(f) = once.take() {
            queue_task(f);
        }
    }
}
