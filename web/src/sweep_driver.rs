//! Runs a scenario's sweep in the tab, one point per macrotask, reporting each point as it
//! finishes so its curve grows point by point. (Single runs go to the Web Worker pool; the
//! sweep's points do not yet.)

use crate::run_driver::describe_problems;
use crate::worker::runner::queue_task;
use engine::scenario::{Scenario, ScenarioData};
use engine::sweep::{SweepPlan, SweepPoint};
use std::cell::Cell;
use std::rc::Rc;
use yew::Callback;

/// Keeps a sweep going; [`SweepHandle::cancel`] stops it before its next point.
pub struct SweepHandle {
    cancelled: Rc<Cell<bool>>,
}

impl SweepHandle {
    /// Stops the sweep before its next point.
    pub fn cancel(&self) {
        self.cancelled.set(true);
    }
}

/// Builds the sweep of `text` and runs its points in order: `on_point` gets each one,
/// `on_end` an error message if the sweep cannot start, or `None` once it is over.
pub fn start(
    text: &str,
    files: ScenarioData,
    on_point: Callback<SweepPoint>,
    on_end: Callback<Option<String>>,
) -> SweepHandle {
    let cancelled = Rc::new(Cell::new(false));
    match Scenario::parse(text).and_then(|s| SweepPlan::new(&s, files)) {
        Err(problems) => on_end.emit(Some(describe_problems(&problems))),
        Ok(plan) => next(Rc::new(plan), 0, cancelled.clone(), on_point, on_end),
    }
    SweepHandle { cancelled }
}

fn next(
    plan: Rc<SweepPlan>,
    i: usize,
    cancelled: Rc<Cell<bool>>,
    on_point: Callback<SweepPoint>,
    on_end: Callback<Option<String>>,
) {
    queue_task(move || {
        if cancelled.get() || i >= plan.len() {
            on_end.emit(None);
            return;
        }
        on_point.emit(plan.run_point(i));
        next(plan, i + 1, cancelled, on_point, on_end);
    });
}
