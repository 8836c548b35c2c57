//! Runs a simulation in the tab without freezing it: the engine advances in slices of about
//! [`SLICE_BUDGET_MS`] of work, each in its own macrotask, so input, painting and the Stop
//! button get their turn between slices.
//!
//! Slices are queued with a `MessageChannel` message rather than `setTimeout(0)`: browsers
//! clamp nested timeouts to 4 ms, which would leave the simulation idle a third of the time.

use crate::state::{Action, EngineResults, Progress};
use engine::scenario::Scenario;
use engine::scenario::ScenarioData as DataFiles;
use engine::simulation::Simulation;
use engine::validate::Problem;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use yew::Callback;

/// Work per slice, ms: short enough that clicks and painting stay responsive (a long task
/// is 50 ms), long enough that yielding costs little.
pub const SLICE_BUDGET_MS: f64 = 20.0;
/// Progress is reported at most this often, ms (each report re-renders the page).
const REPORT_EVERY_MS: f64 = 80.0;
/// Events in the first chunk; later chunks adapt to the measured speed.
const FIRST_CHUNK: u64 = 500;

/// Keeps a run going; dropping it (or calling [`RunHandle::cancel`]) stops the run at the
/// next slice.
pub struct RunHandle {
    cancelled: Rc<Cell<bool>>,
}

impl RunHandle {
    /// Stops the run before its next slice.
    pub fn cancel(&self) {
        self.cancelled.set(true);
    }
}

struct Driver {
    id: u64,
    sim: Simulation,
    dispatch: Callback<Action>,
    cancelled: Rc<Cell<bool>>,
    /// Events per `advance` call, tuned so one call takes about a quarter of the budget.
    chunk: u64,
    last_report: f64,
}

/// The page's monotonic clock, ms (wall time: only for pacing slices and playback).
pub(crate) fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or_else(js_sys::Date::now, |p| p.now())
}

/// The engine's problems as one sentence for the run status.
pub fn describe_problems(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(|p| {
            if p.path.is_empty() {
                p.message.clone()
            } else {
                format!("{}: {}", p.path, p.message)
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Builds run `id` of `text` with `files` and starts advancing it; reports through `dispatch`
/// (`RunProgress`, then `RunFinished` or `RunFailed`).
pub fn start(id: u64, text: &str, files: &DataFiles, dispatch: Callback<Action>) -> RunHandle {
    let cancelled = Rc::new(Cell::new(false));
    let built = Scenario::parse(text).and_then(|s| Simulation::new(&s, files));
    match built {
        Err(problems) => dispatch.emit(Action::RunFailed {
            id,
            message: describe_problems(&problems),
        }),
        Ok(sim) => schedule(Rc::new(RefCell::new(Driver {
            id,
            sim,
            dispatch,
            cancelled: cancelled.clone(),
            chunk: FIRST_CHUNK,
            last_report: now_ms(),
        }))),
    }
    RunHandle { cancelled }
}

/// Runs `task` in a fresh macrotask, without the 4 ms clamp of nested `setTimeout(0)`.
pub(crate) fn queue_task(task: impl FnOnce() + 'static) {
    let Ok(channel) = web_sys::MessageChannel::new() else {
        return; // No channel means the page is going away; the run ends with it.
    };
    let next = Closure::once_into_js(task);
    channel.port1().set_onmessage(Some(next.unchecked_ref()));
    let _ = channel.port2().post_message(&wasm_bindgen::JsValue::NULL);
}

/// Queues the next slice as a fresh macrotask.
fn schedule(driver: Rc<RefCell<Driver>>) {
    queue_task(move || slice(driver));
}

fn slice(driver: Rc<RefCell<Driver>>) {
    let mut guard = driver.borrow_mut();
    let d = &mut *guard;
    if d.cancelled.get() {
        // Stopped (or superseded): report what was reached; the reducer keeps it only if
        // this run is the one the user stopped. Dropping the driver drops the simulation.
        let results = EngineResults::new(d.sim.results());
        let (id, dispatch) = (d.id, d.dispatch.clone());
        drop(guard);
        dispatch.emit(Action::RunStopped { id, results });
        return;
    }
    let start = now_ms();
    let mut progress = d.sim.progress();
    while !progress.finished {
        let t0 = now_ms();
        progress = d.sim.advance(d.chunk);
        let t1 = now_ms();
        // Aim for chunks of a quarter budget; change by at most ×2 per step.
        let took = (t1 - t0).max(0.05);
        let ideal = d.chunk as f64 * (SLICE_BUDGET_MS / 4.0) / took;
        d.chunk = ideal
            .clamp(d.chunk as f64 / 2.0, d.chunk as f64 * 2.0)
            .max(16.0) as u64;
        if t1 - start >= SLICE_BUDGET_MS {
            break;
        }
    }
    let (id, dispatch) = (d.id, d.dispatch.clone());
    if progress.finished {
        // Collecting the results (copying every record, sorting latencies) gets a task of
        // its own rather than sharing one with a slice of simulation.
        drop(guard);
        queue_task(move || {
            let d = driver.borrow();
            let stopped = d.cancelled.get();
            let results = EngineResults::new(d.sim.results());
            drop(d);
            if stopped {
                // Stop landed between the last slice and this task: still report.
                dispatch.emit(Action::RunStopped { id, results });
                return;
            }
            dispatch.emit(Action::RunFinished {
                id,
                sim_end_s: results.end_time,
                results,
            });
        });
        return;
    }
    let now = now_ms();
    if now - d.last_report >= REPORT_EVERY_MS {
        d.last_report = now;
        dispatch.emit(Action::RunProgress {
            id,
            progress: Progress::from(progress),
        });
    }
    drop(guard);
    schedule(driver);
}
