//! The sweep panel, shown when the scenario has a `sweep`: runs its points on the Web Worker
//! pool, in parallel (progress for the whole sweep, Stop), drawing each curve as points arrive (p99 TTFT with the SLO's bound,
//! goodput, attainment; one line per value of the second axis), the knee named, and the
//! same table the CLI prints (with each point's measured requests, and its verdict's caveat:
//! overloaded, or too short to judge).
//!
//! Its state (the points so far) is the panel's own: it is not part of the scenario, a
//! share link or a run, and nothing else reads it.

use crate::components::sweep_curves::{knees, Bounds, SweepCurves};
use crate::components::sweep_table::SweepTable;
use crate::files;
use crate::state::Scenario;
use crate::sweep_driver::{self, SweepCallbacks, SweepHandle};
use crate::worker::{self, runner::now_ms};
use opal::scenario::ScenarioData;
use opal::sweep::{SweepPlan, SweepPoint, SweepResults};
use serde_json::Value;
use std::rc::Rc;
use yew::prelude::*;

/// Props of [`SweepPanel`].
#[derive(Properties, PartialEq, Clone)]
pub struct SweepPanelProps {
    /// The scenario (the panel shows only when it has a `sweep`).
    pub scenario: Scenario,
    /// The data files picked, by name.
    pub data_files: Rc<crate::state::DataFiles>,
    /// Why a sweep cannot start now (a form field shows a value that is not valid).
    #[prop_or_default]
    pub held: Option<AttrValue>,
}

#[derive(Default, PartialEq, Clone)]
struct SweepState {
    /// Finished points, in index order.
    points: Vec<SweepPoint>,
    running: bool,
    /// Points done, counting running runs' fractions.
    progress: f64,
    /// When it started (`performance.now()`, ms), and how long it took once over, s.
    started_ms: f64,
    took_s: Option<f64>,
    stopped: bool,
    error: Option<String>,
}

enum SweepAction {
    Start,
    Points(Vec<SweepPoint>),
    Progress(f64),
    /// Stop was pressed (the sweep then ends).
    Stop,
    End(Option<String>),
    /// Something the panel could not do (a download).
    Failed(String),
}

impl Reducible for SweepState {
    type Action = SweepAction;

    fn reduce(self: Rc<Self>, action: SweepAction) -> Rc<Self> {
        let mut s = Rc::unwrap_or_clone(self);
        match action {
            SweepAction::Start => {
                s = SweepState {
                    running: true,
                    started_ms: now_ms(),
                    ..Default::default()
                }
            }
            SweepAction::Points(points) => {
                // Points finish in any order; the table and curves read them by index.
                s.points.extend(points);
                s.points.sort_by_key(|p| p.index);
            }
            SweepAction::Progress(done) => s.progress = done,
            SweepAction::Stop => s.stopped = true,
            SweepAction::Failed(message) => s.error = Some(message),
            SweepAction::End(error) => {
                s.running = false;
                s.took_s = Some((now_ms() - s.started_ms) / 1000.0);
                s.error = error;
            }
        }
        Rc::new(s)
    }
}

/// What the panel needs from the scenario: the sweep's header, the first axis' values
/// (numbers, for the x axis), how many curves, and the SLO's latency bounds.
#[derive(PartialEq)]
struct Shape {
    plan_header: opal::sweep::SweepHeader,
    x: Option<Rc<[f64]>>,
    x_label: AttrValue,
    curves: usize,
    bounds: Bounds,
    has_slo: bool,
}

fn shape(text: &str) -> Option<Shape> {
    let scenario = opal::parse_scenario(text).ok()?;
    let sweep = scenario.sweep.clone()?;
    let plan = SweepPlan::new(&scenario, ScenarioData::new()).ok()?;
    let first = sweep.vary.first();
    let x = first.and_then(|a| {
        a.points()
            .iter()
            .map(Value::as_f64)
            .collect::<Option<Rc<[f64]>>>()
    });
    let per_x: usize = sweep
        .vary
        .iter()
        .skip(1)
        .map(|a| a.points().len())
        .product();
    let bound = |t: &Option<opal::slo::Target>| t.as_ref().map(|t| (t.max, t.p));
    let bounds = scenario
        .slo
        .as_ref()
        .map_or_else(Bounds::default, |s| Bounds {
            ttft: bound(&s.ttft_ms),
            tpot: bound(&s.tpot_ms),
            e2e: bound(&s.e2e_ms),
        });
    Some(Shape {
        plan_header: plan.header(),
        x,
        x_label: first.map_or_else(String::new, |a| a.path.clone()).into(),
        curves: per_x.max(1),
        bounds,
        has_slo: scenario.slo.is_some(),
    })
}

