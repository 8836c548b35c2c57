//! Routing policies: given a request and the router's view of the cluster,
//! choose a worker and say why.
//!
//! Each policy is one small type in its own file implementing
//! [`RoutingPolicy`]; adding one means adding a file, a [`PolicyConfig`]
//! variant and a line in [`PolicyConfig::build`].

mod cache_aware;
mod dynamo;
mod evidence;
mod fraction;
mod least_kv;
mod least_loaded;
mod llm_d;
mod max_prefix;
mod power_of_two;
mod prefix_load;
mod random;
mod round_robin;
mod session_affinity;
mod terms;

pub use cache_aware::CacheAware;
pub use dynamo::Dynamo;
pub use evidence::{Basis, Candidates};
pub use fraction::DenominatorHint;
pub use least_kv::LeastKv;
pub use least_loaded::LeastLoaded;
pub use llm_d::LlmD;
pub use max_prefix::MaxPrefix;
pub use power_of_two::PowerOfTwo;
pub use prefix_load::PrefixLoad;
pub use random::Random;
pub use round_robin::RoundRobin;
pub use session_affinity::SessionAffinity;
pub use terms::ScoreTerm;

use crate::request::PromptContent;
use crate::rng::SimRng;
use crate::router::kv_index::{KvIndex, PrefixMatch};
use crate::validate::{join, Problems};
use serde::{Deserialize, Serialize};

/// What a policy knows about the request being routed.
#[derive(Debug, Clone, Copy)]
pub struct RouteRequest<'a> {
    /// Request id.
    pub id: u64,
    /// Session id, for multi-turn workloads.
    pub session: Option<u64>,
    /// Prompt length in tokens.
    pub prompt_len: u32,
    /// The prompt's content (hashed at the view's block and chunk sizes for prefix matching).
    pub content: &'a PromptContent,
    /// When it is routed, simulated seconds.
    pub now: f64,
}

/// One worker as the router sees it when routing.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct WorkerLoad {
    /// Worker id.
    pub id: u32,
    /// Requests routed to it and not yet completed.
    pub outstanding: u32,
    /// Fraction of its GPU KV blocks in use, 0..=1 (as last reported).
    pub kv_usage: f64,
    /// Its GPU KV blocks.
    pub kv_blocks: u32,
}

/// The cluster as seen by a policy: the workers that may receive requests
/// (never empty; ascending ids; draining and pending workers excluded) and the
/// global KV view.
#[derive(Debug, Clone, Copy)]
pub struct ClusterView<'a> {
    workers: &'a [WorkerLoad],
    kv: &'a KvIndex,
    /// Candidate scores the run may still keep (see [`ClusterView::with_evidence`]).
    evidence_room: EvidenceRoom,
    /// Where packing a decision's KV usages starts its search (the router's).
    denominators: Option<&'a DenominatorHint>,
}

/// How many more candidate scores a run keeps: the one rule for whether a decision's
/// scores are built and recorded (past the budget, building them was most of a large
/// run's routing work, and keeping them most of its memory).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EvidenceRoom(usize);

impl EvidenceRoom {
    /// No limit.
    pub const UNLIMITED: EvidenceRoom = EvidenceRoom(usize::MAX);

    /// Room for `n` more scores.
    pub fn new(n: usize) -> Self {
        Self(n)
    }

    /// Whether a decision's `n` candidate scores are kept.
    pub fn keeps(self, n: usize) -> bool {
        n <= self.0
    }

    /// Whether any decision could keep its scores (each has a candidate at least): if
    /// not, what only the scores show need not be gathered.
    pub fn keeps_any(self) -> bool {
        self.keeps(1)
    }
}

impl<'a> ClusterView<'a> {
    /// A view of `workers` (must be in ascending id order); `None` when there is
    /// no worker to route to (the router then holds the request until one appears).
    pub fn new(workers: &'a [WorkerLoad], kv: &'a KvIndex) -> Option<Self> {
        debug_assert!(workers.windows(2).all(|w| w[0].id < w[1].id));
        (!workers.is_empty()).then_some(Self {
            workers,
            kv,
            evidence_room: EvidenceRoom::UNLIMITED,
            denominators: None,
        })
    }

