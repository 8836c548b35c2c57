//! Valid-but-unusual scenarios never panic the simulation: every preset, with its numbers
//! perturbed at random (tiny and huge batches, one-token blocks, odd rates, few GPU blocks,
//! tiers, policies), either is rejected by validation with problems or runs, and every
//! request it issues completes or fails with a reason.

use engine::rng::SimRng;
use engine::simulation::Simulation;
use opal::document::presets;
use serde_json::{json, Value};

/// Sets `path` (dot-separated object keys) in `doc`, creating objects on the way.
fn set(doc: &mut Value, path: &str, value: Value) {
    let mut cur = doc;
    let mut keys = path.split('.').peekable();
    while let Some(k) = keys.next() {
        if !cur.is_object() {
            *cur = json!({});
        }
        let obj = cur.as_object_mut().expect("made an object");
        if keys.peek().is_none() {
            obj.insert(k.to_string(), value);
            return;
        }
        cur = obj.entry(k).or_insert_with(|| json!({}));
    }
}

fn pick<T: Clone>(rng: &mut SimRng, options: &[T]) -> T {
    options[rng.below(options.len() as u64) as usize].clone()
}

/// One random perturbation of a scenario document.
fn perturb(rng: &mut SimRng, doc: &mut Value) {
    match rng.below(14) {
        0 => set(
            doc,
            "worker.max_num_batched_tokens",
            json!(pick(rng, &[1, 16, 64, 100_000])),
        ),
        1 => set(doc, "worker.max_num_seqs", json!(pick(rng, &[1, 2, 1024]))),
        2 => set(doc, "worker.block_size", json!(pick(rng, &[1, 8, 32, 128]))),
        3 => set(
            doc,
            "worker.num_gpu_blocks_override",
            json!(pick(rng, &[1, 3, 64, 500])),
        ),
        4 => set(doc, "worker.chunked_prefill", json!(rng.below(2) == 0)),
        5 => set(
            doc,
            "worker.enable_prefix_caching",
            json!(rng.below(2) == 0),
        ),
        6 => set(doc, "simulation.num_workers", json!(pick(rng, &[1, 2, 7]))),
        7 => set(
            doc,
            "router.policy",
            json!({ "policy": pick(rng, &["round_robin", "random", "least_loaded", "max_prefix",
                "least_kv", "power_of_two", "session_affinity", "prefix_load"]) }),
        ),
        8 => set(
            doc,
            "router.kv_event_interval",
            json!(pick(rng, &[0.001, 0.5, 30.0])),
        ),
        9 => set(
            doc,
            "kv_cache.tiers",
            json!([{ "preset": "cpu_dram", "capacity_gb": pick(rng, &[0.01, 1.0]) },
                   { "preset": "distributed_fs" }]),
        ),
        11 | 12 => set(
            doc,
            "deployment",
            pick(
                rng,
                &[
                    json!({ "pools": [ { "role": "prefill" }, { "role": "decode" } ] }),
                    json!({ "pools": [ { "role": "prefill", "num_workers": 2 },
                                       { "role": "decode", "num_workers": 1,
                                         "worker": { "num_gpu_blocks_override": 40 } } ],
                            "kv_transfer": { "bandwidth_gbps": 0.5, "latency_s": 0.01,
                                             "concurrency": 1 },
                            "decode_policy": { "policy": "max_prefix" } }),
                    json!({ "pools": [ { "name": "m", "num_workers": 1 },
                                       { "role": "prefill", "hardware": { "tp": 2 } },
                                       { "role": "decode", "num_workers": 2,
                                         "worker": { "max_num_seqs": 2 },
                                         "autoscaler": { "enabled": true, "max_workers": 3,
                                                         "max_queue_threshold": 1,
                                                         "scale_down_threshold": 0,
                                                         "scale_latency": 1, "cooldown": 2 } } ],
                            "decode_policy": { "policy": "least_kv" } }),
                ],
            ),
        ),
        10 => set(
            doc,
            "simulation.simulation_time",
            json!(pick(rng, &[0.5, 5.0, 60.0])),
        ),
        _ => set(
            doc,
            "worker.timing",
            json!({ "model": pick(rng, &["roofline", "opal-analytical", "constant"]) }),
        ),
    }
}

#[test]
fn perturbed_presets_run_or_are_rejected_never_panic() {
    let mut rng = SimRng::stream(2026, "platform_robustness");
    let mut ran = 0;
    for round in 0..120 {
        let preset = pick(&mut rng, &presets());
        if preset.is_opal() {
            continue;
        }
        let mut doc: Value = serde_json::from_str(preset.json).expect("presets are JSON");
        for _ in 0..1 + rng.below(3) {
            perturb(&mut rng, &mut doc);
        }
        let text = doc.to_string();
        let Ok(scenario) = opal::parse_scenario(&text) else {
            continue; // rejected with problems: fine
        };
        let Ok(mut sim) = Simulation::new(&scenario, &preset.data()) else {
            continue;
        };
        // Bounded: a perturbed run may be slow (one-token blocks, one sequence at a time).
        let progress = sim.advance(300_000);
        let results = sim.results();
        // Nothing may wait forever (a transfer that can never be placed, a missed wake-up).
        if let Some(engine::simulation::Stop::Error(m)) = &results.stop {
            panic!("round {round}: {m} in\n{text}");
        }
        for r in &results.requests {
            let finished = r.is_completed() || r.failed.is_some();
            assert!(
                finished || !progress.finished || results.truncated,
                "round {round}: request {} neither completed nor failed in\n{text}",
                r.id
            );
        }
        ran += 1;
    }
    assert!(
        ran > 30,
        "only {ran} perturbed scenarios were valid enough to run"
    );
}
