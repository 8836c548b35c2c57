//! The keyboard-shortcut help overlay, built from the same table the key handler uses.

use crate::shortcuts::ALL;
use yew::prelude::*;

/// Props of [`Help`].
#[derive(Properties, PartialEq, Clone)]
pub struct HelpProps {
    /// Close the overlay.
    pub on_close: Callback<()>,
}

/// A modal list of shortcuts; focus moves to its Close button so Enter or Esc closes it.
#[function_component(Help)]
pub fn help(props: &HelpProps) -> Html {
    let close_ref = use_node_ref();
    {
        let close_ref = close_ref.clone();
        use_effect_with((), move |_| {
            if let Some(button) = close_ref.cast::<web_sys::HtmlElement>() {
                let _ = button.focus();
            }
        });
    }
    html! {
        <div class="overlay" role="dialog" aria-modal="true" aria-labelledby="help-title">
            <div class="overlay-box">
                <h2 id="help-title">{ "Keyboard shortcuts" }</h2>
                <dl class="shortcuts">
                    { for ALL.iter().map(|s| html! {
                        <><dt><kbd>{ s.keys }</kbd></dt><dd>{ s.does }</dd></>
                    }) }
                </dl>
                <button ref={close_ref} onclick={props.on_close.reform(|_: MouseEvent| ())}>{ "Close" }</button>
            </div>
        </div>
    }
}
