//! Hand-checked SLO cases: every expected figure is worked out in the comments.

use super::*;
use crate::measure::MeasuredWindow;
use crate::stats::{FailReason, RequestRecord};

/// A completed request: created `c`, first token `ft`, done `done`, `out` output tokens,
/// on worker `w` (times are binary-exact so the bounds compare exactly).
fn done(id: u64, stage: u32, w: u32, c: f64, ft: f64, end: f64, out: u32) -> RequestRecord {
    let mut r = RequestRecord::new(id, stage, c, 100);
    r.worker = Some(w);
    r.first_token = ft;
    r.completion = end;
    r.output_tokens = out;
    r
}

/// Six requests:
/// - r0 (stage 0, worker 0): TTFT 250 ms, TPOT 0.5/8 = 62.5 ms, 9 tokens — attains;
/// - r1 (stage 0, worker 0): TTFT 500 ms (on the bound: meets), TPOT 1/4 = 250 ms — misses TPOT;
/// - r2 (stage 0, worker 1): TTFT 750 ms — misses TTFT; TPOT 0.25/4 = 62.5 ms;
/// - r3 (stage 0, worker 1): TTFT 125 ms, one token (no TPOT) — attains;
/// - r4 (stage 1, never routed): rejected;
/// - r5 (stage 1, worker 1): unfinished.
fn records() -> Vec<RequestRecord> {
    let mut r4 = RequestRecord::new(4, 1, 4.0, 100);
    r4.completion = 4.0;
    r4.failed = Some(FailReason::ExceedsMaxModelLen {
        tokens: 9000,
        max_model_len: 8192,
    });
    let mut r5 = RequestRecord::new(5, 1, 5.0, 100);
    r5.worker = Some(1);
    vec![
        done(0, 0, 0, 0.0, 0.25, 0.75, 9),
        done(1, 0, 0, 1.0, 1.5, 2.5, 5),
        done(2, 0, 1, 2.0, 2.75, 3.0, 5),
        done(3, 0, 1, 3.0, 3.125, 3.625, 1),
        r4,
        r5,
    ]
}

/// Stage 0 measured over 0–6 s, stage 1 over 4–6 s (every request in its window); the run
/// over the 8 s they add up to. The later halves start at r2 and r5.
fn windows() -> Vec<MeasuredWindow> {
    vec![
        MeasuredWindow::spanning(0, 0.0, 6.0, 2.0),
        MeasuredWindow::spanning(1, 4.0, 6.0, 5.0),
    ]
}

fn slo(json: &str) -> SloConfig {
    serde_json::from_str(json).unwrap()
}

