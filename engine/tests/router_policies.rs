//! Routing policies on hand-built three-worker clusters.

use engine::kv_events::{KvChange, KvEvent, KvEventBatch, KvMedium};
use engine::request::{PromptContent, Source};
use engine::router::policy::{
    CacheAwareConfig, DynamoConfig, LlmDConfig, NoParams, PrefixLoadConfig, PrefixMode,
};
use engine::router::{
    ClusterView, EvidenceRoom, KvIndex, KvIndexLayout, PolicyConfig, RouteRequest, RoutingDecision,
    WorkerLoad,
};

const BLOCK: u32 = 16;

fn empty_index() -> KvIndex {
    KvIndex::new(KvIndexLayout {
        block_size: BLOCK,
        chunk_size: 256,
        tier_scopes: vec![],
    })
}

/// Workers 0, 1, 2 with these outstanding counts and KV usages.
fn loads(outstanding: [u32; 3], kv: [f64; 3]) -> Vec<WorkerLoad> {
    (0..3)
        .map(|i| WorkerLoad {
            id: i as u32,
            outstanding: outstanding[i],
            kv_usage: kv[i],
            kv_blocks: 1000,
        })
        .collect()
}

/// A 96-token prompt: 64 tokens of system prompt `group` (blocks 0–3), 32 unique (blocks 4–5).
fn prompt(group: u32, unique: u64) -> PromptContent {
    PromptContent::new()
        .with(Source::SystemPrompt(group), 64)
        .with(Source::Unique(unique), 32)
}

/// A batch from `worker` storing the first `blocks` GPU blocks of `p`.
fn stored(worker: u32, p: &PromptContent, blocks: usize) -> KvEventBatch {
    KvEventBatch {
        worker,
        events: p
            .block_hashes(BLOCK)
            .take(blocks)
            .map(|hash| KvEvent {
                medium: KvMedium::Gpu,
                change: KvChange::Stored,
                hash,
            })
            .collect(),
    }
}

fn route(
    policy: &mut dyn engine::router::RoutingPolicy,
    id: u64,
    session: Option<u64>,
    p: &PromptContent,
    workers: &[WorkerLoad],
    kv: &KvIndex,
) -> RoutingDecision {
    let req = RouteRequest {
        id,
        session,
        prompt_len: p.len(),
        content: p,
        now: id as f64,
    };
    let view = ClusterView::new(workers, kv).expect("workers present");
    policy.choose(&req, &view)
}

fn policy(cfg: PolicyConfig) -> Box<dyn engine::router::RoutingPolicy> {
    cfg.build(42)
}

#[test]
fn an_empty_cluster_has_no_view_to_route_on() {
    assert!(ClusterView::new(&[], &empty_index()).is_none());
}

#[test]
fn round_robin_cycles_and_follows_membership_changes() {
    let kv = empty_index();
    let p = prompt(0, 0);
    let mut rr = policy(PolicyConfig::RoundRobin(NoParams {}));
    let w = loads([9, 0, 0], [0.0; 3]);
    let picks: Vec<u32> = (0..4)
        .map(|i| route(rr.as_mut(), i, None, &p, &w, &kv).worker)
        .collect();
    // Load is ignored: 0, 1, 2, then wrap to 0.
    assert_eq!(picks, vec![0, 1, 2, 0]);
    // Worker 1 leaves and worker 5 joins; after 0 comes the next higher id, 2, then 5, then wrap.
    let w2 = vec![w[0], w[2], WorkerLoad { id: 5, ..w[1] }];
    let picks: Vec<u32> = (0..3)
        .map(|i| route(rr.as_mut(), i, None, &p, &w2, &kv).worker)
        .collect();
    assert_eq!(picks, vec![2, 5, 0]);
}

