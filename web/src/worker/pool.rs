//! On the page: a pool of simulation workers, up to one per core
//! (`navigator.hardwareConcurrency`), so the page's thread only draws and several runs
//! (a sweep's) go in parallel.
//!
//! [`submit`] a scenario and get its events ([`RunEvent`]) on a callback; the returned
//! [`RunTicket`] stops it. Jobs beyond the pool's size wait in submission order. Workers
//! are started on demand and kept for the next job.

use super::protocol::{object, FromWorker, ToWorker};
use super::runner::{now_ms, queue_task};
use crate::sorted_map::SortedMap;
use crate::state::{EngineResults, Progress};
use gloo_events::{EventListener, EventListenerOptions};
use opal::simulation::{ResultsReader, SimulationResults, WireError};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use wasm_bindgen::JsCast;
use yew::Callback;

/// The most workers a page starts, whatever the core count says.
const MAX_WORKERS: usize = 16;
/// The worker script (`web/worker.js`, copied next to `index.html`).
const WORKER_SCRIPT: &str = "worker.js";
/// The global under which `index.html` leaves the worker it started with the page.
const FIRST_WORKER: &str = "opalFirstWorker";

/// What a submitted run reports, in order: any number of `Progress`, then one of the others.
#[derive(Debug, Clone)]
pub enum RunEvent {
    /// How far it has got.
    Progress(Progress),
    /// It ended: ran to its end, or (`stopped`) was stopped and these are what it reached.
    Finished {
        /// Its results.
        results: EngineResults,
        /// Stopped before its end.
        stopped: bool,
    },
    /// It could not run (the engine's problems with the scenario, or a broken worker).
    Failed(String),
}

/// A submitted run; [`RunTicket::cancel`] stops it. Dropping the ticket does not stop it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunTicket {
    job: u64,
}

impl RunTicket {
    /// Stops the run: a running one reports `Finished { stopped: true }` with what it
    /// reached; a waiting one reports `Failed` and never starts.
    pub fn cancel(self) {
        POOL.with_borrow_mut(|pool| pool.cancel(self.job));
    }
}

/// Runs `scenario` (with the data files it names, by file name) in a worker; `on_event`
/// hears how it goes.
pub fn submit(
    scenario: String,
    files: Vec<(String, String)>,
    on_event: Callback<RunEvent>,
) -> RunTicket {
    if let Some(early) = EARLY.take() {
        if files.is_empty() && early.scenario == scenario {
            return early.adopt(on_event);
        }
        early.ticket.cancel();
    }
    let job = POOL.with_borrow_mut(|pool| {
        pool.next_job += 1;
        let job = pool.next_job;
        pool.listeners.insert(job, on_event);
        pool.waiting.push_back(ToWorker::Start {
            job,
            scenario,
            files,
        });
        job
    });
    pump();
    RunTicket { job }
}

/// Submits `scenario` (with no data files) before the page has drawn: the first
/// [`submit`] of the same scenario adopts the run and hears its events from the start; a
/// different first submission stops it. For a share link, whose run would otherwise start
/// only after the first render.
pub fn submit_early(scenario: String) {
    let events: Rc<RefCell<Vec<RunEvent>>> = Rc::default();
    let heard = events.clone();
    let on_event = Callback::from(move |e| heard.borrow_mut().push(e));
    let ticket = submit(scenario.clone(), Vec::new(), on_event);
    EARLY.set(Some(Early {
        scenario,
        ticket,
        events,
    }));
}

/// A run submitted by [`submit_early`], its events kept until it is adopted.
struct Early {
    scenario: String,
    ticket: RunTicket,
    events: Rc<RefCell<Vec<RunEvent>>>,
}

impl Early {
    /// Hands the run to `on_event`: the events so far, then (if it is still going) the
    /// rest. In a task of its own, as a listener is never called from `submit`.
    fn adopt(self, on_event: Callback<RunEvent>) -> RunTicket {
        let ticket = self.ticket;
        super::runner::queue_task(move || {
            for event in self.events.take() {
                on_event.emit(event);
            }
            POOL.with_borrow_mut(|pool| {
                if let Some(listener) = pool.listeners.get_mut(&ticket.job) {
                    *listener = on_event;
                }
            });
        });
        ticket
    }
}

/// Readies one worker ahead of the first run (the one `index.html` started, if any), so a
/// run (a share link's, or the first Run) does not wait for a worker to start.
pub fn warm_up() {
    POOL.with_borrow_mut(|pool| {
        if pool.slots.is_empty() {
            pool.next_slot += 1;
            if let Ok(slot) = spawn(pool.next_slot) {
                let _ = slot.worker.post_message(&ToWorker::WarmUp.to_js());
                pool.slots.push(slot);
            }
        }
    });
}

/// How many runs can go at once: the page's core count, at least 1.
pub fn capacity() -> usize {
    let cores = web_sys::window().map_or(1.0, |w| w.navigator().hardware_concurrency());
    (cores as usize).clamp(1, MAX_WORKERS)
}

