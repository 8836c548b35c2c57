//! The app's pieces, each a function component with its own props.

pub mod deployment_panel;
pub mod disclosure;
pub mod form;
pub mod header;
pub mod help;
pub mod import_report;
pub mod json_view;
pub mod list_tail;
pub mod notices;
pub mod pane_switch;
pub mod preset_picture;
pub mod presets;
pub mod race_panel;
pub mod race_view;
pub mod result_panels;
pub mod results;
pub mod scenario_form;
pub mod share_panel;
pub mod slo_table;
pub mod summary_table;
pub mod sweep_curves;
#[cfg(test)]
mod sweep_fixture;
pub mod sweep_panel;
pub mod sweep_table;
pub mod talk_bar;
pub mod talk_pools;
pub mod talk_view;
pub mod window_facts;
