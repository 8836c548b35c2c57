//! Prefill/decode disaggregation, worked out by hand: a prefill worker computes the prompt
//! and samples token 1, the request's KV crosses the prefill worker's link (latency, then
//! bytes at the link's bandwidth), and the decode worker samples the rest.
//!
//! The model is granite-3.3-8b: 40 layers × 8 KV heads × head_dim 128 (4096 / 32 heads) ×
//! K and V × 2 bytes = 163 840 bytes of KV per token.

mod platform_common;

use engine::scenario::ScenarioData;
use engine::timing::{SeqWork, TimingModel};
use platform_common::{assert_close, run, run_sliced, trace};

const KV_BYTES_PER_TOKEN: u64 = 40 * 8 * 128 * 2 * 2;

/// One prefill and one decode worker, 0.1 s steps (synchronous scheduling, so every step
/// starts when the previous one ends), a 1000-token prompt moving in exactly 0.1 s
/// (1000 × 163 840 B at 1.6384 GB/s) after a 0.05 s latency.
fn one_to_one(decode_extra: &str, model_extra: &str) -> String {
    format!(
        r#"{{
        "model": {{ "name": "granite-3.3-8b-instruct" {model_extra} }},
        "worker": {{ "async_scheduling": false,
                     "timing": {{ "model": "constant", "constant_step_time": 0.1 }} }},
        "deployment": {{
            "pools": [ {{ "name": "p", "role": "prefill", "num_workers": 1 }},
                       {{ "name": "d", "role": "decode", "num_workers": 1 {decode_extra} }} ],
            "kv_transfer": {{ "bandwidth_gbps": 1.6384, "latency_s": 0.05, "concurrency": 4 }}
        }},
        "workload": {{ "stages": [ {{ "type": "Trace", "trace_file": "t.jsonl" }} ] }}
    }}"#
    )
}

#[test]
fn one_request_prefills_on_one_worker_and_decodes_on_the_other() {
    let r = run(
        &one_to_one("", ""),
        &[("t.jsonl", &trace(&[(0.0, 1000, 3, &[])]))],
    );
    let q = &r.requests[0];
    // Prefill step [0, 0.1] on worker 0: token 1 at 0.1.
    assert_eq!(q.worker, Some(0));
    assert_close(q.first_token, 0.1, "first token");
    let t = &r.transfers[0];
    assert_eq!(
        (t.request, t.prefill_worker, t.decode_worker),
        (0, 0, Some(1))
    );
    // The decode policy (least loaded) saw one candidate, worker 1, with nothing outstanding.
    let choice = &r.decode_decisions[0];
    assert_eq!((choice.request, choice.decision.worker), (0, 1));
    assert_close(choice.time, 0.1, "decode choice");
    assert_eq!(choice.decision.candidates.len(), 1);
    assert_eq!(choice.decision.candidates.get(0).unwrap().outstanding, 0);
    // Worker 1 has room at once: the transfer starts at the hand-off, pays 0.05 s, then
    // moves 1000 tokens of KV in 0.1 s.
    assert_close(t.handoff, 0.1, "hand-off");
    assert_close(t.start, 0.1, "transfer start");
    assert_close(t.end, 0.1 + 0.05 + 0.1, "transfer end");
    assert_eq!((t.tokens, t.cached_tokens), (1000, 0));
    assert_eq!(t.bytes, 1000 * KV_BYTES_PER_TOKEN);
    // Decode steps on worker 1: token 2 at 0.35, token 3 at 0.45.
    assert_close(q.completion, 0.45, "completion");
    assert_eq!(q.output_tokens, 3);
    // The decode worker ran two steps (0.2 s), the prefill worker one (0.1 s) of 0.45 s.
    let busy: Vec<f64> = r.workers.workers.iter().map(|w| w.busy).collect();
    assert_close(busy[0], 0.1 / 0.45, "prefill busy");
    assert_close(busy[1], 0.2 / 0.45, "decode busy");
    // Imbalance counts the workers requests are routed to: the one prefill worker.
    assert_eq!(r.workers.load_imbalance, 1.0);
    let d = r
        .deployment
        .as_ref()
        .expect("a deployment reports its pools");
    assert_eq!(d.pools[0].requests, 1);
    assert_eq!(d.pools[1].requests, 1);
    assert_eq!(d.transfers, 1);
    assert_close(d.transfer.mean_ms, 150.0, "transfer delay ms");
    assert_close(d.ttft_prefill.mean_ms, 100.0, "TTFT prefill ms");
    assert_close(d.ttft_queueing.mean_ms, 0.0, "TTFT queueing ms");
    // The gap before token 2 holds the transfer: ITLs are 0.25 s and 0.1 s.
    assert_close(r.stages[0].itl.mean_ms, 175.0, "ITL mean ms");
    // The CSV row ends with the transfer: worker 1, hand-off, start, end, tokens, bytes.
    let csv = r.requests_csv();
    let header = csv.lines().next().unwrap();
    assert!(header.ends_with(
        ",decode_worker,transfer_handoff,transfer_start,transfer_end,transfer_tokens,\
         transfer_cached_tokens,transfer_bytes"
    ));
    let row = csv.lines().nth(1).unwrap();
    let end = format!(",1,0.1,0.1,{},1000,0,163840000", t.end);
    assert!(row.ends_with(&end), "{row}");
}

