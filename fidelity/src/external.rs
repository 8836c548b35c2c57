//! Real runs read from disk in the layout of the project's shared measurements
//! (inference-sim's): `replay_data*/<experiment>.json.gz` with `<experiment>_ground_truth.json.gz`,
//! and `default_args/<experiment>/exp-config.yaml` and `results/config.yaml` beside them. This
//! is how runs held back from the calibration are checked: `fidelity --runs DIR`.

use crate::run::{Arrival, Latency, LoadStage, Mean, Measured, PromptPool, Run};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Every run under `dir` (searched recursively for `*_ground_truth.json.gz`), in name order.
/// `gpu` names the catalogue GPU of runs whose experiment name does not say (`h100`, `h200`,
/// `a100`, `l40s`, `pro6000`, `rtx4090`; spaces, dashes and underscores ignored).
pub fn load_runs(dir: &Path, gpu: Option<&str>) -> Result<Vec<Run>, String> {
    let mut truths = Vec::new();
    find(dir, &mut truths).map_err(|e| format!("{}: {e}", dir.display()))?;
    truths.sort();
    if truths.is_empty() {
        return Err(format!(
            "{}: no *_ground_truth.json.gz files",
            dir.display()
        ));
    }
    truths.iter().map(|t| load_run(dir, t, gpu)).collect()
}

fn find(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            find(&path, out)?;
        } else if path.to_string_lossy().ends_with("_ground_truth.json.gz") {
            out.push(path);
        }
    }
    Ok(())
}

