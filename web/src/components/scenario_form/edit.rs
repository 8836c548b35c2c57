//! Pure edits of the scenario document the forms make: reading a field (or the engine's
//! default when the document leaves it out), writing one without leaving a half-made
//! section behind, and replacing a sub-object whose shape a select changes.
//!
//! No browser calls, so every rule here is tested natively.

use crate::json_path::{get_json_path, parse_path, set_json_path, PathError, Segment};
use opal::hardware;
use opal::model::catalogue;
use opal::offload::TierConfig;
use opal::scenario::Scenario;
use opal::workload::StageConfig;
use opal::workload::{
    GeneratorConfig, RagConfig, SessionsConfig, SyntheticConfig, SyntheticSessionsConfig,
    TraceConfig,
};
use serde_json::{json, Map, Value};
use std::sync::OnceLock;

/// Stage types in the order the type select lists them, with what the user reads.
pub const STAGE_TYPES: [(&str, &str); 7] = [
    (
        "ExponentialReqRate",
        "Poisson-like arrivals (ExponentialReqRate)",
    ),
    ("UniformReqRate", "Evenly spaced arrivals (UniformReqRate)"),
    ("Gamma", "Bursty arrivals (Gamma)"),
    ("RAGWorkload", "Retrieval-augmented prompts (RAGWorkload)"),
    ("Trace", "Replay a Mooncake trace (Trace)"),
    ("Sessions", "Replay multi-turn sessions (Sessions)"),
    ("SyntheticSessions", "Synthetic multi-turn sessions"),
];

/// Length distribution types, as the engine names them.
pub const LENGTH_TYPES: [&str; 4] = ["constant", "uniform", "normal", "lognormal"];

/// Fields every synthetic-rate stage type shares, carried over when switching among them.
const SYNTHETIC_SHARED: [&str; 4] = [
    "request_rate",
    "input_length",
    "output_length",
    "shared_prefix",
];

fn to_value<T: serde::Serialize>(x: &T) -> Value {
    serde_json::to_value(x).unwrap_or(Value::Null)
}

/// The whole default scenario as JSON, computed once.
pub fn defaults() -> &'static Value {
    static DEFAULTS: OnceLock<Value> = OnceLock::new();
    DEFAULTS.get_or_init(|| opal::document::to_tree(&Scenario::default()))
}

/// A new stage of type `ty` with the engine's defaults made explicit (so the user sees and
/// can edit them), bounded so it runs: 100 requests for open-loop types.
pub fn stage_default(ty: &str) -> Value {
    let synthetic = SyntheticConfig::default();
    let generator = match ty {
        "UniformReqRate" => GeneratorConfig::UniformReqRate(synthetic),
        "Gamma" => GeneratorConfig::Gamma(SyntheticConfig {
            cv: Some(2.0),
            ..synthetic
        }),
        "RAGWorkload" => GeneratorConfig::RagWorkload(RagConfig::default()),
        "Trace" => GeneratorConfig::Trace(TraceConfig::default()),
        "Sessions" => GeneratorConfig::Sessions(SessionsConfig::default()),
        "SyntheticSessions" => {
            GeneratorConfig::SyntheticSessions(SyntheticSessionsConfig::default())
        }
        _ => GeneratorConfig::ExponentialReqRate(SyntheticConfig {
            jitter: Some(1.0),
            ..synthetic
        }),
    };
    let open_loop = matches!(
        generator,
        GeneratorConfig::UniformReqRate(_)
            | GeneratorConfig::ExponentialReqRate(_)
            | GeneratorConfig::Gamma(_)
            | GeneratorConfig::RagWorkload(_)
    );
    to_value(&StageConfig {
        total_requests: open_loop.then_some(100),
        time_duration_sec: None,
        priority: Default::default(),
        generator,
    })
}

fn is_synthetic(ty: &str) -> bool {
    matches!(ty, "UniformReqRate" | "ExponentialReqRate" | "Gamma")
}

fn is_sessions(ty: &str) -> bool {
    matches!(ty, "Sessions" | "SyntheticSessions")
}