#[test]
fn attainment_and_goodput_count_only_requests_meeting_every_per_request_target() {
    let c = slo(r#"{"ttft_ms": {"max": 500}, "tpot_ms": {"max": 80}}"#);
    // Stage 0 over 6 s, stage 1 over 2 s; the run over 8.
    let rep = c.report(&records(), &windows(), &[]);
    // Run: r0 and r3 attain, of 6 → 1/3; 2 / 8 s = 0.25 req/s; (9 + 1) / 8 = 1.25 tok/s.
    assert_eq!(rep.overall.requests, 6);
    assert_eq!(rep.overall.attained, 2);
    assert_eq!(rep.overall.attainment, 1.0 / 3.0);
    assert_eq!(rep.overall.goodput_rps, 0.25);
    assert_eq!(rep.overall.goodput_output_tps, 1.25);
    // No percentile target: met whenever there are requests.
    assert!(rep.overall.met);
    // Stage 0: 2 of 4 over 6 s; stage 1: none of 2.
    assert_eq!(rep.stages[0].summary.attainment, 0.5);
    assert_eq!(rep.stages[0].summary.goodput_rps, 2.0 / 6.0);
    assert_eq!(rep.stages[0].summary.goodput_output_tps, 10.0 / 6.0);
    assert_eq!(rep.stages[1].summary.attained, 0);
    // Worker 0: r0, r1 → 1 of 2; worker 1: r2, r3, r5 → 1 of 3 (r4 never reached one).
    let w: Vec<(u64, u64)> = rep
        .workers
        .iter()
        .map(|g| (g.summary.requests, g.summary.attained))
        .collect();
    assert_eq!(w, [(2, 1), (3, 1)]);
    assert_eq!(rep.workers[1].summary.goodput_output_tps, 1.0 / 8.0);
}

#[test]
fn percentile_targets_count_failed_and_unfinished_requests_as_infinitely_late() {
    let c = slo(
        r#"{"ttft_ms": {"p": 50, "max": 700}, "e2e_ms": {"p": 90, "max": 5000},
            "tpot_ms": {"p": 50, "max": 250}, "min_attainment": 0.5}"#,
    );
    let rep = c.report(&records(), &windows(), &[]);
    let run = &rep.overall;
    // TTFT, ms, sorted: 125, 250, 500, 750, ∞, ∞. p50: h = 5·0.5 = 2.5 → between 500 and
    // 750 at 0.5 → 625 ≤ 700: met.
    assert_eq!(run.percentiles[0].value_ms, 625.0);
    assert!(run.percentiles[0].met);
    // TPOT (r3 has none), ms: 62.5, 62.5, 250, ∞, ∞; p50: h = 2 → 250 ≤ 250: met.
    assert_eq!(run.percentiles[1].value_ms, 250.0);
    assert!(run.percentiles[1].met);
    // E2E p90: h = 4.5 lies between the two ∞ → ∞: missed.
    assert_eq!(run.percentiles[2].value_ms, f64::INFINITY);
    assert!(!run.percentiles[2].met);
    assert!(!run.met);
    // No per-request target: every completed request attains (4 of 6; 4 of 4 in stage 0).
    assert_eq!(run.attained, 4);
    let s0 = &rep.stages[0].summary;
    // Stage 0 TTFT: 125, 250, 500, 750; p50: h = 1.5 → 500 − 250·0.5 = 375. E2E, ms:
    // 750, 1500, 1000, 625 → sorted 625, 750, 1000, 1500; p90: h = 2.7 → 1500 − 500·0.3 = 1350.
    assert_eq!(s0.percentiles[0].value_ms, 375.0);
    assert_eq!(s0.percentiles[2].value_ms, 1350.0);
    assert!(s0.met);
    // Stage 1: nothing completed, so no TTFT below ∞ and attainment 0 < 0.5.
    assert!(!rep.stages[1].summary.met);
}

#[test]
fn min_attainment_decides_with_per_request_targets() {
    let at = |a: f64| {
        slo(&format!(
            r#"{{"ttft_ms": {{"max": 500}}, "min_attainment": {a}}}"#
        ))
        .report(&records(), &windows(), &[])
    };
    // TTFT ≤ 500 ms: r0, r1, r3 → 3 of 4 in stage 0, 3 of 6 in the run.
    assert!(at(0.75).stages[0].summary.met);
    assert!(!at(0.76).stages[0].summary.met);
    assert!(at(0.5).overall.met);
    assert!(!at(0.51).overall.met);
}

