//! The narrow API the web app and the CLI use: scenario in, progress and results out.

use crate::scenario::Scenario;
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

/// Checks a scenario document and returns every problem found, each with its field path.
#[inline]
pub fn check_scenario(text: &str) -> Vec<Problem> {
    match Scenario::parse(text) {
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
