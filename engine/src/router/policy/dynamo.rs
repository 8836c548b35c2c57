//! `dynamo`: NVIDIA Dynamo's KV router. Each worker's cost, in KV blocks, is
//! `overlap_score_weight × prefill blocks + decode blocks`: the prompt's blocks the worker
//! would still have to compute (its cached prefix, from the workers' KV events, taken off)
//! and the blocks it would hold while decoding: its KV in use now (Dynamo's router counts
//! the blocks of what it routed as it routes, not from the workers' reports) plus the
//! request's blocks it does not already hold. At `router_temperature` 0 the cheapest wins
//! (ties at random); above it, a worker is drawn with probability proportional to
//! `exp(−c / temperature)`, `c` the costs normalised to 0..1 over the workers (all equal:
//! uniform).

use super::{Basis, ClusterView, DynamoConfig, RouteRequest, RoutingDecision, RoutingPolicy};
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
        let block = cluster.kv().layout().block_size.max(1) as f64;
        let isl = request.prompt_len as f64;
        let request_blocks = (isl / block).ceil();
        let matches = cluster.prefix_matches(request);
        let cost = |k: usize| {
            let overlap = (matches[k].gpu_tokens as f64 / block)
                .floor()
                .min(request_blocks);
            let prefill = (isl - overlap * block).max(0.0) / block;
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
