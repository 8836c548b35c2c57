//! How many KV blocks fit on the GPU next to the weights.

use crate::hardware::Hardware;
use crate::model::Model;

/// Most KV blocks one worker may have: 2^24 blocks (268 M tokens at 16 per block) is far
/// beyond any real GPU, and bounds the memory a simulated worker takes (a block record each).
pub const MAX_GPU_BLOCKS: u32 = 1 << 24;

/// Why a model cannot be served on the configured hardware.
#[derive(Debug, Clone, PartialEq)]
pub enum MemoryError {
    /// The weights alone exceed the usable memory.
    ModelDoesNotFit {
        /// Weight bytes.
        weight_bytes: u64,
        /// memory · tp · gpu_memory_utilization, bytes.
        usable_bytes: f64,
    },
    /// The KV cache cannot hold even one sequence of `max_model_len` tokens.
    NoSequenceFits {
        /// KV blocks that fit.
        num_gpu_blocks: u64,
        /// Blocks one max-length sequence needs.
        blocks_per_sequence: u64,
        /// The model's maximum length, tokens.
        max_model_len: u32,
    },
    /// The memory gives more KV blocks than a simulated worker supports.
    TooManyBlocks {
        /// KV blocks the memory would give.
        num_gpu_blocks: u64,
    },
}

impl std::fmt::Display for MemoryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const GIB: f64 = (1u64 << 30) as f64;
        match *self {
            MemoryError::ModelDoesNotFit {
                weight_bytes,
                usable_bytes,
            } => write!(
                f,
                "model weights need {:.1} GB but only {:.1} GB are usable; use more GPUs (tp), a larger GPU or a higher gpu_memory_utilization",
                weight_bytes as f64 / GIB,
                usable_bytes / GIB
            ),
            MemoryError::NoSequenceFits {
                num_gpu_blocks,
                blocks_per_sequence,
                max_model_len,
            } => write!(
                f,
                "the KV cache holds {num_gpu_blocks} blocks but one sequence of max_model_len {max_model_len} tokens needs {blocks_per_sequence}; lower max_model_len or add memory"
            ),
            MemoryError::TooManyBlocks { num_gpu_blocks } => write!(
                f,
                "the memory gives {num_gpu_blocks} KV blocks per worker, more than the {MAX_GPU_BLOCKS} the simulator supports; use less memory or a larger block_size"
            ),
        }
    }
}

/// Per GPU, `floor((memory·utilization − weight_bytes/tp − reserved) / (block_size ·
/// kv_bytes_per_token_per_gpu))`, checked so that at least one `max_model_len` sequence
/// fits; with `dp` data-parallel ranks, the experts' share of the weights is divided by
/// `dp` too, and the worker has every rank's blocks. `reserved` is what the serving engine keeps per GPU besides weights and KV cache
/// (0 for the spec's plain formula).
pub fn num_gpu_blocks(
    model: &Model,
    hw: &Hardware,
    block_size: u32,
    gpu_memory_utilization: f64,
    reserved: f64,
) -> Result<u32, MemoryError> {
    let tp = hw.tp.max(1) as f64;
    let dp = hw.dp.max(1) as u64;
    let usable_bytes = hw.memory_bytes() * gpu_memory_utilization;
    // One rank's weights: the experts are spread over every rank's GPUs.
    let experts = model.expert_weight_bytes();
    let rank_weights = model.weight_bytes - experts + experts / dp;
    let free = (usable_bytes - rank_weights as f64) / tp - reserved;
    if free <= 0.0 {
        return Err(MemoryError::ModelDoesNotFit {
            weight_bytes: rank_weights,
            usable_bytes: usable_bytes - reserved * tp,
        });
    }
    let block_bytes = block_size as f64 * model.kv_bytes_per_token_per_gpu(hw.tp);
    let blocks = (free / block_bytes).floor() as u64;
    let blocks_per_sequence = (model.max_model_len() as u64).div_ceil(block_size as u64);
    if blocks < blocks_per_sequence {
        return Err(MemoryError::NoSequenceFits {
            num_gpu_blocks: blocks,
            blocks_per_sequence,
            max_model_len: model.max_model_len(),
        });
    }
    // Each rank's cache, pooled: the worker schedules for all its ranks.
    let blocks = blocks * dp;
    if blocks > MAX_GPU_BLOCKS as u64 {
        return Err(MemoryError::TooManyBlocks {
            num_gpu_blocks: blocks,
        });
    }
    Ok(blocks as u32)
}