#[test]
fn the_table_lists_the_run_each_stage_and_each_worker() {
    let c = slo(r#"{"ttft_ms": {"p": 50, "max": 700}, "tpot_ms": {"max": 80}}"#);
    let text = c.report(&records(), &windows(), &[]).render_text();
    assert!(
        text.starts_with(
            "SLO: TTFT p50 <= 700 ms, TPOT <= 80 ms (judged on each stage's measurement window)\n"
        ),
        "{text}"
    );
    let scopes: Vec<&str> = text
        .lines()
        .skip(2)
        .map(|l| l.split("  ").next().unwrap().trim())
        .collect();
    assert_eq!(
        scopes,
        ["run", "stage 0", "stage 1", "worker 0", "worker 1"]
    );
}

/// A request prefilled on worker `p` and decoded on worker `d` (its record names `p`).
fn handed_off(r: &RequestRecord, d: u32) -> crate::stats::TransferRecord {
    let mut t = crate::stats::TransferRecord::new(r.id, r.worker.unwrap(), r.first_token);
    t.decode_worker = Some(d);
    t
}

#[test]
fn a_disaggregated_request_charges_ttft_to_its_prefill_worker_and_tpot_to_its_decode_worker() {
    let c = slo(r#"{"ttft_ms": {"max": 500}, "tpot_ms": {"max": 80}}"#);
    let p50 = slo(r#"{"ttft_ms": {"max": 400, "p": 50}}"#);
    // Prefilled on worker 0:
    // - r0: TTFT 250 ms, TPOT 0.5/8 = 62.5 ms, decoded on worker 1;
    // - r1: TTFT 500 ms, TPOT 1/4 = 250 ms (slow decode), decoded on worker 2;
    // - r2: TTFT 750 ms (slow prefill), TPOT 0.25/4 = 62.5 ms, decoded on worker 2;
    // - r3: TTFT 125 ms, then unfinished on worker 1.
    let mut r3 = RequestRecord::new(3, 0, 3.0, 100);
    r3.worker = Some(0);
    r3.first_token = 3.125;
    let records = vec![
        done(0, 0, 0, 0.0, 0.25, 0.75, 9),
        done(1, 0, 0, 1.0, 1.5, 2.5, 5),
        done(2, 0, 0, 2.0, 2.75, 3.0, 5),
        r3,
    ];
    let transfers: Vec<_> = [1, 2, 2, 1]
        .iter()
        .zip(&records)
        .map(|(&d, r)| handed_off(r, d))
        .collect();
    let rep = c.report(
        &records,
        &[MeasuredWindow::spanning(0, 0.0, 4.0, 2.0)],
        &transfers,
    );
    let w = |i: usize| &rep.workers[i].summary;
    assert_eq!(rep.workers.len(), 3);
    // Worker 0 answers for the four TTFTs: r0, r1 and r3 came in time (r3's first token
    // stands though its decode never finished), r2 did not.
    assert_eq!((w(0).requests, w(0).attained), (4, 3));
    // Worker 1 decoded r0 (met) and r3 (unfinished: a miss).
    assert_eq!((w(1).requests, w(1).attained), (2, 1));
    // Worker 2 decoded r1 (TPOT 250 ms: its miss) and r2 (met: its TTFT is worker 0's).
    assert_eq!((w(2).requests, w(2).attained), (2, 1));
    // The run is judged whole: only r0 met both.
    assert_eq!(rep.overall.attained, 1);
    // A percentile target on TTFT: worker 0's four, 125, 250, 500, 750 ms, have a median of
    // 375 ms; the decode workers answer for no TTFT, so theirs is vacuous (no value, met).
    let rep = p50.report(
        &records,
        &[MeasuredWindow::spanning(0, 0.0, 4.0, 2.0)],
        &transfers,
    );
    let check = |i: usize| &rep.workers[i].summary.percentiles[0];
    assert_eq!((check(0).value_ms, check(0).met), (375.0, true));
    assert!(check(1).value_ms.is_nan() && check(1).met);
    assert!(check(2).value_ms.is_nan() && check(2).met);
    // The table shows the check a worker does not answer for as "-".
    let text = rep.render_text();
    let row = text.lines().find(|l| l.starts_with("worker 1")).unwrap();
    assert!(row.trim_end().ends_with("-  yes"), "{row}");
}

#[test]
fn a_slow_decode_pool_misses_on_its_own_rows() {
    use crate::scenario::{Scenario, ScenarioData};
    // One H100 prefill worker at 2 r/s of 512-token prompts (TTFT well under 2 s) hands
    // every request to one decode worker whose steps take 50 ms: every TPOT misses 20 ms.
    let scenario = Scenario::from_test_json(
        r#"{
        "deployment": { "pools": [
            { "role": "prefill" },
            { "role": "decode", "worker": { "timing": { "model": "constant",
                "constant_step_time": 0.05 } } } ] },
        "workload": { "stages": [ { "type": "UniformReqRate", "request_rate": 2,
            "input_length": { "type": "constant", "value": 512 },
            "output_length": { "type": "constant", "value": 16 },
            "total_requests": 20 } ] },
        "slo": { "ttft_ms": { "max": 2000 }, "tpot_ms": { "max": 20 } }
    }"#,
    )
    .unwrap();
    let mut sim = crate::simulation::Simulation::new(&scenario, &ScenarioData::new()).unwrap();
    sim.run();
    let slo = sim.results().slo.unwrap();
    let w = |i: usize| &slo.workers[i].summary;
    // Prefill worker 0: every TTFT met. Decode worker 1: every TPOT missed. (The first 2
    // of the 20 requests are the warm-up.)
    assert_eq!((w(0).requests, w(0).attained), (18, 18));
    assert_eq!((w(1).requests, w(1).attained), (18, 0));
    assert_eq!(slo.overall.attained, 0);
}
