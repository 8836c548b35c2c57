//! The `sweep` section: which fields vary over which values, and what to search for.

use super::path;
use crate::validate::{index, join, Problems};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Most axes a sweep varies (a curve per value of the second).
pub const MAX_AXES: usize = 2;
/// Halvings a rate search may take (each a full run).
pub(crate) const MAX_BISECTIONS: u32 = 20;
/// Most points in one sweep (each a full run).
pub const MAX_POINTS: usize = 10_000;

/// One field varied over values: a list (`values`), or a numeric range (`from`, `to`,
/// `steps` evenly spaced values including both ends).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Axis {
    /// Field path, e.g. `workload.stages[0].request_rate` or `router.policy`.
    pub path: String,
    /// The values, in order (any JSON: numbers, names, objects).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<Value>>,
    /// First value of a range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<f64>,
    /// Last value of a range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<f64>,
    /// Values in the range (≥ 2, or 1 when `from` equals `to`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<u32>,
}

/// What to look for at each point of the sweep (or once, without `vary`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Search {
    /// The highest value of `path` (a request rate) at which the SLO is met, by bisection
    /// between `low` and `high` until they are `tolerance` apart.
    MaxRate {
        /// The rate field. Default `workload.stages[0].request_rate`.
        #[serde(default = "default_rate_path")]
        path: String,
        /// Lowest rate tried, req/s.
        low: f64,
        /// Highest rate tried, req/s.
        high: f64,
        /// Bisection stops when the bracket is this narrow, req/s.
        tolerance: f64,
    },
    /// The fewest workers (`simulation.num_workers`) in `min..=max` meeting the SLO.
    MinWorkers {
        /// Fewest tried. Default 1.
        #[serde(default = "one")]
        min: u32,
        /// Most tried.
        max: u32,
    },
}

fn default_rate_path() -> String {
    "workload.stages[0].request_rate".into()
}

fn one() -> u32 {
    1
}

/// A sweep: the scenario run at every combination of its axes' values, each point searched
/// when a search is given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SweepConfig {
    /// The fields varied (0 to 2); points are every combination, the last axis fastest.
    pub vary: Vec<Axis>,
    /// What to search for at each point.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search: Option<Search>,
    /// Seeds each run is made with (`simulation.seed`, then the next ones): a point meets
    /// the SLO only when every seed does, and reports the spread. Default 1.
    #[serde(skip_serializing_if = "is_one")]
    pub seeds: u32,
    /// Most times a run may be lengthened (its stages' requests and durations multiplied)
    /// until it is long enough to judge. Default 16; 1 never lengthens.
    #[serde(skip_serializing_if = "is_default_lengthen")]
    pub max_lengthen: u32,
    /// A search's answer is re-run at this many times the scenario's length (or twice the
    /// length it was judged at, if that is longer), with the next value beyond it, to
    /// confirm that it holds and the next does not (searched again at that length if not).
    /// Default 10; 1 does not confirm.
    #[serde(skip_serializing_if = "is_default_confirm")]
    pub confirm: u32,
}

/// Most seeds per point.
pub(crate) const MAX_SEEDS: u32 = 8;
const DEFAULT_LENGTHEN: u32 = 16;
const DEFAULT_CONFIRM: u32 = 10;

fn is_one(x: &u32) -> bool {
    *x == 1
}
fn is_default_lengthen(x: &u32) -> bool {
    *x == DEFAULT_LENGTHEN
}
fn is_default_confirm(x: &u32) -> bool {
    *x == DEFAULT_CONFIRM
}

impl Default for SweepConfig {
    fn default() -> Self {
        Self {
            vary: Vec::new(),
            search: None,
            seeds: 1,
            max_lengthen: DEFAULT_LENGTHEN,
            confirm: DEFAULT_CONFIRM,
        }
    }
}

/// A number as JSON: whole numbers as integers (so they read as counts, e.g. `num_workers`).
pub fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        Value::from(x as i64)
    } else {
        serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
    }
}

impl Axis {
    /// How many values the axis gives (without making them: `steps` may be absurd).
    pub fn len(&self) -> usize {
        match (&self.values, self.from, self.to, self.steps) {
            (Some(v), ..) => v.len(),
            (None, Some(a), Some(b), Some(1)) if a == b => 1,
            (None, Some(_), Some(_), Some(n)) if n >= 2 => n as usize,
            _ => 0,
        }
    }

