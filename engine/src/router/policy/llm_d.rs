//! `llm_d`: llm-d's inference scheduler (its endpoint picker) with the scorers of its default
//! "intelligent inference scheduling" profile and a max-score picker:
//! - the prefix-cache scorer: the fraction of the prompt's blocks (up to
//!   `max_prefix_blocks`) a pod holds as a prefix — `precise`, from the pods' KV events (the
//!   router's KV view, as stale as `router.kv_event_interval`), or `approximate`, from the
//!   scheduler's own LRU index of the blocks it sent each pod (`lru_capacity_per_server`
//!   blocks a pod; no events);
//! - the queue scorer: `(max − q) / (max − min)` over the pods' queues (1 when all are
//!   equal), the queue being the router's outstanding requests of the pod;
//! - the KV-cache-utilization scorer: `1 − usage`, as the pods last reported it.
//!
//! Each pod's score is the weighted sum; the highest wins, ties at random.

use super::{
    Basis, CandidateScore, ClusterView, LlmDConfig, PrefixMode, RouteRequest, RoutingDecision,
    RoutingPolicy, ScoreTerm,
};
use crate::request::BlockHash;
use crate::rng::SimRng;
use crate::router::routed_prefixes::RoutedPrefixes;

/// The scheduler, its approximate index and its tie-breaking stream.
#[derive(Debug, Clone)]
pub struct LlmD {
    config: LlmDConfig,
    index: RoutedPrefixes,
    rng: SimRng,
}

impl LlmD {
    /// Configuration name.
    pub const NAME: &'static str = "llm_d";

    /// An empty index under `config`, ties broken with `rng`.
    pub fn new(config: LlmDConfig, rng: SimRng) -> Self {
        Self {
            config,
            index: RoutedPrefixes::new(),
            rng,
        }
    }
}

impl RoutingPolicy for LlmD {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn choose(&mut self, request: &RouteRequest, cluster: &ClusterView) -> RoutingDecision {
        let c = self.config;
        let w = cluster.workers();
        let block_size = cluster.kv().layout().block_size.max(1);
        let prompt_blocks = (request.prompt_len / block_size).min(c.max_prefix_blocks);
        let (prefix, hashes): (Vec<f64>, Vec<BlockHash>) = match c.prefix_mode {
            PrefixMode::Precise => {
                let matches = cluster.prefix_matches(request);
                let blocks = |k: usize| (matches[k].gpu_tokens / block_size).min(prompt_blocks);
                let scores = (0..w.len())
                    .map(|k| blocks(k) as f64 / prompt_blocks.max(1) as f64)
                    .collect();
                (scores, Vec::new())
            }
            PrefixMode::Approximate => {
                let hashes: Vec<BlockHash> = request
                    .content
                    .block_hashes(block_size)
                    .take(prompt_blocks as usize)
                    .collect();
                let scores = w
                    .iter()
                    .map(|x| {
                        self.index.matched_blocks(x.id, &hashes) as f64
                            / prompt_blocks.max(1) as f64
                    })
                    .collect();
                (scores, hashes)
            }
        };
        let (min_q, max_q) = cluster.outstanding_range();
        let scores: Vec<f64> = (0..w.len())
            .map(|k| {
                c.prefix_weight * prefix[k]
                    + c.queue_weight * queue_score(w[k].outstanding, min_q, max_q)
                    + c.kv_cache_weight * (1.0 - w[k].kv_usage)
            })
            .collect();
        let best = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let tied: Vec<usize> = (0..w.len()).filter(|&k| scores[k] == best).collect();
        let chosen = self.rng.pick(&tied);
        if c.prefix_mode == PrefixMode::Approximate {
            let capacity = c.lru_capacity_per_server as usize;
            self.index.insert_bounded(w[chosen].id, &hashes, capacity);
        }
        RoutingDecision::scored(cluster, chosen, Basis::Scorers, |k| scores[k], None)
    }
}

/// The queue scorer: `(max − q) / (max − min)` over the pods' queues, 1 when all are equal.
fn queue_score(queue: u32, min: u32, max: u32) -> f64 {
    if max == min {
        1.0
    } else {
        (max - queue) as f64 / (max - min) as f64
    }
}

/// Each candidate's scorers, as llm-d's scheduler logs them. The queue and KV scorers are
/// read from the candidate's evidence; the prefix scorer's value is not kept, so it is what
/// the score holds beyond the other two.
pub(super) fn terms(c: &LlmDConfig, candidates: &[CandidateScore]) -> Vec<Vec<ScoreTerm>> {
    let queues = candidates.iter().map(|x| x.outstanding);
    let (min_q, max_q) = (queues.clone().min().unwrap_or(0), queues.max().unwrap_or(0));
    let prefix_name = match c.prefix_mode {
        PrefixMode::Precise => "precise-prefix-cache-scorer",
        PrefixMode::Approximate => "prefix-cache-scorer",
    };
    candidates
        .iter()
        .map(|x| {
            let queue = queue_score(x.outstanding, min_q, max_q);
            let kv = 1.0 - x.kv_usage;
            let rest = x.score - c.queue_weight * queue - c.kv_cache_weight * kv;
            let prefix = if c.prefix_weight > 0.0 {
                rest / c.prefix_weight
            } else {
                f64::NAN
            };
            vec![
                ScoreTerm::new(prefix_name, c.prefix_weight, prefix),
                ScoreTerm::new("queue-scorer", c.queue_weight, queue),
                ScoreTerm::new("kv-cache-utilization-scorer", c.kv_cache_weight, kv),
            ]
        })
        .collect()
}
