//! The worker's KV cache: a pool of fixed-size GPU blocks with vLLM-style automatic prefix caching.
//!
//! - [`block_pool`]: the policy, as vLLM's `BlockPool` has it (reference counts, the free
//!   queue's order, the prefix-cache index, events).
//! - [`storage`]: how a pool with caching on keeps its blocks (records, cached content,
//!   the free queue as a stamped ring with runs of dead and never-used blocks).
//! - [`spare_ids`], [`paged`]: the bitmap of ids free for any new block, and the pages
//!   block records live in. [`free_ids`]: the free queue of a pool with caching off.
//! - [`table`]: a request's block table, the one form tables take in and out of the pool.

mod block_pool;
mod free_ids;
mod paged;
mod spare_ids;
mod storage;
mod table;

pub use block_pool::{BlockId, BlockPool};
pub use table::BlockTable;
