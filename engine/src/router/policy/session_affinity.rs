//! `session_affinity`: every request of a session goes to the same worker.

use super::{Basis, ClusterView, RouteRequest, RoutingDecision, RoutingPolicy};
use std::collections::BTreeMap;

/// Sticky per session id, so a conversation's growing prefix stays in one
/// worker's cache. A session's first request, a request without a session, and
/// a session whose worker left go to the least loaded worker (ties → lowest id),
/// which then becomes the session's worker. A session is forgotten when it ends, so
/// the table holds the sessions in progress, not every session ever seen.
#[derive(Debug, Clone, Default)]
pub struct SessionAffinity {
    sessions: BTreeMap<u64, u32>,
}

impl SessionAffinity {
    /// Configuration name.
    pub const NAME: &'static str = "session_affinity";

    /// No sessions bound yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sessions currently bound to a worker.
    pub fn bound_sessions(&self) -> usize {
        self.sessions.len()
    }
}

impl RoutingPolicy for SessionAffinity {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn choose(&mut self, request: &RouteRequest, cluster: &ClusterView) -> RoutingDecision {
        let w = cluster.workers();
        let bound = request
            .session
            .and_then(|s| self.sessions.get(&s))
            .and_then(|id| w.binary_search_by_key(id, |x| x.id).ok());
        let (chosen, basis) = match bound {
            Some(k) => (k, Basis::SessionWorker),
            None => (cluster.least_loaded_index(), Basis::SessionLeastLoaded),
        };
        if let Some(s) = request.session {
            self.sessions.insert(s, w[chosen].id);
        }
        RoutingDecision::scored(cluster, chosen, basis, |k| (k == chosen) as u8 as f64, None)
    }

    fn end_session(&mut self, session: u64) {
        self.sessions.remove(&session);
    }
}
