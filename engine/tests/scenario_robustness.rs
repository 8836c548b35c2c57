//! Property test: parsing, validating and importing never panic, whatever the input, and every
//! problem says something. Inputs are random JSON and random mutations of the example
//! documents (so most of them get deep into the sections), drawn from seeded streams.

use engine::rng::SimRng;
use engine::scenario::{detect_format, import_opal, presets, Scenario, ScenarioData};
use engine::validate::Problem;
use serde_json::{Map, Number, Value};

/// Keys that occur in our documents and Opal's, so random objects hit real fields.
const KEYS: &[&str] = &[
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
];

const STRINGS: &[&str] = &[
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

fn number(rng: &mut SimRng) -> Value {
    let n = match rng.below(12) {
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

fn random_value(rng: &mut SimRng, depth: u32) -> Value {
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
fn mutate(rng: &mut SimRng, v: &mut Value) {
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
fn extremes(rng: &mut SimRng, v: &mut Value) {
    match v {
        Value::Number(_) if rng.below(2) == 0 => *v = Value::Number(Number::from(u32::MAX)),
        Value::Object(m) => m.values_mut().for_each(|c| extremes(rng, c)),
        Value::Array(a) => a.iter_mut().for_each(|c| extremes(rng, c)),
        _ => {}
    }
}

/// Documents with custom models, which the examples do not have.
const CUSTOM_MODELS: &[&str] = &[
    r#"{"model": {"name": "custom", "custom": {"num_layers": 4, "hidden_size": 256,
        "num_heads": 4, "num_kv_heads": 2, "intermediate_size": 512, "vocab_size": 1000,
        "num_experts": 4, "experts_per_token": 2, "max_model_len": 4096,
        "bytes_per_param": 2}}}"#,
    r#"{"model": {"name": "custom", "hf_config": {"num_hidden_layers": 4, "hidden_size": 256,
        "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 512,
        "vocab_size": 1000, "max_position_embeddings": 4096}}}"#,
];