fn load_run(root: &Path, truth_path: &Path, gpu: Option<&str>) -> Result<Run, String> {
    let name = truth_path.to_string_lossy();
    let replay_path = PathBuf::from(name.replace("_ground_truth.json.gz", ".json.gz"));
    let ctx = |e: String| format!("{}: {e}", replay_path.display());
    let replay: Value = serde_json::from_slice(&gunzip(&read(&replay_path)?).map_err(ctx)?)
        .map_err(|e| ctx(e.to_string()))?;
    let truth: Value = serde_json::from_slice(&gunzip(&read(truth_path)?).map_err(ctx)?)
        .map_err(|e| ctx(e.to_string()))?;
    let experiment = replay["experiment"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let cfg = &replay["config"];
    let args = root.join("default_args").join(&experiment);
    let exp = read_yaml_fields(&args.join("exp-config.yaml"));
    let client = read_yaml_fields(&args.join("results").join("config.yaml"));
    let num = |fields: &[(String, String)], key: &str| -> Option<f64> {
        fields.iter().find(|(k, _)| k == key)?.1.parse().ok()
    };
    let cfg_u32 = |key: &str| cfg[key].as_u64().map(|v| v as u32);
    let requests = replay["requests"]
        .as_array()
        .ok_or_else(|| ctx("no requests".into()))?;
    let truths = truth
        .as_array()
        .ok_or_else(|| ctx("ground truth is not a list".into()))?;
    if requests.len() != truths.len() {
        return Err(ctx("requests and ground truth differ in length".into()));
    }
    let ignore_eos = client.iter().any(|(k, v)| k == "ignore_eos" && v == "true");
    let output_len = num(&client, "output_len").map(|v| v as u32);
    let pool = match (
        num(&client, "num_groups"),
        num(&client, "num_prompts_per_group"),
    ) {
        (Some(g), Some(p)) => Some(PromptPool {
            groups: g as u32,
            prompts_per_group: p as u32,
            system_prompt_len: num(&client, "system_prompt_len").unwrap_or(0.0) as u32,
        }),
        _ => None,
    };
    // Timed-out requests report no prompt; they sent their pool slot's prompt.
    let pool_size = pool.map_or(1, |p| p.size() as usize);
    let mut slot_len = std::collections::BTreeMap::new();
    for (i, r) in requests.iter().enumerate() {
        if let Some(n) = r["input_tokens"].as_u64().filter(|&n| n > 0) {
            slot_len.entry(i % pool_size).or_insert(n as u32);
        }
    }
    let (mut stream, mut ttft, mut e2e) = (Vec::new(), Vec::new(), Vec::new());
    let (mut decode, mut gaps) = (0.0, 0.0);
    let first = requests
        .first()
        .and_then(|r| r["arrival_time_us"].as_f64())
        .unwrap_or(0.0);
    for (i, (r, t)) in requests.iter().zip(truths).enumerate() {
        let error =
            r["has_error"].as_bool().unwrap_or(false) || t["has_error"].as_bool().unwrap_or(false);
        let input = r["input_tokens"]
            .as_u64()
            .filter(|&n| n > 0)
            .map(|n| n as u32);
        let input = input
            .or_else(|| slot_len.get(&(i % pool_size)).copied())
            .unwrap_or(1);
        // With ignore_eos the server generated output_len tokens; the replay's counts are the
        // client's re-count of the text.
        let out = match (ignore_eos, output_len) {
            (true, Some(n)) => n,
            _ => r["output_tokens"].as_u64().unwrap_or(1).max(1) as u32,
        };
        stream.push(Arrival {
            at_ms: (r["arrival_time_us"].as_f64().unwrap_or(first) - first) / 1e3,
            input_tokens: input,
            error,
            output_tokens: Some(out),
        });
        if !error {
            let (a, b) = (
                t["ttft_s"].as_f64().unwrap_or(f64::NAN),
                t["e2e_s"].as_f64().unwrap_or(f64::NAN),
            );
            ttft.push(a * 1e3);
            e2e.push(b * 1e3);
            decode += (b - a) * 1e3;
            gaps += (out.max(2) - 1) as f64;
        }
    }
    let errors = stream.iter().filter(|a| a.error).count();
    // The GPU: an exp-config entry naming it, else the experiment's name, else `--gpu`.
    let named = ["gpu", "hardware", "accelerator", "device"]
        .iter()
        .filter_map(|k| exp.iter().find(|(key, _)| key == k))
        .map(|(_, v)| v.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let gpu = named_gpu(&format!("{named} {experiment}"))
        .or(gpu)
        .unwrap_or("H100-SXM")
        .to_string();
    Ok(Run {
        name: experiment
            .splitn(3, '-')
            .nth(2)
            .unwrap_or(&experiment)
            .to_string(),
        split: replay["split"].as_str().unwrap_or("held-out").to_string(),
        excluded_overload: errors * 10 > 3 * stream.len(),
        model: replay["model_id"]
            .as_str()
            .or_else(|| {
                exp.iter()
                    .find(|(k, _)| k == "model")
                    .map(|(_, v)| v.as_str())
            })
            .unwrap_or_default()
            .to_string(),
        gpu,
        tp: cfg_u32("tensor_parallelism")
            .or(num(&exp, "tensor_parallelism").map(|v| v as u32))
            .unwrap_or(1),
        max_num_seqs: cfg_u32("max_num_seqs")
            .or(num(&exp, "max_num_seqs").map(|v| v as u32))
            .unwrap_or(256),
        max_num_batched_tokens: cfg_u32("max_num_batched_tokens")
            .or(num(&exp, "max_num_batched_tokens").map(|v| v as u32))
            .unwrap_or(8192),
        max_model_len: num(&exp, "max_model_len").map_or(0, |v| v as u32),
        block_size: cfg_u32("block_size").unwrap_or(16),
        kv_blocks_total_gpu: cfg_u32("kv_blocks_total_gpu").unwrap_or(0),
        cpu_offload_gib: 8.0,
        stages: Vec::<LoadStage>::new(),
        prompt_pool: pool,
        output_len: output_len.unwrap_or(1),
        requests: stream.len(),
        errors,
        measured: Measured {
            ttft_ms: latency(ttft),
            e2e_ms: latency(e2e),
            itl_ms: Mean {
                mean: decode / gaps,
            },
        },
        knobs: knobs(&exp),
        experiment,
        stream,
    })
}

/// The catalogue GPU a run's configuration or name mentions, if any.
fn named_gpu(text: &str) -> Option<&'static str> {
    let lower = text.to_lowercase();
    // The RTX names are matched without separators (`rtx_pro_6000`, `RTXPRO6000`).
    let squeezed = lower.replace([' ', '-', '_'], "");
    // (With their letters: bare digits would match a run name's date or time.)
    ["h200", "a100", "l40s", "pro6000", "rtx4090", "h100"]
        .iter()
        .find(|g| match **g {
            "pro6000" | "rtx4090" => squeezed.contains(*g),
            _ => lower.contains(*g),
        })
        .map(|g| match *g {
            "h200" => "H200",
            "a100" => "A100-80GB",
            "l40s" => "L40S",
            "pro6000" => "RTX PRO 6000 Blackwell",
            "rtx4090" => "RTX 4090",
            _ => "H100-SXM",
        })
}

/// The vLLM settings of an exp-config the replay must follow, as a scenario fragment.
fn knobs(exp: &[(String, String)]) -> Value {
    let mut doc = serde_json::json!({});
    let get = |key: &str| exp.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
    let flag = |v: &str| matches!(v, "true" | "True" | "yes");
    if let Some(v) = get("gpu_memory_utilization").and_then(|v| v.parse::<f64>().ok()) {
        doc["worker"]["gpu_memory_utilization"] = v.into();
    }
    if let Some(v) = get("block_size").and_then(|v| v.parse::<u32>().ok()) {
        doc["worker"]["block_size"] = v.into();
    }
    if let Some(v) = get("enable_prefix_caching") {
        doc["worker"]["enable_prefix_caching"] = flag(v).into();
    }
    if let Some(v) = get("enable_chunked_prefill") {
        doc["worker"]["chunked_prefill"] = flag(v).into();
    }
    if let Some(v) = get("scheduling_policy") {
        doc["worker"]["scheduling_policy"] = v.into();
    }
    if get("kv_cache_dtype").is_some_and(|v| v.starts_with("fp8")) {
        doc["model"]["kv_cache_dtype"] = "fp8".into();
    }
    if get("quantization").is_some_and(|v| v.starts_with("fp8")) {
        doc["model"]["weight_dtype"] = "fp8".into();
    }
    match get("dtype") {
        Some("float16" | "half" | "fp16") => doc["model"]["activation_dtype"] = "float16".into(),
        Some("bfloat16" | "bf16") => doc["model"]["activation_dtype"] = "bfloat16".into(),
        _ => {}
    }
    doc
}

fn latency(mut xs: Vec<f64>) -> Latency {
    xs.sort_by(f64::total_cmp);
    let p = |q: f64| engine::stats::percentile_sorted(&xs, q);
    Latency {
        mean: xs.iter().sum::<f64>() / xs.len().max(1) as f64,
        p50: p(50.0),
        p90: p(90.0),
        p99: p(99.0),
    }
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// The `key: value` lines of a YAML file at any depth (all these configs need), or none.
fn read_yaml_fields(path: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.trim().split_once(':')?;
            let v = v.trim().trim_matches('"');
            (!v.is_empty()).then(|| (k.trim().trim_start_matches("- ").to_string(), v.to_string()))
        })
        .collect()
}