#[test]
fn ttft_is_the_prefill_step_and_token_two_follows_the_transfer() {
    // The calibrated timing model: TTFT is one prefill step of 2000 tokens on an H100, and
    // token 2 comes one latency + 2000 × 163 840 B / 50 GB/s + one decode step later.
    let doc = r#"{
        "deployment": {
            "pools": [ { "role": "prefill" }, { "role": "decode" } ],
            "kv_transfer": { "bandwidth_gbps": 50, "latency_s": 0.002 }
        },
        "workload": { "stages": [ { "type": "Trace", "trace_file": "t.jsonl" } ] }
    }"#;
    let data: ScenarioData = [("t.jsonl", trace(&[(0.0, 2000, 2, &[])]).as_str())]
        .into_iter()
        .collect();
    let scenario = opal::document::parse_with_data(doc, &data).unwrap();
    let model = scenario.model.resolve().unwrap();
    let hw = scenario.hardware.resolve().unwrap();
    assert_eq!(model.kv_bytes_per_token, KV_BYTES_PER_TOKEN);
    let timing = TimingModel::new(&scenario.worker.timing, &model, &hw, 0.0);
    let prefill = timing.step_time([SeqWork {
        new_tokens: 2000,
        context: 0,
        decode: false,
    }]);
    let decode = timing.step_time([SeqWork {
        new_tokens: 1,
        context: 2000,
        decode: true,
    }]);
    let out = timing.frontend().token_output;
    let r = run(doc, &[("t.jsonl", &trace(&[(0.0, 2000, 2, &[])]))]);
    let q = &r.requests[0];
    let front = timing.frontend();
    let arrival = front.request + front.per_prompt_token * 2000.0;
    assert_close(q.first_token, arrival + prefill + out, "TTFT");
    let transfer = 0.002 + (2000 * KV_BYTES_PER_TOKEN) as f64 / 50e9;
    assert_close(
        q.completion,
        arrival + prefill + transfer + decode + out,
        "second token",
    );
    assert_eq!(r.transfers[0].decode_worker, Some(1));
}

#[test]
fn a_transfer_waits_until_the_decode_worker_has_room() {
    // The decode worker holds 100 blocks of 16 tokens; each request needs 63 (1001 tokens
    // with its first one). The first prefills in [0, 0.1], moves at once and decodes until
    // 0.45, freeing its blocks; the second (admitted while the first step ran) prefills in
    // [0.1, 0.2] and is handed off at 0.2, but it can only be placed at 0.45:
    // transfer [0.45, 0.6], tokens at 0.7 and 0.8.
    let r = run(
        &one_to_one(
            r#", "worker": { "num_gpu_blocks_override": 100 }"#,
            r#", "max_model_len": 1024"#,
        ),
        &[(
            "t.jsonl",
            &trace(&[(0.0, 1000, 3, &[]), (0.0, 1000, 3, &[])]),
        )],
    );
    let (a, b) = (&r.transfers[0], &r.transfers[1]);
    assert_close(a.start, 0.1, "first start");
    assert_close(r.requests[0].completion, 0.45, "first completion");
    assert_close(b.handoff, 0.2, "second hand-off");
    assert_close(b.start, 0.45, "second start");
    assert_close(b.end, 0.6, "second end");
    assert_close(r.requests[1].completion, 0.8, "second completion");
    assert_close(r.requests[1].first_token, 0.2, "second TTFT unchanged");
}