/// The stage `old` switched to type `ty`: the new type's defaults, keeping the stop
/// conditions the new type accepts and, among the synthetic-rate types, the rate, lengths
/// and shared prefix (they mean the same there). Nothing of the old shape is left behind.
pub fn switch_stage_type(old: &Value, ty: &str) -> Value {
    let mut new = stage_default(ty);
    let old_ty = old.get("type").and_then(Value::as_str).unwrap_or("");
    let Some(obj) = new.as_object_mut() else {
        return new;
    };
    let mut keep: Vec<&str> = vec!["time_duration_sec"];
    if !is_sessions(ty) && old.get("total_requests").is_some() {
        keep.push("total_requests");
    }
    if is_synthetic(ty) && is_synthetic(old_ty) {
        keep.extend(SYNTHETIC_SHARED);
    }
    for key in keep {
        if let Some(v) = old.get(key).filter(|v| !v.is_null()) {
            obj.insert(key.into(), v.clone());
        }
    }
    new
}

/// A representative length and an upper bound of a length distribution, to carry over
/// when its type changes.
fn length_centre_and_max(old: &Value) -> (f64, f64) {
    let num = |k: &str| old.get(k).and_then(Value::as_f64);
    let centre = num("value")
        .or_else(|| num("mean"))
        .or_else(|| Some((num("min")? + num("max")?) / 2.0))
        .filter(|c| c.is_finite() && *c >= 1.0)
        .unwrap_or(256.0);
    let max = num("max")
        .filter(|m| *m >= centre)
        .unwrap_or((centre * 4.0).round());
    (centre, max)
}

/// The length distribution `old` switched to type `ty`, keeping its centre (value, mean or
/// midpoint) and its upper bound where the new type has them.
pub fn switch_length_type(old: &Value, ty: &str) -> Value {
    let (c, max) = length_centre_and_max(old);
    let whole = |x: f64| x.round().max(1.0) as u64;
    match ty {
        "constant" => json!({ "type": "constant", "value": whole(c) }),
        "uniform" => {
            json!({ "type": "uniform", "min": whole(c / 2.0), "max": whole(max.max(c * 1.5)) })
        }
        "normal" => {
            json!({ "type": "normal", "mean": whole(c), "std": whole(c / 4.0), "min": 1, "max": whole(max) })
        }
        _ => {
            json!({ "type": "lognormal", "mean": whole(c), "cv": 0.5, "min": 1, "max": whole(max) })
        }
    }
}

/// The popularity object for type `ty` (`uniform`, or `zipf` with s = 1).
pub fn popularity_default(ty: &str) -> Value {
    match ty {
        "zipf" => json!({ "type": "zipf", "s": 1.0 }),
        _ => json!({ "type": "uniform" }),
    }
}

/// Routing policies, in the order the select lists them, with a one-line description.
pub const POLICIES: [(&str, &str); 11] = [
    ("round_robin", "Round robin"),
    ("random", "Random"),
    ("least_loaded", "Least loaded (fewest outstanding)"),
    ("least_kv", "Least KV usage"),
    ("power_of_two", "Power of two choices"),
    ("max_prefix", "Longest cached prefix"),
    ("prefix_load", "Prefix match vs load (weighted)"),
    ("session_affinity", "Session affinity"),
    ("cache_aware", "SGLang cache-aware (own prefix tree)"),
    ("llm_d", "llm-d scheduler (prefix, queue, KV scorers)"),
    ("dynamo", "Dynamo KV router (prefill + decode blocks)"),
];

/// The policy object for `name`, with its parameters at their defaults.
pub fn policy_default(name: &str) -> Value {
    match name {
        "prefix_load" => json!({ "policy": "prefix_load", "w_prefix": 1.0, "w_load": 1.0 }),
        "cache_aware" => json!({ "policy": "cache_aware", "cache_threshold": 0.5,
            "balance_abs_threshold": 32, "balance_rel_threshold": 1.0001 }),
        "llm_d" => json!({ "policy": "llm_d", "prefix_mode": "precise", "prefix_weight": 3,
            "queue_weight": 2, "kv_cache_weight": 2 }),
        "dynamo" => {
            json!({ "policy": "dynamo", "overlap_score_weight": 1, "router_temperature": 0 })
        }
        _ => json!({ "policy": name }),
    }
}

