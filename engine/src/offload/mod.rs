//! KV offload tiers (SPEC §5): where prompt KV goes after the GPU, how a
//! prefix is found in it again, and how long moving it back takes.
//!
//! Plain data and pure state machines; the worker's fetch and store processes
//! drive them.

pub mod config;
pub mod link;
pub mod store;
pub mod tiers;
pub(crate) mod transfer;

pub use config::{
    OffloadConfig, StoreWhen, TierConfig, TierScope, BYTES_PER_GB, MAX_TIERS, TIER_PRESETS,
};
pub use link::{Completion, TransferId, TransferLink};
pub use store::TierStore;
pub use tiers::{OffloadTiers, TierHit};
