//! Synthetic open-loop requests: an arrival process × prompt and output length
//! distributions, optionally with shared-prefix groups.

use super::{Picker, RequestGenerator, RequestSpec};
use crate::request::{PromptContent, Source};
use crate::rng::SimRng;
use crate::workload::arrival::Arrival;
use crate::workload::length::LengthDist;

/// Shared system prompts: each request belongs to one of `picker.n()` groups, and its prompt
/// starts with that group's `length`-token `Source::SystemPrompt(group)`.
#[derive(Debug, Clone)]
pub struct PrefixGroups {
    /// Prefix length, tokens.
    pub length: u32,
    /// Group popularity.
    pub picker: Picker,
}

/// `UniformReqRate` / `ExponentialReqRate` / `Gamma` requests.
///
/// Prompt = [group prefix] + `Source::Unique(request_id)` of `input` tokens; so the prompt
/// length is the prefix length plus the sampled input length. Each concern draws from its
/// own stream (`<stream>.arrivals`, `.lengths`, `.prefix`), so changing a length
/// distribution never moves an arrival time.
#[derive(Debug, Clone)]
pub struct SyntheticGenerator {
    arrival: Arrival,
    input: LengthDist,
    output: LengthDist,
    prefix: Option<PrefixGroups>,
    arrivals_rng: SimRng,
    lengths_rng: SimRng,
    prefix_rng: SimRng,
}

impl SyntheticGenerator {
    /// A generator whose streams derive from `(seed, stream)`, e.g. `"workload.stage.0"`.
    pub fn new(
        seed: u64,
        stream: &str,
        arrival: Arrival,
        input: LengthDist,
        output: LengthDist,
        prefix: Option<PrefixGroups>,
    ) -> Self {
        Self {
            arrival,
            input,
            output,
            prefix,
            arrivals_rng: SimRng::stream(seed, &format!("{stream}.arrivals")),
            lengths_rng: SimRng::stream(seed, &format!("{stream}.lengths")),
            prefix_rng: SimRng::stream(seed, &format!("{stream}.prefix")),
        }
    }
}

impl RequestGenerator for SyntheticGenerator {
    fn next_request(&mut self, request_id: u64) -> Option<RequestSpec> {
        let gap = self.arrival.next_gap(&mut self.arrivals_rng);
        let mut prompt = PromptContent::new();
        if let Some(p) = &self.prefix {
            let g = p.picker.pick(&mut self.prefix_rng);
            prompt.push(Source::SystemPrompt(g), p.length);
        }
        let input = self.input.sample(&mut self.lengths_rng);
        let output_len = self.output.sample(&mut self.lengths_rng);
        prompt.push(Source::Unique(request_id), input);
        Some(RequestSpec {
            gap,
            prompt,
            output_len,
            session: None,
        })
    }
}
