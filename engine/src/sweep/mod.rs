//! Sweeps and searches: the `sweep` section of a scenario varies one or two fields over
//! values (every combination a full run) and may search each point for the highest request
//! rate or the fewest workers meeting the SLO.
//!
//! A [`SweepPlan`] runs any point on its own ([`SweepPlan::run_point`]), so callers spread
//! points over threads, Web Workers or machines (shards) and put them back in index order
//! ([`SweepResults`]); a point's figures depend on its scenario alone, never on who ran it.

mod config;
mod output;
mod path;
mod point;
mod search;
#[cfg(test)]
mod tests;

pub use config::{Axis, Search, SweepConfig, MAX_AXES, MAX_POINTS};
pub use output::{merge_shards, Shard, SweepHeader, SweepPoint, SweepResults};
pub use point::PointMetrics;
pub use search::{Probe, SearchOutcome};

use crate::scenario::{Scenario, ScenarioData};
use crate::simulation::{Simulation, Stop};
use crate::validate::{index, join, Problem, Problems};
use serde_json::Value;

/// A sweep ready to run: the scenario without its `sweep` section, the axes, the data files.
pub struct SweepPlan {
    base: Value,
    config: SweepConfig,
    data: ScenarioData,
}

impl SweepPlan {
    /// The plan of a scenario with a `sweep` section (a problem at `sweep` without one).
    pub fn new(scenario: &Scenario, data: ScenarioData) -> Result<Self, Vec<Problem>> {
        let Some(config) = scenario.sweep.clone() else {
            return Err(vec![Problem::new(
                "sweep",
                "the scenario has no sweep section (vary, search)",
            )]);
        };
        let problems = scenario.validate();
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(Self {
            base: base_tree(scenario),
            config,
            data,
        })
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.config.num_points()
    }

    /// True when the sweep has no points (never, once validated).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What every point shares: the axes, the search, the point count.
    pub fn header(&self) -> SweepHeader {
        SweepHeader {
            axes: self.config.vary.iter().map(|a| a.path.clone()).collect(),
            search: self.config.search.clone(),
            total_points: self.len(),
        }
    }

    /// The scenario of point `i`.
    pub fn scenario(&self, i: usize) -> Result<Scenario, String> {
        point_scenario(&self.base, &self.config, &self.config.point_values(i), None)
    }

    /// Runs point `i` (searching it when the sweep has a search).
    pub fn run_point(&self, i: usize) -> SweepPoint {
        let values = self.config.point_values(i);
        let run = |extra: Option<(&str, Value)>| -> Result<PointMetrics, String> {
            let s = point_scenario(&self.base, &self.config, &values, extra)?;
            run_one(&s, &self.data)
        };
        let (metrics, search, error) = match &self.config.search {
            None => match run(None) {
                Ok(m) => (Some(m), None, None),
                Err(e) => (None, None, Some(e)),
            },
            Some(s) => match search::search(s, |p, v| run(Some((p, v)))) {
                Ok((outcome, m)) => (m, Some(outcome), None),
                Err(e) => (None, None, Some(e)),
            },
        };
        SweepPoint {
            index: i,
            values,
            metrics,
            search,
            error,
        }
    }
}

/// The scenario as a JSON tree, without its sweep (a point is one plain run).
fn base_tree(scenario: &Scenario) -> Value {
    let mut base = scenario.clone();
    base.sweep = None;
    serde_json::to_value(&base).expect("a scenario always serialises")
}

/// The scenario with each axis set to its value in `values`, and `extra` set last.
fn point_scenario(
    base: &Value,
    config: &SweepConfig,
    values: &[Value],
    extra: Option<(&str, Value)>,
) -> Result<Scenario, String> {
    let mut tree = base.clone();
    let sets = config
        .vary
        .iter()
        .map(|a| a.path.as_str())
        .zip(values.iter().cloned())
        .chain(extra);
    for (path, value) in sets {
        path::set(&mut tree, path, value).map_err(|m| format!("{path}: {m}"))?;
    }
    Scenario::parse(&tree.to_string()).map_err(|p| {
        p.iter()
            .map(Problem::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    })
}

/// Runs one scenario to its end and reads its figures; a run stopped by an error is an error.
fn run_one(scenario: &Scenario, data: &ScenarioData) -> Result<PointMetrics, String> {
    let mut sim = Simulation::new(scenario, data).map_err(|p| {
        p.iter()
            .map(Problem::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    })?;
    sim.run();
    let results = sim.results();
    if let Some(stop @ Stop::Error(_)) = &results.stop {
        return Err(stop.describe());
    }
    Ok(PointMetrics::new(scenario, &results))
}

/// Whether every value of every axis (and each end of a search) makes a valid scenario:
/// each problem at the value's place in `sweep`, saying what it broke.
pub(crate) fn check_points(scenario: &Scenario, p: &mut Problems) {
    let Some(config) = &scenario.sweep else {
        return;
    };
    let base = base_tree(scenario);
    let alone = SweepConfig::default();
    let try_value = |at: String, path: &str, v: Value, p: &mut Problems| {
        if let Err(m) = point_scenario(&base, &alone, &[], Some((path, v))) {
            p.push(at, format!("with this value the scenario is invalid: {m}"));
        }
    };
    for (k, axis) in config.vary.iter().enumerate() {
        let at = index("sweep.vary", k);
        match &axis.values {
            Some(values) => {
                for (j, v) in values.iter().enumerate() {
                    try_value(index(&join(&at, "values"), j), &axis.path, v.clone(), p);
                }
            }
            None => {
                for (f, x) in [("from", axis.from), ("to", axis.to)] {
                    if let Some(x) = x {
                        try_value(join(&at, f), &axis.path, config::number(x), p);
                    }
                }
            }
        }
    }
    match &config.search {
        Some(s) if scenario.slo.is_none() => {
            let _ = s;
            p.push(
                "sweep.search",
                "a search looks for the SLO's edge: add an slo section",
            );
        }
        Some(Search::MaxRate {
            path, low, high, ..
        }) => {
            for (f, x) in [("low", low), ("high", high)] {
                try_value(join("sweep.search", f), path, config::number(*x), p);
            }
        }
        Some(Search::MinWorkers { .. }) | None => {}
    }
}
