//! Offload tiers end to end: a prompt evicted from a small GPU cache comes back from the
//! tier at the link's speed; a shared tier serves one worker what another stored; the
//! fetch cap holds. Trace prompts use hash ids of 256 tokens = one tier chunk
//! (`kv_cache.chunk_size` 256), so a tier holds exactly the full chunks of a prompt.
//!
//! granite-3.3-8b: KV bytes per token = 2 · 40 layers · 8 KV heads · 128 · 2 B = 163,840.

mod platform_common;

use platform_common::{assert_close, routed_workers, run, run_sliced, trace};

const KV_BYTES_PER_TOKEN: f64 = 163_840.0;

fn scenario(workers: u32, tier: &str, worker_extra: &str) -> String {
    format!(
        r#"{{
        "simulation": {{ "num_workers": {workers} }},
        "model": {{ "name": "granite-3.3-8b-instruct", "max_model_len": 1024 }},
        "worker": {{ "timing": {{ "model": "constant", "constant_step_time": 0.01 }} {worker_extra} }},
        "kv_cache": {{ "tiers": [ {tier} ], "chunk_size": 256 }},
        "workload": {{ "stages": [
            {{ "type": "Trace", "trace_file": "t.jsonl", "hash_block_size": 256 }} ] }}
    }}"#
    )
}

#[test]
fn a_prompt_evicted_from_the_gpu_is_fetched_back_from_the_cpu_tier() {
    // 64 GPU blocks (1024 tokens). Request 0: 600 tokens (chunks 1, 2 full, 88 more); on
    // completion its 2 full chunks go to the CPU tier. Requests 1 and 2: 1000 unrelated
    // tokens each (63 blocks): the first evicts all but one block of request 0's cache,
    // the second the rest (least recently used first). Request 3 repeats request 0's prompt.
    let t = trace(&[
        (0.0, 600, 2, &[1, 2, 3]),
        (100.0, 1000, 2, &[10, 11, 12, 13]),
        (200.0, 1000, 2, &[20, 21, 22, 23]),
        (300.0, 600, 2, &[1, 2, 3]),
    ]);
    let json = scenario(
        1,
        r#"{ "preset": "cpu_dram" }"#,
        r#", "num_gpu_blocks_override": 64"#,
    );
    let r = run(&json, &[("t.jsonl", &t)]);
    let q = &r.requests[3];
    assert_eq!(q.sources.gpu_cache, 0, "evicted from the GPU");
    assert_eq!(
        q.sources.tiers()[0],
        512,
        "two full chunks from the CPU tier"
    );
    assert_eq!(q.sources.computed, 88);
    // An idle link: latency + bytes / bandwidth = 200 ns + 512 · 163,840 B / 50e9 B/s
    // = 0.0000002 + 0.0016777216 = 0.0016779216 s.
    let expected = 2e-7 + 512.0 * KV_BYTES_PER_TOKEN / 50e9;
    assert_close(q.ready - q.kv_lookup_start, expected, "fetch time");
    assert_close(expected, 0.001_677_921_6, "hand arithmetic");
    // Fetched, it is admitted at once and prefills the 88 remaining tokens in one step.
    assert_eq!(q.first_scheduled, q.ready);
    assert_close(q.first_token, q.ready + 0.01, "first token");
    // The first run of the prompt had nothing to fetch.
    assert_eq!(r.requests[0].sources.tiers()[0], 0);
    assert_eq!(r.requests[0].ready, r.requests[0].kv_lookup_start);
    assert_eq!(r.stages[0].prefix_hit_rate.tiers.len(), 1);
    assert!(r.stages[0].prefix_hit_rate.tiers[0] > 0.0);
}

