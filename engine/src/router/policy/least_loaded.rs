//! `least_loaded`: fewest outstanding requests.

use super::{Basis, ClusterView, RouteRequest, RoutingDecision, RoutingPolicy};

/// Sends each request to the worker with the fewest outstanding requests; ties → lowest id.
#[derive(Debug, Clone, Copy, Default)]
pub struct LeastLoaded;

impl LeastLoaded {
    /// Configuration name.
    pub const NAME: &'static str = "least_loaded";
}

impl RoutingPolicy for LeastLoaded {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn choose(&mut self, _request: &RouteRequest, cluster: &ClusterView) -> RoutingDecision {
        let w = cluster.workers();
        RoutingDecision::scored(
            cluster,
            cluster.least_loaded_index(),
            Basis::Outstanding,
            |k| w[k].outstanding as f64,
            None,
        )
    }
}
