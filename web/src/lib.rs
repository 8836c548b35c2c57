//! The Opal web app: edit a scenario, run it in the tab, read the results.
//!
//! A library so its components and pure modules are an API the rest of the app builds on
//! (and are tested natively); `main.rs` only mounts [`app::App`].

pub mod app;
pub mod charts;
pub mod components;
pub mod deployment_view;
pub mod files;
pub mod hooks;
pub mod json_path;
pub mod link;
pub mod order;
pub mod panic_banner;
pub mod playback;
pub mod race_counters;
pub mod results_view;
pub mod run_driver;
pub mod share;
pub mod shortcuts;
pub mod sorted_map;
pub mod state;
pub mod sweep_driver;
pub mod tab_limit;
pub mod worker;