#[test]
fn random_is_reproducible_from_the_seed_and_reaches_every_worker() {
    let kv = empty_index();
    let p = prompt(0, 0);
    let w = loads([0; 3], [0.0; 3]);
    let run = |seed| {
        let mut r = PolicyConfig::Random(NoParams {}).build(seed);
        (0..60)
            .map(|i| route(r.as_mut(), i, None, &p, &w, &kv).worker)
            .collect::<Vec<u32>>()
    };
    let a = run(7);
    assert_eq!(a, run(7));
    assert_ne!(a, run(8));
    for id in 0..3 {
        assert!(a.contains(&id), "worker {id} never drawn in 60 tries");
    }
}

#[test]
fn least_loaded_takes_fewest_outstanding_and_breaks_ties_by_lowest_id() {
    let kv = empty_index();
    let p = prompt(0, 0);
    let mut ll = policy(PolicyConfig::LeastLoaded(NoParams {}));
    // Outstanding 3, 1, 1: workers 1 and 2 tie at 1 → lowest id, 1.
    let d = route(ll.as_mut(), 0, None, &p, &loads([3, 1, 1], [0.0; 3]), &kv);
    assert_eq!(d.worker, 1);
    assert_eq!(
        d.candidates.iter().map(|c| c.score).collect::<Vec<_>>(),
        vec![3.0, 1.0, 1.0]
    );
    assert_eq!(
        route(ll.as_mut(), 1, None, &p, &loads([0, 1, 0], [0.0; 3]), &kv).worker,
        0
    );
}

#[test]
fn least_kv_takes_lowest_usage_and_breaks_ties_by_lowest_id() {
    let kv = empty_index();
    let p = prompt(0, 0);
    let mut lk = policy(PolicyConfig::LeastKv(NoParams {}));
    // Usage 0.5, 0.2, 0.2 → tie between 1 and 2 → 1; outstanding is irrelevant.
    let w = loads([0, 9, 9], [0.5, 0.2, 0.2]);
    assert_eq!(route(lk.as_mut(), 0, None, &p, &w, &kv).worker, 1);
    let w = loads([0, 0, 0], [0.5, 0.3, 0.1]);
    assert_eq!(route(lk.as_mut(), 1, None, &p, &w, &kv).worker, 2);
}

#[test]
fn max_prefix_follows_the_events_once_they_are_applied() {
    let mut kv = empty_index();
    let mut mp = policy(PolicyConfig::MaxPrefix(NoParams {}));
    let w = loads([5, 0, 0], [0.0; 3]);
    let first = prompt(1, 1);
    let repeat = prompt(1, 2); // same system prompt, different tail

    // Worker 0 served `first` and cached all 6 blocks, but its batch has not been flushed yet:
    // the view knows nothing, every worker scores 0 and the choice is random.
    let pending = stored(0, &first, 6);
    let d = route(mp.as_mut(), 1, None, &repeat, &w, &kv);
    assert!(d.candidates.iter().all(|c| c.score == 0.0));

    // After the flush, `repeat` shares blocks 0–3 (64 of 96 tokens) with worker 0 only,
    // so it goes to worker 0 even though worker 0 is the busiest (max_prefix ignores load).
    kv.apply(&pending);
    for id in 2..10 {
        let d = route(mp.as_mut(), id, None, &repeat, &w, &kv);
        assert_eq!(d.worker, 0);
        let c0 = d.candidates.get(0).unwrap();
        assert_eq!(c0.prefix.unwrap().gpu_tokens, 64);
        assert!((c0.score - 64.0 / 96.0).abs() < 1e-12);
        assert_eq!(d.candidates.get(1).unwrap().score, 0.0);
    }
    // The exact prompt again matches all 6 blocks (96/96).
    assert_eq!(route(mp.as_mut(), 10, None, &first, &w, &kv).worker, 0);
}

