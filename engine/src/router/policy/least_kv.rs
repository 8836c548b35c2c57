//! `least_kv`: lowest KV cache usage.

use super::{Basis, ClusterView, RouteRequest, RoutingDecision, RoutingPolicy};

/// Sends each request to the worker with the lowest KV usage fraction, as the workers last
/// reported it through their KV flushes (stale by up to `kv_event_interval`, like the prefix
/// view, and as a real router's scraped metrics are); ties → lowest id.
#[derive(Debug, Clone, Copy, Default)]
pub struct LeastKv;

impl LeastKv {
    /// Configuration name.
    pub const NAME: &'static str = "least_kv";
}

impl RoutingPolicy for LeastKv {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn choose(&mut self, _request: &RouteRequest, cluster: &ClusterView) -> RoutingDecision {
        let w = cluster.workers();
        // Strict `<` keeps the first (lowest id) of equal usages.
        let mut chosen = 0;
        for k in 1..w.len() {
            if w[k].kv_usage < w[chosen].kv_usage {
                chosen = k;
            }
        }
        RoutingDecision::scored(cluster, chosen, Basis::KvUsage, |k| w[k].kv_usage, None)
    }
}
