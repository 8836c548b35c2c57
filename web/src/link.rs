//! The page's link: what a URL fragment asks for (a share link opens and runs its
//! scenario), read at startup by [`crate::app`] and when a link is pasted later by
//! [`crate::hooks::use_link_listener`].

use crate::share;
use crate::state::{Action, Level};

/// What a URL fragment asks for: nothing, open and run a scenario (a share link promises
/// the identical run), or a notice that the link is damaged. `otherwise` says what happens
/// instead, e.g. "opened the default scenario".
pub fn link_action(fragment: &str, otherwise: &str) -> Option<Action> {
    match share::decode(fragment)? {
        Ok(text) => Some(Action::OpenLink(text)),
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