    /// The same view for a run that keeps at most `room` more candidate scores: a decision
    /// with more is recorded without them, so policies do not build them (past the budget,
    /// that was most of a large run's routing work).
    pub fn with_evidence(self, room: EvidenceRoom) -> Self {
        Self {
            evidence_room: room,
            ..self
        }
    }

    /// The same view packing decisions' KV usages from `hint` (the router keeps one across
    /// decisions: consecutive decisions' usages mostly share a denominator).
    pub fn with_denominator_hint(self, hint: &'a DenominatorHint) -> Self {
        Self {
            denominators: Some(hint),
            ..self
        }
    }

    /// Whether a decision's `n` candidate scores would be kept.
    pub fn keeps_evidence(&self, n: usize) -> bool {
        self.evidence_room.keeps(n)
    }

    /// The routable workers, ascending by id (at least one).
    pub fn workers(&self) -> &'a [WorkerLoad] {
        self.workers
    }

    /// The global KV view.
    pub fn kv(&self) -> &'a KvIndex {
        self.kv
    }

    /// The prefix each worker could serve for `request`, in worker order.
    pub fn prefix_matches(&self, request: &RouteRequest) -> Vec<PrefixMatch> {
        let ids: Vec<u32> = self.workers.iter().map(|w| w.id).collect();
        self.kv.prefix_matches(&ids, request.content)
    }

    /// The fewest and the most outstanding requests of a routable worker.
    pub fn outstanding_range(&self) -> (u32, u32) {
        let counts = self.workers.iter().map(|w| w.outstanding);
        (counts.clone().min().unwrap_or(0), counts.max().unwrap_or(0))
    }

    /// Position of the worker with the fewest outstanding requests (ties → lowest id).
    pub fn least_loaded_index(&self) -> usize {
        // min_by_key returns the first minimum, and workers are in ascending id order.
        (0..self.workers.len())
            .min_by_key(|&k| self.workers[k].outstanding)
            .unwrap_or(0)
    }
}

/// How one candidate worker scored.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CandidateScore {
    /// Worker id.
    pub worker: u32,
    /// The policy's score for it (see [`RoutingDecision::basis`] for its meaning).
    pub score: f64,
    /// Its outstanding requests at decision time.
    pub outstanding: u32,
    /// Its KV usage at decision time (fraction).
    pub kv_usage: f64,
    /// Prefix tokens it could serve, when the policy looked.
    pub prefix: Option<PrefixMatch>,
}

/// A policy's choice and the evidence for it (the app's "why did it go there").
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoutingDecision {
    /// The chosen worker's id.
    pub worker: u32,
    /// What `score` means for this policy, e.g. `"outstanding requests (lowest wins)"`.
    pub basis: Basis,
    /// Every candidate the policy considered, ascending by worker id.
    pub candidates: Candidates,
}

impl RoutingDecision {
    /// A decision whose candidates are all routable workers scored by `score`.
    pub fn scored(
        cluster: &ClusterView,
        chosen: usize,
        basis: Basis,
        score: impl Fn(usize) -> f64,
        prefix: Option<&[PrefixMatch]>,
    ) -> Self {
        let all = 0..cluster.workers().len();
        Self::scored_among(cluster, chosen, basis, score, prefix, all)
    }

    /// A decision whose candidates are the routable workers at positions `among`
    /// (ascending), scored by `score`; none when the run keeps no more evidence.
    pub fn scored_among(
        cluster: &ClusterView,
        chosen: usize,
        basis: Basis,
        score: impl Fn(usize) -> f64,
        prefix: Option<&[PrefixMatch]>,
        among: impl ExactSizeIterator<Item = usize>,
    ) -> Self {
        let workers = cluster.workers();
        let candidates = if cluster.keeps_evidence(among.len()) {
            let scores: Vec<CandidateScore> = among
                .map(|k| CandidateScore {
                    worker: workers[k].id,
                    score: score(k),
                    outstanding: workers[k].outstanding,
                    kv_usage: workers[k].kv_usage,
                    prefix: prefix.map(|p| p[k]),
                })
                .collect();
            Candidates::pack(&scores, cluster.denominators)
        } else {
            Candidates::default()
        };
        Self {
            worker: cluster.workers()[chosen].id,
            basis,
            candidates,
        }
    }
}