/// The offload tiers a user can add, by name.
pub fn tier_preset(name: &str) -> Value {
    to_value(&match name {
        "local_nvme" => TierConfig::local_nvme(),
        "distributed_fs" => TierConfig::distributed_fs(),
        _ => TierConfig::cpu_dram(),
    })
}

/// The `model` section switched to `name`: a catalogue model drops any custom shape; `custom`
/// starts from the shape of the model chosen before, so its fields are filled and valid.
pub fn switch_model(old: &Value, name: &str) -> Value {
    let mut new = old.as_object().cloned().unwrap_or_default();
    new.remove("hf_config");
    new.remove("custom");
    if name == "custom" {
        let before = old.get("name").and_then(Value::as_str).unwrap_or("");
        let shape = catalogue::lookup(before).unwrap_or_default();
        new.insert("custom".into(), to_value(&shape));
    }
    new.insert("name".into(), Value::String(name.into()));
    Value::Object(new)
}

/// The `hardware` section switched to GPU `name`; `custom` starts from the figures of the
/// GPU chosen before.
pub fn switch_gpu(old: &Value, name: &str) -> Value {
    let mut new = old.as_object().cloned().unwrap_or_default();
    new.remove("custom");
    if name == "custom" {
        let before = old.get("gpu").and_then(Value::as_str).unwrap_or("H100-SXM");
        let spec = hardware::lookup(before)
            .or_else(|| hardware::catalogue().into_iter().next())
            .map(|g| to_value(&g));
        if let Some(spec) = spec {
            new.insert("custom".into(), spec);
        }
    }
    new.insert("gpu".into(), Value::String(name.into()));
    Value::Object(new)
}

/// The `model` section defining a custom model from a Hugging Face `config.json` text: its
/// shape fills the custom fields (so they can be read and edited); the override of the
/// maximum length is kept. Errors say what the config lacks.
pub fn model_from_hf(old: &Value, text: &str) -> Result<Value, String> {
    let config: Value = serde_json::from_str(text).map_err(|e| format!("not valid JSON ({e})"))?;
    let arch = opal::model::hf::from_config_value(&config)?;
    let mut new = Map::new();
    new.insert("name".into(), json!("custom"));
    new.insert("custom".into(), to_value(&arch));
    if let Some(len) = old.get("max_model_len") {
        new.insert("max_model_len".into(), len.clone());
    }
    Ok(Value::Object(new))
}

/// The array at `path` with the element at `from` moved to `to` (both clamped).
pub fn moved(list: &[Value], from: usize, to: usize) -> Vec<Value> {
    let mut list = list.to_vec();
    if from < list.len() {
        let item = list.remove(from);
        list.insert(to.min(list.len()), item);
    }
    list
}

