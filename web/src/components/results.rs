//! The results pane: the engine's verdict on the scenario, the run's progress, and a
//! finished run's results in tabs (Summary, Charts, Latency, Timeline, Routing), compared
//! with a pinned run when there is one.

use super::deployment_panel::DeploymentPanel;
use super::result_panels::{ChartsPanel, LatencyPanel, RoutingPanel, RunView, TimelinePanel};
use super::slo_table::SloTable;
use super::summary_table::SummaryTable;
use crate::deployment_view::{worker_pools, WorkerPools};
use crate::files;
use crate::results_view::RunFacts;
use crate::state::{Action, EngineResults, Level, PinnedRun, RunStatus, Scenario};
use std::rc::Rc;
use yew::prelude::*;

/// Props of [`Results`].
#[derive(Properties, PartialEq, Clone)]
pub struct ResultsProps {
    /// The scenario, for its validation.
    pub scenario: Scenario,
    /// The current or last run.
    pub run: RunStatus,
    /// A run kept for comparison.
    pub pinned: Option<PinnedRun>,
    /// The run is the default scenario's, started as the page opened.
    #[prop_or_default]
    pub opening: bool,
    /// Sends Pin/Unpin and notices.
    pub on_action: Callback<Action>,
}

/// The results tabs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tab {
    Summary,
    Charts,
    Latency,
    Timeline,
    Routing,
}

const TABS: [(Tab, &str); 5] = [
    (Tab::Summary, "Summary"),
    (Tab::Charts, "Charts"),
    (Tab::Latency, "Latency"),
    (Tab::Timeline, "Timeline"),
    (Tab::Routing, "Routing"),
];

/// The DOM id of the `i`-th results tab.
fn tab_id(i: usize) -> String {
    format!("results-tab-{i}")
}

/// The tab a key moves to from tab `now`, as a tab list does (ARIA's pattern): the arrows
/// to the previous or next (wrapping), Home and End to the first and last.
fn next_tab(now: usize, key: &str) -> Option<usize> {
    let n = TABS.len();
    match key {
        "ArrowRight" => Some((now + 1) % n),
        "ArrowLeft" => Some((now + n - 1) % n),
        "Home" => Some(0),
        "End" => Some(n - 1),
        _ => None,
    }
}

/// A run's legend label: its number and routing policy, e.g. "run 2 · max_prefix".
pub fn run_label(id: u64, scenario: &str) -> AttrValue {
    // Only the policy name is needed: read it from the JSON rather than validating the
    // whole scenario again on every render (the run's scenario was valid when it ran).
    let doc: serde_json::Value = serde_json::from_str(scenario).unwrap_or_default();
    let policy = doc
        .pointer("/router/policy/policy")
        .and_then(|v| v.as_str())
        .unwrap_or_else(|| opal::router::PolicyConfig::default().name());
    format!("run {id} · {policy}").into()
}

/// Validation, run status, and results.
#[function_component(Results)]
pub fn results(props: &ResultsProps) -> Html {
    let problems = &props.scenario.problems;
    html! {
        <>
            <div data-testid="validation">
                if problems.is_empty() {
                    <p class="ok">{ "Scenario is valid." }</p>
                } else {
                    <ul class="problems">
                        { for problems.iter().map(|p| html! { <li><code>{ &p.path }</code>{ " " }{ &p.message }</li> }) }
                    </ul>
                }
            </div>
            if props.opening && matches!(props.run, RunStatus::Finished { .. }) {
                <p class="opening-caption" data-testid="opening-caption">
                    { "These are the default scenario's results — four H100s serving prompts that share system prompts — run as the page opened. Change anything and press Run, or load a preset." }
                </p>
            }
            <div class="run-status" data-testid="run-status" role="status" aria-live="polite">{ run_status(&props.run) }</div>
            if let RunStatus::Finished { id, scenario, results, .. } = &props.run {
                <FinishedRun id={*id} label={run_label(*id, scenario)} scenario={AttrValue::from(scenario.clone())} results={results.clone()}
                    pinned={props.pinned.clone()} on_action={props.on_action.clone()} />
            } else if let Some(p) = &props.pinned {
                <p class="pinned">{ format!("Run {} is pinned for comparison.", p.id) }</p>
            }
        </>
    }
}

