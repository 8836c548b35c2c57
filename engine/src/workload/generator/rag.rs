//! `RAGWorkload`: a system prompt, a few retrieved documents from a corpus, a unique query.

use super::{Picker, RequestGenerator, RequestSpec};
use crate::request::{PromptContent, Source};
use crate::rng::SimRng;
use crate::workload::arrival::Arrival;
use crate::workload::length::LengthDist;

/// What a RAG stage sends.
#[derive(Debug, Clone)]
pub struct RagParams {
    /// Arrivals (the original uses `ExponentialReqRate`-style rate with jitter).
    pub arrival: Arrival,
    /// `Source::SystemPrompt(0)` length, tokens (0 for none).
    pub system_prompt_length: u32,
    /// Tokens per document.
    pub document_size: u32,
    /// Distinct documents per request (≤ corpus size).
    pub docs_per_request: u32,
    /// Corpus size and document popularity.
    pub documents: Picker,
    /// Unique query tail length.
    pub query_length: LengthDist,
    /// Tokens to generate, fixed.
    pub output_length: u32,
    /// Requests in flight at most (`None`: no cap).
    pub max_concurrent_requests: Option<usize>,
}

/// Requests of the form system prompt + `docs_per_request` distinct documents + query.
///
/// Documents appear in the order they were drawn, as a retriever ranks them; so two requests
/// share a KV prefix through the documents only when their first documents agree.
#[derive(Debug, Clone)]
pub struct RagGenerator {
    params: RagParams,
    arrivals_rng: SimRng,
    docs_rng: SimRng,
    lengths_rng: SimRng,
}

impl RagGenerator {
    /// A generator whose streams derive from `(seed, stream)`.
    pub fn new(seed: u64, stream: &str, params: RagParams) -> Self {
        Self {
            params,
            arrivals_rng: SimRng::stream(seed, &format!("{stream}.arrivals")),
            docs_rng: SimRng::stream(seed, &format!("{stream}.documents")),
            lengths_rng: SimRng::stream(seed, &format!("{stream}.lengths")),
        }
    }

    /// `k` distinct documents (k ≤ corpus size), drawn by popularity without replacement.
    ///
    /// Rejection of repeats is fast when popularity is spread out; if it keeps hitting
    /// repeats (steep Zipf, k close to n) it switches to exact sequential sampling from the
    /// weights that are left, each draw a binary search, so the time stays bounded (a scan
    /// of the corpus per draw made a large corpus's stage slow; see docs/robustness.md).
    fn pick_documents(&mut self) -> Vec<u32> {
        let picker = &self.params.documents;
        let n = picker.n();
        let k = self.params.docs_per_request.min(n) as usize;
        let mut chosen: Vec<u32> = Vec::with_capacity(k);
        let mut repeats = 0;
        while chosen.len() < k && repeats < 32 + 4 * k {
            let d = picker.pick(&mut self.docs_rng);
            if chosen.contains(&d) {
                repeats += 1;
            } else {
                chosen.push(d);
            }
        }
        let mut excluded = chosen.clone();
        excluded.sort_unstable();
        while chosen.len() < k {
            let d = picker.pick_excluding(&mut self.docs_rng, &excluded);
            chosen.push(d);
            let at = excluded.partition_point(|&c| c < d);
            excluded.insert(at, d);
        }
        chosen
    }
}

impl RequestGenerator for RagGenerator {
    fn next_request(&mut self, request_id: u64) -> Option<RequestSpec> {
        let gap = self.params.arrival.next_gap(&mut self.arrivals_rng);
        let mut prompt = PromptContent::new();
        prompt.push(Source::SystemPrompt(0), self.params.system_prompt_length);
        for d in self.pick_documents() {
            prompt.push(Source::Document(d), self.params.document_size);
        }
        let query = self.params.query_length.sample(&mut self.lengths_rng);
        prompt.push(Source::Unique(request_id), query);
        Some(RequestSpec {
            gap,
            prompt,
            output_len: self.params.output_length,
            session: None,
        })
    }

    fn max_concurrent_requests(&self) -> Option<usize> {
        self.params.max_concurrent_requests
    }
}
