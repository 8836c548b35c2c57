//! The sweep panel, shown when the scenario has a `sweep`: runs its points in the tab, one
//! after another, drawing each curve as points arrive (p99 TTFT with the SLO's bound,
//! goodput, attainment; one line per value of the second axis), the knee named, and the
//! same table the CLI prints.
//!
//! Its state (the points so far) is the panel's own: it is not part of the scenario, a
//! share link or a run, and nothing else reads it.

use crate::charts::{LineChart, LineRun, Series, Unit};
use crate::state::Scenario;
use crate::sweep_driver::{self, SweepHandle};
use engine::scenario::ScenarioData;
use engine::sweep::{SweepPlan, SweepPoint, SweepResults};
use serde_json::Value;
use std::collections::BTreeMap;
use std::rc::Rc;
use yew::prelude::*;

/// Props of [`SweepPanel`].
#[derive(Properties, PartialEq, Clone)]
pub struct SweepPanelProps {
    /// The scenario (the panel shows only when it has a `sweep`).
    pub scenario: Scenario,
    /// The data files picked, by name.
    pub data_files: Rc<BTreeMap<String, Rc<str>>>,
}

#[derive(Default, PartialEq, Clone)]
struct SweepState {
    points: Vec<SweepPoint>,
    running: bool,
    error: Option<String>,
}

enum SweepAction {
    Start,
    Point(Box<SweepPoint>),
    End(Option<String>),
}

impl Reducible for SweepState {
    type Action = SweepAction;

    fn reduce(self: Rc<Self>, action: SweepAction) -> Rc<Self> {
        let mut s = Rc::unwrap_or_clone(self);
        match action {
            SweepAction::Start => {
                s = SweepState {
                    running: true,
                    ..Default::default()
                }
            }
            SweepAction::Point(p) => s.points.push(*p),
            SweepAction::End(error) => {
                s.running = false;
                s.error = error;
            }
        }
        Rc::new(s)
    }
}

/// What the panel needs from the scenario: the sweep's header, the first axis' values
/// (numbers, for the x axis), how many curves, and the SLO's TTFT bound.
#[derive(PartialEq)]
struct Shape {
    plan_header: engine::sweep::SweepHeader,
    x: Option<Vec<f64>>,
    x_label: String,
    curves: usize,
    ttft_bound: Option<f64>,
}

fn shape(text: &str) -> Option<Shape> {
    let scenario = engine::scenario::Scenario::parse(text).ok()?;
    let sweep = scenario.sweep.clone()?;
    let plan = SweepPlan::new(&scenario, ScenarioData::new()).ok()?;
    let first = sweep.vary.first();
    let x = first.and_then(|a| {
        a.points()
            .iter()
            .map(Value::as_f64)
            .collect::<Option<Vec<f64>>>()
    });
    let per_x: usize = sweep
        .vary
        .iter()
        .skip(1)
        .map(|a| a.points().len())
        .product();
    Some(Shape {
        plan_header: plan.header(),
        x,
        x_label: first.map_or_else(String::new, |a| a.path.clone()),
        curves: per_x.max(1),
        ttft_bound: scenario.slo.and_then(|s| s.ttft_ms).map(|t| t.max),
    })
}

