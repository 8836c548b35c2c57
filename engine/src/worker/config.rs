//! The scheduler limits of the `worker` section (vLLM's engine arguments).

use crate::hardware::Hardware;
use crate::model::Model;
use crate::timing::TimingConfig;
use crate::validate::{join, Problems};
use serde::{Deserialize, Serialize};

/// vLLM-style scheduler and cache limits of one worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SchedulerConfig {
    /// Token budget of one step (all sequences together), tokens. Default 8192.
    pub max_num_batched_tokens: u32,
    /// Most sequences running at once. Default 256.
    pub max_num_seqs: u32,
    /// Tokens per KV block. Default 16.
    pub block_size: u32,
    /// Split long prompts over several steps; off means a prompt must fit one step's budget. Default true.
    pub chunked_prefill: bool,
    /// Largest prefill chunk of one sequence per step, tokens; 0 means no limit. Default 0.
    pub long_prefill_token_threshold: u32,
    /// Fraction of GPU memory for weights + KV cache, in (0, 1]. Default 0.9.
    pub gpu_memory_utilization: f64,
    /// Use a fixed number of KV blocks instead of deriving it from memory; 0 means derive. Default 0.
    pub num_gpu_blocks_override: u32,
    /// Keep computed prompt blocks for reuse (vLLM automatic prefix caching). Default true.
    pub enable_prefix_caching: bool,
    /// Most requests fetching from offload tiers or fetched-but-not-admitted at once. Default 16.
    pub max_kvc_ready_requests: u32,
    /// Fixed time added to every step (scheduling, sampling, launch), seconds. Default 0.
    pub step_overhead: f64,
    /// vLLM's async scheduling (default since v0.14): the engine decides the next batch
    /// while the current one runs, so a request that arrives during a step joins the batch
    /// after the next one (unless nothing else runs). Default true.
    pub async_scheduling: bool,
    /// Which waiting request runs next and which running one is preempted (vLLM's
    /// `--scheduling-policy`). Default `fcfs`.
    pub scheduling_policy: SchedulingPolicy,
    /// Step-time model. Default calibrated.
    pub timing: TimingConfig,
}

/// vLLM's scheduling policies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SchedulingPolicy {
    /// First come, first served: waiting requests in arrival order (preempted ones first);
    /// the most recently admitted running request is preempted.
    #[default]
    Fcfs,
    /// Waiting requests by priority (lower first), then arrival; the running request with
    /// the lowest priority (latest arrival among equals) is preempted.
    Priority,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        Self {
            max_num_batched_tokens: 8192,
            max_num_seqs: 256,
            block_size: 16,
            chunked_prefill: true,
            long_prefill_token_threshold: 0,
            gpu_memory_utilization: 0.9,
            num_gpu_blocks_override: 0,
            enable_prefix_caching: true,
            max_kvc_ready_requests: 16,
            step_overhead: 0.0,
            async_scheduling: true,
            scheduling_policy: SchedulingPolicy::Fcfs,
            timing: TimingConfig::default(),
        }
    }
}

impl SchedulerConfig {
    /// KV blocks per worker: `num_gpu_blocks_override` when set, else what fits in memory.
    pub fn gpu_blocks(&self, model: &Model, hw: &Hardware) -> Result<u32, super::MemoryError> {
        if self.num_gpu_blocks_override > 0 {
            Ok(self.num_gpu_blocks_override)
        } else {
            super::num_gpu_blocks(
                model,
                hw,
                self.block_size,
                self.gpu_memory_utilization,
                self.memory_reserved(model, hw),
            )
        }
    }

    /// The limits of a worker of `dp` data-parallel ranks, each with this section's
    /// `max_num_seqs` and `max_num_batched_tokens` (vLLM's are per engine core).
    pub fn across_ranks(&self, dp: u32) -> Self {
        let mut cfg = self.clone();
        if dp > 1 {
            cfg.max_num_seqs = cfg.max_num_seqs.saturating_mul(dp);
            cfg.max_num_batched_tokens = cfg.max_num_batched_tokens.saturating_mul(dp);
        }
        cfg
    }

    /// Bytes per GPU the serving engine keeps besides weights and KV cache: with the
    /// calibrated timing model, the GPU's fitted reserve plus the activation peak of a
    /// full-budget step (what vLLM's memory profiling subtracts); otherwise none, as in
    /// the spec's plain formula.
    pub fn memory_reserved(&self, model: &Model, hw: &Hardware) -> f64 {
        if self.timing.model != crate::timing::TimingKind::Calibrated {
            return 0.0;
        }
        let cal = self.timing.calibration(hw);
        let gib = (1u64 << 30) as f64;
        let collective = if hw.gpus() > 1 {
            cal.memory_reserved_tp_gb
        } else {
            0.0
        };
        (cal.memory_reserved_gb + collective) * gib
            + model.activation_bytes(self.max_num_batched_tokens, self.max_num_seqs, hw.tp)
    }

    /// Reports every problem in this section under `path`.
    pub fn validate(&self, path: &str, problems: &mut Problems) {
        for (field, v) in [
            ("max_num_batched_tokens", self.max_num_batched_tokens),
            ("max_num_seqs", self.max_num_seqs),
            ("block_size", self.block_size),
            ("max_kvc_ready_requests", self.max_kvc_ready_requests),
        ] {
            if v == 0 {
                problems.push(join(path, field), "must be >= 1");
            }
        }
        if !(self.gpu_memory_utilization > 0.0 && self.gpu_memory_utilization <= 1.0) {
            problems.push(join(path, "gpu_memory_utilization"), "must be in (0, 1]");
        }
        if self.num_gpu_blocks_override > super::MAX_GPU_BLOCKS {
            problems.push(
                join(path, "num_gpu_blocks_override"),
                format!("must be at most {}", super::MAX_GPU_BLOCKS),
            );
        }
        problems.in_range(
            path,
            "step_overhead",
            self.step_overhead,
            0.0,
            crate::timing::MAX_STEP_SECONDS,
        );
        self.timing.validate(&join(path, "timing"), problems);
    }
}