struct Slot {
    id: u64,
    worker: web_sys::Worker,
    /// The job it runs, if any.
    job: Option<u64>,
    /// Its `message` and `error` listeners, removed with the slot.
    _listeners: [EventListener; 2],
}

#[derive(Default)]
struct Pool {
    slots: Vec<Slot>,
    waiting: VecDeque<ToWorker>,
    /// Each job's listener, by job number.
    listeners: SortedMap<u64, Callback<RunEvent>>,
    next_job: u64,
    next_slot: u64,
}

thread_local! {
    static POOL: RefCell<Pool> = RefCell::new(Pool::default());
    static EARLY: RefCell<Option<Early>> = const { RefCell::new(None) };
}

impl Pool {
    fn cancel(&mut self, job: u64) {
        let before = self.waiting.len();
        self.waiting
            .retain(|m| !matches!(m, ToWorker::Start { job: j, .. } if *j == job));
        if self.waiting.len() < before {
            if let Some(listener) = self.listeners.remove(&job) {
                listener.emit(RunEvent::Failed("stopped before it started".into()));
            }
        } else if let Some(slot) = self.slots.iter().find(|s| s.job == Some(job)) {
            let _ = slot.worker.post_message(&ToWorker::Stop { job }.to_js());
        }
    }
}

/// Hands waiting jobs to idle workers, starting workers up to [`capacity`].
fn pump() {
    // Listeners are called outside the borrow: a listener may submit or cancel.
    let mut failures = Vec::new();
    POOL.with_borrow_mut(|pool| {
        while let Some(next) = pool.waiting.pop_front() {
            let ToWorker::Start { job, .. } = next else {
                continue;
            };
            let idle = match pool.slots.iter().position(|s| s.job.is_none()) {
                Some(i) => Some(i),
                None if pool.slots.len() < capacity() => {
                    pool.next_slot += 1;
                    match spawn(pool.next_slot) {
                        Ok(slot) => {
                            pool.slots.push(slot);
                            Some(pool.slots.len() - 1)
                        }
                        Err(message) => {
                            failures.extend(pool.listeners.remove(&job).map(|l| (l, message)));
                            continue;
                        }
                    }
                }
                None => None,
            };
            let Some(i) = idle else {
                pool.waiting.push_front(next);
                break;
            };
            pool.slots[i].job = Some(job);
            let _ = pool.slots[i].worker.post_message(&next.to_js());
        }
    });
    for (listener, message) in failures {
        listener.emit(RunEvent::Failed(message));
    }
}

/// The URL of the app's JS bindings, which Trunk preloads.
fn bindings_url() -> Result<String, String> {
    web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.query_selector("link[rel=modulepreload]").ok().flatten())
        .and_then(|el| el.dyn_into::<web_sys::HtmlLinkElement>().ok())
        .map(|link| link.href())
        .ok_or_else(|| "the page does not name its wasm bindings".to_string())
}

/// The worker `index.html` started with the page (see there), once: the first slot adopts it.
fn first_worker() -> Option<web_sys::Worker> {
    let window = web_sys::window()?;
    let key = wasm_bindgen::JsValue::from_str(FIRST_WORKER);
    let worker = js_sys::Reflect::get(&window, &key).ok()?.dyn_into().ok()?;
    let _ = js_sys::Reflect::delete_property(&window, &key);
    Some(worker)
}

fn spawn(id: u64) -> Result<Slot, String> {
    let glue = bindings_url()?;
    let worker = match first_worker() {
        Some(worker) => worker,
        None => {
            let options = web_sys::WorkerOptions::new();
            options.set_type(web_sys::WorkerType::Module);
            web_sys::Worker::new_with_options(WORKER_SCRIPT, &options)
                .map_err(|e| format!("cannot start a simulation worker: {e:?}"))?
        }
    };
    let on_message = EventListener::new(&worker, "message", move |e| {
        let data = e.unchecked_ref::<web_sys::MessageEvent>().data();
        if let Some(message) = FromWorker::from_js(&data) {
            on_worker_message(id, message);
        }
    });
    // Not passive: handled here, the crash is not also reported as the page's error.
    let on_error = EventListener::new_with_options(
        &worker,
        "error",
        EventListenerOptions::enable_prevent_default(),
        move |e| {
            e.prevent_default();
            let detail = e
                .dyn_ref::<web_sys::ErrorEvent>()
                .map(|e| e.message())
                .unwrap_or_default();
            on_worker_message(
                id,
                FromWorker::Broken {
                    message: format!("the simulation worker crashed: {detail}"),
                },
            );
        },
    );
    // The module the page compiled: the worker instantiates it without fetching or compiling.
    let init = object(&[
        ("kind", "init".into()),
        ("glue", glue.into()),
        ("module", wasm_bindgen::module()),
    ]);
    worker
        .post_message(&init)
        .map_err(|e| format!("cannot start a simulation worker: {e:?}"))?;
    Ok(Slot {
        id,
        worker,
        job: None,
        _listeners: [on_message, on_error],
    })
}

