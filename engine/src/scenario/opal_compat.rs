//! The `opal_compat` section: behaviours of the original Opal simulator that vLLM does not
//! share, each off by default. With every switch on, a config imported from Opal runs as
//! the original runs it, and gives its figures.

use crate::validate::{join, Problems};
use crate::worker::OpalBatch;
use serde::{Deserialize, Serialize};

/// The original Opal's behaviours, one switch each (all off: vLLM's behaviour).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OpalCompatConfig {
    /// Synthetic prompts are all prefixes of one token sequence, token ids 0 to n − 1, as
    /// Opal's generator makes them: a prompt finds in the caches whatever a longer (or
    /// equally long) one left there.
    pub shared_prompt_ids: bool,
    /// A worker keeps its batch from step to step and rebuilds it only when it is empty or
    /// a request in it completes: waiting requests join then, not at the next step.
    pub persistent_batch: bool,
    /// With `persistent_batch`: a prefill chunk keeps the size it was given when the batch
    /// was built, and the last chunk of a prompt is priced at that size though fewer tokens
    /// are left. Without it, each step plans the chunks anew under the token budget.
    pub frozen_chunks: bool,
    /// 1 ms before each batch is built; after a step that completes requests, 1 ms and the
    /// writes of their KV to the offload tiers before the worker goes on.
    pub step_delays: bool,
    /// The step that completes a prompt emits no token: TTFT ends with it and `output`
    /// decode steps follow (each request's records count one token more than it asked for).
    pub prefill_step: bool,
}

impl OpalCompatConfig {
    /// Every switch on: the original's behaviour throughout.
    pub fn all() -> Self {
        Self {
            shared_prompt_ids: true,
            persistent_batch: true,
            frozen_chunks: true,
            step_delays: true,
            prefill_step: true,
        }
    }

    /// All switches off (the section is then left out of a written document).
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }

    /// The switches a worker follows.
    pub fn batch(&self) -> OpalBatch {
        OpalBatch {
            persistent: self.persistent_batch,
            frozen_chunks: self.frozen_chunks,
            prefill_step: self.prefill_step,
            step_delays: self.step_delays,
        }
    }

    /// Reports every problem in this section under `path`.
    pub fn validate(&self, path: &str, problems: &mut Problems) {
        if self.frozen_chunks && !self.persistent_batch {
            problems.push(
                join(path, "frozen_chunks"),
                "needs persistent_batch: a chunk is frozen between the batch's rebuilds",
            );
        }
    }
}
