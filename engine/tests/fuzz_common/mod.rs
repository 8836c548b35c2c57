//! Inputs for the property tests and the fuzz driver (`cargo run --release --example fuzz`):
//! random JSON, mutated examples and mangled text and data files, all from seeded streams,
//! and a runner that holds each accepted scenario to a budget of CPU time and memory.
//!
//! A binary using the memory budget installs the counting allocator:
//! `#[global_allocator] static ALLOC: fuzz_common::CountingAlloc = fuzz_common::CountingAlloc;`

#![allow(dead_code)] // each user takes its own subset

use engine::rng::SimRng;
use engine::scenario::ScenarioData;
use engine::simulation::{Simulation, SimulationResults};
use opal::document::presets;
use serde_json::{json, Map, Number, Value};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Keys that occur in our documents and Opal's, so random objects hit real fields.
pub(crate) const KEYS: &[&str] = &[
    "version",
    "simulation",
    "seed",
    "simulation_time",
    "num_workers",
    "model",
    "name",
    "custom",
    "hf_config",
    "max_model_len",
    "hardware",
    "gpu",
    "tp",
    "peak_tflops",
    "hbm_tbps",
    "memory_gb",
    "worker",
    "max_num_batched_tokens",
    "max_num_seqs",
    "block_size",
    "chunked_prefill",
    "gpu_memory_utilization",
    "num_gpu_blocks_override",
    "timing",
    "kv_cache",
    "tiers",
    "preset",
    "chunk_size",
    "capacity_gb",
    "router",
    "policy",
    "deployment",
    "pools",
    "role",
    "kv_transfer",
    "decode_policy",
    "bandwidth_gbps",
    "autoscaler",
    "enabled",
    "max_workers",
    "min_workers",
    "workload",
    "stages",
    "type",
    "total_requests",
    "request_rate",
    "input_length",
    "shared_prefix",
    "groups",
    "length",
    "trace_file",
    "num_layers",
    "hidden_size",
    "num_heads",
    "num_kv_heads",
    "vocab_size",
    "num_experts",
    "experts_per_token",
    "docs_per_request",
    "num_documents",
    "document_size",
    "model_params",
    "router_params",
    "workload_params",
    "vllm_params",
    "hw",
    "inference_params",
    "kvc",
    "kvc_tiers",
    "CPUMemory",
    "latency_nsec",
    "prompt_size_min",
    "prompt_size_max",
    "a",
    "b",
    "multiplier_to_sec",
    "min",
    "max",
    "value",
    "mean",
    "cv",
    "s",
    "popularity",
    "kv_event_interval",
    "time_scale",
    "constant_step_time",
    "step_overhead",
    "time_duration_sec",
    "jitter",
    "num_sessions",
    "session_rate",
    "think_time",
    "turns",
    "hash_block_size",
    "absolute_times",
    "max_requests",
    "max_events",
    "max_simulated_seconds",
    "scale_latency",
    "cooldown",
    "max_concurrent_requests",
    "n_routed_experts",
    "n_shared_experts",
    "kv_lora_rank",
    "qk_rope_head_dim",
    "first_k_dense_replace",
];

pub(crate) const STRINGS: &[&str] = &[
    "",
    "custom",
    "H100",
    "H100-SXM",
    "Llama-3.1-70B",
    "Qwen3-30B-A3B",
    "granite-3.3-8b-instruct",
    "max_prefix",
    "prefix_load",
    "RAGWorkload",
    "Trace",
    "Sessions",
    "trace",
    "UniformReqRate",
    "ExponentialReqRate",
    "Gamma",
    "SyntheticSessions",
    "zipf",
    "lognormal",
    "uniform",
    "constant",
    "normal",
    "local_nvme",
    "distributed_fs",
    "CPUMemory",
    "roofline",
    "synthetic",
    "opal-analytical",
    "Balanced",
    "SC25Workload",
    "4",
    "-1",
    "1e400",
    "NaN",
    "x.jsonl",
];