/// A routing policy. Stateful policies (round robin, random, affinity) keep their state here.
pub trait RoutingPolicy {
    /// The policy's configuration name, e.g. `"max_prefix"`.
    fn name(&self) -> &'static str;
    /// Chooses the worker for `request`.
    fn choose(&mut self, request: &RouteRequest, cluster: &ClusterView) -> RoutingDecision;
    /// Session `session` has ended (its last turn is over): no request of it will come
    /// again, so whatever the policy keeps about it can go.
    fn end_session(&mut self, _session: u64) {}
    /// Whether the router counts the KV blocks its requests hold as it routes them (so
    /// the workers' KV usage it reads is current), rather than reading the workers'
    /// periodic reports.
    fn counts_kv_itself(&self) -> bool {
        false
    }
}

/// Which routing policy to use, with its parameters (`{"policy": "prefix_load", "w_prefix": 2}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "policy", rename_all = "snake_case")]
pub enum PolicyConfig {
    /// Workers in turn, ascending id.
    RoundRobin(NoParams),
    /// Uniformly at random (seeded stream `router.random`).
    Random(NoParams),
    /// Fewest outstanding requests; ties → lowest id.
    LeastLoaded(NoParams),
    /// Longest cached prefix in the global view; ties and no match → random.
    MaxPrefix(NoParams),
    /// Lowest KV usage as last reported by the workers' KV flushes; ties → lowest id.
    LeastKv(NoParams),
    /// Two distinct workers at random, the less loaded of them.
    PowerOfTwo(NoParams),
    /// Sticky per session; new or orphaned sessions → least loaded.
    SessionAffinity(NoParams),
    /// Weighted prefix-match vs load score (the shape llm-d's scorers use).
    PrefixLoad(PrefixLoadConfig),
    /// SGLang's cache-aware load balancer: the router's own tree of what it sent where,
    /// least loaded when the load is imbalanced.
    CacheAware(CacheAwareConfig),
    /// llm-d's inference scheduler: weighted prefix-cache (precise or approximate), queue
    /// and KV-cache-utilization scorers, max-score picker.
    LlmD(LlmDConfig),
    /// NVIDIA Dynamo's KV router: the cheapest of `overlap_score_weight × prefill blocks +
    /// decode blocks`, or a softmax draw over those costs at a temperature.
    Dynamo(DynamoConfig),
}

/// Parameters of `dynamo`, with Dynamo's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DynamoConfig {
    /// Weight of the prefill blocks against the decode blocks (≥ 0). Default 1.
    pub overlap_score_weight: f64,
    /// 0: the cheapest worker; above 0, a draw that favours it less the hotter (≥ 0).
    /// Default 0.
    pub router_temperature: f64,
}

impl Default for DynamoConfig {
    fn default() -> Self {
        Self {
            overlap_score_weight: 1.0,
            router_temperature: 0.0,
        }
    }
}

/// Where llm-d's prefix-cache scorer learns what each pod holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PrefixMode {
    /// From the pods' KV events (the router's KV view).
    Precise,
    /// From the scheduler's own LRU index of the blocks it sent each pod.
    Approximate,
}

/// Parameters of `llm_d`, with llm-d's defaults (its default scheduling profile's weights).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmDConfig {
    /// `precise` or `approximate`. Default `precise`.
    pub prefix_mode: PrefixMode,
    /// Weight of the prefix-cache scorer (≥ 0). Default 3.
    pub prefix_weight: f64,
    /// Weight of the queue scorer (≥ 0). Default 2.
    pub queue_weight: f64,
    /// Weight of the KV-cache-utilization scorer (≥ 0). Default 2.
    pub kv_cache_weight: f64,
    /// Longest prefix the prefix scorer looks at, blocks. Default 256.
    pub max_prefix_blocks: u32,
    /// Approximate mode: blocks the index keeps per pod, least recently sent evicted first.
    /// Default 31,250.
    pub lru_capacity_per_server: u32,
}

