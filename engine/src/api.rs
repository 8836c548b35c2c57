//! The narrow API the web app and the CLI use: scenario in, progress and results out.

use crate::scenario::Scenario;
use crate::sweep::check;
use serde::Serialize;

/// What the engine says about itself.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct EngineInfo {
    /// Crate version.
    pub version: &'static str,
}

/// The engine's self-description.
pub fn info() -> EngineInfo {
    EngineInfo {
        version: crate::VERSION,
    }
}

pub use crate::validate::Problem;

/// Reads a scenario document someone wrote and checks it whole, the scenarios its sweep
/// and race make included: every problem found, each with its field path (see
/// [`crate::sweep::check`]). What the CLI and the app read documents with.
#[inline]
pub fn parse_scenario(text: &str) -> Result<Scenario, Vec<Problem>> {
    check::parse(text)
}

/// Checks a scenario document whole (as [`parse_scenario`] does) and returns every problem
/// found, each with its field path.
#[inline]
pub fn check_scenario(text: &str) -> Vec<Problem> {
    match parse_scenario(text) {
        Ok(_) => Vec::new(),
        Err(problems) => problems,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_is_accepted() {
        assert!(check_scenario("{}").is_empty());
    }

    #[test]
    fn broken_json_reports_line_and_column() {
        let problems = check_scenario("{\n  \"seed\": ");
        assert_eq!(problems.len(), 1);
        assert!(problems[0].message.contains("line 2"), "{problems:?}");
    }

    #[test]
    fn non_object_is_rejected() {
        assert_eq!(
            check_scenario("[1]")[0].message,
            "a scenario must be a JSON object"
        );
    }

    #[test]
    fn bad_field_is_reported_with_its_path() {
        let problems = check_scenario(r#"{"worker": {"max_num_seqs": "many"}}"#);
        assert_eq!(problems[0].path, "worker.max_num_seqs", "{problems:?}");
    }
}
