//! The keyboard-shortcut help overlay, built from the same table the key handler uses.

use crate::shortcuts::ALL;
use yew::prelude::*;

/// Props of [`Help`].
#[derive(Properties, PartialEq, Clone)]
pub struct HelpProps {
    /// Close the overlay.
    pub on_close: Callback<()>,
}

/// A modal list of shortcuts; focus moves to its Close button so Enter or Esc closes it,
/// stays in the dialog while it is open, and returns where it was when it closes.
#[function_component(Help)]
pub fn help(props: &HelpProps) -> Html {
    let close_ref = use_node_ref();
    {
        let close_ref = close_ref.clone();
        use_effect_with((), move |_| {
            // Focus returns where it was when the dialog closes.
            let before = web_sys::window()
                .and_then(|w| w.document())
                .and_then(|d| d.active_element())
                .and_then(|el| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(el).ok());
            if let Some(button) = close_ref.cast::<web_sys::HtmlElement>() {
                let _ = button.focus();
            }
            move || {
                if let Some(el) = before {
                    let _ = el.focus();
                }
            }
        });
    }
    // A modal dialog holds the focus: Tab and Shift+Tab stay on its one control.
    let hold_focus = {
        let close_ref = close_ref.clone();
        Callback::from(move |e: KeyboardEvent| {
            if e.key() == "Tab" {
                e.prevent_default();
                if let Some(button) = close_ref.cast::<web_sys::HtmlElement>() {
                    let _ = button.focus();
                }
            }
        })
    };
    html! {
        <div class="overlay" role="dialog" aria-modal="true" aria-labelledby="help-title" onkeydown={hold_focus}>
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
