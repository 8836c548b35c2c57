//! The `race` section as data: two to four variants of one scenario (entrants), each a
//! label and a JSON merge patch (RFC 7386) over the scenario, and how many seeds judge them.
//! Its own checks are here; whether each patch makes a valid scenario is checked where
//! entrants are made (the `opal` crate's `race` and `document::check`).

use crate::validate::{index, join, Problems};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Fewest entrants in a race.
pub const MIN_ENTRANTS: usize = 2;
/// Most entrants in a race (lanes side by side on one screen).
pub const MAX_ENTRANTS: usize = 4;
/// Longest entrant label, in characters (it heads a lane).
pub const MAX_LABEL_CHARS: usize = 40;
/// Most seeds a race is judged on (each runs every entrant once more).
pub const MAX_SEEDS: u32 = 8;

/// One variant of the scenario: a label and the merge patch that makes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entrant {
    /// Shown above the entrant's lane, e.g. `round robin`.
    pub label: String,
    /// A JSON merge patch over the scenario, e.g. `{"router": {"policy": {"policy": "max_prefix"}}}`:
    /// objects merge key by key, `null` removes a field, anything else replaces it.
    #[serde(default = "empty_object")]
    pub patch: Value,
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

/// A race: the entrants, in lane order, and how many seeds judge it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RaceConfig {
    /// The variants raced, 2 to 4.
    pub entrants: Vec<Entrant>,
    /// Seeds the race is run at, 1 to 8: the scenario's seed, then seed + 1, …; the
    /// winner is the one that wins at every seed.
    #[serde(skip_serializing_if = "is_one")]
    pub seeds: u32,
}

impl Default for RaceConfig {
    fn default() -> Self {
        Self {
            entrants: Vec::new(),
            seeds: 1,
        }
    }
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

impl RaceConfig {
    /// This section's own problems under `path` (whether each patch makes a valid scenario
    /// is checked against the document, see `opal::document::check`).
    pub fn validate(&self, path: &str, p: &mut Problems) {
        let at = join(path, "entrants");
        let n = self.entrants.len();
        if !(MIN_ENTRANTS..=MAX_ENTRANTS).contains(&n) {
            p.push(
                &at,
                format!("a race has {MIN_ENTRANTS} to {MAX_ENTRANTS} entrants, not {n}"),
            );
        }
        for (i, e) in self.entrants.iter().enumerate() {
            let here = index(&at, i);
            let label = e.label.trim();
            if label.is_empty() {
                p.push(join(&here, "label"), "give the entrant a name");
            } else if label.chars().count() > MAX_LABEL_CHARS {
                p.push(
                    join(&here, "label"),
                    format!("at most {MAX_LABEL_CHARS} characters (it heads a lane)"),
                );
            } else if self.entrants[..i].iter().any(|o| o.label.trim() == label) {
                p.push(join(&here, "label"), "another entrant has this name");
            }
            match &e.patch {
                Value::Object(m) if m.contains_key("race") => {
                    p.push(join(&here, "patch"), "a patch cannot hold a race")
                }
                Value::Object(_) => {}
                _ => p.push(
                    join(&here, "patch"),
                    "must be an object (a JSON merge patch over the scenario)",
                ),
            }
        }
        if !(1..=MAX_SEEDS).contains(&self.seeds) {
            p.push(
                join(path, "seeds"),
                format!("a race runs at 1 to {MAX_SEEDS} seeds, not {}", self.seeds),
            );
        }
    }
}

/// Merges `patch` into `target` as RFC 7386 says: an object patch merges key by key
/// (`null` removes the key), anything else replaces the target.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(fields) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = empty_object();
    }
    let Value::Object(t) = target else {
        unreachable!("made an object above")
    };
    for (k, v) in fields {
        if v.is_null() {
            t.remove(k);
        } else {
            merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
        }
    }
}
