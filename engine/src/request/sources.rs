//! Where a request's prompt tokens came from.

use serde::Serialize;

/// Prompt tokens by source in the request's last admission (they add up to the prompt),
/// plus the prefill its preemptions cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TokenSources {
    /// Found in GPU blocks other requests computed (prefix-cache hits).
    pub gpu_cache: u32,
    /// Found again in GPU blocks this request computed or fetched before a preemption.
    pub gpu_rehit: u32,
    /// The offload tier a prefix was fetched from, if any.
    pub offload_tier: Option<u8>,
    /// Tokens fetched from that tier.
    pub offload: u32,
    /// Prompt tokens computed by prefill.
    pub computed: u32,
    /// Extra prefill its preemptions cost: tokens computed in admissions a preemption cut
    /// short, plus generated tokens computed again after one (0 if never preempted). The
    /// prefill a worker computes is the sum of `computed + recomputed` over its requests.
    pub recomputed: u32,
}

impl TokenSources {
    /// Prompt tokens accounted for (equals the prompt once admitted).
    pub fn prompt_total(&self) -> u32 {
        self.gpu_cache + self.gpu_rehit + self.offload + self.computed
    }
}
