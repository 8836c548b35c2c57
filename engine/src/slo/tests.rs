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
    let rep = c.report(&records(), &windows());
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
    let rep = c.report(&records(), &windows());
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
        .report(&records(), &windows())
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
    let text = c.report(&records(), &windows()).render_text();
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