/// Numbers where arithmetic breaks: overflow, underflow, the smallest subnormal, epoch
/// milliseconds, and ordinary ones.
pub(crate) fn number(rng: &mut SimRng) -> Value {
    let n = match rng.below(16) {
        12 => Number::from_f64(5e-324).unwrap(),
        13 => Number::from_f64(1e-308).unwrap(),
        14 => Number::from_f64(1.7e12).unwrap(),
        15 => Number::from_f64(1e9).unwrap(),
        0 => Number::from(0u64),
        1 => Number::from(u64::MAX),
        2 => Number::from(u32::MAX as u64),
        3 => Number::from(u32::MAX as u64 + 1),
        4 => Number::from(-1i64),
        5 => Number::from(i64::MIN),
        6 => Number::from_f64(1e308).unwrap(),
        7 => Number::from_f64(-0.5).unwrap(),
        8 => Number::from_f64(1e-300).unwrap(),
        9 => Number::from(rng.below(5)),
        10 => Number::from(rng.below(1 << 20)),
        _ => Number::from_f64(rng.next_f64() * 100.0).unwrap(),
    };
    Value::Number(n)
}

pub(crate) fn random_value(rng: &mut SimRng, depth: u32) -> Value {
    let leaf = depth == 0 || rng.below(3) == 0;
    match rng.below(if leaf { 4 } else { 6 }) {
        0 => Value::Null,
        1 => Value::Bool(rng.below(2) == 0),
        2 => number(rng),
        3 => Value::String(STRINGS[rng.below(STRINGS.len() as u64) as usize].to_string()),
        4 => Value::Array(
            (0..rng.below(4))
                .map(|_| random_value(rng, depth - 1))
                .collect(),
        ),
        _ => {
            let mut m = Map::new();
            for _ in 0..rng.below(6) {
                let k = KEYS[rng.below(KEYS.len() as u64) as usize];
                m.insert(k.to_string(), random_value(rng, depth - 1));
            }
            Value::Object(m)
        }
    }
}

/// Replaces, deletes or adds one node somewhere in `v`.
pub(crate) fn mutate(rng: &mut SimRng, v: &mut Value) {
    let descend = rng.below(4) != 0;
    match v {
        Value::Object(m) if !m.is_empty() && descend => {
            let i = rng.below(m.len() as u64) as usize;
            let key = m.keys().nth(i).cloned().unwrap_or_default();
            match rng.below(8) {
                0 => {
                    m.remove(&key);
                }
                1 => {
                    let k = KEYS[rng.below(KEYS.len() as u64) as usize];
                    m.insert(k.to_string(), random_value(rng, 2));
                }
                _ => {
                    if let Some(child) = m.get_mut(&key) {
                        mutate(rng, child);
                    }
                }
            }
        }
        Value::Array(a) if !a.is_empty() && descend => {
            let i = rng.below(a.len() as u64) as usize;
            match rng.below(6) {
                0 => {
                    a.remove(i);
                }
                1 => {
                    let copy = a[i].clone();
                    a.push(copy);
                }
                _ => mutate(rng, &mut a[i]),
            }
        }
        _ => *v = random_value(rng, 2),
    }
}

/// Sets numeric leaves to the largest `u32`, where sizes multiply into overflows.
pub(crate) fn extremes(rng: &mut SimRng, v: &mut Value) {
    match v {
        Value::Number(_) if rng.below(2) == 0 => *v = Value::Number(Number::from(u32::MAX)),
        Value::Object(m) => m.values_mut().for_each(|c| extremes(rng, c)),
        Value::Array(a) => a.iter_mut().for_each(|c| extremes(rng, c)),
        _ => {}
    }
}

/// Documents with custom models, which the examples do not have.
pub(crate) const CUSTOM_MODELS: &[&str] = &[
    r#"{"model": {"name": "custom", "custom": {"num_layers": 4, "hidden_size": 256,
        "num_heads": 4, "num_kv_heads": 2, "intermediate_size": 512, "vocab_size": 1000,
        "num_experts": 4, "experts_per_token": 2, "max_model_len": 4096,
        "bytes_per_param": 2}}}"#,
    r#"{"model": {"name": "custom", "hf_config": {"num_hidden_layers": 4, "hidden_size": 256,
        "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 512,
        "vocab_size": 1000, "max_position_embeddings": 4096}}}"#,
];

