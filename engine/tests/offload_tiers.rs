//! Offload tiers: capacity, LRU eviction with events, scope, and prefix lookup.

use engine::kv_events::{KvChange, KvEvent, KvMedium};
use engine::offload::{OffloadConfig, OffloadTiers, TierConfig, TierHit, TierScope};

/// Chunks of 4 tokens at 250 bytes/token = 1000 bytes; a tier of `chunks` · 1000 bytes.
fn tier(chunks: u64, scope: TierScope) -> TierConfig {
    TierConfig {
        capacity_gb: chunks as f64 * 1000.0 / 1e9,
        scope,
        ..TierConfig::cpu_dram()
    }
}

fn tiers(list: Vec<TierConfig>) -> OffloadTiers {
    OffloadTiers::new(
        &OffloadConfig {
            tiers: list,
            chunk_size: 4,
            ..Default::default()
        },
        250.0,
    )
}

fn stored(t: u8, h: u64) -> KvEvent {
    KvEvent {
        medium: KvMedium::Tier(t),
        change: KvChange::Stored,
        hash: h,
    }
}

fn removed(t: u8, h: u64) -> KvEvent {
    KvEvent {
        medium: KvMedium::Tier(t),
        change: KvChange::Removed,
        hash: h,
    }
}

#[test]
fn capacity_is_bytes_over_chunk_bytes() {
    let t = tiers(vec![tier(3, TierScope::PerWorker)]);
    assert_eq!(t.chunk_bytes(), 1000.0);
    assert_eq!(t.capacity_chunks(0), 3);
}

#[test]
fn a_full_tier_evicts_least_recently_used_and_reports_it() {
    let mut t = tiers(vec![tier(3, TierScope::PerWorker)]);
    let mut ev = Vec::new();
    // A prompt's chunks are stored last-to-first, so its first chunk is the most recent.
    t.store(0, &[1, 2], &mut ev);
    assert_eq!(ev, vec![stored(0, 2), stored(0, 1)]);
    assert_eq!(t.contents(0, 0), vec![2, 1]); // LRU first
    ev.clear();
    t.store(0, &[3], &mut ev);
    t.store(0, &[4], &mut ev);
    // Full at 3: storing 4 evicts the least recent, 2.
    assert_eq!(ev, vec![stored(0, 3), removed(0, 2), stored(0, 4)]);
    assert_eq!(t.contents(0, 0), vec![1, 3, 4]);
    // Re-storing 1 only refreshes it (no event); the next eviction takes 3.
    ev.clear();
    t.store(0, &[1], &mut ev);
    assert!(ev.is_empty());
    t.store(0, &[5], &mut ev);
    assert_eq!(ev, vec![removed(0, 3), stored(0, 5)]);
    assert_eq!(t.contents(0, 0), vec![4, 1, 5]);
}

#[test]
fn a_prompt_larger_than_the_tier_keeps_its_prefix() {
    // 4 chunks into a 2-chunk tier: stored 4, 3, then 2 evicts 4, 1 evicts 3 → {2, 1} remain,
    // the chunks a later prompt with the same start can actually use.
    let mut t = tiers(vec![tier(2, TierScope::PerWorker)]);
    let mut ev = Vec::new();
    t.store(0, &[1, 2, 3, 4], &mut ev);
    assert_eq!(t.contents(0, 0), vec![2, 1]);
    assert_eq!(t.lookup(0, &[1, 2, 3, 4]).chunks, 2);
}

#[test]
fn per_worker_tiers_are_private_and_shared_tiers_are_not() {
    let mut t = tiers(vec![
        tier(10, TierScope::PerWorker),
        tier(10, TierScope::Shared),
    ]);
    let mut ev = Vec::new();
    t.store(0, &[7, 8], &mut ev);
    // Worker 0 reads both chunks from its own tier 0; worker 1 finds them only in the shared tier 1.
    assert_eq!(
        t.lookup(0, &[7, 8]),
        TierHit {
            chunks: 2,
            tokens: 8,
            per_tier: vec![2, 0]
        }
    );
    let hit = t.lookup(1, &[7, 8]);
    assert_eq!(hit.per_tier, vec![0, 2]);
    assert_eq!(hit.deepest_tier(), Some(1));
    assert_eq!(t.fetch_plan(&hit), vec![(1, 2000.0)]);
    // Worker 0 leaves: its private copy is gone, the shared one stays.
    t.remove_worker(0);
    assert_eq!(t.lookup(0, &[7, 8]).per_tier, vec![0, 2]);
}

#[test]
fn lookup_stops_at_the_first_missing_chunk_and_may_span_tiers() {
    let mut t = tiers(vec![
        tier(2, TierScope::PerWorker),
        tier(10, TierScope::PerWorker),
    ]);
    let mut ev = Vec::new();
    // Tier 0 (2 chunks) keeps 10 and 11 of [10, 11, 12]; tier 1 keeps all three.
    t.store(0, &[10, 11, 12], &mut ev);
    t.store(0, &[20], &mut ev); // tier 0 now evicts 11: {10, 20}
    assert_eq!(t.contents(0, 0), vec![10, 20]);
    // Prompt [10, 11, 12, 13]: chunk 10 from tier 0, 11 and 12 from tier 1, 13 nowhere.
    let hit = t.lookup(0, &[10, 11, 12, 13]);
    assert_eq!((hit.chunks, hit.tokens), (3, 12));
    assert_eq!(hit.per_tier, vec![1, 2]);
    assert_eq!(t.fetch_plan(&hit), vec![(0, 1000.0), (1, 2000.0)]);
    // A hole stops the walk even when later chunks are held: [99, 10] hits nothing.
    assert_eq!(t.lookup(0, &[99, 10]).chunks, 0);
    assert_eq!(t.lookup(0, &[99, 10]).deepest_tier(), None);
}

#[test]
fn a_fetch_counts_as_a_use_for_eviction() {
    let mut t = tiers(vec![tier(3, TierScope::PerWorker)]);
    let mut ev = Vec::new();
    for h in [1, 2, 3] {
        t.store(0, &[h], &mut ev);
    }
    // Fetching 1 makes it the most recent: the next store evicts 2, not 1.
    let hit = t.lookup(0, &[1]);
    t.touch(0, &[1], &hit);
    ev.clear();
    t.store(0, &[4], &mut ev);
    assert_eq!(ev, vec![removed(0, 2), stored(0, 4)]);
}
