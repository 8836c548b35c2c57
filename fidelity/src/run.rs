//! The measured runs: what the real server was configured with, what the client sent, and
//! what the client measured.

use serde::{Deserialize, Serialize};

include!(concat!(env!("OUT_DIR"), "/streams.rs"));

/// Mean and percentiles of one latency, milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
}

/// A mean only (inter-token latency).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Mean {
    /// Mean.
    pub mean: f64,
}

/// What the client measured over the successful requests.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    /// Time to first token.
    pub ttft_ms: Latency,
    /// End-to-end latency.
    pub e2e_ms: Latency,
    /// Mean gap between a request's tokens, `(E2E − TTFT) / (output tokens − 1)`, pooled.
    pub itl_ms: Mean,
}

/// One constant-rate load stage of the client.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LoadStage {
    /// Requests per second (Poisson).
    pub rate: f64,
    /// Seconds.
    pub duration_s: f64,
}

/// The client's prompt pool: `groups` system prompts, each shared by `prompts_per_group`
/// prompts; requests cycle through the pool in order.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PromptPool {
    /// System prompts.
    pub groups: u32,
    /// Prompts per system prompt.
    pub prompts_per_group: u32,
    /// Tokens of each system prompt.
    pub system_prompt_len: u32,
}

impl PromptPool {
    /// Distinct prompts in the pool.
    pub fn size(&self) -> u32 {
        (self.groups * self.prompts_per_group).max(1)
    }
}

/// One request the client sent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Arrival {
    /// Milliseconds after the first request.
    pub at_ms: f64,
    /// Prompt tokens.
    pub input_tokens: u32,
    /// The client gave up on it (timeout); it still loaded the server.
    pub error: bool,
    /// Tokens the server generated for it when they differ from the run's `output_len`
    /// (runs without `ignore_eos`); `None` for the built-in runs.
    pub output_tokens: Option<u32>,
}

/// A real run of vLLM: configuration, request stream and measurements.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// Short name, e.g. `llama-2-7b-tp1-general`.
    pub name: String,
    /// The source experiment's directory name.
    pub experiment: String,
    /// `train`, `validate` or `test`: the split the data's authors assigned (we fit on `train`).
    pub split: String,
    /// More than 30 % of requests failed: the server was overloaded, latencies are timeouts.
    pub excluded_overload: bool,
    /// Hugging Face model id.
    pub model: String,
    /// GPU catalogue name.
    pub gpu: String,
    /// Tensor-parallel degree.
    pub tp: u32,
    /// vLLM `--max-num-seqs`.
    pub max_num_seqs: u32,
    /// vLLM `--max-num-batched-tokens`.
    pub max_num_batched_tokens: u32,
    /// vLLM `--max-model-len`.
    pub max_model_len: u32,
    /// KV block size, tokens.
    pub block_size: u32,
    /// KV blocks vLLM reported for the GPU.
    pub kv_blocks_total_gpu: u32,
    /// CPU offload space, GiB.
    pub cpu_offload_gib: f64,
    /// The client's load stages.
    pub stages: Vec<LoadStage>,
    /// The prompt pool the client cycled through (`None`: every prompt its own).
    pub prompt_pool: Option<PromptPool>,
    /// Tokens the server generated per request (`ignore_eos`).
    pub output_len: u32,
    /// Requests sent.
    pub requests: usize,
    /// Requests that failed.
    pub errors: usize,
    /// What the client measured.
    pub measured: Measured,
    /// The request stream of a run loaded from disk (the built-in runs' are embedded).
    #[serde(skip)]
    pub stream: Vec<Arrival>,
    /// Server settings beyond the fields above, as a scenario fragment merged over the
    /// replay (e.g. `gpu_memory_utilization`, `kv_cache_dtype` from a run's exp-config).
    #[serde(skip)]
    pub knobs: serde_json::Value,
}

impl Run {
    /// True when the run counts towards the accuracy figures (not overloaded).
    pub fn is_scored(&self) -> bool {
        !self.excluded_overload
    }

    /// The requests the client sent, in order.
    pub fn arrivals(&self) -> Vec<Arrival> {
        if !self.stream.is_empty() {
            return self.stream.clone();
        }
        let text = STREAMS
            .iter()
            .find(|(n, _)| *n == self.name)
            .map(|(_, t)| *t)
            .unwrap_or_default();
        text.lines()
            .skip(1)
            .filter_map(|line| {
                let mut f = line.split(',');
                Some(Arrival {
                    at_ms: f.next()?.parse().ok()?,
                    input_tokens: f.next()?.parse().ok()?,
                    error: f.next()? == "1",
                    output_tokens: None,
                })
            })
            .collect()
    }
}

/// The built-in runs (derived from the project's shared measurements by `extract.py`).
pub fn builtin_runs() -> Vec<Run> {
    serde_json::from_str(include_str!("../data/runs.json")).expect("runs.json is valid")
}
