//! `random`: uniformly at random from a seeded stream.

use super::{Basis, ClusterView, RouteRequest, RoutingDecision, RoutingPolicy};
use crate::rng::SimRng;

/// Picks a worker uniformly at random.
#[derive(Debug, Clone)]
pub struct Random {
    rng: SimRng,
}

impl Random {
    /// Configuration name.
    pub const NAME: &'static str = "random";

    /// Draws from `rng`.
    pub fn new(rng: SimRng) -> Self {
        Self { rng }
    }
}

impl RoutingPolicy for Random {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn choose(&mut self, _request: &RouteRequest, cluster: &ClusterView) -> RoutingDecision {
        let chosen = self.rng.below(cluster.workers().len() as u64) as usize;
        RoutingDecision::scored(
            cluster,
            chosen,
            Basis::Drawn,
            |k| (k == chosen) as u8 as f64,
            None,
        )
    }
}