/// The sweep form's companion: Run sweep / Stop, progress, curves, knee and table.
#[function_component(SweepPanel)]
pub fn sweep_panel(props: &SweepPanelProps) -> Html {
    let state = use_reducer(SweepState::default);
    let handle = use_mut_ref(|| None::<SweepHandle>);
    let text = props.scenario.text.clone();
    let shape = use_memo(text.clone(), |t| shape(t));
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
            let files: ScenarioData = files.iter().map(|(n, t)| (n.as_str(), &**t)).collect();
            let (s1, s2) = (state.clone(), state.clone());
            *handle.borrow_mut() = Some(sweep_driver::start(
                &text,
                files,
                Callback::from(move |p| s1.dispatch(SweepAction::Point(Box::new(p)))),
                Callback::from(move |e| s2.dispatch(SweepAction::End(e))),
            ));
        })
    };
    let stop = {
        let handle = handle.clone();
        Callback::from(move |_: MouseEvent| {
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
    html! {
        <section class="sweep" data-testid="sweep-panel">
            <h3>{ format!("Sweep: {total} runs") }</h3>
            <div class="results-toolbar">
                if state.running {
                    <button onclick={stop}>{ "Stop sweep" }</button>
                } else {
                    <button onclick={start} data-testid="run-sweep">{ "Run sweep" }</button>
                }
                <progress max={total.to_string()} value={state.points.len().to_string()}
                    aria-label="Sweep progress" data-testid="sweep-progress" />
                <span>{ format!("{} of {total} points", state.points.len()) }</span>
            </div>
            if let Some(e) = &state.error {
                <p class="run-failed" role="alert">{ e }</p>
            }
            { curves(shape, &results) }
            { knees(shape, &results) }
            { table(&results) }
        </section>
    }
}

/// One chart's series: per curve, the figure at each x (NaN until its point arrives).
fn series(shape: &Shape, r: &SweepResults, figure: impl Fn(&SweepPoint) -> f64) -> Vec<Series> {
    let n = shape.x.as_ref().map_or(0, Vec::len);
    let by_index: BTreeMap<usize, &SweepPoint> = r.points.iter().map(|p| (p.index, p)).collect();
    let names: Vec<String> = (0..shape.curves)
        .map(|c| {
            by_index
                .get(&c)
                .map(|p| {
                    let rest: Vec<String> =
                        p.values.iter().skip(1).map(SweepResults::label).collect();
                    rest.join(", ")
                })
                .filter(|l| !l.is_empty())
                .unwrap_or_else(|| "all".into())
        })
        .collect();
    names
        .into_iter()
        .enumerate()
        .map(|(c, name)| Series {
            name: name.into(),
            values: (0..n)
                .map(|j| {
                    by_index
                        .get(&(j * shape.curves + c))
                        .map_or(f64::NAN, |p| figure(p))
                })
                .collect(),
        })
        .collect()
}

fn curves(shape: &Shape, r: &SweepResults) -> Html {
    let Some(x) = &shape.x else {
        return html! {};
    };
    let x: Rc<[f64]> = x.clone().into();
    let run = |series: Vec<Series>| LineRun {
        label: "sweep".into(),
        x: x.clone(),
        series: series.into(),
    };
    let metric = |f: fn(&engine::sweep::PointMetrics) -> f64| {
        move |p: &SweepPoint| p.metrics.as_ref().map_or(f64::NAN, f)
    };
    let mut ttft = series(shape, r, metric(|m| m.ttft.p99_ms));
    if let Some(bound) = shape.ttft_bound {
        ttft.push(Series {
            name: format!("SLO bound {bound} ms").into(),
            values: x.iter().map(|_| bound).collect(),
        });
    }
    let slo = |f: fn(&engine::slo::SloSummary) -> f64| {
        move |p: &SweepPoint| {
            p.metrics
                .as_ref()
                .and_then(|m| m.slo.as_ref())
                .map_or(f64::NAN, f)
        }
    };
    let markers = knee_markers(r);
    html! {
        <div class="charts" data-testid="sweep-curves">
            <LineChart title={format!("P99 TTFT vs {}", shape.x_label)} run={run(ttft)}
                x_unit={Unit::Count} x_label={shape.x_label.clone()} y_unit={Unit::Millis}
                markers={markers.clone()} />
            <LineChart title={format!("Goodput (req/s) vs {}", shape.x_label)}
                run={run(series(shape, r, slo(|s| s.goodput_rps)))} x_unit={Unit::Count}
                x_label={shape.x_label.clone()} markers={markers.clone()} />
            <LineChart title={format!("SLO attainment vs {}", shape.x_label)}
                run={run(series(shape, r, slo(|s| s.attainment)))} x_unit={Unit::Count}
                x_label={shape.x_label.clone()} y_unit={Unit::Percent} {markers} />
        </div>
    }
}

/// Each curve's label and its knee's point (curves without a knee left out).
fn knee_points(r: &SweepResults) -> Vec<(String, &SweepPoint)> {
    let by_index: BTreeMap<usize, &SweepPoint> = r.points.iter().map(|p| (p.index, p)).collect();
    r.knees()
        .into_iter()
        .filter_map(|(label, knee)| Some((label, *by_index.get(&knee?)?)))
        .collect()
}

/// Each curve's knee as a mark on the x axis: where the first axis stands at the knee.
fn knee_markers(r: &SweepResults) -> Rc<[(f64, AttrValue)]> {
    knee_points(r)
        .into_iter()
        .filter_map(|(label, p)| {
            let x = p.values.first()?.as_f64()?;
            let name = if label.is_empty() {
                "knee".to_string()
            } else {
                format!("knee: {label}")
            };
            Some((x, AttrValue::from(name)))
        })
        .collect()
}

fn knees(shape: &Shape, r: &SweepResults) -> Html {
    if shape.x.is_none() {
        return html! {};
    }
    let items: Vec<Html> = knee_points(r)
        .into_iter()
        .map(|(label, p)| {
            let at = p.values.first().map(SweepResults::label).unwrap_or_default();
            let name = if label.is_empty() { "the curve".to_string() } else { label };
            html! {
                <li data-testid="sweep-knee">{ format!(
                    "Knee of {name}: {} = {at}, the last point meeting the SLO before it is missed.",
                    shape.x_label) }</li>
            }
        })
        .collect();
    html! { <ul class="knees">{ for items }</ul> }
}

fn table(r: &SweepResults) -> Html {
    let rows = r.table(2);
    let (head, body) = rows.split_first().expect("a header row");
    html! {
        <table class="summary-table" data-testid="sweep-table">
            <thead><tr>{ for head.iter().map(|h| html! { <th>{ h }</th> }) }</tr></thead>
            <tbody>{ for body.iter().map(|row| html! {
                <tr>{ for row.iter().map(|c| html! { <td>{ c }</td> }) }</tr>
            }) }</tbody>
        </table>
    }
}
