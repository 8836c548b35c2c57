//! The `race` section: two to four variants of one scenario (entrants), each a label and a
//! JSON merge patch (RFC 7386) over the scenario, run on the same arrivals and played back
//! side by side (the app's race view). A plain run ignores it.
//!
//! An entrant's scenario is the document without its `race` and `sweep` sections, with the
//! patch merged in; only the patch differs between entrants, so seed and workload (and so
//! the arrivals) are the same unless a patch changes them.
//!
//! `seeds` asks for the race to be run again at the next seeds (the app judges the winner
//! on all of them and plays back the first): a winner at one seed may be the seed's luck.

#[cfg(test)]
mod tests;

use crate::scenario::Scenario;
use crate::validate::{index, join, Problem, Problems};
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
    /// is checked against the document, see [`check_entrants`]).
    #[inline]
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

/// The scenario as a JSON tree without its race and sweep: what every entrant starts from.
#[inline]
fn base_tree(scenario: &Scenario) -> Value {
    let mut base = scenario.clone();
    base.race = None;
    base.sweep = None;
    base.to_tree()
}

#[inline]
fn entrant_from(base: &Value, patch: &Value) -> Result<Scenario, String> {
    let mut tree = base.clone();
    merge_patch(&mut tree, patch);
    Scenario::parse(&tree.to_string()).map_err(|p| {
        p.iter()
            .map(Problem::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    })
}

/// Each entrant's label and scenario, in lane order (empty without a `race` section); an
/// entrant whose patch makes an invalid scenario gives the problems as one sentence.
#[inline]
pub fn entrants(scenario: &Scenario) -> Vec<(String, Result<Scenario, String>)> {
    let Some(race) = &scenario.race else {
        return Vec::new();
    };
    let base = base_tree(scenario);
    race.entrants
        .iter()
        .map(|e| (e.label.trim().to_string(), entrant_from(&base, &e.patch)))
        .collect()
}

/// Each entrant's label and scenario at the race's `k`-th seed (0 is the scenario's own
/// seed, as [`entrants`] gives): the entrant's seed (its patch may set one) plus `k`.
#[inline]
pub fn entrants_at_seed(scenario: &Scenario, k: u32) -> Vec<(String, Result<Scenario, String>)> {
    let mut all = entrants(scenario);
    for (_, s) in &mut all {
        if let Ok(s) = s {
            s.simulation.seed = s.simulation.seed.wrapping_add(u64::from(k));
        }
    }
    all
}

/// How many seeds the race is judged on (1 without a race).
#[inline]
pub fn seeds(scenario: &Scenario) -> u32 {
    scenario.race.as_ref().map_or(1, |r| r.seeds)
}

/// Whether each entrant's patch makes a valid scenario: each problem at its patch.
#[inline]
pub(crate) fn check_entrants(scenario: &Scenario, p: &mut Problems) {
    for (i, (_, s)) in entrants(scenario).into_iter().enumerate() {
        if let Err(m) = s {
            p.push(
                join(&index("race.entrants", i), "patch"),
                format!("with this patch the scenario is invalid: {m}"),
            );
        }
    }
}
