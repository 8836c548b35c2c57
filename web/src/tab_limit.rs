//! What one run may ask of a browser tab. A run's results keep every request's record, in
//! the simulation worker and again on the page, and each holds at most 4 GB of WebAssembly
//! memory. The command line has no such ceiling, so the document's own
//! `simulation.max_requests` stays as written (a shared link runs the same there); the tab
//! checks and stops at its own limit.

use opal::scenario::{HostLimit, Scenario};
use opal::simulation::{SimulationResults, Stop};
use opal::Problem;

/// The tab's limit, `simulation.max_requests`' default: a run this large finishes in
/// Chromium with its results on screen and room to spare (docs/robustness.md).
pub const TAB: HostLimit = HostLimit {
    max_requests: 10_000_000,
    limited: "in a browser tab a run is limited to",
    how: "the command line, opal run, goes up to simulation.max_requests",
};

/// Every problem the tab finds in a document: the engine's, and when there are none, the
/// requests the tab cannot hold.
pub fn check(text: &str) -> Vec<Problem> {
    match opal::parse_scenario(text) {
        Ok(scenario) => scenario.host_problems(&[], &TAB),
        Err(problems) => problems,
    }
}

/// Requests `scenario` is expected to issue (its work estimate's).
fn expected(scenario: &Scenario) -> f64 {
    scenario.work_estimate(&[]).1.requests
}

/// Why the tab cannot run the document `text` while it keeps a pinned run of `pinned`
/// requests, if it cannot: the page holds both runs' records at once.
pub fn beside_pinned(text: &str, pinned: usize) -> Option<String> {
    let scenario = opal::parse_scenario(text).ok()?;
    let wanted = expected(&scenario);
    (pinned as f64 + wanted > TAB.max_requests as f64).then(|| {
        format!(
            "The pinned run holds {} requests and this run expects {}: together more than the \
             {} a browser tab holds. Unpin it to run this scenario.",
            opal::count(pinned as f64),
            opal::count(wanted),
            opal::count(TAB.max_requests as f64)
        )
    })
}

/// Why the tab cannot hold a race of `entrants` entrants at `seeds` seeds, whose runs'
/// scenarios are `runs`, if it cannot: the race view keeps every run's records.
pub fn race_room(runs: &[Scenario], entrants: usize, seeds: usize) -> Option<String> {
    let wanted: f64 = runs.iter().map(expected).sum();
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    (wanted > TAB.max_requests as f64).then(|| {
        format!(
            "This race runs {entrants} entrant{} at {seeds} seed{}, expecting {} requests in \
             all: more than the {} a browser tab holds. Race fewer requests.",
            plural(entrants),
            plural(seeds),
            opal::count(wanted),
            opal::count(TAB.max_requests as f64)
        )
    })
}

/// The scenario as the tab runs it: a run whose own limit is higher stops at the tab's,
/// with the results it reached (a replayed file or a time-bound stage may issue more than
/// its document could tell).
pub fn within_tab(scenario: &mut Scenario) {
    let max = &mut scenario.simulation.max_requests;
    *max = (*max).min(TAB.max_requests);
}

/// Why a run ended early, in the tab's words when it was the tab's limit that ended it.
pub fn stop_text(results: &SimulationResults) -> Option<String> {
    let stop = results.stop.as_ref()?;
    Some(match stop {
        Stop::MaxRequests if results.requests.len() as u64 >= TAB.max_requests => format!(
            "stopped at {} million requests, the most a browser tab holds; {}",
            TAB.max_requests / 1_000_000,
            TAB.how
        ),
        _ => stop.describe(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2,000 req/s for `seconds`: 2,000 · seconds requests, with the document's own limit
    /// raised to 20,000,000.
    fn doc(seconds: u32) -> String {
        format!(
            r#"{{"simulation": {{"max_requests": 20000000}},
                "workload": {{"stages": [{{"type": "UniformReqRate", "request_rate": 2000,
                "time_duration_sec": {seconds}}}]}}}}"#
        )
    }

    #[test]
    fn the_tab_refuses_what_it_cannot_hold_at_the_stage_and_says_where_to_go() {
        // 12,000,000 requests: under the document's 20,000,000, over the tab's 10,000,000.
        let problems = check(&doc(6000));
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].path, "workload.stages[0]");
        assert_eq!(
            problems[0].message,
            "expects 12,000,000 requests; in a browser tab a run is limited to 10,000,000 \
             requests (the command line, opal run, goes up to simulation.max_requests)"
        );
        assert!(check(&doc(5000)).is_empty());
        // The document's own limit is checked first, in its own words.
        let over = check(&doc(10_001));
        assert!(
            over[0].message.contains("the limit is 20,000,000"),
            "{over:?}"
        );
    }

    #[test]
    fn a_pinned_run_and_a_race_count_against_what_the_tab_holds() {
        // 6,000,000 beside a pinned 5,000,000: 11,000,000, over 10,000,000; 4,000,000 fits.
        assert_eq!(
            beside_pinned(&doc(3000), 5_000_000).as_deref(),
            Some(
                "The pinned run holds 5,000,000 requests and this run expects 6,000,000: \
                 together more than the 10,000,000 a browser tab holds. Unpin it to run this \
                 scenario."
            )
        );
        assert_eq!(beside_pinned(&doc(2000), 5_000_000), None);
        assert_eq!(beside_pinned(&doc(3000), 0), None);
        // Three entrants of 4,000,000 requests: 12,000,000 in all.
        let run = opal::parse_scenario(&doc(2000)).unwrap();
        let runs = vec![run.clone(), run.clone(), run];
        assert_eq!(
            race_room(&runs, 3, 1).as_deref(),
            Some(
                "This race runs 3 entrants at 1 seed, expecting 12,000,000 requests in all: \
                 more than the 10,000,000 a browser tab holds. Race fewer requests."
            )
        );
        assert_eq!(race_room(&runs[..2], 2, 1), None);
    }

    #[test]
    fn a_run_in_the_tab_stops_at_the_lower_of_the_two_limits() {
        let mut s = opal::parse_scenario(&doc(10)).unwrap();
        within_tab(&mut s);
        assert_eq!(s.simulation.max_requests, 10_000_000);
        s.simulation.max_requests = 1_000;
        within_tab(&mut s);
        assert_eq!(s.simulation.max_requests, 1_000);
    }
}
