//! The routing demo (issue 5): on a shared-prefix workload under load, prefix-aware routing
//! must beat round robin clearly on TTFT and on GPU prefix-cache hits.
//!
//! Four granite-3.3-8b workers on H100s (roofline timing), 8 system prompts of 2,000 tokens
//! with Zipf(1) popularity, a 100..=300-token unique question and 64..=128 output tokens.
//! Each worker's GPU cache is capped at 640 blocks (10,240 tokens): room for about three
//! system prompts next to the running requests. Round robin sends every prompt everywhere,
//! so each worker would need all eight (8 × 125 = 1,000 blocks) and keeps evicting them;
//! prefix-aware routing gives each prompt a home. A 2,000-token prefill costs ≈ 65 ms of
//! compute (2 · 8.2 G params · 2,000 tokens / (0.5 · 989.5 TFLOP/s)), so at 40 req/s the
//! recomputation alone is more than round robin's four workers can absorb: queues form.

mod platform_common;

use engine::stats::StageSummary;
use platform_common::run;

fn demo(policy: &str, seed: u64) -> StageSummary {
    let json = format!(
        r#"{{
        "simulation": {{ "num_workers": 4, "seed": {seed} }},
        "model": {{ "name": "granite-3.3-8b-instruct", "max_model_len": 4096 }},
        "worker": {{ "num_gpu_blocks_override": 640 }},
        "router": {{ "policy": {policy}, "kv_event_interval": 1.0 }},
        "workload": {{ "stages": [ {{ "type": "ExponentialReqRate", "request_rate": 40,
            "total_requests": 1200,
            "shared_prefix": {{ "groups": 8, "length": 2000,
                                "popularity": {{ "type": "zipf", "s": 1.0 }} }},
            "input_length": {{ "type": "uniform", "min": 100, "max": 300 }},
            "output_length": {{ "type": "uniform", "min": 64, "max": 128 }} }} ] }}
    }}"#
    );
    let r = run(&json, &[]);
    assert_eq!(r.stages[0].successful_requests, 1200, "{policy}");
    r.stages[0].clone()
}

#[test]
fn prefix_aware_routing_beats_round_robin_on_ttft_and_cache_hits() {
    // Not one lucky seed: the margins hold for every seed tried.
    for seed in [5, 11, 2026] {
        compare(seed);
    }
}

fn compare(seed: u64) {
    let rr = demo(r#"{ "policy": "round_robin" }"#, seed);
    let mp = demo(r#"{ "policy": "max_prefix" }"#, seed);
    let pl = demo(r#"{ "policy": "prefix_load" }"#, seed);
    println!("seed {seed}");
    println!(
        "policy        mean TTFT ms  p90 TTFT ms  GPU hit rate  re-hit rate  mean E2E ms  preemptions"
    );
    for (name, s) in [
        ("round_robin", &rr),
        ("max_prefix", &mp),
        ("prefix_load", &pl),
    ] {
        println!(
            "{name:<12}  {:>12.1}  {:>11.1}  {:>12.3}  {:>11.3}  {:>11.1}  {:>11}",
            s.ttft.mean_ms,
            s.ttft.p90_ms,
            s.prefix_hit_rate.gpu_cache,
            s.prefix_hit_rate.gpu_rehit,
            s.e2e.mean_ms,
            s.preemptions
        );
    }
    for (name, s) in [("max_prefix", &mp), ("prefix_load", &pl)] {
        // A clear margin: at most half round robin's mean TTFT …
        assert!(
            s.ttft.mean_ms < 0.5 * rr.ttft.mean_ms,
            "seed {seed}, {name}: mean TTFT {} ms vs round robin {} ms",
            s.ttft.mean_ms,
            rr.ttft.mean_ms
        );
        // … and at least 15 points more of the prompt served from the GPU cache.
        assert!(
            s.prefix_hit_rate.gpu_cache > rr.prefix_hit_rate.gpu_cache + 0.15,
            "seed {seed}, {name}: GPU hit rate {} vs round robin {}",
            s.prefix_hit_rate.gpu_cache,
            rr.prefix_hit_rate.gpu_cache
        );
    }
}