/// Cuts or corrupts the text itself.
pub(crate) fn mangle_text(rng: &mut SimRng, text: &str) -> String {
    let bytes = text.as_bytes();
    let at = rng.below(bytes.len() as u64 + 1) as usize;
    let mut out = bytes[..at].to_vec();
    if rng.below(2) == 0 {
        out.push(b"{}[]\",:0-e.\\n"[rng.below(13) as usize]);
        out.extend_from_slice(&bytes[at..]);
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub(crate) fn all_data() -> ScenarioData {
    let mut data = ScenarioData::new();
    for p in presets() {
        for (name, text) in p.files {
            data.insert(*name, *text);
        }
    }
    data
}

// ----- cases -----------------------------------------------------------------------------

/// One input: a document and the data files it may name.
pub(crate) struct Case {
    /// What kind of input it is, for the report.
    pub kind: &'static str,
    /// The document's text.
    pub text: String,
    /// The data files offered with it.
    pub data: ScenarioData,
}

/// Small limits every run case gets, so each accepted one ends quickly: the property is
/// that the limits hold (and nothing grows without events), not that big runs are fast.
pub(crate) const CASE_LIMITS: (u64, u64, f64) = (2_000, 300_000, 1e6);

/// A trace of random lines, with timestamps that may be epoch milliseconds or far apart.
fn random_trace(rng: &mut SimRng) -> String {
    let start = [0.0, 6.0e6, 1.7e12][rng.below(3) as usize];
    let spacing = [0.0, 1.0, 100.0, 1e9][rng.below(4) as usize];
    (0..1 + rng.below(40))
        .map(|i| {
            let ids: Vec<u64> = (0..rng.below(6)).map(|_| rng.below(8)).collect();
            format!(
                r#"{{"timestamp": {}, "input_length": {}, "output_length": {}, "hash_ids": {ids:?}}}"#,
                start + spacing * i as f64,
                1 + rng.below(3000),
                1 + rng.below(300)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Replaces one leaf of `doc` (a number, string or bool anywhere) with another of its kind:
/// numbers at extremes or scaled by 10⁶ either way, names from [`STRINGS`], flipped flags.
fn perturb_leaf(rng: &mut SimRng, doc: &mut Value) {
    let mut leaves = Vec::new();
    fn walk(v: &Value, at: String, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => m
                .iter()
                .for_each(|(k, c)| walk(c, format!("{at}/{k}"), out)),
            Value::Array(a) => a
                .iter()
                .enumerate()
                .for_each(|(i, c)| walk(c, format!("{at}/{i}"), out)),
            _ => out.push(at),
        }
    }
    walk(doc, String::new(), &mut leaves);
    if leaves.is_empty() {
        return;
    }
    let at = leaves[rng.below(leaves.len() as u64) as usize].clone();
    let Some(leaf) = doc.pointer_mut(&at) else {
        return;
    };
    *leaf = match leaf {
        Value::Number(n) => match (n.as_u64(), rng.below(4)) {
            (Some(k), 0) => json!(k.saturating_mul(1000)),
            (Some(k), 1) => json!(k / 1000),
            (None, 0) => json!(n.as_f64().unwrap_or(0.0) * 1e6),
            (None, 1) => json!(n.as_f64().unwrap_or(0.0) / 1e6),
            _ => number(rng),
        },
        Value::Bool(b) => Value::Bool(!*b),
        _ => Value::String(STRINGS[rng.below(STRINGS.len() as u64) as usize].to_string()),
    };
}

/// Fields whose extreme values used to hang a run or eat its memory, with such values.
fn set_extreme_field(rng: &mut SimRng, doc: &mut Value) {
    let fields: [(&str, Value); 13] = [
        (
            "/deployment",
            json!([{"pools": [{"role": "prefill"}, {"role": "decode", "num_workers": 3}]},
            {"pools": [{"role": "prefill", "num_workers": 2},
                       {"role": "decode", "worker": {"num_gpu_blocks_override": 1}}],
             "kv_transfer": {"bandwidth_gbps": 1e-300, "latency_s": 3600, "concurrency": 1}},
            {"pools": [{"role": "mixed"}, {"role": "decode", "worker": {"max_num_seqs": 1}}]}]),
        ),
        (
            "/router/kv_event_interval",
            json!([1e-308, 1e-6, 0.001, 1e9]),
        ),
        (
            "/router/policy",
            json!([{"policy": "max_prefix"}, {"policy": "least_kv"},
            {"policy": "session_affinity"}, {"policy": "prefix_load"}]),
        ),
        ("/worker/step_overhead", json!([0.0, 1e-9, 3600.0, 1e308])),
        (
            "/worker/timing",
            json!([{"model": "constant", "constant_step_time": 1e-9},
            {"model": "constant", "constant_step_time": 1e9}, {"model": "opal-analytical"}]),
        ),
        (
            "/hardware",
            json!([{"gpu": "custom", "custom": {"name": "slow",
            "peak_tflops": 1e-308, "hbm_tbps": 1e-308, "memory_gb": 80}},
            {"gpu": "custom", "custom": {"name": "odd", "peak_tflops": 1e-3, "hbm_tbps": 3,
            "memory_gb": 80}}]),
        ),
        (
            "/simulation/simulation_time",
            json!([1e-9, 0.5, 1e9, 1e308]),
        ),
        ("/simulation/num_workers", json!([1, 3, 64])),
        (
            "/workload/stages/0/request_rate",
            json!([5e-324, 1e-9, 1e6, 1e308]),
        ),
        (
            "/workload/stages/0/time_duration_sec",
            json!([1e-9, 1.0, 1e9]),
        ),
        ("/workload/stages/0/time_scale", json!([1e-6, 1e6])),
        ("/workload/stages/0/think_time", json!([0.0, 1e9])),
        (
            "/router/autoscaler",
            json!([{"enabled": true, "max_workers": 4, "cooldown": 0,
            "scale_latency": 1e9}, {"enabled": true, "max_workers": 8}]),
        ),
    ];
    let (at, options) = &fields[rng.below(fields.len() as u64) as usize];
    let options = options.as_array().unwrap();
    let value = options[rng.below(options.len() as u64) as usize].clone();
    let (parent, key) = at.rsplit_once('/').unwrap();
    if let Some(Value::Object(m)) = doc.pointer_mut(parent) {
        m.insert(key.to_string(), value);
    }
}

/// Sets `doc.simulation.max_*` to the case limits (whatever the mutations left there).
fn cap(doc: &mut Value) {
    let Some(top) = doc.as_object_mut() else {
        return;
    };
    let sim = top.entry("simulation").or_insert_with(|| json!({}));
    if let Some(sim) = sim.as_object_mut() {
        let (requests, events, seconds) = CASE_LIMITS;
        sim.insert("max_requests".into(), json!(requests));
        sim.insert("max_events".into(), json!(events));
        sim.insert("max_simulated_seconds".into(), json!(seconds));
    }
}

/// Case number `i` of a seeded sequence: a mix of random documents, mutated examples (some
/// with every number at an extreme), mangled text, and examples with random or mangled data.
pub(crate) fn case(seed: u64, i: u64) -> Case {
    let mut rng = SimRng::stream(seed, &format!("fuzz.case.{i}"));
    let docs: Vec<&str> = presets()
        .iter()
        .filter(|p| !p.is_opal())
        .map(|p| p.json)
        .chain(CUSTOM_MODELS.iter().copied())
        .collect();
    let mut data = all_data();
    let pick = |rng: &mut SimRng| docs[rng.below(docs.len() as u64) as usize];
    let (kind, text) = match rng.below(10) {
        0 => ("random", random_value(&mut rng, 5).to_string()),
        1 => {
            let doc = pick(&mut rng);
            ("mangled text", mangle_text(&mut rng, doc))
        }
        2 => {
            let mut doc: Value = serde_json::from_str(pick(&mut rng)).unwrap();
            if rng.below(2) == 0 {
                extremes(&mut rng, &mut doc);
            }
            for _ in 0..=rng.below(3) {
                mutate(&mut rng, &mut doc);
            }
            cap(&mut doc);
            ("mutated structure", doc.to_string())
        }
        kind => {
            // An example with a few leaves and extreme fields changed: most of these run.
            let mut doc: Value = serde_json::from_str(pick(&mut rng)).unwrap();
            for _ in 0..=rng.below(3) {
                match rng.below(3) {
                    0 => perturb_leaf(&mut rng, &mut doc),
                    _ => set_extreme_field(&mut rng, &mut doc),
                }
            }
            cap(&mut doc);
            match kind {
                3 => {
                    for p in presets() {
                        for (name, text) in p.files {
                            data.insert(*name, mangle_text(&mut rng, text));
                        }
                    }
                }
                4 | 5 => {
                    for p in presets() {
                        for (name, _) in p.files {
                            data.insert(*name, random_trace(&mut rng));
                        }
                    }
                }
                _ => {}
            }
            ("perturbed example", doc.to_string())
        }
    };
    Case { kind, text, data }
}

// ----- budget ------------------------------------------------------------------------------

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// Allocations that would take the heap past this fail (the process aborts, leaving the
/// case written to disk by the caller): the guard against a runaway single allocation.
static HARD_CAP: AtomicUsize = AtomicUsize::new(usize::MAX);

/// The system allocator, counting the bytes in use and their peak.
pub(crate) struct CountingAlloc;

// SAFETY: every call is forwarded to the system allocator unchanged; only counters change.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        if now > HARD_CAP.load(Ordering::Relaxed) {
            CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
            return std::ptr::null_mut();
        }
        PEAK.fetch_max(now, Ordering::Relaxed);
        // SAFETY: same layout, as the caller promised.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Bytes in use now.
pub(crate) fn heap_bytes() -> usize {
    CURRENT.load(Ordering::Relaxed)
}

/// Starts measuring the peak from now; allocations past `now + hard_cap` fail.
pub(crate) fn reset_peak(hard_cap: usize) -> usize {
    let now = heap_bytes();
    PEAK.store(now, Ordering::Relaxed);
    HARD_CAP.store(now.saturating_add(hard_cap), Ordering::Relaxed);
    now
}

/// Most bytes in use since [`reset_peak`].
pub(crate) fn peak_bytes() -> usize {
    PEAK.load(Ordering::Relaxed)
}

/// CPU time this thread has used (wall time where there is no per-thread clock).
pub(crate) fn thread_cpu() -> Duration {
    #[cfg(unix)]
    {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid out-pointer for a clock every Unix we build on has.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
        Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
    }
    #[cfg(not(unix))]
    {
        static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        START.get_or_init(std::time::Instant::now).elapsed()
    }
}

/// What one case may cost.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    /// CPU time from parsing to results.
    pub cpu: Duration,
    /// Heap growth at its peak.
    pub bytes: usize,
}

/// How a case ended when it kept to its budget.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Outcome {
    /// Refused with problems (each with a message).
    Rejected,
    /// Ran to an end (its workload's, or a bound's, limit's or error's).
    Finished {
        /// Kernel events.
        events: u64,
    },
}

/// What a case cost.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Cost {
    /// CPU time, parsing to results.
    pub cpu: Duration,
    /// Heap growth at its peak, bytes.
    pub bytes: usize,
}

/// Counts of a series of cases that kept to their budget.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Tally {
    /// Cases refused with problems.
    pub rejected: u64,
    /// Cases run to an end.
    pub ran: u64,
    /// Kernel events of the runs.
    pub events: u64,
    /// The most any one case cost, CPU and memory apart.
    pub worst: Cost,
}

