//! The scenario document as the editor holds it: text, parsed JSON, problems.

use opal::Problem;
use serde_json::Value;
use std::rc::Rc;

/// Where the JSON text fails to parse, 1-based like an editor's status bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Line, from 1.
    pub line: usize,
    /// Column in characters, from 1.
    pub column: usize,
    /// What the parser expected.
    pub message: String,
    /// The text ended too early (the fix goes at the end, not at line/column).
    pub at_end: bool,
}

/// The scenario as the user wrote it (the source of truth) and what is known about it.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The JSON text exactly as typed, even when it does not parse.
    pub text: Rc<str>,
    /// The parsed document, when the text is JSON; forms read from it.
    pub document: Option<Rc<Value>>,
    /// The engine's validation of the text.
    pub problems: Rc<Vec<Problem>>,
    /// Where the text stops being JSON, if it does.
    pub parse_error: Option<ParseError>,
}

/// The same snapshot, not an equal one: every edit makes a new one, and components compare
/// their props on each render, where comparing the parsed documents walked them whole.
impl PartialEq for Scenario {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.text, &other.text)
            && Rc::ptr_eq(&self.problems, &other.problems)
            && match (&self.document, &other.document) {
                (Some(a), Some(b)) => Rc::ptr_eq(a, b),
                (a, b) => a.is_none() && b.is_none(),
            }
            && self.parse_error == other.parse_error
    }
}

impl Scenario {
    /// Parses and validates `text`, keeping it verbatim.
    pub fn new(text: impl Into<Rc<str>>) -> Self {
        let text: Rc<str> = text.into();
        let (document, parse_error) = match serde_json::from_str::<Value>(&text) {
            Ok(v) => (Some(Rc::new(v)), None),
            Err(e) => (
                None,
                Some(ParseError {
                    line: e.line(),
                    column: e.column(),
                    message: parse_message(&e),
                    at_end: e.is_eof(),
                }),
            ),
        };
        let problems = Rc::new(crate::tab_limit::check(&text));
        Self {
            text,
            document,
            problems,
            parse_error,
        }
    }

    /// The first problem the engine reports at exactly `path`, for a field's inline error.
    pub fn problem_at(&self, path: &str) -> Option<&str> {
        self.problems
            .iter()
            .find(|p| p.path == path)
            .map(|p| p.message.as_str())
    }

    /// Whether the engine accepts the scenario as it stands.
    pub fn is_runnable(&self) -> bool {
        self.problems.is_empty()
    }
}

/// serde_json's message without its trailing " at line L column C" (we show those separately).
fn parse_message(e: &serde_json::Error) -> String {
    let full = e.to_string();
    match full.rfind(" at line ") {
        Some(i) => full[..i].to_string(),
        None => full,
    }
}
