//! KV cache events: what a worker tells the router about the blocks it holds.
//!
//! Workers buffer these as their caches change and flush them to the router
//! every `kv_event_interval` seconds; the router's global view is therefore
//! stale by design, as in real clusters.

use crate::request::BlockHash;
use serde::Serialize;

/// Where a block or chunk lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum KvMedium {
    /// The worker's GPU prefix cache (block granularity, `block_size` tokens).
    Gpu,
    /// Offload tier number `n` in the configured order (chunk granularity, `chunk_size` tokens).
    Tier(u8),
}

/// What happened to a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum KvChange {
    /// The block's content became available for reuse.
    Stored,
    /// The block was evicted and its content is gone.
    Removed,
}

/// One change to one block, in the order it happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct KvEvent {
    /// Which medium changed.
    pub medium: KvMedium,
    /// Stored or removed.
    pub change: KvChange,
    /// The block's chained hash.
    pub hash: BlockHash,
}

/// A batch of events from one worker, as flushed to the router.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KvEventBatch {
    /// The worker that sent it.
    pub worker: u32,
    /// Events in the order they happened.
    pub events: Vec<KvEvent>,
}

/// What one flush tells the router: the worker's KV events since its last flush, and the
/// share of its GPU KV blocks in use at the flush. The router's view of both is as stale
/// as the flush interval, as a real router's scraped metrics are.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KvReport {
    /// The events, with the worker that sent them.
    pub batch: KvEventBatch,
    /// Fraction of the worker's GPU KV blocks in use, 0..=1.
    pub kv_usage: f64,
}
