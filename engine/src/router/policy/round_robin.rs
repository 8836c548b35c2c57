//! `round_robin`: workers in turn, ascending id.

use super::{Basis, ClusterView, RouteRequest, RoutingDecision, RoutingPolicy};

/// Sends each request to the next worker after the previous choice, wrapping
/// around. Remembering the last *id* (not a position) keeps the rotation fair
/// when workers join or leave.
#[derive(Debug, Clone, Default)]
pub struct RoundRobin {
    last: Option<u32>,
}

impl RoundRobin {
    /// Configuration name.
    pub const NAME: &'static str = "round_robin";

    /// Starts with the lowest id.
    pub fn new() -> Self {
        Self::default()
    }
}

impl RoutingPolicy for RoundRobin {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn choose(&mut self, _request: &RouteRequest, cluster: &ClusterView) -> RoutingDecision {
        let workers = cluster.workers();
        let chosen = match self.last {
            Some(last) => workers.iter().position(|w| w.id > last).unwrap_or(0),
            None => 0,
        };
        self.last = Some(workers[chosen].id);
        // Score: 1 for the worker whose turn it is, 0 for the others.
        RoutingDecision::scored(
            cluster,
            chosen,
            Basis::ItsTurn,
            |k| (k == chosen) as u8 as f64,
            None,
        )
    }
}