#[test]
fn max_prefix_prefers_the_longer_contiguous_match() {
    let mut kv = empty_index();
    let mut mp = policy(PolicyConfig::MaxPrefix(NoParams {}));
    let w = loads([0; 3], [0.0; 3]);
    let p = prompt(3, 3);
    let h: Vec<u64> = p.block_hashes(BLOCK).collect();
    // Worker 1: blocks 0 and 1 (32 tokens). Worker 2: blocks 0, 2, 3, 4 — a hole at block 1,
    // so its contiguous prefix is block 0 only (16 tokens), however much it holds after the hole.
    kv.apply(&stored(1, &p, 2));
    let gappy = [0usize, 2, 3, 4]
        .iter()
        .map(|&i| KvEvent {
            medium: KvMedium::Gpu,
            change: KvChange::Stored,
            hash: h[i],
        })
        .collect();
    kv.apply(&KvEventBatch {
        worker: 2,
        events: gappy,
    });
    let d = route(mp.as_mut(), 0, None, &p, &w, &kv);
    assert_eq!(d.worker, 1);
    let tokens: Vec<u32> = d
        .candidates
        .iter()
        .map(|c| c.prefix.unwrap().tokens())
        .collect();
    assert_eq!(tokens, vec![0, 32, 16]);
}

#[test]
fn max_prefix_breaks_ties_at_random_among_the_best_only() {
    let mut kv = empty_index();
    let mut mp = policy(PolicyConfig::MaxPrefix(NoParams {}));
    let w = loads([0; 3], [0.0; 3]);
    let p = prompt(4, 4);
    // Workers 0 and 2 hold the same 4-block prefix; worker 1 holds nothing.
    kv.apply(&stored(0, &p, 4));
    kv.apply(&stored(2, &p, 4));
    let picks: Vec<u32> = (0..40)
        .map(|i| route(mp.as_mut(), i, None, &p, &w, &kv).worker)
        .collect();
    assert!(!picks.contains(&1));
    assert!(picks.contains(&0) && picks.contains(&2), "{picks:?}");
}

#[test]
fn max_prefix_without_any_match_spreads_at_random() {
    let kv = empty_index();
    let mut mp = policy(PolicyConfig::MaxPrefix(NoParams {}));
    let w = loads([0; 3], [0.0; 3]);
    let picks: Vec<u32> = (0..60)
        .map(|i| route(mp.as_mut(), i, None, &prompt(9, i), &w, &kv).worker)
        .collect();
    for id in 0..3 {
        assert!(picks.contains(&id), "worker {id} never chosen: {picks:?}");
    }
}

#[test]
fn power_of_two_takes_the_less_loaded_of_its_two_samples() {
    let kv = empty_index();
    let p = prompt(0, 0);
    let mut p2 = policy(PolicyConfig::PowerOfTwo(NoParams {}));
    // Outstanding 5, 0, 9. Any pair holding worker 2 has a less loaded partner, so 2 never
    // wins; worker 0 wins only when the pair is {0, 2}; worker 1 wins whenever sampled.
    let w = loads([5, 0, 9], [0.0; 3]);
    let mut seen_pairs = std::collections::BTreeSet::new();
    for i in 0..60 {
        let d = route(p2.as_mut(), i, None, &p, &w, &kv);
        let pair: Vec<u32> = d.candidates.iter().map(|c| c.worker).collect();
        assert_eq!(pair.len(), 2, "two distinct samples");
        assert!(pair.contains(&d.worker));
        let expected = if pair.contains(&1) { 1 } else { 0 };
        assert_eq!(d.worker, expected, "pair {pair:?}");
        seen_pairs.insert(pair);
    }
    // All three pairs occur over 60 draws.
    assert_eq!(seen_pairs.len(), 3);
    // Equal loads: the lower id of the pair wins.
    let even = loads([2, 2, 2], [0.0; 3]);
    let d = route(p2.as_mut(), 99, None, &p, &even, &kv);
    assert_eq!(d.worker, d.candidates.get(0).unwrap().worker);
}

