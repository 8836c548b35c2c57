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
pub use opal_import::{detect_format, import_opal, Format, IgnoredKey, ImportReport, MappedKey};
pub use presets::{default_document, preset, presets, Preset};
