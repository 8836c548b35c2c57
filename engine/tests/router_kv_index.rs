//! The router's global KV view, fed only by event batches.

use engine::kv_events::{KvChange, KvEvent, KvEventBatch, KvMedium};
use engine::offload::{OffloadConfig, OffloadTiers, TierConfig, TierScope};
use engine::request::{PromptContent, Source};
use engine::router::{KvIndex, KvIndexLayout, PrefixMatch};

fn ev(medium: KvMedium, change: KvChange, hash: u64) -> KvEvent {
    KvEvent {
        medium,
        change,
        hash,
    }
}

fn gpu(change: KvChange, hash: u64) -> KvEvent {
    ev(KvMedium::Gpu, change, hash)
}

fn batch(worker: u32, events: Vec<KvEvent>) -> KvEventBatch {
    KvEventBatch { worker, events }
}

use KvChange::{Removed, Stored};

/// Block size 16, chunk size 32; tier 0 per worker, tier 1 shared.
fn index() -> KvIndex {
    KvIndex::new(KvIndexLayout {
        block_size: 16,
        chunk_size: 32,
        tier_scopes: vec![TierScope::PerWorker, TierScope::Shared],
    })
}

#[test]
fn events_apply_in_order_with_evictions_and_restores() {
    let mut kv = index();
    kv.apply(&batch(
        0,
        vec![
            gpu(Stored, 10),
            gpu(Stored, 11),
            gpu(Stored, 12),
            gpu(Removed, 11), // evicted
            gpu(Stored, 13),
            gpu(Removed, 13), // stored and evicted within one flush: gone
        ],
    ));
    kv.apply(&batch(
        1,
        vec![gpu(Removed, 20), gpu(Stored, 20), gpu(Stored, 11)],
    ));
    // Worker 0 now holds 10 and 12; worker 1 holds 20 (removed-then-stored: present) and 11.
    assert_eq!(kv.holdings(0, KvMedium::Gpu), vec![10, 12]);
    assert_eq!(kv.holdings(1, KvMedium::Gpu), vec![11, 20]);
    assert!(!kv.holds(0, KvMedium::Gpu, 11) && kv.holds(1, KvMedium::Gpu, 11));
    assert_eq!(kv.counts(0).unwrap().gpu_blocks, 2);
    // Re-storing what is known changes nothing; removing what is unknown is a no-op.
    kv.apply(&batch(0, vec![gpu(Stored, 10), gpu(Removed, 99)]));
    assert_eq!(kv.counts(0).unwrap().gpu_blocks, 2);
    // Worker 0 re-stores 11 after its eviction: both now hold it.
    kv.apply(&batch(0, vec![gpu(Stored, 11)]));
    assert!(kv.holds(0, KvMedium::Gpu, 11) && kv.holds(1, KvMedium::Gpu, 11));
    assert_eq!(kv.distinct_entries(), 4); // 10, 11, 12, 20
}

#[test]
fn removing_a_worker_drops_its_entries_but_not_others_or_shared_ones() {
    let mut kv = index();
    kv.apply(&batch(
        0,
        vec![
            gpu(Stored, 1),
            gpu(Stored, 2),
            ev(KvMedium::Tier(0), Stored, 100),
            ev(KvMedium::Tier(1), Stored, 200),
        ],
    ));
    kv.apply(&batch(1, vec![gpu(Stored, 2)]));
    kv.remove_worker(0);
    assert!(kv.holdings(0, KvMedium::Gpu).is_empty());
    assert!(kv.holdings(0, KvMedium::Tier(0)).is_empty());
    assert!(kv.counts(0).is_none());
    assert_eq!(kv.holdings(1, KvMedium::Gpu), vec![2]);
    // The shared tier's chunk is still there, readable by anyone.
    assert!(kv.holds(1, KvMedium::Tier(1), 200));
    assert_eq!(kv.distinct_entries(), 2); // gpu 2, shared 200
}

