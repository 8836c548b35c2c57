//! What one run may ask of a browser tab. A run's results keep every request's record, in
//! the simulation worker and again on the page, and each holds at most 4 GB of WebAssembly
//! memory: a run of 8 million requests ran out of it and lost every result. The command
//! line has no such ceiling, so the document's own `simulation.max_requests` stays as
//! written (a shared link runs the same there); the tab checks and stops at its own limit.

use opal::scenario::{HostLimit, Scenario};
use opal::simulation::{SimulationResults, Stop};
use opal::Problem;

/// The tab's limit: 6 million requests ran in Chromium with the results on screen (8 GB
/// for the whole browser); a quarter below that leaves room for the page's own views.
pub const TAB: HostLimit = HostLimit {
    max_requests: 5_000_000,
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

    /// 2,000 req/s for `seconds`: 2,000 · seconds requests.
    fn doc(seconds: u32) -> String {
        format!(
            r#"{{"workload": {{"stages": [{{"type": "UniformReqRate", "request_rate": 2000,
                "time_duration_sec": {seconds}}}]}}}}"#
        )
    }

    #[test]
    fn the_tab_refuses_what_it_cannot_hold_at_the_stage_and_says_where_to_go() {
        // 6,000,000 requests: under the document's 10,000,000, over the tab's 5,000,000.
        let problems = check(&doc(3000));
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].path, "workload.stages[0]");
        assert_eq!(
            problems[0].message,
            "expects 6,000,000 requests; in a browser tab a run is limited to 5,000,000 \
             requests (the command line, opal run, goes up to simulation.max_requests)"
        );
        assert!(check(&doc(2500)).is_empty());
        // The document's own limit is checked first, in its own words.
        let over = check(&doc(6000));
        assert!(
            over[0].message.contains("the limit is 10,000,000"),
            "{over:?}"
        );
    }

    #[test]
    fn a_run_in_the_tab_stops_at_the_lower_of_the_two_limits() {
        let mut s = opal::parse_scenario(&doc(10)).unwrap();
        within_tab(&mut s);
        assert_eq!(s.simulation.max_requests, 5_000_000);
        s.simulation.max_requests = 1_000;
        within_tab(&mut s);
        assert_eq!(s.simulation.max_requests, 1_000);
    }
}
