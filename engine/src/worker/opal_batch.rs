//! The original Opal's batching, which vLLM does not share, for runs that reproduce the
//! original's figures (`opal_compat`). Each rule is off by default.
//!
//! Opal's worker (`opal/worker/vllm_worker.py`) keeps a persistent batch: `_build_batch`
//! builds it when the worker is idle and `_scheduler_step` runs it unchanged, step after
//! step, until a request completes; only then is it rebuilt, and only then can waiting
//! requests join. Each member's tokens per step (`request_tokens`) are fixed when the
//! batch is built: 1 for a decode, a prefill chunk otherwise, and a chunk is counted (and
//! priced) whole even when less of the prompt is left. A prefill step emits no token: a
//! request takes `output` decode steps after it. Building a batch waits 1 ms, and so does
//! handing back completed requests, whose KV the worker writes to the offload tiers
//! before it goes on.

use super::sequences::Slot;

/// Which of Opal's batching rules a worker follows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpalBatch {
    /// Keep the batch from step to step; rebuild it only when it is empty or a request in
    /// it completes.
    pub persistent: bool,
    /// A prefill chunk keeps the size it was given when the request joined the batch (or
    /// at the persistent batch's last rebuild), and is priced at that size to the end of
    /// the prompt.
    pub frozen_chunks: bool,
    /// The step that completes a prompt emits no token: `output` decode steps follow it.
    pub prefill_step: bool,
    /// 1 ms before each batch is built; after a step that completes requests, 1 ms and the
    /// writes of their KV to the offload tiers before the worker goes on.
    pub step_delays: bool,
}

/// Opal's pause before building a batch and before handing back completed requests,
/// seconds (`yield self.simpy_env.timeout(0.001)` in `_build_batch` and
/// `_handle_completed_requests`).
pub(crate) const OPAL_STEP_DELAY: f64 = 0.001;

/// The members of a persistent batch with the tokens each was given when it was built.
#[derive(Debug, Default)]
pub(super) struct StandingBatch {
    members: Vec<(Slot, u32)>,
    /// A step's plan over the members: (slot, tokens, tokens priced); kept for its memory.
    pub(super) plan: Vec<(Slot, u32, u32)>,
    /// Built and not yet invalidated by a completion or a preemption.
    stands: bool,
}

impl StandingBatch {
    /// The batch to run again, if it still stands.
    pub(super) fn members(&self) -> Option<&[(Slot, u32)]> {
        self.stands.then_some(&self.members[..])
    }

    /// Records the batch just built: each member and the tokens it was given.
    pub(super) fn build(&mut self, batch: &[(Slot, u32)]) {
        self.members.clear();
        self.members.extend_from_slice(batch);
        self.stands = !batch.is_empty();
    }

    /// A member completed or was preempted: the next step rebuilds the batch.
    pub(super) fn invalidate(&mut self) {
        self.stands = false;
    }
}
