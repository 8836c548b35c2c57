//! Shows a freshly made share link, selected, so it can be copied by hand when the
//! clipboard is unavailable.

use yew::prelude::*;

/// Props of [`SharePanel`].
#[derive(Properties, PartialEq, Clone)]
pub struct SharePanelProps {
    /// The full link.
    pub link: AttrValue,
    /// Try the clipboard again.
    pub on_copy: Callback<()>,
    /// Hide the panel.
    pub on_close: Callback<()>,
}

/// The share-link box.
#[function_component(SharePanel)]
pub fn share_panel(props: &SharePanelProps) -> Html {
    let input_ref = use_node_ref();
    {
        let input_ref = input_ref.clone();
        use_effect_with(props.link.clone(), move |_| {
            if let Some(input) = input_ref.cast::<web_sys::HtmlInputElement>() {
                let _ = input.focus();
                input.select();
            }
        });
    }
    let onfocus = Callback::from(|e: FocusEvent| {
        let input: web_sys::HtmlInputElement = e.target_unchecked_into();
        input.select();
    });
    html! {
        <div class="share-panel" role="group" aria-label="Share link">
            <label for="share-link">{ "Link to this scenario" }</label>
            <input id="share-link" data-testid="share-link" readonly=true ref={input_ref} value={props.link.clone()} {onfocus} />
            <button onclick={props.on_copy.reform(|_: MouseEvent| ())}>{ "Copy" }</button>
            <button onclick={props.on_close.reform(|_: MouseEvent| ())} aria-label="Close share link">{ "×" }</button>
            <small>{ format!("{} characters. Whoever opens it gets this scenario and the identical run.", props.link.len()) }</small>
        </div>
    }
}
