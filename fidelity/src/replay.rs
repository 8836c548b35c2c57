//! Replays a measured run through the simulator: the same server configuration, the same
//! request stream, the same prompt pool.

use crate::run::{Latency, Run};
use engine::scenario::{Scenario, ScenarioData};
use engine::simulation::Simulation;
use engine::stats::percentile_sorted;
use serde_json::{json, Value};
use std::fmt::Write;

/// Tokens per trace hash id: fine enough to place the system prompt's end exactly (the pool's
/// system prompts are 100 or 150 tokens), coarse enough to keep the trace small.
const HASH_BLOCK: u32 = 2;

/// What the simulator predicts for a run, over the requests that succeeded in reality.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    /// Time to first token, ms.
    pub ttft_ms: Latency,
    /// End-to-end latency, ms.
    pub e2e_ms: Latency,
    /// Mean inter-token latency, ms: `(E2E − TTFT) / (output − 1)` pooled.
    pub itl_ms: f64,
    /// KV blocks per GPU the simulator derived from memory.
    pub gpu_blocks: u32,
}

/// The scenario document that replays `run`, with `patch` merged over it (e.g.
/// `{"worker": {"timing": {"model": "roofline"}}}`), and its trace.
pub fn scenario(run: &Run, patch: &Value) -> (Scenario, ScenarioData) {
    let mut doc = json!({
        "simulation": { "seed": 1, "num_workers": 1 },
        "model": { "name": run.model, "max_model_len": run.max_model_len },
        "hardware": { "gpu": run.gpu, "tp": run.tp },
        "worker": {
            "max_num_seqs": run.max_num_seqs,
            "max_num_batched_tokens": run.max_num_batched_tokens,
            "block_size": run.block_size,
            "gpu_memory_utilization": 0.9,
        },
        "kv_cache": { "tiers": [ { "preset": "cpu_dram",
                                   "capacity_gb": run.cpu_offload_gib * 1.073_741_824 } ] },
        "router": { "policy": { "policy": "round_robin" } },
        "workload": { "stages": [ { "type": "Trace", "trace_file": "replay.jsonl",
                                    "hash_block_size": HASH_BLOCK } ] },
    });
    merge(&mut doc, &run.knobs);
    merge(&mut doc, patch);
    let scenario = opal::parse_scenario(&doc.to_string())
        .unwrap_or_else(|p| panic!("replay scenario of {} is invalid: {p:?}", run.name));
    let mut data = ScenarioData::new();
    data.insert("replay.jsonl", trace(run));
    (scenario, data)
}

/// The run's requests as a Mooncake-style trace: request `i` sends pool prompt
/// `i mod pool size`, whose first `system_prompt_len` tokens are its group's system prompt
/// (without a pool, a prompt of its own).
fn trace(run: &Run) -> String {
    let system_ids = run
        .prompt_pool
        .map_or(0, |p| p.system_prompt_len.div_ceil(HASH_BLOCK));
    let mut out = String::new();
    for (i, a) in run.arrivals().iter().enumerate() {
        let (prompt, group) = match run.prompt_pool {
            Some(pool) => {
                let prompt = i as u64 % pool.size() as u64;
                (prompt, prompt / pool.prompts_per_group.max(1) as u64)
            }
            None => (i as u64, 0),
        };
        let blocks = a.input_tokens.div_ceil(HASH_BLOCK);
        let ids: Vec<String> = (0..blocks)
            .map(|b| {
                let id = if b < system_ids {
                    group << 32 | b as u64
                } else {
                    (1 << 62) | prompt << 32 | b as u64
                };
                id.to_string()
            })
            .collect();
        writeln!(
            out,
            r#"{{"timestamp":{},"input_length":{},"output_length":{},"hash_ids":[{}]}}"#,
            a.at_ms,
            a.input_tokens,
            a.output_tokens.unwrap_or(run.output_len),
            ids.join(",")
        )
        .unwrap();
    }
    out
}

/// Replays `run` (see [`scenario`]) and summarises the requests that succeeded in reality.
pub fn replay(run: &Run, patch: &Value) -> Prediction {
    let (scenario, data) = scenario(run, patch);
    let mut sim = Simulation::new(&scenario, &data)
        .unwrap_or_else(|p| panic!("replay of {} does not build: {p:?}", run.name));
    sim.run();
    let results = sim.results();
    let arrivals = run.arrivals();
    let (mut ttft, mut e2e) = (Vec::new(), Vec::new());
    let (mut decode, mut gaps) = (0.0, 0.0);
    for (r, a) in results.requests.iter().zip(&arrivals) {
        if a.error || !r.is_completed() {
            continue;
        }
        ttft.push(r.ttft() * 1e3);
        e2e.push(r.e2e() * 1e3);
        decode += (r.e2e() - r.ttft()) * 1e3;
        gaps += (r.output_tokens.max(2) - 1) as f64;
    }
    Prediction {
        ttft_ms: latency(ttft),
        e2e_ms: latency(e2e),
        itl_ms: decode / gaps,
        gpu_blocks: sim.gpu_blocks(),
    }
}

fn latency(mut xs: Vec<f64>) -> Latency {
    xs.sort_by(f64::total_cmp);
    let mean = xs.iter().sum::<f64>() / xs.len().max(1) as f64;
    Latency {
        mean,
        p50: percentile_sorted(&xs, 50.0),
        p90: percentile_sorted(&xs, 90.0),
        p99: percentile_sorted(&xs, 99.0),
    }
}

/// Merges `patch` into `base`, object by object (RFC 7386 without deletions).
pub fn merge(base: &mut Value, patch: &Value) {
    match (base, patch) {
        // No patch (e.g. a built-in run's empty knobs) leaves the base as it is.
        (_, Value::Null) => {}
        (Value::Object(b), Value::Object(p)) => {
            for (k, v) in p {
                merge(b.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (b, p) => *b = p.clone(),
    }
}
