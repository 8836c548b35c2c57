//! Inside a simulation worker: runs one job at a time in slices of about
//! [`SLICE_BUDGET_MS`], each its own macrotask, so a `stop` message gets its turn between
//! slices; reports progress and finally the results' bytes to the page.
//!
//! Slices are queued with a `MessageChannel` message rather than `setTimeout(0)`, which
//! browsers clamp to 4 ms when nested.

use super::protocol::{FromWorker, ResultParts, ToWorker};
use crate::run_driver::describe_problems;
use crate::state::Progress;
use opal::scenario::ScenarioData;
use opal::simulation::Simulation;
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};

/// Work per slice, ms: how long a `stop` may wait. Off the page's thread this only bounds
/// Stop's latency, so it is longer than a frame.
const SLICE_BUDGET_MS: f64 = 50.0;
/// Progress is reported at most this often, ms (each report re-renders the page).
const REPORT_EVERY_MS: f64 = 80.0;
/// Events in the first chunk; later chunks adapt to the measured speed.
const FIRST_CHUNK: u64 = 500;

#[wasm_bindgen]
extern "C" {
    /// `performance.now()`, in a window or a worker alike.
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
}

/// The monotonic clock, ms (wall time: only for pacing slices and reports).
pub(crate) fn now_ms() -> f64 {
    performance_now()
}

struct Job {
    id: u64,
    /// Taken when the job finishes: its results move out of it, not copied.
    sim: Option<Simulation>,
    stop: bool,
    /// Events per `advance` call, tuned so one call takes about a quarter of the budget.
    chunk: u64,
    last_report: f64,
}

thread_local! {
    /// The job this worker is running; a `start` replaces it (the pool sends one at a time).
    static CURRENT: RefCell<Option<Rc<RefCell<Job>>>> = const { RefCell::new(None) };
}

fn post(message: &FromWorker) {
    let (data, transfer) = message.to_js();
    let scope: web_sys::DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let _ = scope.post_message_with_transfer(&data, &transfer);
}

/// Handles one message from the page (`web/worker.js` forwards them here).
pub fn on_message(data: &JsValue) {
    match ToWorker::from_js(data) {
        Some(ToWorker::Start {
            job,
            scenario,
            files,
        }) => start(job, &scenario, &files),
        Some(ToWorker::Stop { job }) => CURRENT.with_borrow(|current| {
            if let Some(j) = current.as_ref().filter(|j| j.borrow().id == job) {
                j.borrow_mut().stop = true;
            }
        }),
        Some(ToWorker::WarmUp) => queue_task(warm_up),
        None => {}
    }
}

/// The id of the warm-up runs, which report nothing but their results' bytes (the page's
/// jobs count from 1).
const WARM_UP: u64 = 0;

