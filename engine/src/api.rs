//! The narrow API the web app and the CLI use: scenario in, progress and results out.

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

/// Checks a scenario document and returns every problem found.
///
/// For now this checks that the text is a JSON object; the full schema
/// validation grows with the scenario module.
pub fn check_scenario(text: &str) -> Vec<Problem> {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(_)) => Vec::new(),
        Ok(_) => vec![Problem {
            path: String::new(),
            message: "a scenario must be a JSON object".into(),
        }],
        Err(e) => vec![Problem {
            path: String::new(),
            message: format!("not valid JSON: {e}"),
        }],
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
}