/// The default of the value at `path` when the document does not have it: the engine's
/// defaults, read for a stage from its own type's defaults, for a tier from the CPU DRAM
/// tier, for a policy from its own parameters.
pub fn default_at(doc: &Value, path: &str) -> Option<Value> {
    let segs = parse_path(path).ok()?;
    let key = |i: usize| match segs.get(i) {
        Some(Segment::Key(k)) => Some(k.as_str()),
        _ => None,
    };
    let idx = |i: usize| match segs.get(i) {
        Some(Segment::Index(n)) => Some(*n),
        _ => None,
    };
    let rest = |from: usize| -> String {
        let mut s = String::new();
        for seg in &segs[from..] {
            match seg {
                Segment::Key(k) => {
                    if !s.is_empty() {
                        s.push('.');
                    }
                    s.push_str(k);
                }
                Segment::Index(n) => s.push_str(&format!("[{n}]")),
            }
        }
        s
    };
    let within = |base: Value, from: usize| -> Option<Value> {
        if segs.len() == from {
            return Some(base);
        }
        get_json_path(&base, &rest(from)).cloned()
    };
    match (key(0), key(1), idx(2)) {
        (Some("workload"), Some("stages"), Some(i)) => {
            // The stage's own type decides its defaults; the type itself has none, except in
            // the default workload (when the document has no stages list at all).
            let stages =
                get_json_path(doc, "workload.stages").unwrap_or(&defaults()["workload"]["stages"]);
            let ty = stages.get(i)?.get("type")?.as_str()?;
            within(stage_default(ty), 3)
        }
        (Some("kv_cache"), Some("tiers"), Some(i)) => {
            // A tier starts from its `preset`, else from the preset its name names.
            let tier = get_json_path(doc, &format!("kv_cache.tiers[{i}]"));
            let base = tier
                .and_then(|t| t.get("preset").or_else(|| t.get("name")))
                .and_then(Value::as_str)
                .unwrap_or("cpu_dram");
            within(tier_preset(base), 3)
        }
        (Some("router"), Some("policy"), _) if segs.len() > 2 => {
            let policy =
                get_json_path(doc, "router.policy").unwrap_or(&defaults()["router"]["policy"]);
            within(policy_default(policy.get("policy")?.as_str()?), 2)
        }
        (Some("deployment"), Some("pools"), Some(_)) => match key(3) {
            // A pool's hardware and worker overrides show the top-level value they replace.
            Some(section @ ("hardware" | "worker")) if segs.len() > 4 => {
                value_at(doc, &format!("{section}.{}", rest(4)))
            }
            _ => within(to_value(&opal::deployment::PoolConfig::default()), 3),
        },
        (Some("deployment"), _, _) => {
            within(to_value(&opal::deployment::DeploymentConfig::default()), 1)
        }
        _ => get_json_path(defaults(), path).cloned(),
    }
}

/// The value a field shows: the document's, or the default when the document leaves it out.
pub fn value_at(doc: &Value, path: &str) -> Option<Value> {
    match get_json_path(doc, path) {
        Some(v) => Some(v.clone()),
        None => default_at(doc, path),
    }
}

/// Whether a default must be written out whole before writing inside it: lists (the
/// document's list replaces the default one) and tagged objects (a length, popularity or
/// policy without its tag is invalid). Plain sections may stay partial.
fn needs_whole(default: &Value) -> bool {
    default.is_array() || default.get("type").is_some() || default.get("policy").is_some()
}

/// `doc` with `value` written at `path`. Lists and tagged sub-objects on the way that the
/// document leaves to their defaults are first written out with those defaults, so a write
/// never creates a half-made object (e.g. a length without its `type`).
pub fn write(doc: &Value, path: &str, value: Value) -> Result<Value, PathError> {
    let segs = parse_path(path)?;
    let mut doc = doc.clone();
    let mut prefix = String::new();
    for seg in &segs[..segs.len().saturating_sub(1)] {
        match seg {
            Segment::Key(k) => {
                if !prefix.is_empty() {
                    prefix.push('.');
                }
                prefix.push_str(k);
            }
            Segment::Index(n) => prefix.push_str(&format!("[{n}]")),
        }
        if get_json_path(&doc, &prefix).is_none() {
            if let Some(d) = default_at(&doc, &prefix).filter(needs_whole) {
                set_json_path(&mut doc, &prefix, d)?;
            }
        }
    }
    set_json_path(&mut doc, path, value)?;
    Ok(doc)
}

