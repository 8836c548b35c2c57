//! `dynamo`: NVIDIA Dynamo's KV router. Each worker's cost, in KV blocks, is
//! `overlap_score_weight × prefill blocks + decode blocks`: the prompt's blocks the worker
//! would still have to compute (its cached prefix, from the workers' KV events, taken off)
//! and the blocks it would hold while decoding: its KV in use now (Dynamo's router counts
//! the blocks of what it routed as it routes, not from the workers' reports) plus the
//! request's blocks it does not already hold. At `router_temperature` 0 the cheapest wins
//! (ties at random); above it, a worker is drawn with probability proportional to
//! `exp(−c / temperature)`, `c` the costs normalised to 0..1 over the workers (all equal:
//! uniform).

use super::{
    Basis, CandidateScore, ClusterView, DynamoConfig, RouteRequest, RoutingDecision, RoutingPolicy,
    ScoreTerm,
};
use crate::rng::SimRng;

/// The router and its sampling stream.
#[derive(Debug, Clone)]
pub struct Dynamo {
    config: DynamoConfig,
    rng: SimRng,
}

impl Dynamo {
    /// Configuration name.
    pub const NAME: &'static str = "dynamo";

    /// A router under `config`, drawing from `rng`.
    pub fn new(config: DynamoConfig, rng: SimRng) -> Self {
        Self { config, rng }
    }
}

impl RoutingPolicy for Dynamo {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    /// Dynamo's router tracks each worker's active blocks itself.
    fn counts_kv_itself(&self) -> bool {
        true
    }

    fn choose(&mut self, request: &RouteRequest, cluster: &ClusterView) -> RoutingDecision {
        let w = cluster.workers();
        let block = cluster.kv().layout().block_size;
        let request_blocks = (f64::from(request.prompt_len) / f64::from(block.max(1))).ceil();
        let matches = cluster.prefix_matches(request);
        let cost = |k: usize| {
            let (overlap, prefill) =
                prefill_blocks(request.prompt_len, matches[k].gpu_tokens, block);
            // The request's blocks add to the worker's active ones, less those it shares.
            let decode = w[k].kv_usage * w[k].kv_blocks as f64 + request_blocks - overlap;
            self.config.overlap_score_weight * prefill + decode
        };
        let costs: Vec<f64> = (0..w.len()).map(cost).collect();
        let (lo, hi) = costs
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &c| {
                (lo.min(c), hi.max(c))
            });
        let t = self.config.router_temperature;
        let chosen = if t > 0.0 && hi > lo {
            let weights: Vec<f64> = costs
                .iter()
                .map(|&c| libm::exp(-((c - lo) / (hi - lo)) / t))
                .collect();
            let total: f64 = weights.iter().sum();
            let mut draw = self.rng.next_f64() * total;
            let mut pick = weights.len() - 1;
            for (k, &wk) in weights.iter().enumerate() {
                if draw < wk {
                    pick = k;
                    break;
                }
                draw -= wk;
            }
            pick
        } else {
            let tied: Vec<usize> = (0..w.len()).filter(|&k| costs[k] == lo).collect();
            self.rng.pick(&tied)
        };
        RoutingDecision::scored(
            cluster,
            chosen,
            Basis::DynamoCost,
            |k| costs[k],
            Some(&matches),
        )
    }
}

/// The prompt's blocks a worker holding `cached` tokens of it already has (whole blocks, at
/// most the prompt's), and those it would still compute: `(overlap, prefill)`.
fn prefill_blocks(prompt: u32, cached: u32, block: u32) -> (f64, f64) {
    let (isl, block) = (f64::from(prompt), f64::from(block.max(1)));
    let overlap = (f64::from(cached) / block)
        .floor()
        .min((isl / block).ceil());
    (overlap, (isl - overlap * block).max(0.0) / block)
}

/// Each candidate's cost as Dynamo's router logs it: the weight times its prefill blocks,
/// plus its decode blocks (what the cost holds beyond the prefill part; the worker's active
/// blocks are not kept).
pub(super) fn terms(
    c: &DynamoConfig,
    candidates: &[CandidateScore],
    prompt: u32,
    block: u32,
) -> Vec<Vec<ScoreTerm>> {
    candidates
        .iter()
        .map(|x| {
            let cached = x.prefix.map_or(0, |p| p.gpu_tokens);
            let (_, prefill) = prefill_blocks(prompt, cached, block);
            let decode = x.score - c.overlap_score_weight * prefill;
            vec![
                ScoreTerm::new("prefill blocks", c.overlap_score_weight, prefill),
                ScoreTerm::new("decode blocks", 1.0, decode),
            ]
        })
        .collect()
}
