//! `power_of_two`: the less loaded of two workers drawn at random.

use super::{Basis, ClusterView, RouteRequest, RoutingDecision, RoutingPolicy};
use crate::rng::SimRng;

/// Samples two distinct workers uniformly and takes the one with fewer
/// outstanding requests (ties → lower id): nearly least-loaded balance
/// without looking at every worker, and no herding on stale load.
#[derive(Debug, Clone)]
pub struct PowerOfTwo {
    rng: SimRng,
}

impl PowerOfTwo {
    /// Configuration name.
    pub const NAME: &'static str = "power_of_two";

    /// Draws from `rng`.
    pub fn new(rng: SimRng) -> Self {
        Self { rng }
    }
}

impl RoutingPolicy for PowerOfTwo {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn choose(&mut self, _request: &RouteRequest, cluster: &ClusterView) -> RoutingDecision {
        let w = cluster.workers();
        let n = w.len() as u64;
        let sampled = if n == 1 {
            vec![0]
        } else {
            // Second draw from the n − 1 others, shifted past the first: distinct and uniform.
            let a = self.rng.below(n) as usize;
            let mut b = self.rng.below(n - 1) as usize;
            if b >= a {
                b += 1;
            }
            vec![a.min(b), a.max(b)]
        };
        // `sampled` is ascending, and min_by_key keeps the first minimum: ties → lower id.
        let chosen = *sampled
            .iter()
            .min_by_key(|&&k| w[k].outstanding)
            .unwrap_or(&0);
        // Scored over every worker, then cut to the two: the room is for the two.
        let every = cluster.with_evidence_room(usize::MAX);
        let mut decision = RoutingDecision::scored(
            &every,
            chosen,
            Basis::OutstandingOfTwo,
            |k| w[k].outstanding as f64,
            None,
        );
        // Only the sampled workers were candidates.
        decision
            .candidates
            .retain(|c| sampled.iter().any(|&k| w[k].id == c.worker));
        decision
    }
}
