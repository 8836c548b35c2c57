//! [`TransferRecord`]: one request's KV cache crossing from its prefill worker to its
//! decode worker in a disaggregated run, as the run's books keep it.

use serde::Serialize;

/// One request's KV cache moving from its prefill worker to its decode worker.
///
/// Times are simulated seconds; NaN (`null` in JSON) for a step not reached yet.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TransferRecord {
    /// The request.
    pub request: u64,
    /// The worker that ran its prefill (its record's `worker`).
    pub prefill_worker: u32,
    /// The worker it decodes on (`None` until one is chosen).
    pub decode_worker: Option<u32>,
    /// The prefill worker sampled its first token and handed it off.
    pub handoff: f64,
    /// The decode worker had allocated its blocks and the bytes started to move.
    pub start: f64,
    /// The last byte landed; the decode worker may schedule it.
    pub end: f64,
    /// Prompt tokens whose KV crossed the link.
    pub tokens: u32,
    /// Prompt tokens the decode worker's prefix cache already held (not transferred).
    pub cached_tokens: u32,
    /// Bytes moved: `tokens × model.kv_bytes_per_token`.
    pub bytes: u64,
    /// Prefill tokens the decode worker computed (recomputation after preemptions there;
    /// part of the request record's `recomputed`).
    pub decode_prefill: u32,
}

impl TransferRecord {
    /// A request handed off at `handoff` by `prefill_worker`, not yet placed.
    pub fn new(request: u64, prefill_worker: u32, handoff: f64) -> Self {
        Self {
            request,
            prefill_worker,
            decode_worker: None,
            handoff,
            start: f64::NAN,
            end: f64::NAN,
            tokens: 0,
            cached_tokens: 0,
            bytes: 0,
            decode_prefill: 0,
        }
    }

    /// From hand-off to the last byte: what the transfer added before the second token, s.
    pub fn delay(&self) -> f64 {
        self.end - self.handoff
    }
}
