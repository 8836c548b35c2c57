//! The worker's KV cache: a pool of fixed-size GPU blocks with vLLM-style automatic prefix caching.

mod block_pool;
mod fixed_hash;

pub use block_pool::{BlockId, BlockPool};
pub use fixed_hash::{FixedHasher, FixedState};
