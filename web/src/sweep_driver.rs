//! Runs a scenario's sweep on the Web Worker pool ([`crate::worker`]): points are begun in
//! order, two per worker at a time (the pool runs one per core, the next waits), and a
//! search's probes follow one another, each in a worker. The page only steps the searches
//! and reads each run's figures ([`PointRun`], the engine's own loop of
//! [`SweepPlan::run_point`]), so a point's numbers are the CLI's, bit for bit: the worker
//! reads the same scenario text and sends its results back as exact bytes.

use crate::run_driver::describe_problems;
use crate::worker::runner::{now_ms, queue_task};
use crate::worker::{self, RunEvent, RunTicket};
use opal::scenario::ScenarioData;
use opal::sweep::{PointRun, PointStep, SweepPlan, SweepPoint};
use std::cell::RefCell;
use std::rc::{Rc, Weak};
use yew::Callback;

/// How often a running sweep reports, ms, at most. Reported at every point, a sweep of a
/// thousand short runs redrew its thousand-row table a thousand times, and the workers
/// waited on the page's thread between runs.
pub const REPORT_EVERY_MS: u32 = 100;
/// Points begun at a time, per worker: one running and one waiting to, so that a worker
/// that finishes finds its next run at once. Begun all at once, the points of a large
/// sweep held the page's thread before its first run started.
const IN_FLIGHT_PER_WORKER: usize = 2;
/// A report waits at least this many times as long as the last one took to draw, so the
/// page's thread stays mostly free to hand the workers their next runs however long the
/// sweep's table and curves grow.
const REPORT_GAP_PER_DRAW: f64 = 3.0;

/// What a running sweep reports.
#[derive(Clone)]
pub struct SweepCallbacks {
    /// Points finished since the last call (in any order), at most every
    /// [`REPORT_EVERY_MS`], and less often while drawing them takes long: the panel redraws
    /// its table and curves at each call.
    pub on_points: Callback<Vec<SweepPoint>>,
    /// Points done so far, counting the running runs' fractions (0 to the point count), with
    /// the points.
    pub on_progress: Callback<f64>,
    /// The sweep is over: an error message when it could not start, else `None`.
    pub on_end: Callback<Option<String>>,
}

/// Keeps a sweep going; [`SweepHandle::cancel`] stops every run it has in the pool.
pub struct SweepHandle {
    sweep: Option<Rc<RefCell<Sweep>>>,
}

impl SweepHandle {
    /// Stops the sweep: waiting runs never start, running ones stop; no point is reported
    /// after this, and `on_end(None)` is.
    pub fn cancel(&self) {
        let Some(sweep) = &self.sweep else {
            return;
        };
        let tickets: Vec<RunTicket> = {
            let mut s = sweep.borrow_mut();
            if s.over {
                return;
            }
            s.over = true;
            std::mem::take(&mut s.tickets)
                .into_iter()
                .flatten()
                .collect()
        };
        // Outside the borrow: cancelling a waiting run reports to its listener at once.
        tickets.into_iter().for_each(RunTicket::cancel);
        report(sweep);
        let on_end = sweep.borrow().callbacks.on_end.clone();
        on_end.emit(None);
    }
}

struct Sweep {
    plan: SweepPlan,
    files: Vec<(String, String)>,
    callbacks: SweepCallbacks,
    // A slot per point index rather than maps keyed by it: the wasm's BTreeMap code is
    // compiled once per key and value type.
    /// Points in progress, by index.
    points: Vec<Option<PointRun>>,
    /// The first point not begun yet.
    next_point: usize,
    /// Points finished and not reported yet.
    unreported: Vec<SweepPoint>,
    /// The next report, once one is due.
    report_due: Option<gloo_timers::callback::Timeout>,
    /// How long the last report took, drawing included, ms.
    report_cost_ms: f64,
    /// Each point's run in the pool.
    tickets: Vec<Option<RunTicket>>,
    /// How far each running run has got, 0 to 1.
    fractions: Vec<Option<f64>>,
    finished: usize,
    /// Cancelled or finished: events still arriving are ignored.
    over: bool,
}

/// Starts the sweep of `text` with the data `files` (by file name).
pub fn start(text: &str, files: Vec<(String, String)>, callbacks: SweepCallbacks) -> SweepHandle {
    let data: ScenarioData = files
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    let plan = match opal::parse_scenario(text).and_then(|s| SweepPlan::new(&s, data)) {
        Ok(plan) => plan,
        Err(problems) => {
            callbacks.on_end.emit(Some(describe_problems(&problems)));
            return SweepHandle { sweep: None };
        }
    };
    let n = plan.len();
    let sweep = Rc::new(RefCell::new(Sweep {
        plan,
        files,
        callbacks,
        points: (0..n).map(|_| None).collect(),
        next_point: 0,
        unreported: Vec::new(),
        report_due: None,
        report_cost_ms: 0.0,
        tickets: (0..n).map(|_| None).collect(),
        fractions: vec![None; n],
        finished: 0,
        over: false,
    }));
    for _ in 0..n.min(IN_FLIGHT_PER_WORKER * worker::capacity()) {
        begin_next(&sweep);
    }
    SweepHandle { sweep: Some(sweep) }
}