/// Props of [`FinishedRun`].
#[derive(Properties, PartialEq, Clone)]
struct FinishedRunProps {
    id: u64,
    label: AttrValue,
    scenario: AttrValue,
    results: EngineResults,
    pinned: Option<PinnedRun>,
    on_action: Callback<Action>,
}

#[function_component(FinishedRun)]
fn finished_run(props: &FinishedRunProps) -> Html {
    let tab = use_state(|| Tab::Summary);
    // Chart and timeline data are derived when their tab is shown, so a run's first paint
    // is only the summary table.
    let charts_shown = matches!(*tab, Tab::Charts | Tab::Latency);
    let view = {
        let (results, label) = (props.results.clone(), props.label.clone());
        use_memo((results.clone(), charts_shown), move |(_, shown)| {
            shown.then(|| Rc::new(RunView::of(&results, label)))
        })
    };
    // The pinned run is the same run right after pinning; compare only against another run.
    let pinned = props.pinned.as_ref().filter(|p| p.id != props.id);
    let pinned_label =
        pinned.map(|p| AttrValue::from(format!("{} (pinned)", run_label(p.id, &p.scenario))));
    let pinned_view = {
        let key = pinned.map(|p| p.results.clone());
        let label = pinned_label.clone();
        use_memo((key, charts_shown), move |(key, shown)| {
            key.as_ref()
                .filter(|_| *shown)
                .zip(label)
                .map(|(r, label)| Rc::new(RunView::of(r, label)))
        })
    };

    // Each worker's pool, for the per-worker tables (None without a deployment); only the
    // Routing tab shows them, so a run's first paint does not wait. (The Timeline tab
    // derives its lanes itself.)
    let pools: Rc<Option<WorkerPools>> = {
        let results = props.results.clone();
        let shown = *tab == Tab::Routing;
        use_memo(
            (results.clone(), props.scenario.clone(), shown),
            move |(_, scenario, shown)| {
                shown
                    .then(|| {
                        worker_pools(
                            scenario,
                            results.workers.workers.len() as u32,
                            &results.transfers,
                        )
                    })
                    .flatten()
            },
        )
    };

    // What the views read from the run's scenario, read once: its scores' terms, and where
    // a real vLLM would likely land (for a run that reached its end).
    let facts = use_memo(props.scenario.clone(), |scenario| RunFacts::of(scenario));
    let band = (facts.band.clone())
        .filter(|_| props.results.stop.is_none())
        .map(|(b, gpu)| (b, AttrValue::from(gpu)));

    type Export = fn(&EngineResults, &mut dyn std::io::Write) -> std::io::Result<()>;
    let download = |name: &'static str, mime: &'static str, write: Export| {
        let (results, on_action) = (props.results.clone(), props.on_action.clone());
        Callback::from(move |_: MouseEvent| {
            if let Err(message) = files::download_written(name, mime, |out| write(&results, out)) {
                on_action.emit(Action::Notify {
                    level: Level::Error,
                    message,
                });
            }
        })
    };
    let is_pinned = props.pinned.as_ref().is_some_and(|p| p.id == props.id);
    let act = |a: Action| props.on_action.reform(move |_: MouseEvent| a.clone());
    let r = &props.results;
    let tab_button = |(i, (t, name)): (usize, (Tab, &'static str))| {
        let tab = tab.clone();
        let selected = *tab == t;
        // One tab stop for the list: the selected tab; arrows move between them.
        html! {
            <button role="tab" id={tab_id(i)} aria-selected={selected.to_string()} aria-controls="results-tab-panel"
                tabindex={if selected { "0" } else { "-1" }} class={classes!("tab", selected.then_some("selected"))}
                onclick={Callback::from(move |_: MouseEvent| tab.set(t))}>{ name }</button>
        }
    };
    let on_tab_key = {
        let tab = tab.clone();
        Callback::from(move |e: KeyboardEvent| {
            let now = TABS.iter().position(|(t, _)| *t == *tab).unwrap_or(0);
            let Some(next) = next_tab(now, &e.key()) else {
                return;
            };
            e.prevent_default();
            e.stop_propagation();
            tab.set(TABS[next].0);
            if let Some(button) = web_sys::window()
                .and_then(|w| w.document())
                .and_then(|d| d.get_element_by_id(&tab_id(next)))
                .and_then(|el| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(el).ok())
            {
                let _ = button.focus();
            }
        })
    };
    html! {
        <div class="finished-run">
            <div class="results-toolbar">
                if is_pinned {
                    <span class="pinned">{ "Pinned: the next run will be compared with this one." }</span>
                    <button onclick={act(Action::Unpin)}>{ "Unpin" }</button>
                } else {
                    if let Some(p) = pinned {
                        <span class="pinned">{ format!("Compared with run {}.", p.id) }</span>
                        <button onclick={act(Action::Unpin)}>{ "Unpin" }</button>
                    }
                    <button onclick={act(Action::PinRun)} title="Keep this run to compare the next one with it">{ "Pin this run" }</button>
                }
                <span class="chart-toolbar-gap" />
                <button onclick={download("results.json", "application/json", |r, out| r.write_json(out))}>{ "Results JSON" }</button>
                <button onclick={download("requests.csv", "text/csv", |r, out| r.write_csv(out))}>{ "Requests CSV" }</button>
            </div>
            <p class="run-facts">
                { format!("{} requests, {} kernel events, {:.1} s simulated{}.",
                    r.requests.len(), r.events, r.end_time,
                    crate::tab_limit::stop_text(r).map(|s| format!(" ({s})")).unwrap_or_default()) }
                <br />
                <span data-testid="timing-model">{ format!("Step times: {}.", r.timing) }</span>
            </p>
            <div class="tabs" role="tablist" aria-label="Results" onkeydown={on_tab_key}>
                { for TABS.into_iter().enumerate().map(tab_button) }
            </div>
            <div class="tab-panel" role="tabpanel" id="results-tab-panel"
                aria-labelledby={tab_id(TABS.iter().position(|(t, _)| *t == *tab).unwrap_or(0))}>
                { match *tab {
                    Tab::Summary => html! {
                        <>
                            <SummaryTable results={props.results.clone()} label={props.label.clone()}
                                pinned={pinned.zip(pinned_label).map(|(p, l)| (p.results.clone(), l))} band={band.clone()} />
                            <SloTable results={props.results.clone()} />
                            <DeploymentPanel results={props.results.clone()} scenario={props.scenario.clone()} label={props.label.clone()} />
                        </>
                    },
                    Tab::Charts => match &*view {
                        Some(v) => html! { <ChartsPanel run={v.clone()} pinned={(*pinned_view).clone()} /> },
                        None => html! {},
                    },
                    Tab::Latency => match &*view {
                        Some(v) => html! { <LatencyPanel run={v.clone()} pinned={(*pinned_view).clone()} /> },
                        None => html! {},
                    },
                    Tab::Timeline => html! {
                        <TimelinePanel results={props.results.clone()} scenario={props.scenario.clone()} split={facts.split.clone()} />
                    },
                    Tab::Routing => html! { <RoutingPanel results={props.results.clone()} pools={(*pools).clone()} split={facts.split.clone()} /> },
                } }
            </div>
        </div>
    }
}

fn run_status(run: &RunStatus) -> Html {
    match run {
        RunStatus::Idle => {
            html! { <p class="muted">{ "Not run yet. Press Run (Ctrl/⌘+Enter)." }</p> }
        }
        RunStatus::Running { id, progress, .. } => html! {
            <>
                <p>{ format!("Run {id}: {:.1} s simulated, {} of {} requests issued finished.",
                    progress.sim_time_s, progress.requests_done, progress.requests_issued) }</p>
                // No value makes the bar indeterminate, for open-ended runs.
                <progress max="1" value={progress.fraction.map(|f| f.to_string())} aria-label="Run progress"
                    data-testid="run-progress" />
            </>
        },
        RunStatus::Finished {
            id,
            sim_end_s,
            stopped: false,
            ..
        } => html! {
            <p>{ format!("Run {id} finished at {sim_end_s:.1} s simulated.") }</p>
        },
        RunStatus::Finished {
            id,
            sim_end_s,
            stopped: true,
            ..
        } => html! {
            <p>{ format!("Run {id} stopped at {sim_end_s:.1} s simulated; the results below cover what it reached.") }</p>
        },
        RunStatus::Stopped { id, progress, .. } => html! {
            <p>{ format!("Run {id} stopped at {:.1} s simulated, {} requests done; collecting its results.", progress.sim_time_s, progress.requests_done) }</p>
        },
        RunStatus::Failed { id, message } => html! {
            <p class="run-failed" role="alert">{ format!("Run {id} did not complete: {message}") }</p>
        },
    }
}