/// The data of a gzip file (RFC 1952): its header, then raw deflate.
fn gunzip(bytes: &[u8]) -> Result<Vec<u8>, String> {
    if bytes.len() < 18 || bytes[0] != 0x1f || bytes[1] != 0x8b || bytes[2] != 8 {
        return Err("not a gzip file".into());
    }
    let flags = bytes[3];
    let mut at = 10;
    if flags & 4 != 0 {
        let n = u16::from_le_bytes([bytes[at], bytes[at + 1]]) as usize;
        at += 2 + n;
    }
    for bit in [8u8, 16] {
        if flags & bit != 0 {
            at += bytes[at..]
                .iter()
                .position(|&b| b == 0)
                .ok_or("truncated gzip header")?
                + 1;
        }
    }
    if flags & 2 != 0 {
        at += 2;
    }
    let body = bytes
        .get(at..bytes.len() - 8)
        .ok_or("truncated gzip file")?;
    miniz_oxide::inflate::decompress_to_vec(body).map_err(|e| format!("bad deflate data: {e:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gzip_files_read_back_whole_with_or_without_a_file_name() {
        let data = br#"{"experiment": "x"}"#;
        let deflated = miniz_oxide::deflate::compress_to_vec(data, 6);
        // RFC 1952: magic, deflate, flags, mtime, xfl, os; then the body; then CRC and size
        // (not checked here).
        let mut plain = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3];
        plain.extend(&deflated);
        plain.extend([0; 8]);
        assert_eq!(gunzip(&plain).unwrap(), data);
        let mut named = vec![0x1f, 0x8b, 8, 8, 0, 0, 0, 0, 0, 3];
        named.extend(b"run.json\0");
        named.extend(&deflated);
        named.extend([0; 8]);
        assert_eq!(gunzip(&named).unwrap(), data);
        assert!(gunzip(b"{}").is_err());
    }

    #[test]
    fn the_gpu_is_read_from_the_run_name() {
        assert_eq!(named_gpu("20260101-h100-llama-2-7b"), Some("H100-SXM"));
        // A time of 14:09:01 is not a GPU.
        assert_eq!(named_gpu("20260218-140901-llama-2-70b"), None);
        assert_eq!(named_gpu("RTX4090_Llama-3.1-8B"), Some("RTX 4090"));
        assert_eq!(
            named_gpu("RTXPRO6000_Qwen3-32B"),
            Some("RTX PRO 6000 Blackwell")
        );
        assert_eq!(
            named_gpu("x rtx-pro-6000 y"),
            Some("RTX PRO 6000 Blackwell")
        );
        assert_eq!(named_gpu("RTX_4090-llama"), Some("RTX 4090"));
        // Separators still part the datacentre names: "llama-100" is not an A100.
        assert_eq!(named_gpu("llama-100k"), None);
        for g in ["H100-SXM", "RTX PRO 6000 Blackwell", "RTX 4090"] {
            assert!(engine::hardware::lookup(g).is_some(), "{g}");
        }
    }

    #[test]
    fn yaml_fields_are_read_at_any_depth() {
        let dir = std::env::temp_dir().join(format!("opal-yaml-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("config.yaml");
        std::fs::write(
            &path,
            "data:\n  shared_prefix:\n    num_groups: 10\nserver:\n  ignore_eos: true\n",
        )
        .unwrap();
        let fields = read_yaml_fields(&path);
        assert!(fields.contains(&("num_groups".into(), "10".into())));
        assert!(fields.contains(&("ignore_eos".into(), "true".into())));
        assert!(
            !fields.iter().any(|(k, _)| k == "data"),
            "section headers carry no value"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