/// Cuts or corrupts the text itself.
fn mangle_text(rng: &mut SimRng, text: &str) -> String {
    let bytes = text.as_bytes();
    let at = rng.below(bytes.len() as u64 + 1) as usize;
    let mut out = bytes[..at].to_vec();
    if rng.below(2) == 0 {
        out.push(b"{}[]\",:0-e.\\n"[rng.below(13) as usize]);
        out.extend_from_slice(&bytes[at..]);
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn assert_messages(input: &str, problems: &[Problem]) {
    assert!(
        !problems.is_empty(),
        "an error without problems for {input}"
    );
    for p in problems {
        assert!(
            !p.message.trim().is_empty(),
            "empty message at {:?} for {input}",
            p.path
        );
    }
}

/// Runs everything a user's text reaches and checks the contracts.
fn exercise(text: &str, data: &ScenarioData) {
    detect_format(text);
    match Scenario::parse(text) {
        Ok(s) => {
            // A valid scenario writes out and reads back as itself.
            let written = s.to_json_pretty();
            assert_eq!(
                Scenario::parse(&written).as_ref(),
                Ok(&s),
                "round trip of {text}"
            );
            s.required_files();
            let problems = s.check_data(data);
            for p in &problems {
                assert!(!p.message.is_empty());
            }
        }
        Err(p) => assert_messages(text, &p),
    }
    match import_opal(text) {
        Ok((s, report)) => {
            assert!(
                s.validate().is_empty(),
                "an import that does not validate: {text}"
            );
            serde_json::to_string(&report).unwrap();
        }
        Err(p) => assert_messages(text, &p),
    }
}

fn all_data() -> ScenarioData {
    let mut data = ScenarioData::new();
    for p in presets() {
        for (name, text) in p.files {
            data.insert(*name, *text);
        }
    }
    data
}

#[test]
fn random_json_never_panics() {
    let mut rng = SimRng::stream(1, "robustness.random");
    let data = all_data();
    for _ in 0..3000 {
        let v = random_value(&mut rng, 5);
        exercise(&v.to_string(), &data);
    }
}

#[test]
fn mutated_examples_never_panic() {
    let mut rng = SimRng::stream(2, "robustness.mutate");
    let data = all_data();
    let docs: Vec<Value> = presets()
        .iter()
        .map(|p| p.json)
        .chain(CUSTOM_MODELS.iter().copied())
        .map(|text| serde_json::from_str(text).unwrap())
        .collect();
    for i in 0..6000 {
        let mut v = docs[i % docs.len()].clone();
        if rng.below(4) == 0 {
            extremes(&mut rng, &mut v);
        }
        for _ in 0..=rng.below(3) {
            mutate(&mut rng, &mut v);
        }
        exercise(&v.to_string(), &data);
    }
}

#[test]
fn mangled_text_never_panics() {
    let mut rng = SimRng::stream(3, "robustness.text");
    let data = all_data();
    let docs: Vec<&str> = presets().iter().map(|p| p.json).collect();
    for i in 0..2000 {
        exercise(&mangle_text(&mut rng, docs[i % docs.len()]), &data);
    }
}

#[test]
fn mangled_data_files_give_problems_not_panics() {
    let mut rng = SimRng::stream(4, "robustness.data");
    for p in presets()
        .iter()
        .filter(|p| !p.files.is_empty() && !p.is_opal())
    {
        let s = Scenario::parse(p.json).unwrap();
        for _ in 0..200 {
            let mut data = ScenarioData::new();
            for (name, text) in p.files {
                data.insert(*name, mangle_text(&mut rng, text));
            }
            for problem in s.check_data(&data) {
                assert!(!problem.message.is_empty());
            }
        }
    }
}

// Crashers the property test found, kept as regressions (each used to overflow a u64).

#[test]
fn regression_rag_stage_of_maximal_sizes_is_measured_without_overflow() {
    // 4 294 967 295 · 4 294 967 295 documents' tokens plus three more u32::MAX terms
    // overflowed the shortest-request sum in the cross-section check.
    let p = Scenario::parse(
        r#"{"workload": {"stages": [{"type": "RAGWorkload", "total_requests": 1,
            "docs_per_request": 4294967295, "num_documents": 4294967295,
            "document_size": 4294967295, "system_prompt_length": 4294967295,
            "output_length": 4294967295}]}}"#,
    )
    .unwrap_err();
    // Rejected, without overflowing: the cross-section check still measures the stage,
    // and the document count is over the population cap as well.
    assert!(
        p.iter().any(|p| p.path == "workload.stages[0]"
            && p.message.contains("every request would be rejected")),
        "{p:?}"
    );
    assert!(p
        .iter()
        .any(|p| p.path == "workload.stages[0].num_documents"));
}

#[test]
fn regression_custom_model_of_maximal_shape_is_rejected_not_sized() {
    // Sizing this shape overflowed the parameter count before validation bounded it.
    let p = Scenario::parse(
        r#"{"model": {"name": "custom", "custom": {"num_layers": 4294967295,
            "hidden_size": 4294967295, "num_heads": 1, "num_kv_heads": 1,
            "intermediate_size": 4294967295, "vocab_size": 4294967295,
            "max_model_len": 4294967295, "bytes_per_param": 4294967295}}}"#,
    )
    .unwrap_err();
    let paths: Vec<&str> = p.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "model.custom.num_layers",
            "model.custom.hidden_size",
            "model.custom.intermediate_size",
            "model.custom.vocab_size",
            "model.custom.max_model_len",
            "model.custom.bytes_per_param",
        ]
    );
    let p = Scenario::parse(
        r#"{"model": {"name": "custom", "hf_config": {"num_hidden_layers": 4294967295,
            "hidden_size": 4294967295, "num_attention_heads": 1,
            "intermediate_size": 4294967295, "vocab_size": 4294967295}}}"#,
    )
    .unwrap_err();
    assert_eq!(p[0].path, "model.hf_config");
    assert!(p[0].message.contains("at most"), "{}", p[0].message);
}
