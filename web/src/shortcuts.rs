//! Keyboard shortcuts: one table drives both the key handling and the help overlay.

/// Something a shortcut does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// Run the scenario.
    Run,
    /// Stop the run, or close an open overlay.
    StopOrClose,
    /// Enter or leave talk mode.
    ToggleTalk,
    /// Open or close the shortcut help.
    ToggleHelp,
    /// Talk mode: play or pause.
    PlayPause,
    /// Talk mode: faster playback.
    Faster,
    /// Talk mode: slower playback.
    Slower,
    /// Talk mode: jump back [`SEEK_STEP_S`] of simulated time.
    Back,
    /// Talk mode: jump forward [`SEEK_STEP_S`] of simulated time.
    Forward,
}

/// How far ← and → move the talk-mode playback, simulated seconds.
pub const SEEK_STEP_S: f64 = 5.0;

/// A key as the help overlay shows it, and what it does.
pub struct Shortcut {
    /// Keys, as written in the help.
    pub keys: &'static str,
    /// What happens.
    pub does: &'static str,
}

/// Every shortcut, for the help overlay.
pub const ALL: [Shortcut; 8] = [
    Shortcut {
        keys: "Ctrl/⌘ + Enter",
        does: "Run the scenario",
    },
    Shortcut {
        keys: "Esc",
        does: "Stop the run, close this help, or leave a race",
    },
    Shortcut {
        keys: "t",
        does: "Talk mode on/off",
    },
    Shortcut {
        keys: "?",
        does: "Show or hide this help",
    },
    Shortcut {
        keys: "Space",
        does: "Talk mode and races: play / pause",
    },
    Shortcut {
        keys: "+ / −",
        does: "Talk mode and races: faster / slower",
    },
    Shortcut {
        keys: "← / →",
        does: "Talk mode and races: back / forward 5 s",
    },
    Shortcut {
        keys: "Tab",
        does: "Move between fields and buttons",
    },
];

/// A key press, reduced to what decides the shortcut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyPress<'a> {
    /// `KeyboardEvent.key`.
    pub key: &'a str,
    /// Ctrl or Cmd held.
    pub command_key: bool,
    /// Focus is in a text field, where plain letters are typing, not commands.
    pub typing: bool,
    /// Talk mode is on.
    pub talk: bool,
}

/// The command a key press means, if any.
pub fn command_for(k: KeyPress<'_>) -> Option<Command> {
    match k.key {
        "Enter" if k.command_key => Some(Command::Run),
        "Escape" => Some(Command::StopOrClose),
        _ if k.typing || k.command_key => None,
        "t" | "T" => Some(Command::ToggleTalk),
        "?" => Some(Command::ToggleHelp),
        " " if k.talk => Some(Command::PlayPause),
        "+" | "=" if k.talk => Some(Command::Faster),
        "-" | "_" if k.talk => Some(Command::Slower),
        "ArrowLeft" if k.talk => Some(Command::Back),
        "ArrowRight" if k.talk => Some(Command::Forward),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(key: &str, command_key: bool, typing: bool, talk: bool) -> Option<Command> {
        command_for(KeyPress {
            key,
            command_key,
            typing,
            talk,
        })
    }

    #[test]
    fn run_and_stop_work_even_while_typing() {
        assert_eq!(press("Enter", true, true, false), Some(Command::Run));
        assert_eq!(
            press("Escape", false, true, false),
            Some(Command::StopOrClose)
        );
        assert_eq!(
            press("Enter", false, true, false),
            None,
            "plain Enter is a newline"
        );
    }

    #[test]
    fn letters_are_text_while_typing() {
        assert_eq!(press("t", false, false, false), Some(Command::ToggleTalk));
        assert_eq!(press("t", false, true, false), None);
        assert_eq!(press("?", false, true, false), None);
        assert_eq!(
            press("t", true, false, false),
            None,
            "Ctrl+T belongs to the browser"
        );
    }

    #[test]
    fn playback_keys_only_in_talk_mode() {
        assert_eq!(press(" ", false, false, true), Some(Command::PlayPause));
        assert_eq!(
            press(" ", false, false, false),
            None,
            "Space scrolls the page"
        );
        assert_eq!(press("+", false, false, true), Some(Command::Faster));
        assert_eq!(press("-", false, false, true), Some(Command::Slower));
        assert_eq!(press("ArrowLeft", false, false, true), Some(Command::Back));
        assert_eq!(
            press("ArrowRight", false, false, true),
            Some(Command::Forward)
        );
        // Outside talk mode arrows keep their usual meaning (scrolling, the timeline).
        assert_eq!(press("ArrowRight", false, false, false), None);
    }
}