/// Puts `value` in slot `i` (every index the sweep uses has one).
fn set<T>(slots: &mut [Option<T>], i: usize, value: Option<T>) {
    if let Some(slot) = slots.get_mut(i) {
        *slot = value;
    }
}

/// Begins the first point not begun yet, if the sweep goes on and has one.
fn begin_next(sweep: &Rc<RefCell<Sweep>>) {
    let i = {
        let mut s = sweep.borrow_mut();
        let i = s.next_point;
        if s.over || i >= s.plan.len() {
            return;
        }
        s.next_point += 1;
        let point = s.plan.begin_point(i);
        set(&mut s.points, i, Some(point));
        i
    };
    step(sweep, i);
}

/// Moves point `i` on: submits its next run, or reports it finished.
fn step(sweep: &Rc<RefCell<Sweep>>, i: usize) {
    let mut s = sweep.borrow_mut();
    let Sweep {
        plan,
        points,
        files,
        ..
    } = &mut *s;
    let Some(point) = points.get_mut(i).and_then(Option::as_mut) else {
        return;
    };
    match point.next(plan) {
        PointStep::Run(run) => {
            let (text, files) = (run.text.clone(), files.clone());
            drop(s);
            // The pool may report a failure at once: no borrow is held across `submit`.
            let ticket = worker::submit(text, files, on_event(Rc::downgrade(sweep), i));
            let mut s = sweep.borrow_mut();
            if !s.over && s.points.get(i).is_some_and(Option::is_some) {
                set(&mut s.tickets, i, Some(ticket));
            }
        }
        PointStep::Done(p) => {
            set(&mut s.points, i, None);
            s.finished += 1;
            s.unreported.push(*p);
            let all = s.finished == s.plan.len();
            s.over |= all;
            drop(s);
            if all {
                report(sweep);
                let on_end = sweep.borrow().callbacks.on_end.clone();
                on_end.emit(None);
            } else {
                report_soon(sweep);
                // In a task of its own: a point can end at once (its run refused), and
                // beginning the next one here would recurse through every point.
                let weak = Rc::downgrade(sweep);
                queue_task(move || {
                    if let Some(sweep) = weak.upgrade() {
                        begin_next(&sweep);
                    }
                });
            }
        }
    }
}

/// Reports the points finished since the last report, and the progress.
fn report(sweep: &Rc<RefCell<Sweep>>) {
    let started = now_ms();
    let mut s = sweep.borrow_mut();
    s.report_due = None;
    let points = std::mem::take(&mut s.unreported);
    let done = s.finished as f64 + s.fractions.iter().flatten().sum::<f64>();
    let callbacks = s.callbacks.clone();
    drop(s);
    if !points.is_empty() {
        callbacks.on_points.emit(points);
    }
    callbacks.on_progress.emit(done);
    // The panel draws in this task's microtasks: the next task sees what it cost.
    let weak = Rc::downgrade(sweep);
    queue_task(move || {
        if let Some(sweep) = weak.upgrade() {
            sweep.borrow_mut().report_cost_ms = now_ms() - started;
        }
    });
}

/// Makes sure a report comes: after [`REPORT_EVERY_MS`], or [`REPORT_GAP_PER_DRAW`] times
/// what the last one took if longer.
fn report_soon(sweep: &Rc<RefCell<Sweep>>) {
    let mut s = sweep.borrow_mut();
    if s.report_due.is_some() {
        return;
    }
    let weak = Rc::downgrade(sweep);
    let gap = f64::from(REPORT_EVERY_MS).max(REPORT_GAP_PER_DRAW * s.report_cost_ms);
    s.report_due = Some(gloo_timers::callback::Timeout::new(
        gap.min(f64::from(u32::MAX)) as u32,
        move || {
            if let Some(sweep) = weak.upgrade() {
                report(&sweep);
            }
        },
    ));
}

/// What point `i`'s run in the pool reports to.
fn on_event(sweep: Weak<RefCell<Sweep>>, i: usize) -> Callback<RunEvent> {
    Callback::from(move |event: RunEvent| {
        let Some(sweep) = sweep.upgrade() else {
            return;
        };
        let mut s = sweep.borrow_mut();
        if s.over {
            return;
        }
        let result = match event {
            RunEvent::Progress(p) => {
                set(&mut s.fractions, i, Some(p.fraction.unwrap_or(0.0)));
                drop(s);
                report_soon(&sweep);
                return;
            }
            RunEvent::Finished { stopped: true, .. } => Err("the run was stopped".to_string()),
            RunEvent::Finished { results, .. } => Ok(results),
            RunEvent::Failed(message) => Err(message),
        };
        set(&mut s.tickets, i, None);
        set(&mut s.fractions, i, None);
        if let Some(point) = s.points.get_mut(i).and_then(Option::as_mut) {
            point.record(result.as_ref().map(|r| &*r.0).map_err(String::clone));
        }
        drop(s);
        step(&sweep, i);
    })
}