#[test]
fn session_affinity_forgets_a_session_when_it_ends() {
    use engine::router::policy::SessionAffinity;
    use engine::router::RoutingPolicy;
    let (kv, p) = (empty_index(), prompt(0, 0));
    let mut sa = SessionAffinity::new();
    let w = loads([0, 0, 0], [0.0; 3]);
    for session in 0..1000 {
        route(&mut sa, session, Some(session), &p, &w, &kv);
        if session % 10 != 9 {
            sa.end_session(session);
        }
    }
    // Only the sessions still going (every tenth) are remembered, not all 1,000 seen.
    assert_eq!(sa.bound_sessions(), 100);
}

#[test]
fn session_affinity_is_sticky_and_rebinds_when_its_worker_leaves() {
    let kv = empty_index();
    let p = prompt(0, 0);
    let mut sa = policy(PolicyConfig::SessionAffinity(NoParams {}));
    // Session 7's first turn: least loaded of (2, 0, 1) is worker 1.
    assert_eq!(
        route(
            sa.as_mut(),
            0,
            Some(7),
            &p,
            &loads([2, 0, 1], [0.0; 3]),
            &kv
        )
        .worker,
        1
    );
    // Loads change so worker 1 is now the busiest: session 7 still goes to 1,
    // while new session 8 goes to the least loaded (0 and 2 tie at 0 → 0).
    let busy1 = loads([0, 5, 0], [0.0; 3]);
    assert_eq!(route(sa.as_mut(), 1, Some(7), &p, &busy1, &kv).worker, 1);
    assert_eq!(route(sa.as_mut(), 2, Some(8), &p, &busy1, &kv).worker, 0);
    assert_eq!(route(sa.as_mut(), 3, Some(8), &p, &busy1, &kv).worker, 0);
    // Worker 1 is scaled down: session 7 falls back to the least loaded of {0: 3, 2: 1} = 2,
    // and stays there even when worker 0 becomes idle.
    let without1 = |a, b| {
        vec![
            WorkerLoad {
                id: 0,
                outstanding: a,
                kv_usage: 0.0,
                kv_blocks: 1000,
            },
            WorkerLoad {
                id: 2,
                outstanding: b,
                kv_usage: 0.0,
                kv_blocks: 1000,
            },
        ]
    };
    assert_eq!(
        route(sa.as_mut(), 4, Some(7), &p, &without1(3, 1), &kv).worker,
        2
    );
    assert_eq!(
        route(sa.as_mut(), 5, Some(7), &p, &without1(0, 4), &kv).worker,
        2
    );
    // No session: plain least loaded.
    assert_eq!(
        route(sa.as_mut(), 6, None, &p, &without1(0, 4), &kv).worker,
        0
    );
}

#[test]
fn prefix_load_trades_cache_affinity_against_a_growing_load_gap() {
    let mut kv = empty_index();
    let mut pl = policy(PolicyConfig::PrefixLoad(PrefixLoadConfig {
        w_prefix: 1.0,
        w_load: 1.0,
    }));
    let p = prompt(5, 1);
    // Worker 0 holds the 64-token system prompt: prefix fraction 64/96 = 2/3 on worker 0, 0 elsewhere.
    kv.apply(&stored(0, &prompt(5, 0), 4));

    // Loads (2, 1, 1), max 2: worker 0 scores 2/3 − 2/2 = −1/3; workers 1, 2 score 0 − 1/2 = −1/2.
    let d = route(pl.as_mut(), 0, None, &p, &loads([2, 1, 1], [0.0; 3]), &kv);
    assert_eq!(d.worker, 0);
    assert!((d.candidates.get(0).unwrap().score - (-1.0 / 3.0)).abs() < 1e-12);
    assert!((d.candidates.get(1).unwrap().score - (-0.5)).abs() < 1e-12);

    // Loads (4, 1, 1), max 4: worker 0 still −1/3, but workers 1, 2 now score −1/4 > −1/3,
    // so the request leaves the cached worker; 1 and 2 tie → lowest id.
    let d = route(pl.as_mut(), 1, None, &p, &loads([4, 1, 1], [0.0; 3]), &kv);
    assert_eq!(d.worker, 1);
    assert!((d.candidates.get(2).unwrap().score - (-0.25)).abs() < 1e-12);

    // Everyone idle: load terms are 0 and the cached worker wins.
    assert_eq!(
        route(pl.as_mut(), 2, None, &p, &loads([0, 0, 0], [0.0; 3]), &kv).worker,
        0
    );
}

