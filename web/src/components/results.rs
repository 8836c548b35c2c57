//! The results pane: the engine's verdict on the scenario and the state of the run.

use crate::state::{PinnedRun, RunStatus, Scenario};
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
}

/// Validation and run status.
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
            <div class="run-status" data-testid="run-status">{ run_status(&props.run) }</div>
            if let Some(p) = &props.pinned {
                <p class="pinned">{ format!("Run {} is kept for comparison.", p.id) }</p>
            }
        </>
    }
}

fn run_status(run: &RunStatus) -> Html {
    match run {
        RunStatus::Idle => {
            html! { <p class="muted">{ "Not run yet. Press Run (Ctrl/⌘+Enter)." }</p> }
        }
        RunStatus::Running { id, progress, .. } => html! {
            <>
                <p>{ format!("Run {id}: {:.0} s simulated, {} requests done.", progress.sim_time_s, progress.requests_done) }</p>
                <progress max="1" value={progress.fraction.to_string()} aria-label="Run progress" />
            </>
        },
        RunStatus::Finished { id, sim_end_s, .. } => html! {
            <p>{ format!("Run {id} finished at {sim_end_s:.1} s simulated.") }</p>
        },
        RunStatus::Stopped { id, progress } => html! {
            <p>{ format!("Run {id} stopped at {:.1} s simulated, {} requests done.", progress.sim_time_s, progress.requests_done) }</p>
        },
        RunStatus::Failed { id, message } => html! {
            <p class="run-failed" role="alert">{ format!("Run {id} did not complete: {message}") }</p>
        },
    }
}
