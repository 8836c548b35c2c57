//! What one scheduler step decided, and what its completion produced.

use crate::request::Request;
use crate::timing::SeqWork;

/// One sequence in the step's batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScheduledSeq {
    /// Request id.
    pub request: u64,
    /// Tokens computed, context before them, prefill or decode.
    pub work: SeqWork,
}

/// An offload fetch the caller must start (and report with `Scheduler::fetch_done`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchStart {
    /// Request id.
    pub request: u64,
    /// Tier to read from.
    pub tier: u8,
    /// Tokens to transfer.
    pub tokens: u32,
    /// Bytes to transfer (tokens · kv_bytes_per_token).
    pub bytes: u64,
}

/// A prefilled request's KV the caller must move from its prefill worker (and report with
/// `Scheduler::fetch_done`): its blocks are allocated here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KvReceive {
    /// Request id.
    pub request: u64,
    /// Prompt tokens to transfer (those this worker's prefix cache lacks).
    pub tokens: u32,
    /// Prompt tokens this worker's prefix cache already held.
    pub cached_tokens: u32,
    /// Bytes to transfer (tokens · kv_bytes_per_token).
    pub bytes: u64,
}

/// The batch of one step, as vLLM v1's `SchedulerOutput`: running sequences first, in
/// admission order, then newly admitted ones.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SchedulerOutput {
    /// The batch.
    pub scheduled: Vec<ScheduledSeq>,
    /// Tokens in the batch (≤ `max_num_batched_tokens`).
    pub num_scheduled_tokens: u32,
    /// Requests preempted (recompute) to make room, in preemption order.
    pub preempted: Vec<u64>,
    /// Offload fetches to start now.
    pub fetches: Vec<FetchStart>,
    /// KV transfers from prefill workers to start now (disaggregated deployments).
    pub receives: Vec<KvReceive>,
}

impl SchedulerOutput {
    /// True when nothing runs this step (the loop may sleep until woken).
    pub fn is_empty(&self) -> bool {
        self.scheduled.is_empty()
    }

    /// Empties every list, keeping their memory.
    pub(crate) fn clear(&mut self) {
        let SchedulerOutput {
            scheduled,
            num_scheduled_tokens,
            preempted,
            fetches,
            receives,
        } = self;
        scheduled.clear();
        *num_scheduled_tokens = 0;
        preempted.clear();
        fetches.clear();
        receives.clear();
    }

    /// The batch as the timing models see it.
    pub fn work(&self) -> impl Iterator<Item = SeqWork> + '_ {
        self.scheduled.iter().map(|s| s.work)
    }
}

/// What finishing a step produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StepOutcome {
    /// Output tokens emitted (first tokens included).
    pub tokens_emitted: u32,
    /// Requests that emitted their first token.
    pub first_tokens: Vec<u64>,
    /// `(request, gap)` for every non-first token: seconds since that request's previous
    /// token (inter-token latency). Requests decoding in consecutive steps share the step time.
    pub token_gaps: Vec<(u64, f64)>,
    /// Requests that emitted their last token, now `Completed` and handed back.
    pub finished: Vec<Request>,
    /// On a prefill worker, requests that emitted their first token and go on to a decode
    /// worker (their blocks stay held until `Scheduler::release`).
    pub handoffs: Vec<Request>,
    /// Prefill tokens the step computed (all but first-time decodes; see
    /// `Scheduler::prefill_tokens`).
    pub prefill_tokens: u64,
    /// Chained hashes of the offload chunks whose last token this step computed (prompt or
    /// generated tokens), for a worker that stores KV as it is computed; empty otherwise.
    pub computed_chunks: Vec<crate::request::BlockHash>,
}

impl StepOutcome {
    /// Empties every list, keeping their memory.
    pub(crate) fn clear(&mut self) {
        let StepOutcome {
            tokens_emitted,
            first_tokens,
            token_gaps,
            finished,
            handoffs,
            prefill_tokens,
            computed_chunks,
        } = self;
        *tokens_emitted = 0;
        first_tokens.clear();
        token_gaps.clear();
        finished.clear();
        handoffs.clear();
        *prefill_tokens = 0;
        computed_chunks.clear();
    }
}
