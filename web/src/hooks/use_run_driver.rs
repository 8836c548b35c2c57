//! Drives the app's run in a simulation worker.

use crate::run_driver;
use crate::state::{Action, RunStatus};
use std::rc::Rc;
use yew::prelude::*;

/// Runs are driven by id: when the running id changes (Stop, finish, a newer Run) the
/// effect's cleanup stops the old run. (A worker starts with the page, see `main`, so the
/// first run, a share link's, does not wait for one.) `files` are the data files picked
/// when the run starts (a trace picked mid-run waits for the next).
#[hook]
pub fn use_run_driver(
    run: &RunStatus,
    files: Rc<crate::state::DataFiles>,
    on_action: Callback<Action>,
) {
    let running = match run {
        RunStatus::Running { id, scenario, .. } => Some((*id, scenario.clone())),
        _ => None,
    };
    use_effect_with(running, move |running| {
        let handle = running.as_ref().map(|(id, text)| {
            let files = files
                .iter()
                .map(|(name, text)| (name.clone(), text.to_string()))
                .collect();
            run_driver::start(*id, text, files, on_action)
        });
        move || {
            if let Some(h) = handle {
                h.cancel();
            }
        }
    });
}
