//! Sweeps and searches: the `sweep` section of a scenario varies one or two fields over
//! values (every combination a full run) and may search each point for the highest request
//! rate or the fewest workers meeting the SLO.
//!
//! A [`SweepPlan`] runs any point on its own ([`SweepPlan::run_point`]), so callers spread
//! points over threads, Web Workers or machines (shards) and put them back in index order
//! ([`SweepResults`]); a point's figures depend on its scenario alone, never on who ran it.
//!
//! What a caller drives (a plan, a point's steps and figures, the table) is `#[inline]`, so
//! it is compiled in the caller (the page's wasm at its size-tuned opt-level), not in the
//! engine at the simulation's.

mod bill;
mod config;
mod output;
mod path;
mod point;
mod search;
#[cfg(test)]
mod tests;

pub use bill::{Bill, PoolBill};
pub use config::{Axis, Search, SweepConfig, MAX_AXES, MAX_POINTS};
pub use output::{merge_shards, Shard, SweepHeader, SweepPoint, SweepResults};
pub use point::PointMetrics;
pub use search::{Probe, SearchOutcome};

use crate::scenario::{Scenario, ScenarioData};
use crate::simulation::{Simulation, SimulationResults, Stop};
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
    #[inline]
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
    #[inline]
    pub fn scenario(&self, i: usize) -> Result<Scenario, String> {
        point_scenario(&self.base, &self.config, &self.config.point_values(i), None)
    }

    /// Runs point `i` (searching it when the sweep has a search).
    #[inline]
    pub fn run_point(&self, i: usize) -> SweepPoint {
        let mut point = self.begin_point(i);
        loop {
            match point.next(self) {
                PointStep::Run(run) => {
                    let results = run_one(&run.scenario, &self.data);
                    point.record(results.as_ref().map_err(String::clone));
                }
                PointStep::Done(p) => return *p,
            }
        }
    }

    /// Point `i` as a series of runs to make elsewhere (a Web Worker each): ask
    /// [`PointRun::next`] for a run, hand its results to [`PointRun::record`], until it is
    /// done. [`SweepPlan::run_point`] is this loop run here.
    pub fn begin_point(&self, i: usize) -> PointRun {
        PointRun {
            index: i,
            values: self.config.point_values(i),
            searcher: self.config.search.as_ref().map(search::Searcher::new),
            pending: None,
            outcome: None,
        }
    }
}

/// One run a point needs: its scenario, and the JSON text it was read from (what to hand a
/// worker, which reads the identical scenario from it).
pub struct PendingRun {
    /// The run's scenario.
    pub scenario: Scenario,
    /// The scenario as JSON text.
    pub text: String,
}

/// What a point needs next.
pub enum PointStep<'a> {
    /// Run this scenario to its end, then [`PointRun::record`] its results.
    Run(&'a PendingRun),
    /// The point is finished.
    Done(Box<SweepPoint>),
}

/// A point of a sweep in progress: one run, or a search's runs one after another.
pub struct PointRun {
    index: usize,
    values: Vec<Value>,
    searcher: Option<search::Searcher>,
    /// The run asked for and not yet recorded.
    pending: Option<PendingRun>,
    /// Without a search: the one run's figures, once recorded.
    outcome: Option<Result<PointMetrics, String>>,
}

impl PointRun {
    /// The point's index in the sweep.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The next run to make, or the finished point.
    #[inline]
    pub fn next(&mut self, plan: &SweepPlan) -> PointStep<'_> {
        let extra = match &mut self.searcher {
            None => match self.outcome.take() {
                None => None,
                Some(result) => {
                    return PointStep::Done(Box::new(self.finish(result.map(|m| (m, None)))))
                }
            },
            Some(searcher) => match searcher.next() {
                search::SearchStep::Probe(path, value) => Some((path, value)),
                search::SearchStep::Done(found) => {
                    let (outcome, at) = *found;
                    return PointStep::Done(Box::new(SweepPoint {
                        index: self.index,
                        values: self.values.clone(),
                        metrics: at,
                        search: Some(outcome),
                        error: None,
                    }));
                }
            },
        };
        let extra = extra.as_ref().map(|(p, v)| (p.as_str(), v.clone()));
        match point_text(&plan.base, &plan.config, &self.values, extra)
            .and_then(|text| Ok((parse_point(&text)?, text)))
        {
            Ok((scenario, text)) => {
                PointStep::Run(self.pending.insert(PendingRun { scenario, text }))
            }
            Err(e) => PointStep::Done(Box::new(self.finish(Err(e)))),
        }
    }

    /// The results of the run [`PointRun::next`] asked for (or why it could not run).
    #[inline]
    pub fn record(&mut self, results: Result<&SimulationResults, String>) {
        let pending = self.pending.take().expect("record follows a run from next");
        let metrics = results.and_then(|r| metrics_of(&pending.scenario, r));
        match &mut self.searcher {
            None => self.outcome = Some(metrics),
            Some(searcher) => {
                if let Err(e) = searcher.record(metrics) {
                    self.searcher = None;
                    self.outcome = Some(Err(e));
                }
            }
        }
    }

    fn finish(&self, result: Result<(PointMetrics, Option<SearchOutcome>), String>) -> SweepPoint {
        let (metrics, search, error) = match result {
            Ok((m, s)) => (Some(m), s, None),
            Err(e) => (None, None, Some(e)),
        };
        SweepPoint {
            index: self.index,
            values: self.values.clone(),
            metrics,
            search,
            error,
        }
    }
}

/// The scenario as a JSON tree, without its sweep (a point is one plain run).
#[inline]
fn base_tree(scenario: &Scenario) -> Value {
    let mut base = scenario.clone();
    base.sweep = None;
    base.to_tree()
}

/// The scenario with each axis set to its value in `values`, and `extra` set last.
#[inline]
fn point_scenario(
    base: &Value,
    config: &SweepConfig,
    values: &[Value],
    extra: Option<(&str, Value)>,
) -> Result<Scenario, String> {
    parse_point(&point_text(base, config, values, extra)?)
}

/// The JSON text of [`point_scenario`]'s scenario.
#[inline]
fn point_text(
    base: &Value,
    config: &SweepConfig,
    values: &[Value],
    extra: Option<(&str, Value)>,
) -> Result<String, String> {
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
    Ok(tree.to_string())
}

#[inline]
fn parse_point(text: &str) -> Result<Scenario, String> {
    Scenario::parse(text).map_err(|p| describe(&p))
}

fn describe(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(Problem::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Runs one scenario to its end.
fn run_one(scenario: &Scenario, data: &ScenarioData) -> Result<SimulationResults, String> {
    let mut sim = Simulation::new(scenario, data).map_err(|p| describe(&p))?;
    sim.run();
    Ok(sim.results())
}

/// A finished run's figures; a run stopped by an error is an error.
#[inline]
fn metrics_of(scenario: &Scenario, results: &SimulationResults) -> Result<PointMetrics, String> {
    if let Some(stop @ Stop::Error(_)) = &results.stop {
        return Err(stop.describe());
    }
    Ok(PointMetrics::new(scenario, results))
}

/// Whether every value of every axis (and each end of a search) makes a valid scenario:
/// each problem at the value's place in `sweep`, saying what it broke.
#[inline]
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