#[test]
fn every_policy_is_built_from_its_name() {
    for name in [
        "round_robin",
        "random",
        "least_loaded",
        "max_prefix",
        "least_kv",
        "power_of_two",
        "session_affinity",
        "prefix_load",
    ] {
        let cfg: PolicyConfig =
            serde_json::from_str(&format!(r#"{{"policy": "{name}"}}"#)).unwrap();
        assert_eq!(cfg.name(), name);
        assert_eq!(cfg.build(1).name(), name);
    }
}

#[test]
fn a_view_without_room_for_the_evidence_gets_decisions_without_candidates() {
    let (kv, p) = (empty_index(), prompt(0, 0));
    let w = loads([3, 1, 2], [0.0; 3]);
    let req = RouteRequest {
        id: 0,
        session: None,
        prompt_len: p.len(),
        content: &p,
        now: 0.0,
    };
    let view = ClusterView::new(&w, &kv).unwrap();
    // Least loaded scores all three workers, power of two its two samples: room for two
    // keeps the latter's and not the former's; the choice is the same either way.
    let mut ll = policy(PolicyConfig::LeastLoaded(NoParams {}));
    let mut p2 = policy(PolicyConfig::PowerOfTwo(NoParams {}));
    for (room, ll_kept, p2_kept) in [(3, 3, 2), (2, 0, 2), (1, 0, 0)] {
        let tight = view.with_evidence(EvidenceRoom::new(room));
        let d = ll.choose(&req, &tight);
        assert_eq!((d.worker, d.candidates.len()), (1, ll_kept), "room {room}");
        assert_eq!(p2.choose(&req, &tight).candidates.len(), p2_kept);
    }
}

/// SGLang's cache-aware router, as sgl-router's `cache_aware` policy decides: the prompt
/// goes where the router's own tree matches more than `cache_threshold` of it, else to the
/// worker with the smallest tree, unless the load is imbalanced (then the least loaded).
#[test]
fn cache_aware_follows_its_own_tree_and_balances_when_the_load_is_skewed() {
    let kv = empty_index(); // no KV events: the policy never reads them
    let mut ca = policy(PolicyConfig::CacheAware(CacheAwareConfig {
        balance_abs_threshold: 4.0,
        balance_rel_threshold: 1.5,
        ..Default::default()
    }));
    let idle = loads([0, 0, 0], [0.0; 3]);
    // All trees empty: the smallest is worker 0's (the first).
    assert_eq!(
        route(&mut *ca, 0, None, &prompt(7, 0), &idle, &kv).worker,
        0
    );
    // Group 7 again: 64 of its 96 tokens match worker 0's tree (2/3 > 0.5).
    let d = route(&mut *ca, 1, None, &prompt(7, 1), &idle, &kv);
    assert_eq!(d.worker, 0);
    assert_eq!(d.basis, engine::router::Basis::TreeMatch);
    // Another group matches nothing: the smallest tree, worker 1 (worker 0 holds 8 blocks).
    let d = route(&mut *ca, 2, None, &prompt(8, 2), &idle, &kv);
    assert_eq!(d.worker, 1);
    assert_eq!(d.basis, engine::router::Basis::TreeSize);
    // Worker 0 has 10 outstanding, worker 2 has 3: 7 > 4 and 10 > 1.5 × 3, imbalanced,
    // so group 7 goes to the least loaded however well worker 0 matches.
    let skewed = loads([10, 5, 3], [0.0; 3]);
    let d = route(&mut *ca, 3, None, &prompt(7, 3), &skewed, &kv);
    assert_eq!((d.worker, d.basis), (2, engine::router::Basis::Outstanding));
    // 7 > 4 but 10 is not > 1.5 × 7: balanced enough, the tree decides (worker 0 and now
    // worker 2 both hold group 7's 4 blocks; the less loaded of them wins).
    let mild = loads([10, 9, 7], [0.0; 3]);
    assert_eq!(
        route(&mut *ca, 4, None, &prompt(7, 4), &mild, &kv).worker,
        2
    );
}

#[test]
fn cache_aware_trees_are_cut_back_to_their_limit_each_interval() {
    let kv = empty_index();
    // 48 tokens a tree (3 blocks), cut every 10 s.
    let mut ca = policy(PolicyConfig::CacheAware(CacheAwareConfig {
        eviction_interval: 10.0,
        max_tree_tokens: 48,
        ..Default::default()
    }));
    let one = vec![WorkerLoad {
        id: 0,
        outstanding: 0,
        kv_usage: 0.0,
        kv_blocks: 1000,
    }];
    route(&mut *ca, 0, None, &prompt(1, 0), &one, &kv); // 6 blocks in the tree
    route(&mut *ca, 5, None, &prompt(1, 1), &one, &kv); // no cut yet: still matched
    let two = loads([0, 0, 0], [0.0; 3]);
    // At t = 12 s the tree is cut to 3 blocks, the least recently routed first: only the
    // first 3 blocks of group 1's system prompt stay, 48 of 96 tokens: not above 0.5, so
    // the smallest tree wins — worker 1, whose tree is empty.
    let d = route(&mut *ca, 12, None, &prompt(1, 2), &two, &kv);
    assert_eq!((d.worker, d.basis), (1, engine::router::Basis::TreeSize));
}

/// llm-d's endpoint picker with its default weights (prefix 3, queue 2, KV cache 2): a pod
/// scores 3·(prefix blocks held / prompt blocks) + 2·(max − q)/(max − min) + 2·(1 − usage).
#[test]
fn llm_d_sums_its_weighted_scorers_over_the_kv_events() {
    let mut kv = empty_index();
    let p = prompt(3, 0); // 6 blocks
    kv.apply(&stored(1, &p, 4)); // pod 1 holds the 4 system-prompt blocks
    let mut d = policy(PolicyConfig::LlmD(LlmDConfig::default()));
    // Queues 2, 4, 6; usages 0.5, 0.5, 0.0.
    let w = loads([2, 4, 6], [0.5, 0.5, 0.0]);
    let decision = route(&mut *d, 0, None, &prompt(3, 1), &w, &kv);
    // Pod 0: 0 + 2·1 + 2·0.5 = 3; pod 1: 3·4/6 + 2·0.5 + 2·0.5 = 4; pod 2: 0 + 0 + 2 = 2.
    assert_eq!(decision.worker, 1);
    let scores: Vec<f64> = decision.candidates.iter().map(|c| c.score).collect();
    assert_eq!(scores, [3.0, 4.0, 2.0]);
    // Queues 2, 10, 6: pod 0 scores 0 + 2·1 + 2·0.5 = 3, pod 1 3·4/6 + 0 + 1 = 3, pod 2
    // 0 + 2·0.5 + 2·1 = 3: its cache no longer outweighs pod 1's queue; a three-way tie,
    // drawn.
    let w = loads([2, 10, 6], [0.5, 0.5, 0.0]);
    let decision = route(&mut *d, 1, None, &prompt(3, 2), &w, &kv);
    let scores: Vec<f64> = decision.candidates.iter().map(|c| c.score).collect();
    assert_eq!(scores, [3.0, 3.0, 3.0]);
}

#[test]
fn llm_d_approximate_learns_from_its_own_routing_and_forgets_past_its_capacity() {
    let kv = empty_index(); // no events at all
    let mut d = policy(PolicyConfig::LlmD(LlmDConfig {
        prefix_mode: PrefixMode::Approximate,
        lru_capacity_per_server: 6,
        ..Default::default()
    }));
    // Pod 1 is the least loaded: it gets group 5 (queue 2 + KV 2 = 4, the others 2 + ...).
    let w = loads([3, 1, 3], [0.0; 3]);
    assert_eq!(route(&mut *d, 0, None, &prompt(5, 0), &w, &kv).worker, 1);
    // Same load everywhere: pod 1's index holds group 5's 4 blocks (of 6): 3·4/6 = 2 ahead.
    let even = loads([1, 1, 1], [0.0; 3]);
    assert_eq!(route(&mut *d, 1, None, &prompt(5, 1), &even, &kv).worker, 1);
    // Group 6 to pod 1 (it is the only idle one): with room for 6 blocks, its index now
    // holds group 6's and drops group 5's least recent blocks, so group 5 no longer
    // scores there and the draw among equals decides.
    let w = loads([1, 0, 1], [0.0; 3]);
    assert_eq!(route(&mut *d, 2, None, &prompt(6, 2), &w, &kv).worker, 1);
    let decision = route(&mut *d, 3, None, &prompt(5, 3), &even, &kv);
    let pod1 = decision.candidates.iter().find(|c| c.worker == 1).unwrap();
    assert_eq!(
        pod1.score,
        2.0 + 2.0,
        "no prefix score left for group 5 on pod 1"
    );
}

/// Dynamo's KV router: cost = overlap_score_weight · prefill blocks + decode blocks, where
/// prefill blocks = (prompt − cached prefix) / block and decode blocks = the worker's KV in
/// use (usage × its blocks) + the request's blocks it does not hold yet; the cheapest wins
/// at temperature 0.
#[test]
fn dynamo_routes_to_the_cheapest_worker_in_blocks() {
    let mut kv = empty_index();
    let p = prompt(2, 0); // 96 tokens: 6 blocks of 16
    kv.apply(&stored(2, &p, 4)); // worker 2 holds the 64-token system prompt
    let mut d = policy(PolicyConfig::Dynamo(DynamoConfig::default()));
    // Usages 0.010, 0.012, 0.020 of 1000 blocks: 10, 12, 20 blocks in use.
    let w = loads([0, 0, 0], [0.010, 0.012, 0.020]);
    let decision = route(&mut *d, 0, None, &prompt(2, 1), &w, &kv);
    // Costs: 6 + (10 + 6) = 22, 6 + (12 + 6) = 24, (96 − 64)/16 = 2 + (20 + 6 − 4) = 24:
    // worker 0, though worker 2 holds the prefix.
    let costs: Vec<f64> = decision.candidates.iter().map(|c| c.score).collect();
    assert_eq!(costs, [22.0, 24.0, 24.0]);
    assert_eq!(decision.worker, 0);
    // Weighting the prefill twice: 28, 30, 26 — worker 2.
    let mut d = policy(PolicyConfig::Dynamo(DynamoConfig {
        overlap_score_weight: 2.0,
        ..Default::default()
    }));
    assert_eq!(route(&mut *d, 1, None, &prompt(2, 2), &w, &kv).worker, 2);
    // Hot: every worker is drawn some of the time, the cheapest most (normalised costs 0,
    // 1, 1: weights 1, e^-1, e^-1).
    let mut d = policy(PolicyConfig::Dynamo(DynamoConfig {
        router_temperature: 1.0,
        ..Default::default()
    }));
    let mut seen = [0u32; 3];
    for id in 0..300 {
        seen[route(&mut *d, id, None, &prompt(2, id), &w, &kv).worker as usize] += 1;
    }
    assert!(seen.iter().all(|&n| n > 30), "{seen:?}");
    assert!(seen[0] > seen[1] && seen[0] > seen[2], "{seen:?}");
}
