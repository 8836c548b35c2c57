//! `prefix_load`: weighted trade-off between cached prefix and load.

use super::{
    Basis, CandidateScore, ClusterView, PrefixLoadConfig, RouteRequest, RoutingDecision,
    RoutingPolicy, ScoreTerm,
};

/// Scores each worker `w_prefix · prefix_fraction − w_load · outstanding / max_outstanding`
/// (load normalised by the busiest worker, 0 when all are idle) and picks the
/// highest; ties → lowest id. This is the shape of llm-d's weighted scorers:
/// cache affinity wins until the cached worker is busy enough to lose it.
#[derive(Debug, Clone, Copy)]
pub struct PrefixLoad {
    weights: PrefixLoadConfig,
}

impl PrefixLoad {
    /// Configuration name.
    pub const NAME: &'static str = "prefix_load";

    /// Uses these weights.
    pub fn new(weights: PrefixLoadConfig) -> Self {
        Self { weights }
    }
}

impl RoutingPolicy for PrefixLoad {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn choose(&mut self, request: &RouteRequest, cluster: &ClusterView) -> RoutingDecision {
        let w = cluster.workers();
        let matches = cluster.prefix_matches(request);
        let len = request.prompt_len.max(1) as f64;
        let max_load = w.iter().map(|x| x.outstanding).max().unwrap_or(0).max(1) as f64;
        let score = |k: usize| {
            self.weights.w_prefix * (matches[k].tokens() as f64 / len)
                - self.weights.w_load * (w[k].outstanding as f64 / max_load)
        };
        // Strict `>` keeps the first (lowest id) of equal scores.
        let mut chosen = 0;
        for k in 1..w.len() {
            if score(k) > score(chosen) {
                chosen = k;
            }
        }
        RoutingDecision::scored(cluster, chosen, Basis::PrefixLoad, score, Some(&matches))
    }
}

/// Each candidate's two parts: its cached prefix over the prompt, weighted `w_prefix`, and
/// its outstanding requests over the most any worker has, weighted `−w_load`.
pub(super) fn terms(
    c: &PrefixLoadConfig,
    candidates: &[CandidateScore],
    prompt: u32,
) -> Vec<Vec<ScoreTerm>> {
    let len = f64::from(prompt.max(1));
    let max_load = f64::from(
        candidates
            .iter()
            .map(|x| x.outstanding)
            .max()
            .unwrap_or(0)
            .max(1),
    );
    candidates
        .iter()
        .map(|x| {
            let prefix = f64::from(x.prefix.map_or(0, |p| p.tokens())) / len;
            vec![
                ScoreTerm::new("prefix", c.w_prefix, prefix),
                ScoreTerm::new("load", -c.w_load, f64::from(x.outstanding) / max_load),
            ]
        })
        .collect()
}
