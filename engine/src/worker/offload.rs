//! The scheduler's view of the KV offload tiers: a prefix lookup the caller supplies.

use crate::request::PromptContent;

/// A prefix held by an offload tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TierHit {
    /// Tier number in the configured order (0 = fastest).
    pub tier: u8,
    /// Length of the contiguous prompt prefix the tier holds, counted from token 0.
    pub tokens: u32,
}

/// Looks a prompt up in the offload tiers (fastest first).
pub trait OffloadLookup {
    /// The longest prefix some tier holds, if it extends beyond `from_token`
    /// (the tokens the GPU prefix cache already covers).
    fn lookup(&mut self, prompt: &PromptContent, from_token: u32) -> Option<TierHit>;
}

/// No offload tiers: every lookup misses.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoOffload;

impl OffloadLookup for NoOffload {
    fn lookup(&mut self, _prompt: &PromptContent, _from_token: u32) -> Option<TierHit> {
        None
    }
}
