//! The stage table on a handful of requests whose every number is worked out by hand.

use engine::stats::{FailReason, RequestRecord, StageStats, StageSummary};

fn close(a: f64, b: f64) {
    assert!((a - b).abs() < 1e-9, "{a} vs {b}");
}

/// Builds a completed request and feeds its tokens to `stats`.
/// `tokens` are the emission times; the first is the first token, the last the completion.
fn done(
    stats: &mut StageStats,
    id: u64,
    created: f64,
    first_scheduled: f64,
    tokens: &[f64],
    prompt: u32,
) -> RequestRecord {
    let mut r = RequestRecord::new(id, 0, created, prompt);
    r.router_in = created;
    r.worker_in = created;
    r.first_scheduled = first_scheduled;
    r.first_token = tokens[0];
    r.completion = *tokens.last().unwrap();
    r.output_tokens = tokens.len() as u32;
    for (i, &t) in tokens.iter().enumerate() {
        stats.on_tokens(t, 1);
        if i > 0 {
            stats.on_itl(t - tokens[i - 1], 1);
        }
    }
    r.sources.computed = prompt;
    r
}

/// Stage 0 runs over [0, 10):
///
/// | req | created | sched | tokens                          | out | prompt |
/// |-----|---------|-------|---------------------------------|-----|--------|
/// | A   | 0.0     | 0.5   | 1.0 1.5 2.0 2.5 3.0             | 5   | 100    |
/// | B   | 1.0     | 1.0   | 1.5 2.0 2.5                     | 3   | 200    |
/// | C   | 2.0     | 2.25  | 4.0                             | 1   | 50     |
/// | D   | 2.5     | 3.5   | 5.0 5.125 … 6.0 (step 0.125)    | 9   | 400    |
/// | E   | 3.0     | rejected at 3.0 (prompt too long)       |     | 9000   |
/// | F   | 8.0     | still waiting at the end                |     | 10     |
fn scenario() -> StageSummary {
    let mut s = StageStats::new(0, 0.0);
    let mut a = done(&mut s, 1, 0.0, 0.5, &[1.0, 1.5, 2.0, 2.5, 3.0], 100);
    let mut b = done(&mut s, 2, 1.0, 1.0, &[1.5, 2.0, 2.5], 200);
    let c = done(&mut s, 3, 2.0, 2.25, &[4.0], 50);
    let d_tokens: Vec<f64> = (0..9).map(|i| 5.0 + 0.125 * i as f64).collect();
    let mut d = done(&mut s, 4, 2.5, 3.5, &d_tokens, 400);
    let mut e = RequestRecord::new(5, 0, 3.0, 9000);
    e.completion = 3.0;
    e.failed = Some(FailReason::ExceedsMaxModelLen {
        tokens: 9100,
        max_model_len: 8192,
    });
    let f = RequestRecord::new(6, 0, 8.0, 10);
    // Prompt sources: A 64 GPU + 36 computed; B 128 tier 0 + 72 computed;
    // C 50 computed; D 200 GPU + 100 tier 1 + 100 computed.
    a.sources.gpu_cache = 64;
    a.sources.computed = 36;
    b.sources.add_tier(0, 128);
    b.sources.computed = 72;
    d.sources.gpu_cache = 200;
    d.sources.add_tier(1, 100);
    d.sources.computed = 100;
    a.preemptions = 1;
    d.preemptions = 2;
    s.summarize(10.0, 2, [&a, &b, &c, &d, &e, &f])
}

#[test]
fn counts_tokens_and_throughputs() {
    let s = scenario();
    assert_eq!(s.successful_requests, 4);
    assert_eq!(s.failed_requests, 1);
    assert_eq!(s.failed_by_reason.get("exceeds_max_model_len"), Some(&1));
    assert_eq!(s.unfinished_requests, 1);
    close(s.duration_s, 10.0);
    // Completed only: input 100 + 200 + 50 + 400 = 750; output 5 + 3 + 1 + 9 = 18.
    assert_eq!(s.total_input_tokens, 750);
    assert_eq!(s.total_generated_tokens, 18);
    close(s.request_throughput, 0.4); // 4 / 10
    close(s.output_throughput, 1.8); // 18 / 10
    close(s.total_token_throughput, 76.8); // 768 / 10
}

#[test]
fn peak_output_throughput_is_the_best_aligned_second() {
    // Windows from the stage start: [1,2) A 1.0 1.5 + B 1.5 = 3; [2,3) A 2.0 2.5 + B 2.0 2.5 = 4;
    // [3,4) 1; [4,5) 1; [5,6) D 5.0 … 5.875 = 8; [6,7) D 6.0 = 1.
    assert_eq!(scenario().peak_output_throughput, 8.0);
}

#[test]
fn peak_concurrency_counts_departures_before_arrivals() {
    // In the platform: A [0,3) B [1,2.5) C [2,4) D [2.5,6) E [3,3) F [8,∞).
    // At 2.0: A, B, C = 3. At 2.5 B leaves as D arrives: still 3, never 4.
    assert_eq!(scenario().peak_concurrent_requests, 3);
}

