//! `max_prefix`: the worker with the longest cached prefix of the prompt.

use super::{Basis, ClusterView, RouteRequest, RoutingDecision, RoutingPolicy};
use crate::rng::SimRng;

/// Scores each worker by the longest contiguous prefix of the prompt it holds
/// (GPU or its tiers, per the global view) as a fraction of the prompt, and
/// picks the best; ties are broken at random, and when nobody matches
/// anything the choice is uniformly random.
#[derive(Debug, Clone)]
pub struct MaxPrefix {
    rng: SimRng,
}

impl MaxPrefix {
    /// Configuration name.
    pub const NAME: &'static str = "max_prefix";

    /// Breaks ties with `rng`.
    pub fn new(rng: SimRng) -> Self {
        Self { rng }
    }
}

impl RoutingPolicy for MaxPrefix {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn choose(&mut self, request: &RouteRequest, cluster: &ClusterView) -> RoutingDecision {
        let matches = cluster.prefix_matches(request);
        let len = request.prompt_len.max(1) as f64;
        let fraction = |k: usize| matches[k].tokens() as f64 / len;
        let best = matches.iter().map(|m| m.tokens()).max().unwrap_or(0);
        // With no match every worker ties at 0, so the same draw covers both cases.
        let tied: Vec<usize> = (0..matches.len())
            .filter(|&k| matches[k].tokens() == best)
            .collect();
        let chosen = self.rng.pick(&tied);
        RoutingDecision::scored(
            cluster,
            chosen,
            Basis::PrefixFraction,
            fraction,
            Some(&matches),
        )
    }
}
