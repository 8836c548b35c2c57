//! The app's effects as custom hooks, so `App` reads as layout: runs in workers, keyboard
//! shortcuts, share links pasted into an open page, talk-mode playback ticks, races, and
//! the panels drawn after the first frame.

mod use_after_first_paint;
mod use_link_listener;
mod use_playback_ticker;
mod use_race_driver;
mod use_run_driver;
mod use_shortcuts;

pub use use_after_first_paint::use_after_first_paint;
pub use use_link_listener::use_link_listener;
pub use use_playback_ticker::use_playback_ticker;
pub use use_race_driver::use_race_driver;
pub use use_run_driver::use_run_driver;
pub use use_shortcuts::use_shortcuts;