    /// True when the axis gives no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The axis' values in order (empty when it gives none or is malformed).
    pub fn points(&self) -> Vec<Value> {
        if let Some(v) = &self.values {
            return v.clone();
        }
        match (self.from, self.to, self.steps) {
            (Some(a), Some(b), Some(1)) if a == b => vec![number(a)],
            (Some(a), Some(b), Some(n)) if n >= 2 => (0..n)
                .map(|i| number(a + (b - a) * i as f64 / (n - 1) as f64))
                .collect(),
            _ => Vec::new(),
        }
    }

    fn validate(&self, at: &str, p: &mut Problems) {
        if let Err(m) = path::parse(&self.path) {
            p.push(join(at, "path"), m);
        }
        let range = [self.from.is_some(), self.to.is_some(), self.steps.is_some()];
        match (&self.values, range) {
            (Some(v), [false, false, false]) => {
                if v.is_empty() {
                    p.push(join(at, "values"), "give at least one value");
                }
            }
            (None, [true, true, true]) => {
                for (f, x) in [("from", self.from), ("to", self.to)] {
                    if !x.is_some_and(f64::is_finite) {
                        p.push(join(at, f), "must be a finite number");
                    }
                }
                match self.steps {
                    Some(1) if self.from != self.to => p.push(
                        join(at, "steps"),
                        "must be >= 2 (1 only when from equals to)",
                    ),
                    Some(0) => p.push(join(at, "steps"), "must be >= 1"),
                    _ => {}
                }
            }
            _ => p.push(
                at,
                "give either values (a list) or from, to and steps (a range)",
            ),
        }
    }
}

impl SweepConfig {
    /// Number of points: the product of the axes' lengths (1 without axes).
    pub fn num_points(&self) -> usize {
        self.vary
            .iter()
            .fold(1usize, |n, a| n.saturating_mul(a.len()))
    }

    /// The axis values of point `i` (the last axis varies fastest).
    pub fn point_values(&self, mut i: usize) -> Vec<Value> {
        let axes: Vec<Vec<Value>> = self.vary.iter().map(Axis::points).collect();
        let mut out = vec![Value::Null; axes.len()];
        for (k, values) in axes.iter().enumerate().rev() {
            out[k] = values[i % values.len()].clone();
            i /= values.len();
        }
        out
    }

    /// This section's own problems under `path` (whether each value makes a valid scenario
    /// is checked against the document, see `opal::document::check`).
    pub fn validate(&self, path: &str, p: &mut Problems) {
        let vary = join(path, "vary");
        if self.vary.len() > MAX_AXES {
            p.push(&vary, format!("at most {MAX_AXES} fields can vary"));
        }
        for (i, a) in self.vary.iter().enumerate() {
            a.validate(&index(&vary, i), p);
        }
        if self.vary.is_empty() && self.search.is_none() {
            p.push(path, "give vary (fields and values), a search, or both");
        }
        let n = self.num_points();
        if n > MAX_POINTS {
            p.push(
                &vary,
                format!("{n} points; at most {MAX_POINTS} runs per sweep"),
            );
        }
        if !(1..=MAX_SEEDS).contains(&self.seeds) {
            p.push(
                join(path, "seeds"),
                format!("must be between 1 and {MAX_SEEDS}"),
            );
        }
        if !(1..=64).contains(&self.max_lengthen) {
            p.push(join(path, "max_lengthen"), "must be between 1 and 64");
        }
        if !(1..=100).contains(&self.confirm) {
            p.push(join(path, "confirm"), "must be between 1 and 100");
        }
        let search = join(path, "search");
        match &self.search {
            Some(Search::MaxRate {
                path: rate,
                low,
                high,
                tolerance,
            }) => {
                if let Err(m) = path::parse(rate) {
                    p.push(join(&search, "path"), m);
                }
                p.positive(&search, "low", *low);
                p.positive(&search, "tolerance", *tolerance);
                if high <= low || high.is_nan() || !high.is_finite() {
                    p.push(join(&search, "high"), "must be a number above low");
                } else if *tolerance < (high - low) / f64::from(1u32 << MAX_BISECTIONS) {
                    p.push(
                        join(&search, "tolerance"),
                        format!(
                            "at least (high - low) / 2^{MAX_BISECTIONS}: each halving is a run"
                        ),
                    );
                }
            }
            Some(Search::MinWorkers { min, max }) => {
                let most = crate::worker::MAX_WORKERS;
                if *min == 0 {
                    p.push(join(&search, "min"), "must be >= 1");
                }
                if max < min || *max > most {
                    p.push(
                        join(&search, "max"),
                        format!("must be between min and {most}"),
                    );
                }
            }
            None => {}
        }
    }
}
