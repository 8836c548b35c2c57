//! The app's run: the scenario goes to a simulation worker ([`crate::worker`]), so the
//! page's thread only draws; the worker's events come back as the reducer's actions.

use crate::state::Action;
use crate::worker::{self, RunEvent, RunTicket};
use opal::Problem;
use std::cell::Cell;
use std::rc::Rc;
use yew::Callback;

/// Keeps a run going; [`RunHandle::cancel`] stops it (it then reports what it reached).
pub struct RunHandle {
    ticket: RunTicket,
    cancelled: Rc<Cell<bool>>,
}

impl RunHandle {
    /// Stops the run; it reports `RunStopped` with the results it reached.
    pub fn cancel(&self) {
        self.cancelled.set(true);
        self.ticket.cancel();
    }
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

/// Starts run `id` of `text` with the data `files` (by file name); reports through
/// `dispatch` (`RunProgress`, then `RunFinished`, `RunStopped` or `RunFailed`).
pub fn start(
    id: u64,
    text: &str,
    files: Vec<(String, String)>,
    dispatch: Callback<Action>,
) -> RunHandle {
    let cancelled = Rc::new(Cell::new(false));
    let stopping = cancelled.clone();
    let on_event = Callback::from(move |event| match event {
        RunEvent::Progress(progress) => dispatch.emit(Action::RunProgress { id, progress }),
        // A run that ran out just as Stop was pressed still answers the Stop.
        RunEvent::Finished { results, stopped } if stopped || stopping.get() => {
            dispatch.emit(Action::RunStopped { id, results })
        }
        RunEvent::Finished { results, .. } => dispatch.emit(Action::RunFinished {
            id,
            sim_end_s: results.end_time,
            results,
        }),
        RunEvent::Failed(message) => dispatch.emit(Action::RunFailed { id, message }),
    });
    RunHandle {
        ticket: worker::submit(text.to_string(), files, on_event),
        cancelled,
    }
}