#[test]
fn ttft_e2e_tpot_and_queueing_percentiles() {
    let s = scenario();
    // TTFT sorted [0.5, 1.0, 2.0, 2.5] s: mean 6/4 = 1.5; median h = 1.5 → 1.5;
    // p90 h = 2.7 → 2.5 − 0.5·0.3 = 2.35; p99 h = 2.97 → 2.5 − 0.5·0.03 = 2.485.
    assert_eq!(s.ttft.count, 4);
    close(s.ttft.mean_ms, 1500.0);
    close(s.ttft.median_ms, 1500.0);
    close(s.ttft.p90_ms, 2350.0);
    close(s.ttft.p99_ms, 2485.0);
    // E2E sorted [1.5 (B), 2.0 (C), 3.0 (A), 3.5 (D)]: mean 2.5; median 2.5;
    // p90 3.5 − 0.5·0.3 = 3.35; p99 3.5 − 0.5·0.03 = 3.485.
    close(s.e2e.mean_ms, 2500.0);
    close(s.e2e.median_ms, 2500.0);
    close(s.e2e.p90_ms, 3350.0);
    close(s.e2e.p99_ms, 3485.0);
    // TPOT: A (3−1)/4 = 0.5, B (2.5−1.5)/2 = 0.5, D (6−5)/8 = 0.125; C has 1 token, excluded.
    // Sorted [0.125, 0.5, 0.5]: mean 1.125/3 = 0.375; median, p90, p99 = 0.5.
    assert_eq!(s.tpot.count, 3);
    close(s.tpot.mean_ms, 375.0);
    close(s.tpot.median_ms, 500.0);
    close(s.tpot.p99_ms, 500.0);
    // Queueing (first scheduled − worker in): A 0.5, B 0, C 0.25, D 1.0 → sorted
    // [0, 0.25, 0.5, 1.0]: mean 0.4375; median 0.375; p90 1.0 − 0.5·0.3 = 0.85.
    close(s.queueing.mean_ms, 437.5);
    close(s.queueing.median_ms, 375.0);
    close(s.queueing.p90_ms, 850.0);
}

#[test]
fn itl_pools_every_gap() {
    let s = scenario();
    // Gaps: A 4 × 0.5, B 2 × 0.5, D 8 × 0.125 → 14 gaps, sum 3 + 1 = 4 s, mean 4/14 s.
    // Sorted: 8 × 0.125 then 6 × 0.5. Median h = 6.5 (both neighbours 0.125);
    // p90 h = 11.7 (both 0.5).
    assert_eq!(s.itl.count, 14);
    close(s.itl.mean_ms, 4000.0 / 14.0);
    close(s.itl.median_ms, 125.0);
    close(s.itl.p90_ms, 500.0);
    close(s.itl.p99_ms, 500.0);
}

#[test]
fn prefix_hits_by_source_and_preemptions() {
    let s = scenario();
    // Of 750 prompt tokens: GPU 64 + 200 = 264, tier 0 128, tier 1 100, computed 36+72+50+100 = 258.
    let h = &s.prefix_hit_rate;
    close(h.gpu_cache, 264.0 / 750.0);
    assert_eq!(h.tiers.len(), 2);
    close(h.tiers[0], 128.0 / 750.0);
    close(h.tiers[1], 100.0 / 750.0);
    close(h.computed, 258.0 / 750.0);
    assert_eq!(s.preemptions, 3);
    assert_eq!(s.preempted_requests, 2);
}

#[test]
fn text_table_has_the_vllm_layout() {
    let t = scenario().render_text();
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(
        lines[0],
        "============ Serving Benchmark Result ============"
    );
    // Labels are padded to 40 characters, then one space, as vllm's "{:<40} {:<10}".
    assert!(t.contains(&format!("{:<40} 4\n", "Successful requests:")));
    assert!(t.contains(&format!("{:<40} 1500.00\n", "Mean TTFT (ms):")));
    assert!(t.contains(&format!(
        "{:<40} 8.00\n",
        "Peak output token throughput (tok/s):"
    )));
    assert!(t.contains("---------------Time to First Token----------------\n"));
    assert!(t.contains("-----Time per Output Token (excl. 1st token)------\n"));
    assert!(t.contains("  exceeds_max_model_len:"));
    assert_eq!(*lines.last().unwrap(), "=".repeat(50));
}

#[test]
fn summary_serializes_missing_figures_as_null() {
    let s = StageStats::new(3, 5.0).summarize(5.0, 0, []);
    let j = serde_json::to_value(&s).unwrap();
    assert_eq!(j["stage"], 3);
    assert!(j["ttft"]["mean_ms"].is_null());
    assert!(j["request_throughput"].is_null()); // zero duration
    assert!(s.render_text().contains("n/a"));
}
