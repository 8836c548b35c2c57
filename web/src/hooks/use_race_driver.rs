//! Drives a race's entrants in the worker pool, all at once.

use crate::state::{Action, LaneStatus, RaceRun};
use crate::worker::{self, RunEvent};
use std::cell::Cell;
use std::rc::Rc;
use yew::prelude::*;

/// While race `race` has entrants simulating, runs each in a worker (in parallel up to the
/// pool's size) and reports `RaceProgress`, `RaceFinished` or `RaceFailed` per lane and
/// seed. The played-back seed's entrants are submitted first, so the pool (first come,
/// first served) starts them before the later seeds', which run on in the background while
/// the race plays. When the race ends, is left or replaced, the effect's cleanup stops
/// whatever still runs.
#[hook]
pub fn use_race_driver(
    race: Option<&RaceRun>,
    files: Rc<crate::state::DataFiles>,
    on_action: Callback<Action>,
) {
    // Keyed on the race's id while any lane runs: lane updates do not restart it.
    let running = race.filter(|r| r.any_running()).map(|r| {
        let lanes: Vec<(usize, usize, Rc<str>)> = r
            .seeds()
            .enumerate()
            .flat_map(|(seed, lanes)| {
                lanes
                    .iter()
                    .enumerate()
                    .filter(|(_, l)| matches!(l.status, LaneStatus::Running(_)))
                    .map(move |(i, l)| (seed, i, l.scenario.clone()))
            })
            .collect();
        (r.id, Rc::new(lanes))
    });
    let key = running.as_ref().map(|(id, _)| *id);
    use_effect_with(key, move |_| {
        let stopped = Rc::new(Cell::new(false));
        let tickets: Vec<_> = running
            .into_iter()
            .flat_map(|(id, lanes)| {
                let files: Vec<(String, String)> = files
                    .iter()
                    .map(|(name, text)| (name.clone(), text.to_string()))
                    .collect();
                let (on_action, stopped) = (on_action.clone(), stopped.clone());
                lanes
                    .iter()
                    .map(|(seed, lane, text)| {
                        let (seed, lane, on_action, stopped) =
                            (*seed, *lane, on_action.clone(), stopped.clone());
                        let on_event = Callback::from(move |event| {
                            // A stopped entrant's partial results belong to no race.
                            if stopped.get() {
                                return;
                            }
                            // Only the played seed's progress is shown: a later seed's would
                            // redraw the page for nothing.
                            if seed > 0 && matches!(event, RunEvent::Progress(_)) {
                                return;
                            }
                            on_action.emit(match event {
                                RunEvent::Progress(progress) => Action::RaceProgress {
                                    id,
                                    seed,
                                    lane,
                                    progress,
                                },
                                RunEvent::Finished { results, .. } => Action::RaceFinished {
                                    id,
                                    seed,
                                    lane,
                                    results,
                                },
                                RunEvent::Failed(message) => Action::RaceFailed {
                                    id,
                                    seed,
                                    lane,
                                    message,
                                },
                            })
                        });
                        worker::submit(text.to_string(), files.clone(), on_event)
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        move || {
            stopped.set(true);
            tickets.into_iter().for_each(|t| t.cancel());
        }
    });
}
