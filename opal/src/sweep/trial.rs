//! A trial: one configuration of a point (an axis value, a probe of a search) run until it
//! can be judged — once per seed, and lengthened while too short to judge.

use super::point::{PointMetrics, SeedSpread};
use serde_json::Value;

/// One configuration and the runs it has had.
#[derive(Debug, Clone)]
pub(crate) struct Trial {
    /// The field a search sets, and its value.
    pub(crate) extra: Option<(String, Value)>,
    /// How many times the requests (and durations) the stages name the runs make.
    pub(crate) scale: u32,
    /// Seeds to run, from the scenario's.
    seeds: u32,
    /// Most `scale` may reach while lengthening.
    max_scale: u32,
    /// Each seed's figures at the current scale.
    runs: Vec<PointMetrics>,
}

/// What a trial needs next.
pub(crate) enum TrialStep {
    /// A run with the seed offset and scale given.
    Run { seed: u32, scale: u32 },
    /// Judged: the figures (every seed's, pooled).
    Done(Box<PointMetrics>),
}

impl Trial {
    pub(crate) fn new(
        extra: Option<(String, Value)>,
        scale: u32,
        seeds: u32,
        max_scale: u32,
    ) -> Self {
        Self {
            extra,
            scale,
            seeds: seeds.max(1),
            max_scale: max_scale.max(scale),
            runs: Vec::new(),
        }
    }

    /// The next run, or the judged figures.
    pub(crate) fn next(&self) -> TrialStep {
        if (self.runs.len() as u32) < self.seeds {
            return TrialStep::Run {
                seed: self.runs.len() as u32,
                scale: self.scale,
            };
        }
        TrialStep::Done(Box::new(pool(&self.runs)))
    }

    /// A run's figures; `can_lengthen` says whether a run twice as long can be made (the
    /// scenario names a request count or a duration, and fits the limits).
    pub(crate) fn record(&mut self, m: PointMetrics, can_lengthen: impl Fn(u32) -> bool) {
        self.runs.push(m);
        if (self.runs.len() as u32) < self.seeds {
            return;
        }
        let longer = self.scale.saturating_mul(2);
        if self.runs.iter().any(|r| !r.settled) && longer <= self.max_scale && can_lengthen(longer)
        {
            self.scale = longer;
            self.runs.clear();
        }
    }
}

/// Several seeds' figures as one: the first seed's, with the spread when there are more;
/// judged only when every seed is, and meeting the SLO only when every seed does.
fn pool(runs: &[PointMetrics]) -> PointMetrics {
    let mut m = runs[0].clone();
    if runs.len() > 1 {
        m.settled = runs.iter().all(|r| r.settled);
        if m.overloaded.is_none() {
            m.overloaded = runs
                .iter()
                .enumerate()
                .find_map(|(k, r)| r.overloaded.as_ref().map(|o| format!("seed +{k}: {o}")));
        }
        m.seeds = Some(SeedSpread::of(runs));
    }
    m
}
