//! Where a request's prompt tokens came from.

use serde::Serialize;

/// Prompt tokens by source, for the request's last admission (sums to the tokens prefilled).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TokenSources {
    /// Tokens found in the worker's GPU prefix cache.
    pub gpu_cache: u32,
    /// The offload tier a prefix was fetched from, if any.
    pub offload_tier: Option<u8>,
    /// Tokens fetched from that tier.
    pub offload: u32,
    /// Prompt tokens computed by prefill (recomputed output tokens are not prompt tokens).
    pub computed: u32,
}