#[test]
fn prefix_walk_stops_per_worker_at_its_first_miss_and_uses_tiers() {
    let mut kv = index();
    // A 128-token prompt: 8 GPU blocks of 16, 4 chunks of 32.
    let p = PromptContent::new()
        .with(Source::Document(1), 100)
        .with(Source::Unique(1), 28);
    let b: Vec<u64> = p.block_hashes(16).collect();
    let c: Vec<u64> = p.block_hashes(32).collect();
    assert_eq!((b.len(), c.len()), (8, 4));
    // Worker 0: GPU blocks 0, 1 (32 tokens) and 3 (after a hole); its own tier 0 holds
    // chunks 0, 1; the shared tier holds chunk 2. Contiguous tier prefix: chunks 0, 1 from
    // tier 0, then chunk 2 from the shared tier = 96 tokens; chunk 3 is nowhere.
    kv.apply(&batch(
        0,
        vec![
            gpu(Stored, b[0]),
            gpu(Stored, b[1]),
            gpu(Stored, b[3]),
            ev(KvMedium::Tier(0), Stored, c[0]),
            ev(KvMedium::Tier(0), Stored, c[1]),
            ev(KvMedium::Tier(1), Stored, c[2]),
        ],
    ));
    // Worker 1: GPU blocks 0–4 (80 tokens), nothing in its own tier.
    kv.apply(&batch(1, b[..5].iter().map(|&h| gpu(Stored, h)).collect()));
    let m = kv.prefix_matches(&[0, 1, 2], &p);
    assert_eq!(
        m,
        vec![
            PrefixMatch {
                gpu_tokens: 32,
                tier_tokens: 96
            },
            PrefixMatch {
                gpu_tokens: 80,
                tier_tokens: 0
            },
            PrefixMatch::default(),
        ]
    );
    assert_eq!((m[0].tokens(), m[1].tokens()), (96, 80));
    // Once chunk 0 is in the shared tier, workers 1 and 2 can read it: 32 tokens each.
    kv.apply(&batch(0, vec![ev(KvMedium::Tier(1), Stored, c[0])]));
    let m = kv.prefix_matches(&[0, 1, 2], &p);
    assert_eq!((m[1].tier_tokens, m[2].tier_tokens), (32, 32));
}

#[test]
fn the_view_equals_a_workers_tier_contents_after_every_flush() {
    // Feed the events of a real (small, evicting) tier store into the view and compare.
    let tier = TierConfig {
        capacity_gb: 5e-6, // 5000 bytes = 5 chunks of 4 tokens × 250 bytes
        scope: TierScope::PerWorker,
        ..TierConfig::cpu_dram()
    };
    let cfg = OffloadConfig {
        tiers: vec![tier],
        chunk_size: 4,
        ..Default::default()
    };
    let mut tiers = OffloadTiers::new(&cfg, 250.0);
    assert_eq!(tiers.capacity_chunks(0), 5);
    let mut kv = KvIndex::new(KvIndexLayout {
        block_size: 4,
        chunk_size: 4,
        tier_scopes: cfg.scopes(),
    });
    for step in 0..12u32 {
        // Prompts of 1–4 chunks, half sharing document 0, so there are re-stores and evictions.
        let p = PromptContent::new()
            .with(Source::Document(step % 2), 4)
            .with(Source::Unique(step as u64), 4 * (step % 4));
        let hashes: Vec<u64> = p.block_hashes(4).collect();
        let mut events = Vec::new();
        tiers.store(3, &hashes, &mut events);
        kv.apply(&batch(3, events));
        let diff = kv.diff_against(3, KvMedium::Tier(0), tiers.contents(3, 0));
        assert!(diff.is_empty(), "step {step}: {diff:?}");
        assert_eq!(
            kv.counts(3).unwrap().tier_chunks[0],
            tiers.contents(3, 0).len() as u64
        );
    }
    assert_eq!(tiers.contents(3, 0).len(), 5, "the tier filled up");
    // A batch still in the worker's buffer is not in the view: the view is stale until flushed.
    let mut events = Vec::new();
    tiers.store(3, &[777], &mut events);
    assert!(!kv.matches(3, KvMedium::Tier(0), tiers.contents(3, 0)));
    kv.apply(&batch(3, events));
    assert!(kv.matches(3, KvMedium::Tier(0), tiers.contents(3, 0)));
}

#[test]
fn events_for_an_unconfigured_tier_are_counted_not_guessed() {
    let mut kv = index();
    kv.apply(&batch(0, vec![ev(KvMedium::Tier(5), Stored, 1)]));
    assert_eq!(kv.ignored_events(), 1);
    assert!(!kv.holds(0, KvMedium::Tier(5), 1));
}
