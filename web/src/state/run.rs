//! A run as the app tracks it: status, progress, and the engine's results.

use opal::simulation::SimulationResults;
use std::rc::Rc;

/// The engine's results for one finished run, shared without copying.
///
/// Equality is identity: two runs' results are "equal" only when they are the same run, so
/// Yew's prop comparisons stay O(1) however many requests a run had.
#[derive(Debug, Clone)]
pub struct EngineResults(pub Rc<SimulationResults>);

impl EngineResults {
    /// Wraps freshly computed results.
    pub fn new(results: SimulationResults) -> Self {
        Self(Rc::new(results))
    }
}

impl PartialEq for EngineResults {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl std::ops::Deref for EngineResults {
    type Target = SimulationResults;
    fn deref(&self) -> &SimulationResults {
        &self.0
    }
}

/// How far a run has got.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Progress {
    /// Fraction of the planned simulation done, 0 to 1; `None` when the engine cannot tell
    /// (no time bound and an open-ended workload), shown as an indeterminate bar.
    pub fraction: Option<f64>,
    /// Simulated time reached, seconds.
    pub sim_time_s: f64,
    /// Requests issued so far.
    pub requests_issued: u64,
    /// Requests completed or failed so far.
    pub requests_done: u64,
}

impl From<opal::simulation::Progress> for Progress {
    fn from(p: opal::simulation::Progress) -> Self {
        Self {
            fraction: p.fraction,
            sim_time_s: p.now,
            requests_issued: p.requests_issued,
            requests_done: p.requests_finished,
        }
    }
}

/// The state of the current (or last) run. Runs are numbered so that slices of an old run
/// arriving after Stop or a new Run are ignored.
#[derive(Debug, Clone, PartialEq)]
pub enum RunStatus {
    /// Nothing run yet.
    Idle,
    /// Running in slices.
    Running {
        /// The run's id.
        id: u64,
        /// The scenario text it ran.
        scenario: Rc<str>,
        /// How far it has got.
        progress: Progress,
    },
    /// Ran to the end, or was stopped and its results so far collected (`stopped`).
    Finished {
        /// The run's id.
        id: u64,
        /// The scenario text it ran.
        scenario: Rc<str>,
        /// The simulated time it ended at, seconds.
        sim_end_s: f64,
        /// Its results.
        results: EngineResults,
        /// Stopped before its end.
        stopped: bool,
    },
    /// Stopped by the user; its results so far are being collected.
    Stopped {
        /// The run's id.
        id: u64,
        /// The scenario text it ran.
        scenario: Rc<str>,
        /// How far it has got.
        progress: Progress,
    },
    /// The engine refused or failed.
    Failed {
        /// The run's id.
        id: u64,
        /// Why.
        message: String,
    },
}

impl RunStatus {
    /// Whether a run is in progress.
    pub fn is_running(&self) -> bool {
        matches!(self, Self::Running { .. })
    }
}

/// A finished run kept aside to compare the next one against.
#[derive(Debug, Clone, PartialEq)]
pub struct PinnedRun {
    /// Which run it was.
    pub id: u64,
    /// The scenario it ran.
    pub scenario: Rc<str>,
    /// Its results.
    pub results: EngineResults,
}