#[test]
fn blocks_the_decode_worker_already_caches_are_not_transferred() {
    // Request 1 shares request 0's first 1024 tokens (hash ids 1, 2 of 512 tokens). The
    // decode worker cached them when request 0's KV landed, so only 512 tokens move.
    let r = run(
        &one_to_one("", ""),
        &[(
            "t.jsonl",
            &trace(&[(0.0, 1024, 2, &[1, 2]), (5000.0, 1536, 2, &[1, 2, 3])]),
        )],
    );
    assert_eq!(
        (r.transfers[0].tokens, r.transfers[0].cached_tokens),
        (1024, 0)
    );
    let b = &r.transfers[1];
    assert_eq!((b.tokens, b.cached_tokens), (512, 1024));
    assert_eq!(b.bytes, 512 * KV_BYTES_PER_TOKEN);
    // The link moves 1.6384e9 / 163 840 = 10 000 tokens/s: 512 tokens take 0.0512 s.
    assert_close(b.end - b.start, 0.05 + 0.0512, "transfer time");
    assert_eq!(r.deployment.as_ref().unwrap().transfer_cached_tokens, 1024);
}

#[test]
fn a_single_output_token_never_leaves_the_prefill_worker() {
    let r = run(
        &one_to_one("", ""),
        &[("t.jsonl", &trace(&[(0.0, 1000, 1, &[])]))],
    );
    assert!(r.transfers.is_empty());
    assert_close(r.requests[0].completion, 0.1, "completion");
}

/// Two prefill and two decode workers with small caches under load: requests preempt and
/// transfers wait; the books must balance after every event.
const PRESSURE: &str = r#"{
    "simulation": { "seed": 11 },
    "model": { "max_model_len": 1024 },
    "worker": { "num_gpu_blocks_override": 96,
                "timing": { "model": "constant", "constant_step_time": 0.01 } },
    "router": { "policy": { "policy": "max_prefix" }, "kv_event_interval": 0.25 },
    "deployment": {
        "pools": [ { "name": "p", "role": "prefill", "num_workers": 2 },
                   { "name": "d", "role": "decode", "num_workers": 2,
                     "worker": { "num_gpu_blocks_override": 64 } } ],
        "kv_transfer": { "bandwidth_gbps": 5, "latency_s": 0.001, "concurrency": 2 },
        "decode_policy": { "policy": "least_kv" }
    },
    "workload": { "stages": [ { "type": "UniformReqRate", "request_rate": 40,
        "total_requests": 80,
        "input_length": { "type": "uniform", "min": 200, "max": 500 },
        "output_length": { "type": "uniform", "min": 1, "max": 300 },
        "shared_prefix": { "groups": 2, "length": 128 } } ] }
}"#;

#[test]
fn every_request_finishes_once_and_every_block_returns() {
    let r = run_sliced(PRESSURE, &[], 1);
    let s = &r.stages[0];
    assert_eq!(s.successful_requests, 80);
    assert!(
        s.preemptions > 0,
        "the decode caches must be under pressure"
    );
    let waited = r.transfers.iter().filter(|t| t.start > t.handoff).count();
    assert!(waited > 0, "some transfer must wait for room");
    for t in &r.transfers {
        assert!(t.handoff <= t.start && t.start < t.end, "{t:?}");
        assert!(t.decode_worker.is_some_and(|w| w >= 2), "{t:?}");
        assert!(t.prefill_worker < 2, "{t:?}");
        let q = &r.requests[t.request as usize];
        assert!(
            q.first_token <= t.handoff && t.end <= q.completion,
            "{t:?} {q:?}"
        );
    }
    // Every request with more than one token was handed off exactly once.
    let multi = r.requests.iter().filter(|q| q.output_tokens > 1).count();
    assert_eq!(r.transfers.len(), multi);
}

