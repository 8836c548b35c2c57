//! What the page shows: views, notices, theme.

/// What the main area shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum View {
    /// Forms and JSON, with results beside them.
    #[default]
    Editor,
    /// Large type and playback of simulated time, for presenting.
    Talk,
    /// The race's entrants side by side, played back on talk mode's clock.
    Race,
}

impl View {
    /// Whether the view plays back simulated time (talk mode's keys and clock apply).
    pub fn plays_back(self) -> bool {
        matches!(self, Self::Talk | Self::Race)
    }
}

/// What an embed (a share link's `&embed`) shows of its run, for an iframe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmbedView {
    /// Talk mode's playback of the run (`&embed`), or its race when the link holds one.
    Playback,
    /// The request timeline, a lane per worker (`&embed=timeline`).
    Timeline,
}

/// Which pane a narrow screen (a phone) shows; a wide one shows both side by side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pane {
    /// The results, first: the page opens on an answer.
    #[default]
    Results,
    /// The scenario editor.
    Scenario,
}

/// How loud a notice is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Something happened as asked.
    Info,
    /// Something was not as expected but nothing was lost.
    Warning,
    /// Something the user asked for failed.
    Error,
}

/// A dismissable message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// Stable id, for dismissing.
    pub id: u64,
    /// How loud.
    pub level: Level,
    /// What to tell the user.
    pub message: String,
}

/// Colour theme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Theme {
    /// Follow the system's `prefers-color-scheme`.
    #[default]
    System,
    /// Always light.
    Light,
    /// Always dark.
    Dark,
}

impl Theme {
    /// The next theme of the toggle: system → light → dark → system.
    pub fn next(self) -> Self {
        match self {
            Self::System => Self::Light,
            Self::Light => Self::Dark,
            Self::Dark => Self::System,
        }
    }

    /// Its name, for the button label and the CSS class.
    pub fn name(self) -> &'static str {
        match self {
            Self::System => "system",
            Self::Light => "light",
            Self::Dark => "dark",
        }
    }
}
