//! Talk-mode playback controls: play/pause, speed and a seek slider over simulated time.

use crate::state::{Action, TalkState};
use yew::prelude::*;

/// Props of [`TalkBar`].
#[derive(Properties, PartialEq, Clone)]
pub struct TalkBarProps {
    /// Playback state.
    pub talk: TalkState,
    /// End of the finished run's simulated time; `None` disables playback.
    pub end_s: Option<f64>,
    /// Sends playback actions.
    pub on_action: Callback<Action>,
    /// What the clock says while there is nothing to play.
    #[prop_or(AttrValue::Static("Run a scenario to play it back"))]
    pub idle: AttrValue,
}

/// The playback bar.
#[function_component(TalkBar)]
pub fn talk_bar(props: &TalkBarProps) -> Html {
    let act = |a: Action| props.on_action.reform(move |_: MouseEvent| a.clone());
    let disabled = props.end_s.is_none();
    let end = props.end_s.unwrap_or(0.0);
    let onseek = props.on_action.reform(|e: InputEvent| {
        let input: web_sys::HtmlInputElement = e.target_unchecked_into();
        Action::TalkSeek(input.value_as_number())
    });
    html! {
        <div class="talk-bar" role="group" aria-label="Playback">
            <button onclick={act(Action::TalkPlayPause)} {disabled} title="Space">
                { if props.talk.playing { "Pause" } else { "Play" } }
            </button>
            <button onclick={act(Action::TalkSlower)} aria-label="Slower" title="−">{ "−" }</button>
            <span class="talk-speed" aria-live="polite">{ format!("{}×", props.talk.speed) }</span>
            <button onclick={act(Action::TalkFaster)} aria-label="Faster" title="+">{ "+" }</button>
            <input type="range" aria-label="Simulated time" min="0" max={end.to_string()} step="any"
                value={props.talk.position_s.to_string()} {disabled} oninput={onseek} />
            <span class="talk-clock">
                if disabled {
                    { props.idle.clone() }
                } else {
                    { format!("t = {:.1} s of {:.1} s", props.talk.position_s, end) }
                }
            </span>
        </div>
    }
}
