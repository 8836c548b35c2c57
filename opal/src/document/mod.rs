//! Scenario documents as text: reading one with every mistake at its field ([`parse`]),
//! checking it whole, the scenarios its sweep and race make included ([`check`]), the
//! built-in [`presets`], and importing an original Opal config ([`import_opal`]).
//!
//! The document's data and its sections' own checks are the engine's
//! ([`engine::scenario::Scenario`]); what reads text, and the checks that patch and re-read
//! documents, live here, above the engine.

pub(crate) mod check;
mod opal_import;
mod presets;
mod read;
mod upgrade;

pub use check::{check, parse, parse_with_data};
pub use opal_import::{
    detect_format, import_opal, reproduce_original, Format, IgnoredKey, ImportReport, MappedKey,
};
pub use presets::{default_document, preset, presets, Preset};

use engine::scenario::Scenario;

/// `scenario` as pretty JSON, every field written out: what the app's JSON view, exports
/// and the Opal import write.
pub fn to_json_pretty(scenario: &Scenario) -> String {
    serde_json::to_string_pretty(scenario).expect("a scenario always serialises")
}

/// `scenario` as a JSON tree, every field written out (what sweeps patch).
pub fn to_tree(scenario: &Scenario) -> serde_json::Value {
    serde_json::to_value(scenario).expect("a scenario always serialises")
}
