//! A decision's scores split into the terms its router adds, as that router logs them:
//! llm-d's scorers with their weights, Dynamo's prefill and decode blocks, prefix-load's
//! prefix and load parts. Read back from the decision's evidence, for the app's tooltip and
//! routing table; each policy's file holds its own split beside the formula it routes by.

use super::{dynamo, llm_d, prefix_load, Basis, CandidateScore, PolicyConfig, RoutingDecision};

/// One term of a candidate's score: `weight × value`, named as its router names it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoreTerm {
    /// The scorer or part, e.g. `"queue-scorer"` or `"prefill blocks"`.
    pub name: &'static str,
    /// Its weight in the sum (negative for a part that counts against).
    pub weight: f64,
    /// Its value for this candidate (NaN when the router's weight for it is 0, so the score
    /// does not show it).
    pub value: f64,
}

impl ScoreTerm {
    pub(super) fn new(name: &'static str, weight: f64, value: f64) -> Self {
        Self {
            name,
            weight,
            value,
        }
    }
}

impl PolicyConfig {
    /// Each candidate's score of `decision` (in its candidates' order) split into its terms,
    /// for a request of `prompt_tokens` over KV blocks of `block_size` tokens; `None` for a
    /// policy whose score is one figure, a decision another policy made, or one without
    /// its candidates kept.
    pub fn score_terms(
        &self,
        decision: &RoutingDecision,
        prompt_tokens: u32,
        block_size: u32,
    ) -> Option<Vec<Vec<ScoreTerm>>> {
        let candidates: Vec<CandidateScore> = decision.candidates.iter().collect();
        if candidates.is_empty() {
            return None;
        }
        match (self, decision.basis) {
            (PolicyConfig::LlmD(c), Basis::Scorers) => Some(llm_d::terms(c, &candidates)),
            (PolicyConfig::Dynamo(c), Basis::DynamoCost) => {
                Some(dynamo::terms(c, &candidates, prompt_tokens, block_size))
            }
            (PolicyConfig::PrefixLoad(c), Basis::PrefixLoad) => {
                Some(prefix_load::terms(c, &candidates, prompt_tokens))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::router::policy::{DynamoConfig, LlmDConfig, PrefixLoadConfig};
    use crate::router::PrefixMatch;

    fn candidate(worker: u32, score: f64, outstanding: u32, kv_usage: f64) -> CandidateScore {
        CandidateScore {
            worker,
            score,
            outstanding,
            kv_usage,
            prefix: None,
        }
    }

    fn decision(basis: Basis, candidates: Vec<CandidateScore>) -> RoutingDecision {
        RoutingDecision {
            worker: 0,
            basis,
            candidates: candidates.into(),
        }
    }

    fn values(terms: &[ScoreTerm]) -> Vec<f64> {
        terms.iter().map(|t| t.value).collect()
    }

    #[test]
    fn llm_d_scores_split_into_its_three_scorers() {
        // Queues 2, 4, 6: the queue scorer (6 − q) / 4 gives 1, 0.5, 0. KV usage 0.25, 0.5,
        // 0.75 gives 0.75, 0.5, 0.25. With prefix fractions 0.5, 1 and 0 at weights 3/2/2
        // the scores are 1.5 + 2 + 1.5 = 5, 3 + 1 + 1 = 5 and 0 + 0 + 0.5 = 0.5.
        let d = decision(
            Basis::Scorers,
            vec![
                candidate(0, 5.0, 2, 0.25),
                candidate(1, 5.0, 4, 0.5),
                candidate(2, 0.5, 6, 0.75),
            ],
        );
        let policy = PolicyConfig::LlmD(LlmDConfig::default());
        let terms = policy.score_terms(&d, 1000, 16).expect("llm_d splits");
        let names: Vec<_> = terms[0].iter().map(|t| (t.name, t.weight)).collect();
        assert_eq!(
            names,
            [
                ("precise-prefix-cache-scorer", 3.0),
                ("queue-scorer", 2.0),
                ("kv-cache-utilization-scorer", 2.0)
            ]
        );
        assert_eq!(values(&terms[0]), [0.5, 1.0, 0.75]);
        assert_eq!(values(&terms[1]), [1.0, 0.5, 0.5]);
        assert_eq!(values(&terms[2]), [0.0, 0.0, 0.25]);
    }

    #[test]
    fn dynamo_costs_split_into_prefill_and_decode_blocks() {
        // A 100-token prompt in 16-token blocks: a worker holding 64 of it (4 whole blocks)
        // prefills (100 − 64) / 16 = 2.25 blocks; one holding none, 6.25. Their costs at
        // weight 1 are 12.25 and 9.25, so their decode blocks are 10 and 3.
        let mut a = candidate(0, 12.25, 1, 0.1);
        a.prefix = Some(PrefixMatch {
            gpu_tokens: 64,
            tier_tokens: 0,
        });
        let mut b = candidate(1, 9.25, 1, 0.1);
        b.prefix = Some(PrefixMatch {
            gpu_tokens: 0,
            tier_tokens: 0,
        });
        let d = decision(Basis::DynamoCost, vec![a, b]);
        let policy = PolicyConfig::Dynamo(DynamoConfig::default());
        let terms = policy.score_terms(&d, 100, 16).expect("dynamo splits");
        assert_eq!(values(&terms[0]), [2.25, 10.0]);
        assert_eq!(values(&terms[1]), [6.25, 3.0]);
        assert_eq!(terms[0][0].name, "prefill blocks");
    }

    #[test]
    fn prefix_load_splits_into_prefix_and_load_against_it() {
        // A 200-token prompt: 100 cached of it is 0.5; queues 2 and 4 over the most, 4.
        let mut a = candidate(0, 0.0, 2, 0.0);
        a.prefix = Some(PrefixMatch {
            gpu_tokens: 100,
            tier_tokens: 0,
        });
        let b = candidate(1, -1.0, 4, 0.0);
        let d = decision(Basis::PrefixLoad, vec![a, b]);
        let c = PrefixLoadConfig {
            w_prefix: 2.0,
            w_load: 1.0,
        };
        let terms = PolicyConfig::PrefixLoad(c)
            .score_terms(&d, 200, 16)
            .expect("prefix_load splits");
        assert_eq!(values(&terms[0]), [0.5, 0.5]);
        assert_eq!(values(&terms[1]), [0.0, 1.0]);
        assert_eq!(terms[1][1].weight, -1.0);
    }

    #[test]
    fn a_single_figure_score_or_another_policys_decision_has_no_terms() {
        let d = decision(Basis::Outstanding, vec![candidate(0, 2.0, 2, 0.0)]);
        assert_eq!(
            PolicyConfig::LlmD(LlmDConfig::default()).score_terms(&d, 10, 16),
            None
        );
        let d = decision(Basis::Scorers, Vec::new());
        assert_eq!(
            PolicyConfig::LlmD(LlmDConfig::default()).score_terms(&d, 10, 16),
            None
        );
    }
}