#[test]
fn the_slo_judges_the_second_token_after_the_transfer() {
    // TPOT = (0.45 − 0.1) / (3 − 1) = 175 ms: the transfer's 0.15 s sits in it.
    let slo = |max: u32| {
        one_to_one("", "").replace(
            r#""workload""#,
            &format!(r#""slo": {{ "tpot_ms": {{ "max": {max} }} }}, "workload""#),
        )
    };
    let data = trace(&[(0.0, 1000, 3, &[])]);
    let met = run(&slo(176), &[("t.jsonl", &data)]);
    assert_eq!(met.slo.as_ref().unwrap().overall.attained, 1);
    let missed = run(&slo(174), &[("t.jsonl", &data)]);
    assert_eq!(missed.slo.as_ref().unwrap().overall.attained, 0);
}

#[test]
fn each_pool_scales_on_its_own() {
    // Replies of 300 tokens at 0.01 s a step pile up on the one decode worker (over 2
    // outstanding), so its pool grows to its maximum of 3; the prefill pool has no
    // autoscaler and keeps its single worker.
    let doc = r#"{
        "worker": { "timing": { "model": "constant", "constant_step_time": 0.01 } },
        "deployment": { "pools": [
            { "name": "p", "role": "prefill" },
            { "name": "d", "role": "decode",
              "autoscaler": { "enabled": true, "max_workers": 3, "max_queue_threshold": 2,
                              "scale_down_threshold": 1, "scale_latency": 1, "cooldown": 1000 } } ] },
        "workload": { "stages": [ { "type": "UniformReqRate", "request_rate": 20,
            "total_requests": 200,
            "input_length": { "type": "constant", "value": 100 },
            "output_length": { "type": "constant", "value": 300 } } ] }
    }"#;
    let r = run(doc, &[]);
    let d = r.deployment.as_ref().unwrap();
    assert_eq!((d.pools[0].workers, d.pools[1].workers), (1, 3));
    // Workers 2 and 3 joined the decode pool and decoded requests.
    for w in [2, 3] {
        assert!(
            r.transfers.iter().any(|t| t.decode_worker == Some(w)),
            "worker {w}"
        );
    }
    assert!(r.requests.iter().all(|q| q.worker == Some(0)));
}

/// The long-prompt preset at 12 req/s with its sweep's deployment `k` (0 mixed, 1 1P:3D and
/// 2 2P:2D at 50 GB/s, 3 and 4 the same at 5 GB/s).
fn long_prompts(k: usize) -> engine::simulation::SimulationResults {
    let preset = opal::document::preset("disaggregation_long_prompts").unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(preset.json).unwrap();
    let deployment = doc["sweep"]["vary"][1]["values"][k].clone();
    doc["deployment"] = deployment;
    doc["workload"]["stages"][0]["request_rate"] = 12.into();
    doc.as_object_mut().unwrap().remove("sweep");
    run(&doc.to_string(), &[])
}

#[test]
fn long_prompts_need_prefill_workers_and_a_fast_link() {
    // Prompts average 4,500 tokens: one H100 prefills about 8 a second, so at 12 req/s a
    // single prefill worker falls behind and TTFT grows with the queue, while two keep up.
    // Decoding apart from 4,500-token prefills keeps TPOT lower than on mixed workers. Each
    // request moves 4,500 × 163,840 B ≈ 0.74 GB: at 5 GB/s two links carry ~13.6 req/s,
    // so at 12 they are busy and the wait before token 2 lifts TPOT back up.
    let p99 = |r: &engine::simulation::SimulationResults| {
        (r.stages[0].ttft.p99_ms, r.stages[0].tpot.p99_ms)
    };
    let (mixed, one, two, two_slow) = (
        long_prompts(0),
        long_prompts(1),
        long_prompts(2),
        long_prompts(4),
    );
    assert!(
        p99(&one).0 > 10.0 * p99(&two).0,
        "1P:3D {:?} vs 2P:2D {:?}",
        p99(&one),
        p99(&two)
    );
    assert!(
        p99(&two).1 < 0.7 * p99(&mixed).1,
        "2P:2D {:?} vs mixed {:?}",
        p99(&two),
        p99(&mixed)
    );
    assert!(
        p99(&two_slow).1 > 1.5 * p99(&two).1,
        "5 GB/s {:?} vs 50 {:?}",
        p99(&two_slow),
        p99(&two)
    );
    let delay =
        |r: &engine::simulation::SimulationResults| r.deployment.as_ref().unwrap().transfer.mean_ms;
    assert!(delay(&two_slow) > 5.0 * delay(&two));
}
