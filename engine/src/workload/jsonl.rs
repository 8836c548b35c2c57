//! Line-by-line JSONL reading with errors that name the line and the field.

use serde_json::{Map, Value};

/// A problem in a trace or sessions file: `trace line 17: missing field "input_length"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataError {
    /// Which kind of file (`"trace"`, `"sessions"`).
    pub kind: &'static str,
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for DataError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} line {}: {}", self.kind, self.line, self.message)
    }
}

impl std::error::Error for DataError {}

/// One JSON object from one line, with helpers that report missing or mistyped fields.
pub(crate) struct Line<'a> {
    pub kind: &'static str,
    pub line: usize,
    pub obj: &'a Map<String, Value>,
}

/// Calls `f` on each non-blank line parsed as a JSON object (1-based line numbers). A
/// leading UTF-8 byte-order mark (as some Windows tools write) is skipped.
pub(crate) fn for_each_object(
    kind: &'static str,
    text: &str,
    mut f: impl FnMut(Line<'_>) -> Result<(), DataError>,
) -> Result<(), DataError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(raw).map_err(|e| DataError {
            kind,
            line,
            message: format!("not valid JSON ({e})"),
        })?;
        let Value::Object(obj) = &value else {
            return Err(DataError {
                kind,
                line,
                message: "expected a JSON object".into(),
            });
        };
        f(Line { kind, line, obj })?;
    }
    Ok(())
}

impl Line<'_> {
    /// An error on this line.
    pub(crate) fn error(&self, message: impl Into<String>) -> DataError {
        DataError {
            kind: self.kind,
            line: self.line,
            message: message.into(),
        }
    }

    /// A required field.
    pub(crate) fn required(&self, field: &str) -> Result<&Value, DataError> {
        self.obj
            .get(field)
            .ok_or_else(|| self.error(format!("missing field \"{field}\"")))
    }

    /// A non-negative finite number.
    pub(crate) fn number(&self, field: &str, v: &Value) -> Result<f64, DataError> {
        match v.as_f64() {
            Some(x) if x >= 0.0 && x.is_finite() => Ok(x),
            _ => Err(self.error(format!(
                "field \"{field}\": expected a number >= 0, got {v}"
            ))),
        }
    }

    /// A required non-negative number.
    pub(crate) fn req_number(&self, field: &str) -> Result<f64, DataError> {
        self.number(field, self.required(field)?)
    }

    /// An optional non-negative number (`default` when absent or null).
    pub(crate) fn opt_number(&self, field: &str, default: f64) -> Result<f64, DataError> {
        match self.obj.get(field) {
            None | Some(Value::Null) => Ok(default),
            Some(v) => self.number(field, v),
        }
    }

    /// An integer in `min..=u32::MAX`.
    pub(crate) fn count(&self, field: &str, v: &Value, min: u32) -> Result<u32, DataError> {
        match v.as_u64() {
            Some(x) if x >= min as u64 && x <= u32::MAX as u64 => Ok(x as u32),
            _ => Err(self.error(format!(
                "field \"{field}\": expected an integer >= {min}, got {v}"
            ))),
        }
    }

    /// A required integer ≥ `min`.
    pub(crate) fn req_count(&self, field: &str, min: u32) -> Result<u32, DataError> {
        self.count(field, self.required(field)?, min)
    }

    /// An optional integer ≥ `min` (`default` when absent or null).
    pub(crate) fn opt_count(&self, field: &str, min: u32, default: u32) -> Result<u32, DataError> {
        match self.obj.get(field) {
            None | Some(Value::Null) => Ok(default),
            Some(v) => self.count(field, v, min),
        }
    }
}