/// Runs `f` once a worker first answers the page (any message: it has the page's first
/// messages) or after `at_most_ms`, whichever is first. Messages to a worker whose script
/// has not run yet wait on the page's thread, so a long task there (the first render)
/// would hold back a share link's run; the page renders once the run is in the worker.
pub fn when_listening(at_most_ms: u32, f: impl FnOnce() + 'static) {
    let f: PendingOnce = Rc::new(RefCell::new(Some(Box::new(f))));
    let timed_out = f.clone();
    let timeout = gloo_timers::callback::Timeout::new(at_most_ms, move || {
        if let Some(f) = timed_out.take() {
            f();
        }
    });
    LISTENING.set(Some((f, timeout)));
}

thread_local! {
    /// [`when_listening`]'s callback, and its time limit (cancelled when a worker answers).
    static LISTENING: RefCell<Option<Listening>> = const { RefCell::new(None) };
}

/// A callback to run at most once, from whichever of two places comes first.
type PendingOnce = Rc<RefCell<Option<Box<dyn FnOnce()>>>>;
type Listening = (PendingOnce, gloo_timers::callback::Timeout);

fn on_worker_message(slot_id: u64, message: FromWorker) {
    if let Some((f, timeout)) = LISTENING.take() {
        timeout.cancel();
        if let Some(f) = f.take() {
            f();
        }
    }
    let (job, event) = match message {
        FromWorker::Progress { job, progress } => (job, RunEvent::Progress(progress)),
        // A large run's results are read a slice at a time, the page drawing between
        // slices; the worker is free for the next job meanwhile.
        FromWorker::Done {
            job,
            stopped,
            results,
        } if results.len() > SLICED_DECODE_BYTES => {
            release(slot_id);
            pump();
            match results.reader() {
                Ok(reader) => decode_in_slices(reader, move |decoded| {
                    finish(job, finished(decoded, stopped));
                }),
                Err(e) => finish(job, RunEvent::Failed(e.to_string())),
            }
            return;
        }
        FromWorker::Done {
            job,
            stopped,
            results,
        } => (job, finished(results.decode(), stopped)),
        FromWorker::Failed { job, message } => (job, RunEvent::Failed(message)),
        FromWorker::Listening => return,
        // Decoded once while idle, so the first run's results decode on warm code.
        FromWorker::WarmedUp { results } => {
            let _ = results.decode().map(EngineResults::new);
            return;
        }
        FromWorker::Broken { message } => {
            // Its job fails and the worker goes; the next job gets a fresh one.
            let job = POOL.with_borrow_mut(|pool| {
                let i = pool.slots.iter().position(|s| s.id == slot_id)?;
                let slot = pool.slots.remove(i);
                slot.worker.terminate();
                slot.job
            });
            if let Some(job) = job {
                finish(job, RunEvent::Failed(message));
            }
            pump();
            return;
        }
    };
    if matches!(event, RunEvent::Progress(_)) {
        let listener = POOL.with_borrow(|pool| pool.listeners.get(&job).cloned());
        if let Some(listener) = listener {
            listener.emit(event);
        }
        return;
    }
    release(slot_id);
    finish(job, event);
    pump();
}

/// Results bigger than this are read in slices (smaller ones, most runs, at once).
const SLICED_DECODE_BYTES: usize = 4 << 20;
/// Records read between two looks at the clock.
const DECODE_STEP: usize = 20_000;
/// Reading per slice, ms: the page draws between slices.
const DECODE_SLICE_MS: f64 = 40.0;

/// Reads `reader`'s results in macrotasks of about [`DECODE_SLICE_MS`], then hands them on.
fn decode_in_slices(
    mut reader: ResultsReader<'static>,
    done: impl FnOnce(Result<SimulationResults, WireError>) + 'static,
) {
    let start = now_ms();
    loop {
        match reader.step(DECODE_STEP) {
            Err(e) => return done(Err(e)),
            Ok(true) => return done(reader.finish()),
            Ok(false) if now_ms() - start >= DECODE_SLICE_MS => break,
            Ok(false) => {}
        }
    }
    queue_task(move || decode_in_slices(reader, done));
}

/// A finished job's event from its decoded results.
fn finished(decoded: Result<SimulationResults, WireError>, stopped: bool) -> RunEvent {
    match decoded {
        Ok(r) => RunEvent::Finished {
            results: EngineResults::new(r),
            stopped,
        },
        Err(e) => RunEvent::Failed(e.to_string()),
    }
}

/// Worker slot `slot_id` has no job any more.
fn release(slot_id: u64) {
    POOL.with_borrow_mut(|pool| {
        if let Some(slot) = pool.slots.iter_mut().find(|s| s.id == slot_id) {
            slot.job = None;
        }
    });
}

/// Delivers a job's last event and forgets its listener.
fn finish(job: u64, event: RunEvent) {
    let listener = POOL.with_borrow_mut(|pool| pool.listeners.remove(&job));
    if let Some(listener) = listener {
        listener.emit(event);
    }
}
