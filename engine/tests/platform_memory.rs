//! Memory of a 100,000-request run: what the results cost per request, and the process's
//! peak resident set. Figures are printed (`--nocapture`); only the per-request size of the
//! results is asserted, since it is what a browser tab keeps. Ignored by default (it is a
//! long run in a debug build); run it optimised with `--ignored`.

mod platform_common;

use engine::router::PrefixMatch;
use engine::scenario::ScenarioData;
use engine::simulation::{RoutingRecord, Simulation};
use engine::stats::RequestRecord;
use std::mem::size_of;

const REQUESTS: u64 = 100_000;

/// Peak resident set size of this process, kB (Linux), if readable.
fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
#[ignore = "a 100,000-request run (≈ 5 s optimised): cargo test --release --test platform_memory -- --ignored --nocapture"]
fn a_hundred_thousand_requests_cost_a_few_hundred_bytes_each() {
    // 8 workers at 400 req/s (≈ 250 s simulated), prefix-aware routing so every decision
    // keeps candidate scores until the recorder's evidence budget runs out.
    let json = format!(
        r#"{{
        "simulation": {{ "num_workers": 8 }},
        "worker": {{ "timing": {{ "model": "constant", "constant_step_time": 0.02 }} }},
        "router": {{ "policy": {{ "policy": "prefix_load" }} }},
        "workload": {{ "stages": [ {{ "type": "UniformReqRate", "request_rate": 400,
            "total_requests": {REQUESTS},
            "shared_prefix": {{ "groups": 16, "length": 512 }},
            "input_length": {{ "type": "uniform", "min": 50, "max": 400 }},
            "output_length": {{ "type": "uniform", "min": 10, "max": 60 }} }} ] }}
    }}"#
    );
    let before = peak_rss_kb();
    let scenario = opal::parse_scenario(&json).unwrap();
    let mut sim = Simulation::new(&scenario, &ScenarioData::new()).unwrap();
    sim.run();
    sim.check_invariants().unwrap();
    let r = sim.results();
    platform_common::assert_run_consistent(&r);
    assert_eq!(r.stages[0].successful_requests, REQUESTS);

    let records = r.requests.len() * size_of::<RequestRecord>();
    let candidates: usize = r
        .decisions
        .iter()
        .map(|d| d.decision.candidates.len())
        .sum();
    // Stored as 24 bytes, plus a 12-byte prefix match when the policy looked (this one does).
    let stored = 24 + size_of::<Option<PrefixMatch>>();
    let decisions = r.decisions.len() * size_of::<RoutingRecord>() + candidates * stored;
    let per_request = (records + decisions) as f64 / REQUESTS as f64;
    println!(
        "records: {} B each, {:.1} MB; decisions: {} B each + {} candidates × {} B, {:.1} MB",
        size_of::<RequestRecord>(),
        records as f64 / 1e6,
        size_of::<RoutingRecord>(),
        candidates,
        stored,
        decisions as f64 / 1e6
    );
    println!("results: {per_request:.0} B per request (records + decisions)");
    println!(
        "simulated {:.1} s, {} kernel events; peak RSS {:?} kB before, {:?} kB after",
        r.end_time,
        r.events,
        before,
        peak_rss_kb()
    );
    // 144 B of record + 32 B of decision + at most 400,000 candidates (the budget) × 36 B
    // spread over 100,000 requests ≈ 320 B; 1 kB is the ceiling the app is sized for.
    assert!(per_request < 1024.0, "{per_request} B per request");
}