/// The top-level section a path is in (`workload` for `workload.stages[0].type`).
pub fn section_of(path: &str) -> &str {
    let end = path.find(['.', '[']).unwrap_or(path.len());
    &path[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pools_fields_default_to_the_pool_defaults_and_its_overrides_to_the_top_level() {
        let doc = serde_json::json!({"hardware": {"gpu": "A100-80GB"},
            "deployment": {"pools": [{"role": "decode"}]}});
        assert_eq!(
            value_at(&doc, "deployment.pools[0].num_workers"),
            Some(serde_json::json!(1))
        );
        assert_eq!(
            value_at(&doc, "deployment.pools[0].hardware.gpu"),
            Some(serde_json::json!("A100-80GB"))
        );
        assert_eq!(
            value_at(&doc, "deployment.kv_transfer.bandwidth_gbps"),
            Some(serde_json::json!(50.0))
        );
    }

    #[test]
    fn missing_fields_read_the_engine_defaults() {
        let doc = json!({ "worker": { "max_num_seqs": 64 } });
        assert_eq!(value_at(&doc, "worker.max_num_seqs"), Some(json!(64)));
        assert_eq!(
            value_at(&doc, "worker.max_num_batched_tokens"),
            Some(json!(8192))
        );
        assert_eq!(
            value_at(&doc, "worker.timing.model"),
            Some(json!("calibrated"))
        );
        assert_eq!(
            value_at(&doc, "simulation.simulation_time"),
            Some(Value::Null)
        );
        // The default workload is one ExponentialReqRate stage at 5 req/s.
        assert_eq!(
            value_at(&doc, "workload.stages[0].request_rate"),
            Some(json!(5.0))
        );
        assert_eq!(
            value_at(&doc, "workload.stages[0].type"),
            Some(json!("ExponentialReqRate"))
        );
    }

    #[test]
    fn stage_defaults_follow_the_stage_type() {
        let doc = json!({ "workload": { "stages": [
            { "type": "RAGWorkload" }, { "type": "Trace", "trace_file": "t.jsonl" }
        ] } });
        assert_eq!(
            value_at(&doc, "workload.stages[0].docs_per_request"),
            Some(json!(4))
        );
        assert_eq!(
            value_at(&doc, "workload.stages[0].output_length"),
            Some(json!(256))
        );
        assert_eq!(
            value_at(&doc, "workload.stages[1].hash_block_size"),
            Some(json!(512))
        );
        assert_eq!(
            value_at(&doc, "workload.stages[1].trace_file"),
            Some(json!("t.jsonl"))
        );
    }

    #[test]
    fn every_new_stage_type_is_a_valid_scenario() {
        for (ty, _) in STAGE_TYPES {
            let mut stage = stage_default(ty);
            for key in ["trace_file", "sessions_file"] {
                if let Some(f) = stage.get_mut(key) {
                    *f = json!("data.jsonl");
                }
            }
            let doc = json!({ "workload": { "stages": [stage] } });
            let problems = opal::check_scenario(&doc.to_string());
            assert!(problems.is_empty(), "{ty}: {problems:?}");
        }
    }

    #[test]
    fn switching_stage_type_replaces_the_shape_and_keeps_what_still_applies() {
        let old = json!({ "type": "ExponentialReqRate", "request_rate": 9, "jitter": 0.5,
            "total_requests": 40, "input_length": { "type": "constant", "value": 10 } });
        let gamma = switch_stage_type(&old, "Gamma");
        assert_eq!(gamma["request_rate"], json!(9));
        assert_eq!(
            gamma["input_length"],
            json!({ "type": "constant", "value": 10 })
        );
        assert_eq!(gamma["total_requests"], json!(40));
        assert_eq!(gamma["cv"], json!(2.0));
        assert!(
            gamma.get("jitter").is_none(),
            "jitter is ExponentialReqRate's only"
        );
        // Sessions refuse total_requests; RAG's output_length is a number, not a length.
        let sessions = switch_stage_type(&old, "SyntheticSessions");
        assert!(sessions.get("total_requests").is_none());
        let rag = switch_stage_type(&old, "RAGWorkload");
        assert_eq!(rag["output_length"], json!(256));
        assert_eq!(rag["request_rate"], json!(2.0));
        for s in [gamma, sessions, rag] {
            let doc = json!({ "workload": { "stages": [s] } });
            assert!(opal::check_scenario(&doc.to_string()).is_empty());
        }
    }

    #[test]
    fn switching_length_type_keeps_centre_and_upper_bound() {
        let uniform = json!({ "type": "uniform", "min": 100, "max": 900 });
        // Midpoint (100 + 900) / 2 = 500; the upper bound 900 stays.
        assert_eq!(
            switch_length_type(&uniform, "normal"),
            json!({ "type": "normal", "mean": 500, "std": 125, "min": 1, "max": 900 })
        );
        assert_eq!(
            switch_length_type(&uniform, "constant"),
            json!({ "type": "constant", "value": 500 })
        );
        let constant = json!({ "type": "constant", "value": 64 });
        // No upper bound to keep: 4 × 64 = 256; uniform spans 32..=max(256, 96).
        assert_eq!(
            switch_length_type(&constant, "uniform"),
            json!({ "type": "uniform", "min": 32, "max": 256 })
        );
    }

    #[test]
    fn writing_inside_a_default_stage_writes_the_stage_out_first() {
        let doc = json!({ "simulation": { "seed": 1 } });
        let out = write(&doc, "workload.stages[0].input_length.min", json!(10)).unwrap();
        let stage = &out["workload"]["stages"][0];
        assert_eq!(stage["type"], json!("ExponentialReqRate"));
        assert_eq!(
            stage["input_length"],
            json!({ "type": "uniform", "min": 10, "max": 1024 })
        );
        assert!(opal::check_scenario(&out.to_string()).is_empty());
        // Plain sections stay partial: only the field written appears.
        let out2 = write(&out, "worker.max_num_seqs", json!(2)).unwrap();
        assert_eq!(out2["worker"], json!({ "max_num_seqs": 2 }));
    }

    #[test]
    fn custom_model_and_gpu_start_from_the_previous_choice() {
        let model = switch_model(
            &json!({ "name": "Llama-3.1-8B", "max_model_len": 4096 }),
            "custom",
        );
        assert_eq!(model["custom"]["num_layers"], json!(32));
        assert_eq!(model["max_model_len"], json!(4096));
        let back = switch_model(&model, "Qwen2.5-7B");
        assert!(back.get("custom").is_none());
        let gpu = switch_gpu(&json!({ "gpu": "L40S", "tp": 2 }), "custom");
        assert_eq!(gpu["custom"]["memory_gb"], json!(48.0));
        assert_eq!(gpu["tp"], json!(2));
        let doc = json!({ "model": model, "hardware": gpu });
        assert!(opal::check_scenario(&doc.to_string()).is_empty());
    }

    #[test]
    fn hugging_face_config_fills_a_custom_model_or_says_what_is_missing() {
        let text = r#"{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
            "intermediate_size": 128, "vocab_size": 10}"#;
        let model = model_from_hf(&json!({ "name": "granite-3.3-8b-instruct" }), text).unwrap();
        assert_eq!(model["name"], json!("custom"));
        assert_eq!(model["custom"]["num_layers"], json!(2));
        assert_eq!(
            model_from_hf(&json!({}), r#"{"num_hidden_layers": 2}"#).unwrap_err(),
            "config.json is missing field `hidden_size`"
        );
        assert!(model_from_hf(&json!({}), "{ nope")
            .unwrap_err()
            .starts_with("not valid JSON"));
    }

    #[test]
    fn tier_defaults_follow_the_tier_preset() {
        let doc = json!({ "kv_cache": { "tiers": [{ "name": "local_nvme" }, { "preset": "distributed_fs", "name": "dfs" }, {}] } });
        assert_eq!(
            value_at(&doc, "kv_cache.tiers[0].capacity_gb"),
            Some(json!(1024.0))
        );
        assert_eq!(
            value_at(&doc, "kv_cache.tiers[1].scope"),
            Some(json!("shared"))
        );
        assert_eq!(
            value_at(&doc, "kv_cache.tiers[2].bandwidth_gbps"),
            Some(json!(50.0))
        );
    }

    #[test]
    fn list_moves_stay_in_bounds() {
        let list = [json!(1), json!(2), json!(3)];
        assert_eq!(moved(&list, 0, 1), [json!(2), json!(1), json!(3)]);
        assert_eq!(moved(&list, 2, 9), list);
        assert_eq!(moved(&list, 5, 0), list);
    }

    #[test]
    fn sections_are_the_first_key() {
        assert_eq!(section_of("workload.stages[0].type"), "workload");
        assert_eq!(section_of("worker"), "worker");
    }
}
