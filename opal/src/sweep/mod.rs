//! Sweeps and searches: the `sweep` section of a scenario varies one or two fields over
//! values (every combination a full run) and may search each point for the highest request
//! rate or the fewest workers meeting the SLO.
//!
//! A [`SweepPlan`] runs any point on its own ([`SweepPlan::run_point`]), so callers spread
//! points over threads, Web Workers or machines (shards) and put them back in index order
//! ([`SweepResults`]); a point's figures depend on its scenario alone, never on who ran it.

mod bill;
mod lengthen;
mod output;
mod point;
mod search;
mod searcher;
#[cfg(test)]
mod tests;
mod trial;

pub use bill::{Bill, PoolBill};
pub use engine::scenario::sweep::{Axis, Search, SweepConfig, MAX_AXES, MAX_POINTS};
pub use output::{merge_shards, Shard, SweepHeader, SweepPoint, SweepResults};
pub use point::{PointMetrics, SeedSpread};
pub use search::{Confirmation, Probe, SearchOutcome};
use trial::{Trial, TrialStep};

use crate::document::check;
use engine::scenario::{Scenario, ScenarioData};
use engine::simulation::{Simulation, SimulationResults, Stop};
use engine::validate::Problem;
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
        let problems = check::check(scenario);
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(Self {
            base: check::sweep_base(scenario),
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
        check::point_scenario(&self.base, &self.config, &self.config.point_values(i), None)
    }

    /// Runs point `i` (searching it when the sweep has a search).
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
        let mut searcher =
            (self.config.search.as_ref()).map(|s| searcher::Searcher::new(s, self.config.confirm));
        PointRun {
            index: i,
            values: self.config.point_values(i),
            trial: Some(self.trial(
                searcher.as_mut().map(searcher::Searcher::next_probe),
                1,
                true,
            )),
            phase: match searcher {
                None => Phase::Plain,
                Some(s) => Phase::Search(Box::new(s)),
            },
            pending: None,
            failed: None,
        }
    }

    /// A trial of `extra` at `scale`, lengthened (when `lengthen`) up to `max_lengthen`
    /// times the scenario as written, never further: a search's probes start at the length
    /// the last one was judged at, and must not compound.
    fn trial(&self, extra: Option<(String, Value)>, scale: u32, lengthen: bool) -> Trial {
        let most = if lengthen {
            self.config.max_lengthen.max(scale)
        } else {
            scale
        };
        Trial::new(extra, scale, self.config.seeds, most)
    }

    /// The scenario text of point `values` with `extra` set, its stages lengthened `scale`
    /// times and its seed moved on by `seed`.
    fn run_text(
        &self,
        values: &[Value],
        extra: Option<(&str, Value)>,
        seed: u32,
        scale: u32,
    ) -> Result<String, String> {
        let mut tree = self.base.clone();
        lengthen::lengthen(&mut tree, scale);
        lengthen::reseed(&mut tree, seed);
        check::point_text(&tree, &self.config, values, extra)
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

/// A point of a sweep in progress: its trials (one configuration each, run per seed and
/// lengthened until it can be judged), one after another.
pub struct PointRun {
    index: usize,
    values: Vec<Value>,
    /// The configuration being run.
    trial: Option<Trial>,
    phase: Phase,
    /// The run asked for and not yet recorded.
    pending: Option<PendingRun>,
    /// Why the point cannot go on.
    failed: Option<String>,
}

/// What a point is doing.
enum Phase {
    /// One configuration, no search.
    Plain,
    /// A search asking for probes.
    Search(Box<searcher::Searcher>),
    /// Done: the figures, and the search's outcome with one.
    Finished(Box<(Option<PointMetrics>, Option<SearchOutcome>)>),
}

impl PointRun {
    /// The point's index in the sweep.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The next run to make, or the finished point.
    pub fn next(&mut self, plan: &SweepPlan) -> PointStep<'_> {
        loop {
            if let Some(e) = self.failed.take() {
                return PointStep::Done(Box::new(self.point(None, None, Some(e))));
            }
            if let Phase::Finished(done) = &self.phase {
                let (m, s) = (**done).clone();
                return PointStep::Done(Box::new(self.point(m, s, None)));
            }
            let Some(trial) = &self.trial else {
                unreachable!("a point in progress has a trial");
            };
            match trial.next() {
                TrialStep::Run { seed, scale } => {
                    let extra = trial.extra.as_ref().map(|(p, v)| (p.as_str(), v.clone()));
                    match plan
                        .run_text(&self.values, extra, seed, scale)
                        .and_then(|text| Ok((check::derived(&text)?, text)))
                    {
                        Ok((scenario, text)) => {
                            return PointStep::Run(
                                self.pending.insert(PendingRun { scenario, text }),
                            )
                        }
                        Err(e) => self.failed = Some(e),
                    }
                }
                TrialStep::Done(m) => self.judged(plan, *m),
            }
        }
    }

    /// A trial is judged: the point is done, or its search goes on.
    fn judged(&mut self, plan: &SweepPlan, m: PointMetrics) {
        let scale = self.trial.as_ref().map_or(1, |t| t.scale);
        match &mut self.phase {
            Phase::Plain => self.phase = Phase::Finished(Box::new((Some(m), None))),
            Phase::Search(searcher) => match searcher.record(m, scale) {
                searcher::Next::Probe(extra, scale, lengthen) => {
                    self.trial = Some(plan.trial(Some(extra), scale, lengthen));
                }
                searcher::Next::Done(done) => {
                    let (outcome, at) = *done;
                    self.phase = Phase::Finished(Box::new((at, Some(outcome))));
                }
            },
            Phase::Finished(..) => {}
        }
    }

    /// The results of the run [`PointRun::next`] asked for (or why it could not run).
    pub fn record(&mut self, results: Result<&SimulationResults, String>) {
        let pending = self.pending.take().expect("record follows a run from next");
        match results.and_then(|r| metrics_of(&pending.scenario, r)) {
            Ok(mut m) => {
                let trial = self.trial.as_mut().expect("a run belongs to a trial");
                m.scale = trial.scale;
                let now = trial.scale;
                trial.record(m, |scale| {
                    lengthen::can_lengthen(&pending.scenario, scale, now)
                });
            }
            Err(e) => self.failed = Some(e),
        }
    }

    fn point(
        &self,
        metrics: Option<PointMetrics>,
        search: Option<SearchOutcome>,
        error: Option<String>,
    ) -> SweepPoint {
        SweepPoint {
            index: self.index,
            values: self.values.clone(),
            metrics,
            search,
            error,
        }
    }
}

/// Runs one scenario to its end.
/// One run of `scenario` to its end; a scenario the run refuses is an error in one line.
pub(crate) fn run_one(
    scenario: &Scenario,
    data: &ScenarioData,
) -> Result<SimulationResults, String> {
    let mut sim = Simulation::new(scenario, data).map_err(|p| check::describe(&p))?;
    sim.run();
    Ok(sim.results())
}

/// A finished run's figures; a run stopped by an error is an error.
fn metrics_of(scenario: &Scenario, results: &SimulationResults) -> Result<PointMetrics, String> {
    if let Some(stop @ Stop::Error(_)) = &results.stop {
        return Err(stop.describe());
    }
    Ok(PointMetrics::new(scenario, results))
}