impl Tally {
    /// Counts one case.
    pub(crate) fn add(&mut self, outcome: &Outcome, cost: Cost) {
        match outcome {
            Outcome::Rejected => self.rejected += 1,
            Outcome::Finished { events } => {
                self.ran += 1;
                self.events += events;
            }
        }
        self.worst.cpu = self.worst.cpu.max(cost.cpu);
        self.worst.bytes = self.worst.bytes.max(cost.bytes);
    }
}

impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} rejected, {} ran ({} events); the costliest case took {:?} of CPU, the \
             hungriest {} MB",
            self.rejected,
            self.ran,
            self.events,
            self.worst.cpu,
            self.worst.bytes >> 20
        )
    }
}

/// Parses, builds and runs `case` in slices, checking the budget after each slice and the
/// results' books at the end. `Err` says what broke.
pub(crate) fn run_case(case: &Case, budget: Budget) -> Result<(Outcome, Cost), String> {
    let cpu0 = thread_cpu();
    let heap0 = reset_peak(budget.bytes.saturating_mul(4));
    let cost = || Cost {
        cpu: thread_cpu() - cpu0,
        bytes: peak_bytes().saturating_sub(heap0),
    };
    let over = || {
        let c = cost();
        (c.cpu > budget.cpu || c.bytes > budget.bytes).then(|| {
            format!(
                "over budget: {:?} of CPU, {} MB at the peak",
                c.cpu,
                c.bytes >> 20
            )
        })
    };
    // Refusing must keep to the budget too.
    let refused = |problems: &[engine::validate::Problem]| match over() {
        Some(why) => Err(format!("refused, but {why}")),
        None => rejected(problems).map(|o| (o, cost())),
    };
    let scenario = match opal::document::parse_with_data(&case.text, &case.data) {
        Ok(s) => s,
        Err(problems) => return refused(&problems),
    };
    let mut sim = match Simulation::new(&scenario, &case.data) {
        Ok(sim) => sim,
        Err(problems) => return refused(&problems),
    };
    while !sim.advance(5_000).finished {
        if let Some(why) = over() {
            return Err(why);
        }
    }
    let results = sim.results();
    results.to_json();
    results.requests_csv();
    results.render_text();
    if let Some(why) = over() {
        return Err(why);
    }
    books_agree(&results)?;
    let events = results.events;
    Ok((Outcome::Finished { events }, cost()))
}