/// The sweep form's companion: Run sweep / Stop, progress, curves, knee and table.
#[function_component(SweepPanel)]
pub fn sweep_panel(props: &SweepPanelProps) -> Html {
    let state = use_reducer(SweepState::default);
    let handle = use_mut_ref(|| None::<SweepHandle>);
    let text = props.scenario.text.clone();
    // Reading the scenario whole is the costly part of an edit of a long document: only
    // one the engine accepts and that has a sweep is read here.
    let has_sweep = props.scenario.is_runnable()
        && props
            .scenario
            .document
            .as_ref()
            .is_some_and(|d| d.get("sweep").is_some());
    let shape = use_memo((text.clone(), has_sweep), |(t, has)| {
        has.then(|| shape(t)).flatten()
    });
    let Some(shape) = &*shape else {
        return html! {};
    };
    let total = shape.plan_header.total_points;
    let start = {
        let (state, handle, files) = (state.clone(), handle.clone(), props.data_files.clone());
        Callback::from(move |_: MouseEvent| {
            if let Some(h) = handle.borrow_mut().take() {
                h.cancel();
            }
            state.dispatch(SweepAction::Start);
            let files: Vec<(String, String)> = files
                .iter()
                .map(|(n, t)| (n.clone(), t.to_string()))
                .collect();
            let (s1, s2, s3) = (state.clone(), state.clone(), state.clone());
            let callbacks = SweepCallbacks {
                on_points: Callback::from(move |p| s1.dispatch(SweepAction::Points(p))),
                on_progress: Callback::from(move |d| s2.dispatch(SweepAction::Progress(d))),
                on_end: Callback::from(move |e| s3.dispatch(SweepAction::End(e))),
            };
            *handle.borrow_mut() = Some(sweep_driver::start(&text, files, callbacks));
        })
    };
    let stop = {
        let (state, handle) = (state.clone(), handle.clone());
        Callback::from(move |_: MouseEvent| {
            state.dispatch(SweepAction::Stop);
            if let Some(h) = handle.borrow().as_ref() {
                h.cancel();
            }
        })
    };
    let results = SweepResults {
        header: shape.plan_header.clone(),
        shard: None,
        points: state.points.clone(),
    };
    // Written when asked for, not at every progress update.
    let download = |name: &'static str, mime: &'static str, text: fn(&SweepResults) -> String| {
        let (state, results) = (state.clone(), results.clone());
        Callback::from(move |_: MouseEvent| {
            if let Err(message) = files::download_text(name, mime, &text(&results)) {
                state.dispatch(SweepAction::Failed(message));
            }
        })
    };
    let complete = !state.running && state.points.len() == total;
    let done = state.points.len();
    let status = match state.took_s {
        Some(s) if state.stopped => format!("{done} of {total} points; stopped after {s:.1} s"),
        Some(s) => format!(
            "{done} of {total} points in {s:.1} s on {} workers",
            worker::capacity().min(total)
        ),
        None => format!("{done} of {total} points"),
    };
    html! {
        <section class="sweep" data-testid="sweep-panel">
            <h3>{ format!("Sweep: {total} runs") }</h3>
            <div class="results-toolbar">
                if state.running {
                    <button onclick={stop} data-testid="stop-sweep">{ "Stop sweep" }</button>
                } else {
                    <button onclick={start} data-testid="run-sweep" disabled={props.held.is_some()}
                        aria-describedby={props.held.is_some().then_some("sweep-held")}>{ "Run sweep" }</button>
                }
                <progress max={total.to_string()} value={state.progress.max(done as f64).to_string()}
                    aria-label="Sweep progress" data-testid="sweep-progress" />
                <span data-testid="sweep-status"
                    data-seconds={state.took_s.map(|s| s.to_string())}>{ status }</span>
                if let Some(held) = &props.held {
                    <span class="field-error" id="sweep-held" data-testid="sweep-held">{ held }</span>
                }
                if complete {
                    <button onclick={download("sweep.json", "application/json", SweepResults::to_json)}
                        data-testid="sweep-json">{ "Sweep JSON" }</button>
                    <button onclick={download("sweep.csv", "text/csv", SweepResults::to_csv)}
                        data-testid="sweep-csv">{ "Sweep CSV" }</button>
                }
            </div>
            if let Some(e) = &state.error {
                <p class="run-failed" role="alert">{ e }</p>
            }
            <SweepCurves points={Rc::<[SweepPoint]>::from(state.points.clone())}
                axis={shape.x_label.clone()} axis_values={shape.x.clone()}
                curves={shape.curves} bounds={shape.bounds} has_slo={shape.has_slo} />
            { knee_list(shape, &results) }
            <SweepTable {results} />
        </section>
    }
}

fn knee_list(shape: &Shape, r: &SweepResults) -> Html {
    if shape.x.is_none() {
        return html! {};
    }
    let items: Vec<Html> = knees(&r.points, shape.curves)
        .into_iter()
        .map(|(label, p)| {
            let at = p.values.first().map(SweepResults::label).unwrap_or_default();
            let name = if label.is_empty() { "the curve".to_string() } else { label };
            html! {
                <li data-testid="sweep-knee">{ format!(
                    "Knee of {name}: {} = {at}, the last point meeting the SLO before it is missed (or overloaded).",
                    shape.x_label) }</li>
            }
        })
        .collect();
    html! { <ul class="knees">{ for items }</ul> }
}
