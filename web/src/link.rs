//! The page's link: what a URL fragment asks for (a share link opens and runs its
//! scenario), read at startup by [`crate::app`] and when a link is pasted later by
//! [`crate::hooks::use_link_listener`].

use crate::share;
use crate::state::{Action, EmbedView, Level};

/// What a share link carries after its scenario to open as an embed: the run's playback
/// (or its race) alone, sized for an iframe; `=timeline` after it, the request timeline.
pub const EMBED_FLAG: &str = "&embed";

/// `fragment` without its embed flag, and what the flag asks for.
pub fn split_embed(fragment: &str) -> (&str, Option<EmbedView>) {
    let Some((rest, view)) = fragment.rsplit_once(EMBED_FLAG) else {
        return (fragment, None);
    };
    match view {
        "" => (rest, Some(EmbedView::Playback)),
        "=timeline" => (rest, Some(EmbedView::Timeline)),
        _ => (fragment, None),
    }
}

/// What a URL fragment asks for: nothing, open and run a scenario (a share link promises
/// the identical run), or a notice that the link is damaged. `otherwise` says what happens
/// instead, e.g. "opened the default scenario". An embed flag is left to the caller.
pub fn link_action(fragment: &str, otherwise: &str) -> Option<Action> {
    match share::decode(split_embed(fragment).0)? {
        Ok(text) => Some(Action::OpenLink(text)),
        // A link that holds more than a scenario may is whole, not damaged.
        Err(e @ share::DecodeError::TooLarge) => Some(Action::Notify {
            level: Level::Warning,
            message: format!(
                "The link holds too much: {e}, the most a scenario may be. {otherwise}."
            ),
        }),
        Err(e) => Some(Action::Notify {
            level: Level::Warning,
            message: format!("The link was damaged: {e}. {otherwise}."),
        }),
    }
}

/// The page URL's fragment, with its `#`.
pub(crate) fn location_hash() -> String {
    web_sys::window()
        .and_then(|w| w.location().hash().ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;

    fn notice(fragment: &str) -> String {
        match link_action(fragment, "Opened the default scenario instead") {
            Some(Action::Notify { message, .. }) => message,
            other => panic!("not a notice: {other:?}"),
        }
    }

    #[test]
    fn an_embed_flag_is_split_from_the_link() {
        let playback = Some(EmbedView::Playback);
        assert_eq!(split_embed("#s=v1.abc&embed"), ("#s=v1.abc", playback));
        let timeline = Some(EmbedView::Timeline);
        assert_eq!(
            split_embed("#s=v1.abc&embed=timeline"),
            ("#s=v1.abc", timeline)
        );
        assert_eq!(split_embed("#s=v1.abc"), ("#s=v1.abc", None));
        // An unknown view is no flag: the link then says it is damaged.
        assert_eq!(
            split_embed("#s=v1.abc&embed=x"),
            ("#s=v1.abc&embed=x", None)
        );
        let fragment = format!("#{}&embed", share::encode("{}").unwrap());
        assert!(matches!(
            link_action(&fragment, "x"),
            Some(Action::OpenLink(_))
        ));
    }

    #[test]
    fn a_link_holding_too_much_says_so_and_a_damaged_one_says_it_is_damaged() {
        // 2 MiB of JSON text packs into a short link; it inflates past the 1 MiB cap.
        let big = format!("[{}0]", "0,".repeat(share::MAX_SCENARIO_BYTES));
        let packed = miniz_oxide::deflate::compress_to_vec_zlib(big.as_bytes(), 10);
        let fragment = format!(
            "#s=v1.{}",
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(packed)
        );
        assert_eq!(
            notice(&fragment),
            "The link holds too much: it unpacks to more than 1,048,576 bytes, the most a \
             scenario may be. Opened the default scenario instead."
        );
        assert!(notice("#s=v1.Zh").starts_with("The link was damaged: "));
    }
}