#[test]
fn a_shared_tier_serves_worker_b_what_worker_a_stored() {
    // Round robin: request 0 runs on worker 0 and stores its 2 full chunks; request 1, the
    // same prompt 0.5 s later, runs on worker 1, whose GPU has never seen it.
    let t = trace(&[(0.0, 600, 2, &[1, 2, 3]), (500.0, 600, 2, &[1, 2, 3])]);
    let shared = scenario(2, r#"{ "preset": "distributed_fs" }"#, "");
    let r = run(&shared, &[("t.jsonl", &t)]);
    assert_eq!(routed_workers(&r), vec![0, 1]);
    let q = &r.requests[1];
    assert_eq!((q.sources.gpu_cache, q.sources.tiers()[0]), (0, 512));
    // 100 µs + 512 · 163,840 B / 100e9 B/s = 0.0001 + 0.00083886080 = 0.0009388608 s.
    assert_close(q.ready - q.kv_lookup_start, 0.000_938_860_8, "fetch time");

    // The same with a per-worker CPU tier: worker 1's own tier is empty.
    let private = scenario(2, r#"{ "preset": "cpu_dram" }"#, "");
    let r = run(&private, &[("t.jsonl", &t)]);
    let q = &r.requests[1];
    assert_eq!((q.sources.tiers()[0], q.sources.computed), (0, 600));
}

#[test]
fn at_most_max_kvc_ready_requests_fetch_at_once() {
    // Prefix caching off, so every repeat comes from the tier; a 0.5 s tier latency makes
    // each fetch last ≥ 0.5 s. Six repeats arrive together at t = 1 with a cap of 2: a
    // fetch slot frees only when a fetched request is admitted, so the k-th fetch to
    // finish started after the (k − 2)-th admission: ready_k ≥ admitted_{k−2} + 0.5.
    let mut lines: Vec<(f64, u32, u32, &[u64])> = vec![(0.0, 600, 2, &[1, 2, 3])];
    lines.extend((0..6).map(|_| (1000.0, 600, 2, &[1u64, 2, 3][..])));
    let json = scenario(
        1,
        r#"{ "preset": "cpu_dram", "latency_s": 0.5 }"#,
        r#", "enable_prefix_caching": false, "max_kvc_ready_requests": 2"#,
    );
    // Invariants after every event: the scheduler's fetch list never exceeds the cap.
    let r = run_sliced(&json, &[("t.jsonl", &trace(&lines))], 1);
    let sorted = |f: fn(&engine::stats::RequestRecord) -> f64| {
        let mut v: Vec<f64> = r.requests.iter().skip(1).map(f).collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let ready = sorted(|q| q.ready);
    let admitted = sorted(|q| q.first_scheduled);
    println!("ready: {ready:?}\nadmitted: {admitted:?}");
    // The first two share the link: 0.5 s + 2 · 83,886,080 B / 50e9 B/s = 1.5033554432.
    assert_close(ready[0], 1.503_355_443_2, "first wave");
    assert_close(ready[1], 1.503_355_443_2, "first wave");
    for k in 2..6 {
        assert!(
            ready[k] >= admitted[k - 2] + 0.5,
            "fetch {k} started before a slot was free: {ready:?} {admitted:?}"
        );
    }
    assert!(
        ready[2] > 2.0,
        "without the cap all six would be ready at ≈ 1.51"
    );
    assert!(r
        .requests
        .iter()
        .skip(1)
        .all(|q| q.sources.tiers()[0] == 512));
}

#[test]
fn a_prompt_reaches_a_tier_only_once_its_write_has_crossed_the_link() {
    // A slow CPU tier: 0.1 GB/s, so writing request 0's 2 full chunks (512 tokens ·
    // 163,840 B = 83,886,080 B) takes 0.8388608 s after it completes. Prefix caching is off,
    // so only the tier can serve a repeat. Request 0 completes at 0.02 s (prefill 600
    // tokens in one step, then one decode step): its write lands at 0.8588608 s. A repeat
    // at 0.5 s finds nothing; a repeat at 2 s finds both chunks.
    let t = trace(&[
        (0.0, 600, 2, &[1, 2, 3]),
        (500.0, 600, 2, &[1, 2, 3]),
        (2000.0, 600, 2, &[1, 2, 3]),
    ]);
    let json = scenario(
        1,
        r#"{ "preset": "cpu_dram", "bandwidth_gbps": 0.1 }"#,
        r#", "enable_prefix_caching": false"#,
    );
    let r = run(&json, &[("t.jsonl", &t)]);
    assert_close(r.requests[0].completion, 0.02, "first run done");
    assert_eq!(
        r.requests[1].sources.tiers()[0],
        0,
        "the write had not landed at 0.5 s"
    );
    assert_eq!(r.requests[2].sources.tiers()[0], 512, "it had by 2 s");
}

#[test]
fn kv_reaches_the_tiers_as_it_is_computed_not_when_the_request_completes() {
    // Request 0 (600 prompt tokens, 100 output tokens) runs on worker 0 from t = 0: its
    // prefill step [0, 0.01] computes prompt chunks 1 and 2 (tokens 0..512), which vLLM's
    // offloading connector saves at once: by 0.01 + 0.94 ms they are in the shared tier,
    // while request 0 decodes until 0.01 + 99 · 0.01 = 1.00 s. Request 1, the same prompt
    // at 0.5 s, goes to worker 1 (round robin) and fetches those 512 tokens; its 3rd chunk
    // (tokens 512..768) never filled: 600 + 99 tokens is all request 0 ever computed.
    let t = trace(&[(0.0, 600, 100, &[1, 2, 3]), (500.0, 600, 2, &[1, 2, 3])]);
    let as_computed = scenario(2, r#"{ "preset": "distributed_fs" }"#, "");
    let r = run(&as_computed, &[("t.jsonl", &t)]);
    assert_close(
        r.requests[0].completion,
        1.0,
        "request 0 still decoding at 0.5 s",
    );
    let q = &r.requests[1];
    assert_eq!(q.worker, Some(1));
    assert_eq!((q.sources.tiers()[0], q.sources.computed), (512, 88));
    // 100 µs + 512 · 163,840 B / 100e9 B/s = 0.0009388608 s.
    assert_close(q.ready - q.kv_lookup_start, 0.000_938_860_8, "fetch time");

    // Storing completed prompts only (the original Opal), the tier is still empty at 0.5 s.
    let on_completion = as_computed.replace(
        r#""chunk_size": 256 }"#,
        r#""chunk_size": 256, "store": "on_completion" }"#,
    );
    let r = run(&on_completion, &[("t.jsonl", &t)]);
    let q = &r.requests[1];
    assert_eq!((q.sources.tiers()[0], q.sources.computed), (0, 600));
}
