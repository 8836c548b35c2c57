//! The worker's KV cache: a pool of fixed-size GPU blocks with vLLM-style automatic prefix caching.

mod block_pool;
mod free_ids;
mod paged;
mod table;

pub use block_pool::{BlockId, BlockPool};
pub(crate) use table::BlockTable;