impl Default for LlmDConfig {
    fn default() -> Self {
        Self {
            prefix_mode: PrefixMode::Precise,
            prefix_weight: 3.0,
            queue_weight: 2.0,
            kv_cache_weight: 2.0,
            max_prefix_blocks: 256,
            lru_capacity_per_server: 31_250,
        }
    }
}

/// Parameters of `cache_aware`, with sgl-router's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CacheAwareConfig {
    /// Route by the tree only when a worker's match is more than this fraction of the
    /// prompt (0..1). Default 0.5.
    pub cache_threshold: f64,
    /// Imbalanced when the most and least loaded workers' outstanding requests differ by
    /// more than this (requests)... Default 32.
    pub balance_abs_threshold: f64,
    /// ...and the most exceeds this many times the least (≥ 1). Default 1.0001.
    pub balance_rel_threshold: f64,
    /// Seconds between cutting the trees back to `max_tree_tokens`. Default 60.
    pub eviction_interval: f64,
    /// Most tokens a worker's tree keeps after a cut (sgl-router's 2²⁴ characters at ~4
    /// characters a token). Default 4,194,304.
    pub max_tree_tokens: u64,
}

impl Default for CacheAwareConfig {
    fn default() -> Self {
        Self {
            cache_threshold: 0.5,
            balance_abs_threshold: 32.0,
            balance_rel_threshold: 1.0001,
            eviction_interval: 60.0,
            max_tree_tokens: 1 << 22,
        }
    }
}

/// Parameters of a policy that has none (unknown fields are still rejected).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

/// Weights of the `prefix_load` score: `w_prefix · prefix_fraction − w_load · outstanding / max_outstanding`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PrefixLoadConfig {
    /// Weight of the cached-prefix fraction (dimensionless, ≥ 0). Default 1.
    pub w_prefix: f64,
    /// Weight of the normalised load (dimensionless, ≥ 0). Default 1.
    pub w_load: f64,
}

impl Default for PrefixLoadConfig {
    fn default() -> Self {
        Self {
            w_prefix: 1.0,
            w_load: 1.0,
        }
    }
}

impl Default for PolicyConfig {
    /// Round robin: the baseline every other policy is compared with.
    fn default() -> Self {
        PolicyConfig::RoundRobin(NoParams {})
    }
}

impl PolicyConfig {
    /// True for policies that read what the workers' KV flushes report (the cached
    /// prefixes, or the KV usage): only then do workers flush at all.
    pub fn uses_kv_view(&self) -> bool {
        matches!(
            self,
            PolicyConfig::MaxPrefix(_)
                | PolicyConfig::PrefixLoad(_)
                | PolicyConfig::LeastKv(_)
                | PolicyConfig::LlmD(_)
                | PolicyConfig::Dynamo(_)
        )
    }

