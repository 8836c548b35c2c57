//! The per-request record kept for statistics, the timeline and the CSV export.

pub use crate::request::FailReason;
use crate::workload::generator::SessionTurn;
use serde::{Serialize, Serializer};

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
    /// Fetched from an offload tier; read with [`PromptSources::tiers`].
    pub(crate) tiers: TierHit,
    /// Prompt tokens prefilled (computed) on the GPU.
    pub computed: u32,
}

impl PromptSources {
    /// Adds `tokens` to tier `tier` (deeper tiers than [`MAX_TIERS`] count in the last one).
    /// A request fetches its prompt from one tier: tokens added to another tier replace
    /// the earlier ones.
    pub fn add_tier(&mut self, tier: usize, tokens: u32) {
        let tier = tier.min(MAX_TIERS - 1);
        let had = if self.tiers.tier() == tier {
            self.tiers.tokens()
        } else {
            0
        };
        self.tiers = TierHit::new(tier, had.saturating_add(tokens));
    }

    /// Tokens fetched from offload tier i (in the configured order).
    pub fn tiers(&self) -> [u32; MAX_TIERS] {
        let mut t = [0; MAX_TIERS];
        t[self.tiers.tier()] = self.tiers.tokens();
        t
    }

    /// The offload tier the prompt was fetched from and its tokens (0 when none was).
    pub(crate) fn tier_hit(&self) -> (usize, u32) {
        (self.tiers.tier(), self.tiers.tokens())
    }

    /// All prompt tokens accounted for.
    pub fn prompt_total(&self) -> u32 {
        self.gpu_cache + self.gpu_rehit + self.tiers.tokens() + self.computed
    }
}

/// The one offload tier a prompt was fetched from and its tokens, in one word: the tier
/// in the top two bits, the tokens (saturating at 2^30 − 1) below.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TierHit(pub(crate) u32);

impl TierHit {
    const TOKENS: u32 = (1 << 30) - 1;

    fn new(tier: usize, tokens: u32) -> Self {
        Self((tier as u32) << 30 | tokens.min(Self::TOKENS))
    }

    fn tier(self) -> usize {
        (self.0 >> 30) as usize
    }

    fn tokens(self) -> u32 {
        self.0 & Self::TOKENS
    }
}

impl Serialize for TierHit {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let sources = PromptSources {
            tiers: *self,
            ..Default::default()
        };
        sources.tiers().serialize(s)
    }
}

const _: () = assert!(MAX_TIERS <= 4, "TierHit keeps the tier in two bits");

/// A record's session and turn in 8 bytes (an `Option` of the pair takes 12): session
/// `u32::MAX` means none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SessionSlot(pub(crate) SessionTurn);

impl SessionSlot {
    const NONE: u32 = u32::MAX;

    fn new(turn: Option<SessionTurn>) -> Self {
        Self(turn.unwrap_or(SessionTurn {
            session: Self::NONE,
            turn: 0,
        }))
    }

    pub(crate) fn get(self) -> Option<SessionTurn> {
        (self.0.session != Self::NONE).then_some(self.0)
    }
}

impl Serialize for SessionSlot {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.get().serialize(s)
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
    /// Session and turn, for session workloads; read with [`RequestRecord::session`].
    pub(crate) session: SessionSlot,
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
            session: SessionSlot::new(None),
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

    /// Session and turn, for session workloads.
    pub fn session(&self) -> Option<SessionTurn> {
        self.session.get()
    }

    /// Sets the session and turn (global session ids stop short of `u32::MAX`).
    pub fn set_session(&mut self, turn: Option<SessionTurn>) {
        self.session = SessionSlot::new(turn);
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
        // 8 timestamps (64 B) + id (8) + sources (4 · 4 = 16) + session (8) + worker (8) +
        // failed (12) + stage, prompt, output, preemptions, priority, recomputed (24) =
        // 140 B; x86_64 pads it to 144.
        let size = std::mem::size_of::<RequestRecord>();
        assert!(size <= 144, "RequestRecord is {size} bytes");
    }

    #[test]
    fn packed_fields_serialise_as_before() {
        let mut r = RequestRecord::new(3, 0, 1.0, 100);
        r.sources.add_tier(7, 40); // past the last tier: counted in it
        r.sources.add_tier(3, 2);
        assert_eq!(r.sources.tiers(), [0, 0, 0, 42]);
        assert_eq!(r.sources.prompt_total(), 42);
        let j = serde_json::to_value(&r).unwrap();
        assert_eq!(j["sources"]["tiers"], serde_json::json!([0, 0, 0, 42]));
        assert_eq!(j["session"], serde_json::Value::Null);
        r.set_session(Some(SessionTurn {
            session: 5,
            turn: 2,
        }));
        let j = serde_json::to_value(&r).unwrap();
        assert_eq!(j["session"], serde_json::json!({"session": 5, "turn": 2}));
        r.sources.add_tier(1, 9); // another tier replaces the first
        assert_eq!(r.sources.tiers(), [0, 9, 0, 0]);
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
