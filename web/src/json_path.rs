//! Field paths into the scenario document, e.g. `workload.stages[1].request_rate` — the same
//! spelling the engine's validation uses, so a form field finds its own problems by path.

use serde_json::{Map, Value};
use std::fmt;

/// One step of a path: an object key or an array index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// `.name`
    Key(String),
    /// `[n]`
    Index(usize),
}

/// Why a path could not be read or written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathError {
    /// The path text is not `key(.key|[n])*`; `at` is the byte offset of the first bad character.
    Syntax {
        /// The byte offset of the first bad character.
        at: usize,
    },
    /// The value at `at` is not an object, so it has no fields.
    NotAnObject {
        /// The path up to that value.
        at: String,
    },
    /// The value at `at` is not an array, so it cannot be indexed.
    NotAnArray {
        /// The path up to that value.
        at: String,
    },
    /// The array at `at` has `len` elements; `index` is past its end.
    OutOfRange {
        /// The path up to that value.
        at: String,
        /// The index asked for.
        index: usize,
        /// The array's length.
        len: usize,
    },
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let root = |at: &str| {
            if at.is_empty() {
                "the document".to_string()
            } else {
                format!("'{at}'")
            }
        };
        match self {
            Self::Syntax { at } => write!(f, "bad field path at character {at}"),
            Self::NotAnObject { at } => write!(f, "{} is not an object", root(at)),
            Self::NotAnArray { at } => write!(f, "{} is not a list", root(at)),
            Self::OutOfRange { at, index, len } => {
                write!(f, "'{at}' has {len} entries, so [{index}] does not exist")
            }
        }
    }
}

/// Splits a path into segments.
pub fn parse_path(path: &str) -> Result<Vec<Segment>, PathError> {
    let bytes = path.as_bytes();
    let mut segments = Vec::new();
    let mut i = 0;
    let is_key_char = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'-';
    while i < bytes.len() || segments.is_empty() {
        if !segments.is_empty() {
            match bytes[i] {
                b'.' => i += 1,
                b'[' => {}
                _ => return Err(PathError::Syntax { at: i }),
            }
        }
        if bytes.get(i) == Some(&b'[') {
            let close = path[i..]
                .find(']')
                .map(|n| i + n)
                .ok_or(PathError::Syntax { at: i })?;
            let digits = &path[i + 1..close];
            if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
                return Err(PathError::Syntax { at: i + 1 });
            }
            let index = digits
                .parse()
                .map_err(|_| PathError::Syntax { at: i + 1 })?;
            segments.push(Segment::Index(index));
            i = close + 1;
        } else {
            let start = i;
            while i < bytes.len() && is_key_char(bytes[i]) {
                i += 1;
            }
            if i == start {
                return Err(PathError::Syntax { at: i });
            }
            segments.push(Segment::Key(path[start..i].to_string()));
        }
    }
    Ok(segments)
}

/// The value at `path`, if the document has one there.
pub fn get_json_path<'a>(doc: &'a Value, path: &str) -> Option<&'a Value> {
    parse_path(path)
        .ok()?
        .iter()
        .try_fold(doc, |v, seg| match seg {
            Segment::Key(k) => v.get(k.as_str()),
            Segment::Index(i) => v.get(*i),
        })
}

/// Sets the value at `path`, creating missing objects on the way (every section has
/// defaults, so a partial document is normal). Arrays are never grown implicitly.
/// On error the document is left as it was.
pub fn set_json_path(doc: &mut Value, path: &str, value: Value) -> Result<(), PathError> {
    let segments = parse_path(path)?;
    // Write into a copy so a path that fails half-way leaves no half-made sections behind.
    let mut copy = doc.clone();
    set_segments(&mut copy, &segments, value)?;
    *doc = copy;
    Ok(())
}

fn set_segments(doc: &mut Value, segments: &[Segment], value: Value) -> Result<(), PathError> {
    let mut here = doc;
    let mut walked = String::new();
    for (n, seg) in segments.iter().enumerate() {
        let last = n + 1 == segments.len();
        here = match seg {
            Segment::Key(k) => {
                if here.is_null() {
                    *here = Value::Object(Map::new());
                }
                let Value::Object(map) = here else {
                    return Err(PathError::NotAnObject { at: walked });
                };
                if last {
                    map.insert(k.clone(), value);
                    return Ok(());
                }
                map.entry(k.clone()).or_insert(Value::Null)
            }
            Segment::Index(i) => {
                let Value::Array(list) = here else {
                    return Err(PathError::NotAnArray { at: walked });
                };
                let len = list.len();
                let slot = list.get_mut(*i).ok_or(PathError::OutOfRange {
                    at: walked.clone(),
                    index: *i,
                    len,
                })?;
                if last {
                    *slot = value;
                    return Ok(());
                }
                slot
            }
        };
        match seg {
            Segment::Key(k) if walked.is_empty() => walked.push_str(k),
            Segment::Key(k) => {
                walked.push('.');
                walked.push_str(k);
            }
            Segment::Index(i) => walked.push_str(&format!("[{i}]")),
        }
    }
    unreachable!("parse_path never returns an empty path")
}

