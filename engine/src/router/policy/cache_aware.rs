//! `cache_aware`: SGLang's cache-aware load balancer (sgl-router's `cache_aware` policy).
//!
//! The router keeps, per worker, a tree of the prompts it sent there — no event from the
//! workers — and for each request:
//! 1. if the load is imbalanced (the most and least loaded workers' outstanding requests
//!    differ by more than `balance_abs_threshold` *and* the most exceeds
//!    `balance_rel_threshold` times the least), it sends it to the least loaded;
//! 2. else, if some worker's tree matches more than `cache_threshold` of the prompt, to the
//!    worker with the longest match (ties: the less loaded, then the lower id);
//! 3. else to the worker with the smallest tree (the most room to cache it).
//!
//! The prompt then joins the chosen worker's tree. Every `eviction_interval` seconds each
//! tree is cut back to `max_tree_tokens`, least recently routed first (and in between it
//! never holds more than twice that).

use super::{Basis, CacheAwareConfig, ClusterView, RouteRequest, RoutingDecision, RoutingPolicy};
use crate::request::BlockHash;
use crate::router::routed_prefixes::RoutedPrefixes;

/// The policy and its trees.
#[derive(Debug, Clone)]
pub struct CacheAware {
    config: CacheAwareConfig,
    trees: RoutedPrefixes,
    /// When the trees were last cut back, seconds.
    last_eviction: f64,
}

impl CacheAware {
    /// Configuration name.
    pub const NAME: &'static str = "cache_aware";

    /// Empty trees under `config`.
    pub fn new(config: CacheAwareConfig) -> Self {
        Self {
            config,
            trees: RoutedPrefixes::new(),
            last_eviction: 0.0,
        }
    }
}

impl RoutingPolicy for CacheAware {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn choose(&mut self, request: &RouteRequest, cluster: &ClusterView) -> RoutingDecision {
        let block_size = cluster.kv().layout().block_size.max(1);
        let max_blocks = (self.config.max_tree_tokens / block_size as u64) as usize;
        if request.now - self.last_eviction >= self.config.eviction_interval {
            self.trees.evict_to(max_blocks);
            self.last_eviction = request.now;
        }
        let hashes: Vec<BlockHash> = request.content.block_hashes(block_size).collect();
        let w = cluster.workers();
        let load = |k: usize| w[k].outstanding;
        let (min, max) = cluster.outstanding_range();
        let imbalanced = (max - min) as f64 > self.config.balance_abs_threshold
            && max as f64 > min as f64 * self.config.balance_rel_threshold;
        let decision = if imbalanced {
            let chosen = cluster.least_loaded_index();
            RoutingDecision::scored(
                cluster,
                chosen,
                Basis::Outstanding,
                |k| load(k) as f64,
                None,
            )
        } else {
            let matched: Vec<usize> = w
                .iter()
                .map(|x| self.trees.matched_blocks(x.id, &hashes))
                .collect();
            let len = request.prompt_len.max(1) as f64;
            let rate = |k: usize| (matched[k] as u64 * block_size as u64) as f64 / len;
            let best = (0..w.len())
                .max_by(|&a, &b| {
                    matched[a]
                        .cmp(&matched[b])
                        .then(load(b).cmp(&load(a)))
                        .then(b.cmp(&a))
                })
                .unwrap_or(0);
            if rate(best) > self.config.cache_threshold {
                RoutingDecision::scored(cluster, best, Basis::TreeMatch, rate, None)
            } else {
                let size = |k: usize| self.trees.size(w[k].id);
                let smallest = (0..w.len()).min_by_key(|&k| size(k)).unwrap_or(0);
                let tokens = |k: usize| (size(k) as u64 * block_size as u64) as f64;
                RoutingDecision::scored(cluster, smallest, Basis::TreeSize, tokens, None)
            }
        };
        // Between cuts a tree grows as sgl-router's does, but never past twice its limit,
        // so memory stays bounded however fast prompts arrive.
        self.trees
            .insert_bounded(decision.worker, &hashes, max_blocks.saturating_mul(2));
        decision
    }
}