    /// The policy's configuration name.
    pub fn name(&self) -> &'static str {
        match self {
            PolicyConfig::RoundRobin(_) => RoundRobin::NAME,
            PolicyConfig::Random(_) => Random::NAME,
            PolicyConfig::LeastLoaded(_) => LeastLoaded::NAME,
            PolicyConfig::MaxPrefix(_) => MaxPrefix::NAME,
            PolicyConfig::LeastKv(_) => LeastKv::NAME,
            PolicyConfig::PowerOfTwo(_) => PowerOfTwo::NAME,
            PolicyConfig::SessionAffinity(_) => SessionAffinity::NAME,
            PolicyConfig::PrefixLoad(_) => PrefixLoad::NAME,
            PolicyConfig::CacheAware(_) => CacheAware::NAME,
            PolicyConfig::LlmD(_) => LlmD::NAME,
            PolicyConfig::Dynamo(_) => Dynamo::NAME,
        }
    }

    /// Builds the policy; randomised policies draw from the stream `router.<name>` of `seed`.
    pub fn build(&self, seed: u64) -> Box<dyn RoutingPolicy> {
        self.build_named(seed, "router")
    }

    /// Builds the policy drawing from the stream `<scope>.<name>` of `seed` (the decode
    /// policy of a deployment draws from `decode.<name>`, apart from the router's).
    pub fn build_named(&self, seed: u64, scope: &str) -> Box<dyn RoutingPolicy> {
        let rng = || SimRng::stream(seed, &format!("{scope}.{}", self.name()));
        match self {
            PolicyConfig::RoundRobin(_) => Box::new(RoundRobin::new()),
            PolicyConfig::Random(_) => Box::new(Random::new(rng())),
            PolicyConfig::LeastLoaded(_) => Box::new(LeastLoaded),
            PolicyConfig::MaxPrefix(_) => Box::new(MaxPrefix::new(rng())),
            PolicyConfig::LeastKv(_) => Box::new(LeastKv),
            PolicyConfig::PowerOfTwo(_) => Box::new(PowerOfTwo::new(rng())),
            PolicyConfig::SessionAffinity(_) => Box::new(SessionAffinity::new()),
            PolicyConfig::PrefixLoad(c) => Box::new(PrefixLoad::new(*c)),
            PolicyConfig::CacheAware(c) => Box::new(CacheAware::new(*c)),
            PolicyConfig::LlmD(c) => Box::new(LlmD::new(*c, rng())),
            PolicyConfig::Dynamo(c) => Box::new(Dynamo::new(*c, rng())),
        }
    }

    /// Records every problem under `path` (e.g. `router.policy`).
    pub fn validate(&self, path: &str, problems: &mut Problems) {
        if let PolicyConfig::CacheAware(c) = self {
            problems.in_range(path, "cache_threshold", c.cache_threshold, 0.0, 1.0);
            problems.in_range(
                path,
                "balance_abs_threshold",
                c.balance_abs_threshold,
                0.0,
                1e9,
            );
            problems.in_range(
                path,
                "balance_rel_threshold",
                c.balance_rel_threshold,
                1.0,
                1e9,
            );
            problems.in_range(path, "eviction_interval", c.eviction_interval, 0.0, 1e9);
            if c.max_tree_tokens == 0 {
                problems.push(join(path, "max_tree_tokens"), "must be >= 1");
            }
        }
        if let PolicyConfig::Dynamo(c) = self {
            problems.in_range(
                path,
                "overlap_score_weight",
                c.overlap_score_weight,
                0.0,
                1e6,
            );
            problems.in_range(path, "router_temperature", c.router_temperature, 0.0, 1e6);
        }
        if let PolicyConfig::LlmD(c) = self {
            for (field, v) in [
                ("prefix_weight", c.prefix_weight),
                ("queue_weight", c.queue_weight),
                ("kv_cache_weight", c.kv_cache_weight),
            ] {
                problems.in_range(path, field, v, 0.0, 1e6);
            }
            if c.prefix_weight + c.queue_weight + c.kv_cache_weight == 0.0 {
                problems.push(
                    join(path, "prefix_weight"),
                    "the weights cannot all be 0 (every pod would score the same)",
                );
            }
            for (field, v) in [
                ("max_prefix_blocks", c.max_prefix_blocks),
                ("lru_capacity_per_server", c.lru_capacity_per_server),
            ] {
                if v == 0 {
                    problems.push(join(path, field), "must be >= 1");
                }
            }
        }
        if let PolicyConfig::PrefixLoad(c) = self {
            problems.non_negative(path, "w_prefix", c.w_prefix);
            problems.non_negative(path, "w_load", c.w_load);
            if c.w_prefix == 0.0 && c.w_load == 0.0 {
                problems.push(
                    join(path, "w_prefix"),
                    "w_prefix and w_load cannot both be 0 (every worker would score the same)",
                );
            }
        }
    }
}