/// A JSON number for a form value: whole numbers as integers (`42`, not `42.0`), since
/// counts such as seeds and block sizes must read back as integers.
pub fn number_value(x: f64) -> Value {
    // Beyond 2^53 not every integer is representable, so keep the float.
    const EXACT: f64 = 9_007_199_254_740_992.0;
    if x.fract() == 0.0 && x.abs() <= EXACT {
        Value::from(x as i64)
    } else {
        serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc() -> Value {
        json!({
            "worker": { "max_num_seqs": 256 },
            "workload": { "stages": [ { "request_rate": 5 }, { "request_rate": 20 } ] }
        })
    }

    #[test]
    fn parses_keys_and_indices() {
        use Segment::*;
        assert_eq!(
            parse_path("workload.stages[1].request_rate").unwrap(),
            vec![
                Key("workload".into()),
                Key("stages".into()),
                Index(1),
                Key("request_rate".into())
            ]
        );
        assert_eq!(
            parse_path("a[0][2]").unwrap(),
            vec![Key("a".into()), Index(0), Index(2)]
        );
    }

    #[test]
    fn rejects_malformed_paths_with_the_offset() {
        assert_eq!(parse_path(""), Err(PathError::Syntax { at: 0 }));
        assert_eq!(parse_path("a..b"), Err(PathError::Syntax { at: 2 }));
        assert_eq!(parse_path("a."), Err(PathError::Syntax { at: 2 }));
        assert_eq!(parse_path("a[x]"), Err(PathError::Syntax { at: 2 }));
        assert_eq!(parse_path("a[1"), Err(PathError::Syntax { at: 1 }));
        assert_eq!(parse_path("a b"), Err(PathError::Syntax { at: 1 }));
    }

    #[test]
    fn reads_nested_values() {
        let d = doc();
        assert_eq!(get_json_path(&d, "worker.max_num_seqs"), Some(&json!(256)));
        assert_eq!(
            get_json_path(&d, "workload.stages[1].request_rate"),
            Some(&json!(20))
        );
        assert_eq!(get_json_path(&d, "workload.stages[2].request_rate"), None);
        assert_eq!(get_json_path(&d, "router.policy"), None);
    }

    #[test]
    fn writes_into_an_array_element() {
        let mut d = doc();
        set_json_path(&mut d, "workload.stages[1].request_rate", json!(60)).unwrap();
        assert_eq!(d["workload"]["stages"][1]["request_rate"], json!(60));
        assert_eq!(
            d["workload"]["stages"][0]["request_rate"],
            json!(5),
            "neighbour untouched"
        );
    }

    #[test]
    fn creates_missing_sections() {
        let mut d = json!({});
        set_json_path(&mut d, "router.autoscaler.max_workers", json!(8)).unwrap();
        assert_eq!(
            d,
            json!({ "router": { "autoscaler": { "max_workers": 8 } } })
        );
    }

    #[test]
    fn refuses_to_grow_arrays_or_overwrite_scalars() {
        let mut d = doc();
        let before = d.clone();
        assert_eq!(
            set_json_path(&mut d, "workload.stages[2].request_rate", json!(1)),
            Err(PathError::OutOfRange {
                at: "workload.stages".into(),
                index: 2,
                len: 2
            })
        );
        assert_eq!(
            set_json_path(&mut d, "worker.max_num_seqs.x", json!(1)),
            Err(PathError::NotAnObject {
                at: "worker.max_num_seqs".into()
            })
        );
        assert_eq!(
            set_json_path(&mut d, "worker[0]", json!(1)),
            Err(PathError::NotAnArray {
                at: "worker".into()
            })
        );
        assert_eq!(
            set_json_path(&mut d, "router.stages[0]", json!(1)),
            Err(PathError::NotAnArray {
                at: "router.stages".into()
            })
        );
        assert_eq!(
            d, before,
            "a failed write changes nothing, not even half-made sections"
        );
    }

    #[test]
    fn whole_numbers_stay_integers() {
        assert_eq!(number_value(42.0).to_string(), "42");
        assert_eq!(number_value(-3.0).to_string(), "-3");
        assert_eq!(number_value(0.5).to_string(), "0.5");
        assert_eq!(
            number_value(1e300).to_string(),
            "1e+300",
            "too big to be an exact integer"
        );
    }
}
