//! Shared by the `platform_*` tests: run a whole scenario with invariant checks along the
//! way, then check what must hold for every finished run.

#![allow(dead_code)] // each test file uses its own subset

use engine::scenario::ScenarioData;
use engine::simulation::{Simulation, SimulationResults};
use engine::stats::RequestRecord;

/// A scenario of `n` stages, each of one request (100 prompt tokens, 10 output tokens at
/// 5 req/s): thousands of stages must cost time and memory in proportion.
pub(crate) fn one_request_stages(n: usize) -> String {
    let stage = r#"{"type":"UniformReqRate","request_rate":5,"total_requests":1,
        "input_length":{"type":"constant","value":100},
        "output_length":{"type":"constant","value":10}}"#;
    format!(
        r#"{{"workload":{{"stages":[{}]}}}}"#,
        vec![stage; n].join(",")
    )
}

/// Kernel events between two mid-run invariant checks.
const CHECK_EVERY: u64 = 997;

/// Parses `json` with its data files, runs it to the end checking the workers' and the
/// router's invariants every few hundred events, then checks the finished run
/// ([`assert_run_consistent`]).
pub(crate) fn run(json: &str, files: &[(&str, &str)]) -> SimulationResults {
    run_sliced(json, files, CHECK_EVERY)
}

/// As [`run`], checking invariants after every `slice` events (1 = after every event).
pub(crate) fn run_sliced(json: &str, files: &[(&str, &str)], slice: u64) -> SimulationResults {
    let data: ScenarioData = files.iter().copied().collect();
    let scenario =
        opal::document::parse_with_data(json, &data).unwrap_or_else(|p| panic!("scenario: {p:?}"));
    let mut sim = Simulation::new(&scenario, &data).unwrap_or_else(|p| panic!("build: {p:?}"));
    while !sim.advance(slice).finished {
        if let Err(e) = sim.check_invariants() {
            panic!("at t = {}: {e}", sim.progress().now);
        }
    }
    sim.check_invariants()
        .unwrap_or_else(|e| panic!("after the run: {e}"));
    let results = sim.results();
    assert_run_consistent(&results);
    results
}

/// Every request completed or failed with a reason; timestamps are in lifecycle order;
/// prompt sources add up; stage tables count every request; per-second columns agree.
pub(crate) fn assert_run_consistent(r: &SimulationResults) {
    assert!(!r.truncated, "the run was cut short");
    for (i, req) in r.requests.iter().enumerate() {
        assert_eq!(req.id, i as u64, "records are in id order");
        assert!(
            !req.completion.is_nan(),
            "request {} never finished",
            req.id
        );
        if let Some(reason) = req.failed {
            assert!(!reason.kind().is_empty());
            assert!(
                req.first_token.is_nan(),
                "failed request {} emitted",
                req.id
            );
            continue;
        }
        assert_lifecycle_order(req);
        assert!(req.output_tokens >= 1);
        // The sources of the admission that ran to completion cover the prompt exactly
        // (output tokens recomputed after a preemption are not prompt tokens).
        assert_eq!(
            req.sources.prompt_total(),
            req.prompt_tokens,
            "request {}: sources {:?}, {} preemptions",
            req.id,
            req.sources,
            req.preemptions
        );
        // The last prompt token is always computed, except on a recompute, whose last token
        // is an output token.
        assert!(req.sources.computed >= 1 || req.preemptions > 0);
        if req.preemptions == 0 {
            assert_eq!((req.sources.gpu_rehit, req.recomputed), (0, 0));
        }
    }
    // Every request finished: the prefill each worker's scheduler counted is its requests'
    // computed prompt tokens plus what their preemptions cost.
    let mut prefill = vec![0u64; r.workers.workers.len()];
    for req in &r.requests {
        if let (Some(w), None) = (req.worker, req.failed) {
            prefill[w as usize] += (req.sources.computed + req.recomputed) as u64;
        }
    }
    // A disaggregated request's recomputation on its decode worker counts there.
    for t in &r.transfers {
        if let (Some(d), None) = (t.decode_worker, r.requests[t.request as usize].failed) {
            prefill[t.prefill_worker as usize] -= t.decode_prefill as u64;
            prefill[d as usize] += t.decode_prefill as u64;
        }
    }
    for (w, row) in r.workers.workers.iter().enumerate() {
        assert_eq!(row.prefill_tokens, prefill[w], "worker {w}");
    }
    let completed = r.requests.iter().filter(|q| q.failed.is_none()).count() as u64;
    assert_eq!(
        r.workers.workers.iter().map(|w| w.requests).sum::<u64>(),
        completed
    );
    let summarised: u64 = r
        .stages
        .iter()
        .map(|s| s.successful_requests + s.failed_requests)
        .sum();
    assert_eq!(summarised, r.requests.len() as u64);
    assert!(r.stages.iter().all(|s| s.unfinished_requests == 0));
    assert_series_consistent(r);
}

