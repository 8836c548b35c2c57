//! The per-request record kept for statistics, the timeline and the CSV export.

pub use crate::request::FailReason;
use crate::workload::generator::SessionTurn;
use serde::Serialize;

/// Offload tiers whose hits a record counts separately; hits in deeper tiers are added
/// to the last one (the default configuration has three tiers).
pub const MAX_TIERS: usize = 4;

/// Prompt tokens of one request by where their KV came from, in the admission that ran
/// to completion (they add up to the prompt).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PromptSources {
    /// Hits in the worker's GPU prefix cache on blocks other requests computed.
    pub gpu_cache: u32,
    /// Found again in GPU blocks this request computed (or fetched) before a preemption:
    /// not a prefix-cache hit in the usual sense, so counted apart.
    pub gpu_rehit: u32,
    /// Fetched from offload tier i (in the configured order).
    pub tiers: [u32; MAX_TIERS],
    /// Prompt tokens prefilled (computed) on the GPU.
    pub computed: u32,
}

impl PromptSources {
    /// Adds `tokens` to tier `tier` (deeper tiers than [`MAX_TIERS`] count in the last one).
    pub fn add_tier(&mut self, tier: usize, tokens: u32) {
        self.tiers[tier.min(MAX_TIERS - 1)] += tokens;
    }

    /// All prompt tokens accounted for.
    pub fn prompt_total(&self) -> u32 {
        self.gpu_cache + self.gpu_rehit + self.tiers.iter().sum::<u32>() + self.computed
    }
}

/// Everything statistics and the timeline need about one request; small and plain.
///
/// Timestamps are simulated seconds; a stage not reached is NaN (`null` in JSON).
/// `completion` is when the request left the platform: completed, or rejected if `failed`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RequestRecord {
    /// Request id (global).
    pub id: u64,
    /// Stage index.
    pub stage: u32,
    /// Session and turn, for session workloads.
    pub session: Option<SessionTurn>,
    /// Worker it ran on.
    pub worker: Option<u32>,
    /// Prompt tokens.
    pub prompt_tokens: u32,
    /// Output tokens generated.
    pub output_tokens: u32,
    /// Arrival at the platform.
    pub created: f64,
    /// Taken by the router.
    pub router_in: f64,
    /// Queued on a worker.
    pub worker_in: f64,
    /// Prefix lookup started (first considered by the scheduler).
    pub kv_lookup_start: f64,
    /// Ready to be scheduled (after any KV fetch).
    pub ready: f64,
    /// First scheduled in a batch.
    pub first_scheduled: f64,
    /// First output token.
    pub first_token: f64,
    /// Completed (or rejected).
    pub completion: f64,
    /// Times it was preempted.
    pub preemptions: u32,
    /// Its scheduling priority (used by the `priority` policy; lower first).
    pub priority: i32,
    /// Prompt tokens by KV source.
    pub sources: PromptSources,
    /// Extra prefill its preemptions cost: tokens computed in admissions a preemption cut
    /// short, plus generated tokens computed again (0 if never preempted). A worker's
    /// prefill is the sum of `sources.computed + recomputed` over its requests.
    pub recomputed: u32,
    /// Why it failed, if it did.
    pub failed: Option<FailReason>,
}

impl RequestRecord {
    /// A request created at `created` with every later timestamp not reached yet.
    pub fn new(id: u64, stage: u32, created: f64, prompt_tokens: u32) -> Self {
        Self {
            id,
            stage,
            session: None,
            worker: None,
            prompt_tokens,
            output_tokens: 0,
            created,
            router_in: f64::NAN,
            worker_in: f64::NAN,
            kv_lookup_start: f64::NAN,
            ready: f64::NAN,
            first_scheduled: f64::NAN,
            first_token: f64::NAN,
            completion: f64::NAN,
            preemptions: 0,
            priority: 0,
            sources: PromptSources::default(),
            recomputed: 0,
            failed: None,
        }
    }

    /// Completed successfully.
    pub fn is_completed(&self) -> bool {
        self.failed.is_none() && !self.completion.is_nan()
    }

    /// Time to first token: first token − created, seconds.
    pub fn ttft(&self) -> f64 {
        self.first_token - self.created
    }

    /// End-to-end latency: completion − created, seconds.
    pub fn e2e(&self) -> f64 {
        self.completion - self.created
    }

    /// Time per output token after the first: (E2E − TTFT) / (output − 1); NaN for fewer
    /// than two output tokens.
    pub fn tpot(&self) -> f64 {
        if self.output_tokens < 2 {
            return f64::NAN;
        }
        (self.e2e() - self.ttft()) / (self.output_tokens - 1) as f64
    }

    /// Queueing time: first scheduled − worker in (waiting in the worker's queue, including
    /// any KV fetch from an offload tier), seconds.
    pub fn queueing(&self) -> f64 {
        self.first_scheduled - self.worker_in
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_stays_small() {
        // 8 timestamps (64 B) + id (8) + sources (4 + 4 + 4·4 + 4 = 28) + session (12) +
        // worker (8) + failed (12) + stage, prompt, output, preemptions, priority,
        // recomputed (24) = 156 B; x86_64 pads it to 160.
        let size = std::mem::size_of::<RequestRecord>();
        assert!(size <= 160, "RequestRecord is {size} bytes");
    }

    #[test]
    fn derived_latencies() {
        let mut r = RequestRecord::new(1, 0, 10.0, 100);
        r.worker_in = 10.5;
        r.first_scheduled = 11.0;
        r.first_token = 12.0;
        r.completion = 15.0;
        r.output_tokens = 7;
        assert_eq!(r.ttft(), 2.0);
        assert_eq!(r.e2e(), 5.0);
        assert_eq!(r.tpot(), 0.5); // (5 − 2) / (7 − 1)
        assert_eq!(r.queueing(), 0.5);
        r.output_tokens = 1;
        assert!(r.tpot().is_nan());
    }

    #[test]
    fn fail_reasons_explain_themselves() {
        let f = FailReason::ExceedsMaxModelLen {
            tokens: 9000,
            max_model_len: 8192,
        };
        assert_eq!(f.kind(), "exceeds_max_model_len");
        assert_eq!(
            f.to_string(),
            "prompt + output = 9000 tokens exceeds max_model_len 8192"
        );
        let j = serde_json::to_string(&f).unwrap();
        assert_eq!(
            j,
            r#"{"reason":"exceeds_max_model_len","tokens":9000,"max_model_len":8192}"#
        );
    }
}
