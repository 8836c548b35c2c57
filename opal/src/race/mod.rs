//! The `race` section: two to four variants of one scenario (entrants), each a label and a
//! JSON merge patch (RFC 7386) over the scenario, run on the same arrivals and played back
//! side by side (the app's race view). A plain run ignores it.
//!
//! An entrant's scenario is the document without its `race` and `sweep` sections, with the
//! patch merged in; only the patch differs between entrants, so seed and workload (and so
//! the arrivals) are the same unless a patch changes them.
//!
//! `seeds` asks for the race to be run again at the next seeds (the app judges the winner
//! on all of them and plays back the first): a winner at one seed may be the seed's luck.

#[cfg(test)]
mod tests;

use crate::document::check;
pub use engine::scenario::race::{
    merge_patch, Entrant, RaceConfig, MAX_ENTRANTS, MAX_LABEL_CHARS, MAX_SEEDS, MIN_ENTRANTS,
};
use engine::scenario::Scenario;

/// Each entrant's label and scenario, in lane order (empty without a `race` section); an
/// entrant whose patch makes an invalid scenario gives the problems as one sentence.
pub fn entrants(scenario: &Scenario) -> Vec<(String, Result<Scenario, String>)> {
    check::entrants(scenario)
}

/// Each entrant's label and scenario at the race's `k`-th seed (0 is the scenario's own
/// seed, as [`entrants`] gives): the entrant's seed (its patch may set one) plus `k`.
pub fn entrants_at_seed(scenario: &Scenario, k: u32) -> Vec<(String, Result<Scenario, String>)> {
    let mut all = entrants(scenario);
    for (_, s) in &mut all {
        if let Ok(s) = s {
            s.simulation.seed = s.simulation.seed.wrapping_add(u64::from(k));
        }
    }
    all
}

/// How many seeds the race is judged on (1 without a race).
pub fn seeds(scenario: &Scenario) -> u32 {
    scenario.race.as_ref().map_or(1, |r| r.seeds)
}
