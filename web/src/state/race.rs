//! A race: the scenario's entrants (see `opal::race`) run side by side, each in a worker,
//! then played back on talk mode's one clock; at later seeds (`race.seeds`), run again in
//! the background for the verdict only.

use super::{EngineResults, Progress};
use std::rc::Rc;

/// Where one entrant's run stands.
#[derive(Debug, Clone, PartialEq)]
pub enum LaneStatus {
    /// Simulating in a worker.
    Running(Progress),
    /// Ran to its end.
    Finished(EngineResults),
    /// The engine refused or failed it.
    Failed(String),
}

/// One entrant of a race.
#[derive(Debug, Clone, PartialEq)]
pub struct Lane {
    /// The entrant's label.
    pub label: Rc<str>,
    /// Its scenario (the document with its patch merged in), as the worker runs it.
    pub scenario: Rc<str>,
    /// How its run goes.
    pub status: LaneStatus,
}

/// The race being run or played back. Races are numbered so a late event of an earlier
/// race is ignored.
#[derive(Debug, Clone, PartialEq)]
pub struct RaceRun {
    /// Which race this is.
    pub id: u64,
    /// The entrants, in lane order, at the scenario's seed: the race played back.
    pub lanes: Vec<Lane>,
    /// The entrants again at each later seed (seed + 1, …), in lane order: judged, not
    /// played back.
    pub later: Vec<Vec<Lane>>,
}

fn running(lanes: &[Lane]) -> bool {
    lanes
        .iter()
        .any(|l| matches!(l.status, LaneStatus::Running(_)))
}

impl RaceRun {
    /// Whether any entrant of the played-back seed is still simulating.
    pub fn is_running(&self) -> bool {
        running(&self.lanes)
    }

    /// Whether any entrant at any seed is still simulating.
    pub fn any_running(&self) -> bool {
        self.is_running() || self.later.iter().any(|l| running(l))
    }

    /// Every seed's lanes, the played-back seed's first.
    pub fn seeds(&self) -> impl Iterator<Item = &[Lane]> {
        std::iter::once(&self.lanes[..]).chain(self.later.iter().map(|l| &l[..]))
    }

    /// Each seed's finished results (the played-back seed's first), each in lane order
    /// (`None` for a lane not finished).
    pub fn all_results(&self) -> Vec<Vec<Option<EngineResults>>> {
        self.seeds()
            .map(|lanes| {
                lanes
                    .iter()
                    .map(|l| match &l.status {
                        LaneStatus::Finished(r) => Some(r.clone()),
                        _ => None,
                    })
                    .collect()
            })
            .collect()
    }

    /// The shared clock's end once every entrant has finished: the latest entrant's end.
    pub fn end_s(&self) -> Option<f64> {
        let mut end: Option<f64> = None;
        for lane in &self.lanes {
            match &lane.status {
                LaneStatus::Finished(r) => {
                    end = Some(end.map_or(r.end_time, |e| e.max(r.end_time)))
                }
                LaneStatus::Running(_) => return None,
                LaneStatus::Failed(_) => {}
            }
        }
        end
    }

    /// Sets lane `lane`'s status at seed `seed` (0: the played-back one) while it is still
    /// running (a late event never overwrites an ended lane).
    pub(super) fn update(&mut self, seed: usize, lane: usize, status: LaneStatus) {
        let lanes = match seed {
            0 => Some(&mut self.lanes),
            k => self.later.get_mut(k - 1),
        };
        if let Some(l) = lanes.and_then(|l| l.get_mut(lane)) {
            if matches!(l.status, LaneStatus::Running(_)) {
                l.status = status;
            }
        }
    }
}

/// The lanes of a race over `text`'s entrants at each of its seeds, each running; or why
/// there is none.
pub(super) fn lanes(text: &str) -> Result<Vec<Vec<Lane>>, String> {
    let scenario = opal::parse_scenario(text).map_err(|p| {
        format!(
            "Fix {} problem{} in the scenario before racing.",
            p.len(),
            if p.len() == 1 { "" } else { "s" }
        )
    })?;
    if opal::race::entrants(&scenario).is_empty() {
        return Err("The scenario has no race section: add entrants to race.".into());
    }
    let seeds: Vec<_> = (0..opal::race::seeds(&scenario))
        .map(|k| opal::race::entrants_at_seed(&scenario, k))
        .collect();
    let runs: Vec<_> = seeds
        .iter()
        .flatten()
        .filter_map(|(_, s)| s.clone().ok())
        .collect();
    let entrants = seeds.first().map_or(0, Vec::len);
    if let Some(message) = crate::tab_limit::race_room(&runs, entrants, seeds.len()) {
        return Err(message);
    }
    Ok(seeds
        .into_iter()
        .map(|at_seed| {
            at_seed
                .into_iter()
                .map(|(label, s)| Lane {
                    label: label.into(),
                    status: match &s {
                        Ok(_) => LaneStatus::Running(Progress::default()),
                        Err(m) => LaneStatus::Failed(m.clone()),
                    },
                    scenario: s
                        .map_or_else(|_| "".into(), |s| opal::document::to_json_pretty(&s).into()),
                })
                .collect()
        })
        .collect())
}
