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

/// A fixed pool of prompts the requests send, as a benchmark client with a dataset does.
#[derive(Debug, Clone)]
pub struct PromptPool {
    /// The stage index (names the pool's prompts, `Source::Pooled`).
    pub pool: u32,
    /// Prompts in the pool.
    pub size: u32,
    /// Request *i* sends prompt *i mod size* (true), or a uniformly drawn one (false).
    pub cycle: bool,
}

/// One pool prompt, drawn the first time a request sends it: its group and its own tokens.
#[derive(Debug, Clone, Copy)]
struct PoolEntry {
    group: Option<u32>,
    input: u32,
}

/// `UniformReqRate` / `ExponentialReqRate` / `Gamma` requests.
///
/// Prompt = [group prefix] + `Source::Unique(request_id)` of `input` tokens; so the prompt
/// length is the prefix length plus the sampled input length. With a prompt pool, the
/// prompt is instead one of the pool's: [its group's prefix] + `Source::Pooled` of its own
/// length, so a repeated prompt hits the prefix cache whole. Each concern draws from its
/// own stream (`<stream>.arrivals`, `.lengths`, `.prefix`, `.pool`), so changing a length
/// distribution never moves an arrival time.
#[derive(Debug, Clone)]
pub struct SyntheticGenerator {
    arrival: Arrival,
    input: LengthDist,
    output: LengthDist,
    prefix: Option<PrefixGroups>,
    pool: Option<(PromptPool, Vec<Option<PoolEntry>>)>,
    issued: u64,
    arrivals_rng: SimRng,
    lengths_rng: SimRng,
    prefix_rng: SimRng,
    pool_rng: SimRng,
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
            pool: None,
            issued: 0,
            arrivals_rng: SimRng::stream(seed, &format!("{stream}.arrivals")),
            lengths_rng: SimRng::stream(seed, &format!("{stream}.lengths")),
            prefix_rng: SimRng::stream(seed, &format!("{stream}.prefix")),
            pool_rng: SimRng::stream(seed, &format!("{stream}.pool")),
        }
    }

    /// Sends prompts from `pool` instead of a new prompt per request.
    pub fn with_pool(mut self, pool: PromptPool) -> Self {
        self.pool = Some((pool, Vec::new()));
        self
    }

    /// The group of a new request's prompt, if prompts have groups.
    fn pick_group(&mut self) -> Option<u32> {
        let p = self.prefix.as_ref()?;
        Some(p.picker.pick(&mut self.prefix_rng))
    }

    /// Pool prompt `k`: drawn the first time it is sent. With uniform groups the pool is
    /// split into equal runs of consecutive prompts per group (as a shared-prefix benchmark
    /// dataset is: group 0's prompts, then group 1's, …); otherwise each prompt draws its
    /// group by popularity.
    fn pool_prompt(&mut self, k: u32) -> PoolEntry {
        let (size, known) = match &self.pool {
            Some((p, entries)) => (p.size, entries.get(k as usize).copied().flatten()),
            None => unreachable!("only called with a pool"),
        };
        if let Some(e) = known {
            return e;
        }
        let group = match &self.prefix {
            Some(p) if matches!(p.picker, super::Picker::Uniform(_)) => {
                Some((k as u64 * p.picker.n() as u64 / size as u64) as u32)
            }
            _ => self.pick_group(),
        };
        let entry = PoolEntry {
            group,
            input: self.input.sample(&mut self.lengths_rng),
        };
        let (_, entries) = self.pool.as_mut().expect("pool");
        if entries.len() <= k as usize {
            entries.resize(k as usize + 1, None);
        }
        entries[k as usize] = Some(entry);
        entry
    }
}

impl RequestGenerator for SyntheticGenerator {
    fn next_request(&mut self, request_id: u64) -> Option<RequestSpec> {
        let gap = self.arrival.next_gap(&mut self.arrivals_rng);
        let mut prompt = PromptContent::new();
        let i = self.issued;
        self.issued += 1;
        let (group, input, own) = match self.pool.as_ref().map(|(p, _)| p.clone()) {
            Some(pool) => {
                let k = if pool.cycle {
                    (i % pool.size as u64) as u32
                } else {
                    self.pool_rng.below(pool.size as u64) as u32
                };
                let e = self.pool_prompt(k);
                let source = Source::Pooled {
                    pool: pool.pool,
                    prompt: k,
                };
                (e.group, e.input, source)
            }
            None => {
                let group = self.pick_group();
                let input = self.input.sample(&mut self.lengths_rng);
                (group, input, Source::Unique(request_id))
            }
        };
        if let (Some(g), Some(p)) = (group, &self.prefix) {
            prompt.push(Source::SystemPrompt(g), p.length);
        }
        let output_len = self.output.sample(&mut self.lengths_rng);
        prompt.push(own, input);
        Some(RequestSpec {
            gap,
            prompt,
            output_len,
            session: None,
        })
    }
}
