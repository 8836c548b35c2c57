//! A request's identity, state and history as it moves through the platform.

use super::{PromptContent, Source, Timestamps, TokenSources};
use serde::Serialize;

/// Where a request is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum RequestState {
    /// Queued (at the router or in a worker's waiting queue), not yet holding KV blocks.
    Waiting,
    /// Its prefix is being fetched from an offload tier (or its prefill worker) into GPU blocks.
    FetchKvc,
    /// Fetched, waiting to be admitted to the running batch.
    Ready,
    /// Admitted; computing its prompt, chunk by chunk.
    Prefill,
    /// Generating output tokens, one per step.
    Decode,
    /// Prefilled on a prefill worker, which holds its KV blocks until a decode worker has them.
    Transferring,
    /// Every output token emitted.
    Completed,
    /// Rejected, with the reason.
    Failed(FailReason),
}

/// Why a request was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum FailReason {
    /// The prompt has no tokens.
    EmptyPrompt,
    /// The request asks for no output tokens.
    NoOutputTokens,
    /// Prompt + output exceed the model's maximum length.
    ExceedsMaxModelLen {
        /// Prompt + output tokens.
        tokens: u32,
        /// The model's limit.
        max_model_len: u32,
    },
    /// Its KV cache needs more blocks than the whole GPU holds.
    ExceedsKvCapacity {
        /// Blocks the full sequence needs.
        blocks_needed: u32,
        /// Blocks on the GPU.
        gpu_blocks: u32,
    },
    /// Chunked prefill is off and the prompt exceeds the step's token budget.
    PromptExceedsBatch {
        /// Prompt tokens.
        prompt: u32,
        /// `max_num_batched_tokens`.
        max_num_batched_tokens: u32,
    },
    /// No worker was available to take it.
    NoWorker,
}

impl FailReason {
    /// A short stable name, used to count failures by reason.
    pub fn kind(&self) -> &'static str {
        match self {
            FailReason::EmptyPrompt => "empty_prompt",
            FailReason::NoOutputTokens => "no_output_tokens",
            FailReason::ExceedsMaxModelLen { .. } => "exceeds_max_model_len",
            FailReason::ExceedsKvCapacity { .. } => "exceeds_kv_capacity",
            FailReason::PromptExceedsBatch { .. } => "prompt_exceeds_batch",
            FailReason::NoWorker => "no_worker",
        }
    }
}

impl std::fmt::Display for FailReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            FailReason::EmptyPrompt => write!(f, "empty prompt"),
            FailReason::NoOutputTokens => write!(f, "no output tokens requested"),
            FailReason::ExceedsMaxModelLen {
                tokens,
                max_model_len,
            } => write!(
                f,
                "prompt + output = {tokens} tokens exceeds max_model_len {max_model_len}"
            ),
            FailReason::ExceedsKvCapacity {
                blocks_needed,
                gpu_blocks,
            } => write!(
                f,
                "needs {blocks_needed} KV blocks but the GPU holds {gpu_blocks}"
            ),
            FailReason::PromptExceedsBatch {
                prompt,
                max_num_batched_tokens,
            } => write!(
                f,
                "prompt of {prompt} tokens exceeds max_num_batched_tokens {max_num_batched_tokens} with chunked prefill off"
            ),
            FailReason::NoWorker => write!(f, "no worker was available"),
        }
    }
}

/// One inference request and everything that happened to it.
///
/// Small by design (no per-token or per-block data): a finished request keeps only
/// counters and timestamps, so a run of 100 000 requests fits in a browser tab.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Request {
    /// Unique id within the run.
    pub id: u64,
    /// The workload stage that issued it.
    pub stage: u32,
    /// Multi-turn session it belongs to, if any.
    pub session: Option<u32>,
    /// Turn index within the session.
    pub turn: Option<u32>,
    /// The prompt, as content segments.
    pub prompt: PromptContent,
    /// Output tokens to generate.
    pub output_len: u32,
    /// Scheduling priority under the `priority` policy: lower runs first (vLLM's meaning).
    pub priority: i32,
    /// Where it is now.
    pub state: RequestState,
    /// When things happened.
    pub times: Timestamps,
    /// The worker it ran on (its prefill worker in a disaggregated deployment).
    pub worker: Option<u32>,
    /// The worker it decodes on, in a disaggregated deployment.
    pub decode_worker: Option<u32>,
    /// Prefill tokens its decode worker computed (recomputation after preemptions there).
    pub decode_prefill: u32,
    /// Times it was preempted (recompute).
    pub preemptions: u32,
    /// Where its prompt tokens came from in its last admission.
    pub sources: TokenSources,
    /// Output tokens emitted so far.
    pub tokens_emitted: u32,
    /// When the latest output token was emitted, seconds.
    pub last_token_at: Option<f64>,
}

impl Request {
    /// A new request created at time `created` (seconds).
    pub fn new(id: u64, prompt: PromptContent, output_len: u32, created: f64) -> Self {
        Self {
            id,
            stage: 0,
            session: None,
            turn: None,
            prompt,
            output_len,
            priority: 0,
            state: RequestState::Waiting,
            times: Timestamps {
                created,
                ..Timestamps::default()
            },
            worker: None,
            decode_worker: None,
            decode_prefill: 0,
            preemptions: 0,
            sources: TokenSources::default(),
            tokens_emitted: 0,
            last_token_at: None,
        }
    }

    /// Prompt length in tokens.
    pub fn prompt_len(&self) -> u32 {
        self.prompt.len()
    }

    /// What its generated tokens are: a session turn's reply (which the next turn's prompt
    /// quotes), otherwise content of its own.
    pub fn output_source(&self) -> Source {
        match (self.session, self.turn) {
            (Some(session), Some(turn)) => Source::Reply { session, turn },
            _ => Source::Output(self.id),
        }
    }

    /// Marks the request failed for `reason`.
    pub fn fail(&mut self, reason: FailReason) {
        self.state = RequestState::Failed(reason);
    }

    /// Time to first token (first token − created), if it has one.
    pub fn ttft(&self) -> Option<f64> {
        Some(self.times.first_token? - self.times.created)
    }

    /// End-to-end latency (completion − created), if completed.
    pub fn e2e(&self) -> Option<f64> {
        Some(self.times.completed? - self.times.created)
    }

    /// Time per output token after the first: (E2E − TTFT) / (output − 1).
    pub fn tpot(&self) -> Option<f64> {
        if self.tokens_emitted < 2 {
            return None;
        }
        Some((self.e2e()? - self.ttft()?) / (self.tokens_emitted - 1) as f64)
    }
}
