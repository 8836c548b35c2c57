//! Talk-mode playback's clock.

use crate::state::Action;
use gloo_timers::callback::Interval;
use yew::prelude::*;

/// While `playing_until` is `Some(end_s)`, sends `TalkTick` every 100 ms of wall time.
#[hook]
pub fn use_playback_ticker(playing_until: Option<f64>, on_action: Callback<Action>) {
    use_effect_with(playing_until.map(f64::to_bits), move |active| {
        let interval = active.map(f64::from_bits).map(|end_s| {
            let mut last = js_sys::Date::now();
            Interval::new(100, move || {
                let now = js_sys::Date::now();
                let wall_dt_s = (now - std::mem::replace(&mut last, now)) / 1000.0;
                on_action.emit(Action::TalkTick { wall_dt_s, end_s });
            })
        });
        // Dropping the interval clears it.
        move || drop(interval)
    });
}
