//! Shows a freshly made share link, selected, so it can be copied by hand when the
//! clipboard is unavailable, and the HTML that embeds its run in another page.

use yew::prelude::*;

/// Props of [`SharePanel`].
#[derive(Properties, PartialEq, Clone)]
pub struct SharePanelProps {
    /// The full link.
    pub link: AttrValue,
    /// Copy a text (the link, or the embed code) and say which ("Link", "Embed code").
    pub on_copy: Callback<(AttrValue, &'static str)>,
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
    let embed = AttrValue::from(embed_code(&props.link));
    let copy = |text: &AttrValue, what: &'static str| {
        let text = text.clone();
        props
            .on_copy
            .reform(move |_: MouseEvent| (text.clone(), what))
    };
    html! {
        <div class="share-panel" role="group" aria-label="Share link">
            <label for="share-link">{ "Link to this scenario" }</label>
            <input id="share-link" data-testid="share-link" readonly=true ref={input_ref} value={props.link.clone()} onfocus={onfocus.clone()} />
            <button onclick={copy(&props.link, "Link")}>{ "Copy" }</button>
            <button onclick={props.on_close.reform(|_: MouseEvent| ())} aria-label="Close share link">{ "×" }</button>
            <small>{ format!("{} characters. Whoever opens it gets this scenario and the identical run.", props.link.len()) }</small>
            <label for="share-embed">{ "Embed its run in a page or slide" }</label>
            <input id="share-embed" data-testid="share-embed" readonly=true value={embed.clone()} {onfocus} />
            <button onclick={copy(&embed, "Embed code")} aria-label="Copy the embed code">{ "Copy" }</button>
            <small>{ "It plays the run (or the race). For the request timeline instead, end its link with &embed=timeline." }</small>
        </div>
    }
}

/// The iframe that shows `link`'s run by itself: its playback, or its race.
pub fn embed_code(link: &str) -> String {
    let src = format!("{link}{}", crate::link::EMBED_FLAG)
        .replace('&', "&amp;")
        .replace('"', "&quot;");
    format!(
        "<iframe src=\"{src}\" width=\"960\" height=\"540\" style=\"border:0\" \
         title=\"Opal: a simulated LLM serving run\" loading=\"lazy\"></iframe>"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embed_code_is_an_iframe_of_the_link_with_the_flag() {
        assert_eq!(
            embed_code("https://x.org/opal/#s=v1.eJw"),
            "<iframe src=\"https://x.org/opal/#s=v1.eJw&amp;embed\" width=\"960\" height=\"540\" \
             style=\"border:0\" title=\"Opal: a simulated LLM serving run\" loading=\"lazy\"></iframe>"
        );
    }
}