/// created ≤ router_in ≤ worker_in ≤ kv_lookup_start ≤ ready ≤ first_scheduled ≤
/// first_token ≤ completion, all reached.
pub(crate) fn assert_lifecycle_order(req: &RequestRecord) {
    let t = [
        req.created,
        req.router_in,
        req.worker_in,
        req.kv_lookup_start,
        req.ready,
        req.first_scheduled,
        req.first_token,
        req.completion,
    ];
    assert!(
        t.windows(2).all(|w| w[0] <= w[1]),
        "request {} timestamps out of order: {t:?}",
        req.id
    );
    assert!(req.worker.is_some());
}

/// Every per-second column has `points` entries covering the run; busy fractions lie in
/// [0, 1]; arrivals and completions add up to the records.
pub(crate) fn assert_series_consistent(r: &SimulationResults) {
    let s = &r.series;
    assert_eq!(
        s.points as u64,
        (r.end_time.ceil() as u64).div_ceil(s.bucket_seconds),
        "series cover [0, end)"
    );
    assert_eq!(s.arrivals.len(), s.points);
    assert_eq!(s.completions.len(), s.points);
    assert_eq!(s.output_tokens.len(), s.points);
    assert_eq!(s.active_workers.len(), s.points);
    for (w, col) in s.workers.iter().enumerate() {
        assert_eq!(col.busy_fraction.len(), s.points, "worker {w}");
        assert_eq!(col.waiting.len(), s.points, "worker {w}");
        assert_eq!(col.running.len(), s.points, "worker {w}");
        assert_eq!(col.kv_blocks.len(), s.points, "worker {w}");
        for (k, &b) in col.busy_fraction.iter().enumerate() {
            assert!((0.0..=1.0).contains(&b), "worker {w} second {k}: busy {b}");
        }
    }
    let arrivals: u64 = s.arrivals.iter().map(|&n| n as u64).sum();
    assert_eq!(arrivals, r.requests.len() as u64);
    let completed = r.requests.iter().filter(|q| q.is_completed()).count() as u64;
    let completions: u64 = s.completions.iter().map(|&n| n as u64).sum();
    assert_eq!(completions, completed);
    let tokens: u64 = s.output_tokens.iter().sum();
    let emitted: u64 = r.requests.iter().map(|q| q.output_tokens as u64).sum();
    assert_eq!(tokens, emitted);
}

/// A Mooncake-style trace: one `(timestamp ms, input, output, hash ids)` per line.
pub(crate) fn trace(lines: &[(f64, u32, u32, &[u64])]) -> String {
    lines
        .iter()
        .map(|(ts, input, output, ids)| {
            format!(
                r#"{{"timestamp": {ts}, "input_length": {input}, "output_length": {output}, "hash_ids": {ids:?}}}"#
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `a ≈ b` to within 1 ns (sums of step times carry rounding).
pub(crate) fn assert_close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() < 1e-9, "{what}: {a} != {b}");
}

/// Which worker each request was routed to, in request order.
pub(crate) fn routed_workers(r: &SimulationResults) -> Vec<u32> {
    let mut by_request: Vec<_> = r
        .decisions
        .iter()
        .map(|d| (d.request, d.decision.worker))
        .collect();
    by_request.sort();
    by_request.into_iter().map(|(_, w)| w).collect()
}