thread_local! {
    /// The next warm-up run to start (an index into [`warm_up_scenario`]).
    static WARM_NEXT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Warm-up run `n`: the default scenario, then the same under `opal-analytical` step
/// times without prefix caching (the path of imported Opal configs); `None` after them.
fn warm_up_scenario(n: usize) -> Option<String> {
    let default = opal::document::default_document();
    match n {
        0 => Some(default.to_string()),
        1 => {
            let mut doc: serde_json::Value = serde_json::from_str(default).ok()?;
            let worker = doc.get_mut("worker")?.as_object_mut()?;
            worker.insert(
                "timing".into(),
                serde_json::json!({ "model": "opal-analytical" }),
            );
            worker.insert("enable_prefix_caching".into(), false.into());
            Some(doc.to_string())
        }
        _ => None,
    }
}

/// Runs the warm-up scenarios one after the other, each to its end and its results'
/// bytes (sent to the page, which decodes them the same way), while the worker is idle
/// (a job queued with the warm-up goes first; a job replaces it). V8 compiles a wasm
/// function only when first called, first to baseline code, and optimises what runs hot
/// meanwhile, which made a first run slower than the next and its decoding on the page
/// slower still; this way the user's first run is the next.
fn warm_up() {
    if CURRENT.with_borrow(Option::is_some) {
        return;
    }
    let n = WARM_NEXT.get();
    let Some(text) = warm_up_scenario(n) else {
        return;
    };
    WARM_NEXT.set(n + 1);
    let data = ScenarioData::default();
    if let Ok(sim) = opal::parse_scenario(&text).and_then(|s| Simulation::new(&s, &data)) {
        launch(WARM_UP, sim);
    }
}

fn start(id: u64, text: &str, files: &[(String, String)]) {
    let data: ScenarioData = files
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    let scenario = opal::parse_scenario(text).map(|mut s| {
        crate::tab_limit::within_tab(&mut s);
        s
    });
    match scenario.and_then(|s| Simulation::new(&s, &data)) {
        Err(problems) => post(&FromWorker::Failed {
            job: id,
            message: describe_problems(&problems),
        }),
        Ok(sim) => launch(id, sim),
    }
}

/// Makes `sim` the worker's job `id` (replacing any other) and queues its first slice.
fn launch(id: u64, sim: Simulation) {
    let job = Rc::new(RefCell::new(Job {
        id,
        sim: Some(sim),
        stop: false,
        chunk: FIRST_CHUNK,
        last_report: now_ms(),
    }));
    CURRENT.set(Some(job.clone()));
    queue_task(move || slice(job));
}

/// Runs `task` in a fresh macrotask, without the 4 ms clamp of nested `setTimeout(0)`
/// (in a worker or on the page).
pub(crate) fn queue_task(task: impl FnOnce() + 'static) {
    let Ok(channel) = web_sys::MessageChannel::new() else {
        return; // No channel means the worker or page is going away; the work ends with it.
    };
    let next = Closure::once_into_js(task);
    channel.port1().set_onmessage(Some(next.unchecked_ref()));
    let _ = channel.port2().post_message(&JsValue::NULL);
}

fn slice(job: Rc<RefCell<Job>>) {
    // Replaced (the warm-up, by a job): it ends here.
    if !CURRENT.with_borrow(|c| c.as_ref().is_some_and(|c| Rc::ptr_eq(c, &job))) {
        return;
    }
    let mut guard = job.borrow_mut();
    let j = &mut *guard;
    if j.stop {
        finish(&job, j, true);
        return;
    }
    let Some(sim) = j.sim.as_mut() else {
        return;
    };
    let start = now_ms();
    let mut progress = sim.progress();
    while !progress.finished {
        let t0 = now_ms();
        progress = sim.advance(j.chunk);
        let t1 = now_ms();
        // Aim for chunks of a quarter budget; change by at most ×2 per step.
        let took = (t1 - t0).max(0.05);
        let ideal = j.chunk as f64 * (SLICE_BUDGET_MS / 4.0) / took;
        j.chunk = ideal
            .clamp(j.chunk as f64 / 2.0, j.chunk as f64 * 2.0)
            .max(16.0) as u64;
        if t1 - start >= SLICE_BUDGET_MS {
            break;
        }
    }
    if progress.finished {
        finish(&job, j, false);
        return;
    }
    let now = now_ms();
    if now - j.last_report >= REPORT_EVERY_MS && j.id != WARM_UP {
        j.last_report = now;
        post(&FromWorker::Progress {
            job: j.id,
            progress: Progress::from(progress),
        });
    }
    drop(guard);
    queue_task(move || slice(job));
}

/// Sends the job's results and forgets it (its simulation is freed with it).
fn finish(job: &Rc<RefCell<Job>>, j: &mut Job, stopped: bool) {
    let Some(sim) = j.sim.take() else {
        return;
    };
    let results = ResultParts::of(&sim.finish());
    post(&if j.id == WARM_UP {
        FromWorker::WarmedUp { results }
    } else {
        FromWorker::Done {
            job: j.id,
            stopped,
            results,
        }
    });
    CURRENT.with_borrow_mut(|current| {
        if current.as_ref().is_some_and(|c| Rc::ptr_eq(c, job)) {
            *current = None;
        }
    });
    if j.id == WARM_UP {
        queue_task(warm_up);
    }
}