fn rejected(problems: &[engine::validate::Problem]) -> Result<Outcome, String> {
    match problems.iter().find(|p| p.message.trim().is_empty()) {
        _ if problems.is_empty() => Err("rejected without a problem".into()),
        Some(p) => Err(format!("a problem without a message at {}", p.path)),
        None => Ok(Outcome::Rejected),
    }
}

/// A run's records, decisions, series and inter-token gaps agree, finished or cut short.
pub(crate) fn books_agree(r: &SimulationResults) -> Result<(), String> {
    let check = |ok: bool, what: &str| if ok { Ok(()) } else { Err(what.to_string()) };
    let routed = r.requests.iter().filter(|q| q.worker.is_some()).count();
    check(
        r.decisions.len() == routed,
        "one decision per routed request",
    )?;
    for d in &r.decisions {
        check(
            r.requests[d.request as usize].worker == Some(d.decision.worker),
            "a decision's worker is on its record",
        )?;
    }
    let emitted: u64 = r.requests.iter().map(|q| q.output_tokens as u64).sum();
    check(
        r.series.output_tokens.iter().sum::<u64>() == emitted,
        "per-second tokens = record tokens",
    )?;
    let gaps: u64 = r.itl.iter().flatten().map(|&(_, n)| n).sum();
    let later: u64 = r
        .requests
        .iter()
        .map(|q| q.output_tokens.saturating_sub(1) as u64)
        .sum();
    check(gaps == later, "inter-token gaps = tokens after the first")?;
    check(
        r.requests
            .iter()
            .all(|q| q.first_token.is_nan() == (q.output_tokens == 0)),
        "a request has a first token exactly when it produced tokens",
    )?;
    let open = r.requests.iter().filter(|q| q.completion.is_nan()).count() as u64;
    let unfinished: u64 = r.stages.iter().map(|s| s.unfinished_requests).sum();
    check(unfinished == open, "unfinished requests are counted")?;
    check(r.truncated == r.stop.is_some(), "a truncated run says why")
}
