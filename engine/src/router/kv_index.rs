//! The router's global KV view: which worker holds which block hashes, on the
//! GPU and on each offload tier.
//!
//! It is fed only by the [`KvEventBatch`]es workers flush every
//! `kv_event_interval` seconds, applied in order, so it is exactly as stale as
//! that interval makes it. It is indexed by hash (hash → small sorted set of
//! workers), so a prefix query costs O(prompt blocks · workers) at worst and
//! never grows with the number of blocks cached across the cluster.
//!
//! Granularity: GPU entries are at the workers' `block_size`, tier entries at
//! the tiers' `chunk_size`; a prompt is hashed at both to query them.
//! A shared tier (scope `shared`) holds one copy for everyone: its entries
//! belong to no worker and any worker can read them, so removing a worker
//! keeps them.

use crate::fixed_hash::{BlockHashMap, BlockHashSet};
use crate::kv_events::{KvChange, KvEventBatch, KvMedium};
use crate::offload::TierScope;
use crate::request::{BlockHash, PromptContent};
use crate::router::worker_set::WorkerSet;
use serde::Serialize;
use std::collections::BTreeMap;

/// What the view needs to know about the cluster's KV layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KvIndexLayout {
    /// Tokens per GPU KV block (the hash granularity of `KvMedium::Gpu` events).
    pub block_size: u32,
    /// Tokens per offload chunk (the hash granularity of `KvMedium::Tier(_)` events).
    pub chunk_size: u32,
    /// Scope of each offload tier, in tier order.
    pub tier_scopes: Vec<TierScope>,
}

/// How much of a prompt one worker can serve from cache, according to the view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct PrefixMatch {
    /// Tokens of the longest contiguous prefix in the worker's GPU prefix cache.
    pub gpu_tokens: u32,
    /// Tokens of the longest contiguous prefix the worker can fetch from its
    /// tiers (its own tiers and shared ones, chunk by chunk from whichever holds it).
    pub tier_tokens: u32,
}

impl PrefixMatch {
    /// Tokens the worker can skip computing: the better of the two sources
    /// (a worker uses a tier hit only when it beats its GPU hit).
    pub fn tokens(&self) -> u32 {
        self.gpu_tokens.max(self.tier_tokens)
    }
}

/// Per-worker entry counts in the view.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct WorkerKvCounts {
    /// GPU blocks the worker reported as cached.
    pub gpu_blocks: u64,
    /// Chunks per tier the worker holds in its own (per-worker) tiers; shared tiers count 0 here.
    pub tier_chunks: Vec<u64>,
}

/// Where the view and a worker's actual cache disagree.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KvViewDiff {
    /// Hashes the worker holds but the view does not know about (sorted).
    pub missing: Vec<BlockHash>,
    /// Hashes the view attributes to the worker that it no longer holds (sorted).
    pub extra: Vec<BlockHash>,
}

impl KvViewDiff {
    /// True when the view matches the worker exactly.
    pub fn is_empty(&self) -> bool {
        self.missing.is_empty() && self.extra.is_empty()
    }
}

#[derive(Debug, Clone)]
enum TierEntries {
    PerWorker(BlockHashMap<WorkerSet>),
    Shared(BlockHashSet),
}

/// The global KV view.
#[derive(Debug, Clone)]
pub struct KvIndex {
    layout: KvIndexLayout,
    gpu: BlockHashMap<WorkerSet>,
    tiers: Vec<TierEntries>,
    counts: BTreeMap<u32, WorkerKvCounts>,
    ignored_events: u64,
}

impl KvIndex {
    /// An empty view for this layout.
    pub fn new(layout: KvIndexLayout) -> Self {
        let tiers = layout
            .tier_scopes
            .iter()
            .map(|scope| match scope {
                TierScope::PerWorker => TierEntries::PerWorker(BlockHashMap::default()),
                TierScope::Shared => TierEntries::Shared(BlockHashSet::default()),
            })
            .collect();
        Self {
            layout,
            gpu: BlockHashMap::default(),
            tiers,
            counts: BTreeMap::new(),
            ignored_events: 0,
        }
    }

    /// The layout this view was built for.
    pub fn layout(&self) -> &KvIndexLayout {
        &self.layout
    }

    /// Applies one worker's batch, event by event in order. Storing what is
    /// already known and removing what is not are no-ops (set semantics).
    /// The caller must not apply batches from a worker it has removed.
    pub fn apply(&mut self, batch: &KvEventBatch) {
        let worker = batch.worker;
        let n_tiers = self.tiers.len();
        let counts = self.counts.entry(worker).or_insert_with(|| WorkerKvCounts {
            gpu_blocks: 0,
            tier_chunks: vec![0; n_tiers],
        });
        for event in &batch.events {
            let stored = event.change == KvChange::Stored;
            match event.medium {
                KvMedium::Gpu => {
                    if update(&mut self.gpu, event.hash, worker, stored) {
                        bump(&mut counts.gpu_blocks, stored);
                    }
                }
                KvMedium::Tier(t) => match self.tiers.get_mut(t as usize) {
                    Some(TierEntries::PerWorker(map)) => {
                        if update(map, event.hash, worker, stored) {
                            bump(&mut counts.tier_chunks[t as usize], stored);
                        }
                    }
                    Some(TierEntries::Shared(set)) => {
                        if stored {
                            set.insert(event.hash);
                        } else {
                            set.remove(&event.hash);
                        }
                    }
                    // A tier the layout does not have: counted, never guessed at.
                    None => self.ignored_events += 1,
                },
            }
        }
    }

    /// Drops everything the view attributes to `worker` (it left the cluster).
    /// Shared tiers keep their contents. Costs one pass over the view; workers
    /// leave rarely (scale-down), so routing decisions stay cheap instead.
    pub fn remove_worker(&mut self, worker: u32) {
        let drop_from = |map: &mut BlockHashMap<WorkerSet>| {
            map.retain(|_, set| {
                set.remove(worker);
                !set.is_empty()
            })
        };
        drop_from(&mut self.gpu);
        for tier in &mut self.tiers {
            if let TierEntries::PerWorker(map) = tier {
                drop_from(map);
            }
        }
        self.counts.remove(&worker);
    }

    /// Events that named a tier this layout does not have (always 0 in a consistent run).
    pub fn ignored_events(&self) -> u64 {
        self.ignored_events
    }

    /// The worker's entry counts, if it ever reported anything.
    pub fn counts(&self, worker: u32) -> Option<&WorkerKvCounts> {
        self.counts.get(&worker)
    }

    /// Distinct hashes in the view, over the GPU and all tiers.
    pub fn distinct_entries(&self) -> usize {
        self.gpu.len()
            + self
                .tiers
                .iter()
                .map(|t| match t {
                    TierEntries::PerWorker(m) => m.len(),
                    TierEntries::Shared(s) => s.len(),
                })
                .sum::<usize>()
    }

    /// True when the view says `worker` can read `hash` from `medium` (shared tiers: anyone).
    pub fn holds(&self, worker: u32, medium: KvMedium, hash: BlockHash) -> bool {
        match medium {
            KvMedium::Gpu => self.gpu.get(&hash).is_some_and(|s| s.contains(worker)),
            KvMedium::Tier(t) => match self.tiers.get(t as usize) {
                Some(TierEntries::PerWorker(m)) => m.get(&hash).is_some_and(|s| s.contains(worker)),
                Some(TierEntries::Shared(s)) => s.contains(&hash),
                None => false,
            },
        }
    }

    /// Every hash the view attributes to `worker` on `medium`, sorted (for tests and
    /// diagnostics: one pass over the view).
    pub fn holdings(&self, worker: u32, medium: KvMedium) -> Vec<BlockHash> {
        let mut out: Vec<BlockHash> = match medium {
            KvMedium::Gpu => held_by(&self.gpu, worker),
            KvMedium::Tier(t) => match self.tiers.get(t as usize) {
                Some(TierEntries::PerWorker(m)) => held_by(m, worker),
                Some(TierEntries::Shared(s)) => s.iter().copied().collect(),
                None => Vec::new(),
            },
        };
        out.sort_unstable();
        out
    }

    /// Compares the view with what `worker` actually holds on `medium`.
    pub fn diff_against(
        &self,
        worker: u32,
        medium: KvMedium,
        actual: impl IntoIterator<Item = BlockHash>,
    ) -> KvViewDiff {
        let mut actual: Vec<BlockHash> = actual.into_iter().collect();
        actual.sort_unstable();
        actual.dedup();
        let known = self.holdings(worker, medium);
        KvViewDiff {
            missing: actual
                .iter()
                .filter(|h| known.binary_search(h).is_err())
                .copied()
                .collect(),
            extra: known
                .iter()
                .filter(|h| actual.binary_search(h).is_err())
                .copied()
                .collect(),
        }
    }

    /// True when the view's idea of `worker`'s `medium` is exactly `actual`.
    pub fn matches(
        &self,
        worker: u32,
        medium: KvMedium,
        actual: impl IntoIterator<Item = BlockHash>,
    ) -> bool {
        self.diff_against(worker, medium, actual).is_empty()
    }

    /// Longest contiguous cached prefix of `content` for each of `workers` (same order).
    pub fn prefix_matches(&self, workers: &[u32], content: &PromptContent) -> Vec<PrefixMatch> {
        // Past the prompt's first unique token no other prompt's blocks can match, so the
        // walk stops there instead of hashing the rest.
        let shareable = content.shareable_len();
        let hashes = |size: u32| -> Vec<BlockHash> {
            let size = size.max(1);
            content
                .block_hashes(size)
                .take((shareable / size) as usize)
                .collect()
        };
        let gpu = hashes(self.layout.block_size);
        let chunks = if self.tiers.is_empty() {
            Vec::new()
        } else {
            hashes(self.layout.chunk_size)
        };
        self.prefix_matches_hashed(workers, &gpu, &chunks)
    }

    /// [`KvIndex::prefix_matches`] for hashes already computed at `block_size`
    /// (`gpu_hashes`) and `chunk_size` (`chunk_hashes`). Walks the hashes in
    /// order and stops per worker at its first miss.
    pub fn prefix_matches_hashed(
        &self,
        workers: &[u32],
        gpu_hashes: &[BlockHash],
        chunk_hashes: &[BlockHash],
    ) -> Vec<PrefixMatch> {
        let gpu_blocks = walk(workers, gpu_hashes, |hash, alive| {
            match self.gpu.get(&hash) {
                Some(set) => alive.retain(|&k| set.contains(workers[k])),
                None => alive.clear(),
            }
        });
        let tier_chunks = if self.tiers.is_empty() {
            vec![0; workers.len()]
        } else {
            walk(workers, chunk_hashes, |hash, alive| {
                let shared = self.tiers.iter().any(|t| match t {
                    TierEntries::Shared(s) => s.contains(&hash),
                    TierEntries::PerWorker(_) => false,
                });
                if !shared {
                    alive.retain(|&k| {
                        self.tiers.iter().any(|t| match t {
                            TierEntries::PerWorker(m) => {
                                m.get(&hash).is_some_and(|s| s.contains(workers[k]))
                            }
                            TierEntries::Shared(_) => false,
                        })
                    });
                }
            })
        };
        gpu_blocks
            .iter()
            .zip(&tier_chunks)
            .map(|(&b, &c)| PrefixMatch {
                gpu_tokens: b * self.layout.block_size,
                tier_tokens: c * self.layout.chunk_size,
            })
            .collect()
    }
}

/// Walks `hashes` in order keeping the workers (by position) that still match;
/// `step` narrows `alive` to the holders of one hash. Returns the contiguous
/// match length per worker.
fn walk(
    workers: &[u32],
    hashes: &[BlockHash],
    mut step: impl FnMut(BlockHash, &mut Vec<usize>),
) -> Vec<u32> {
    let mut matched = vec![0u32; workers.len()];
    let mut alive: Vec<usize> = (0..workers.len()).collect();
    for (i, &hash) in hashes.iter().enumerate() {
        step(hash, &mut alive);
        if alive.is_empty() {
            break;
        }
        for &k in &alive {
            matched[k] = i as u32 + 1;
        }
    }
    matched
}

/// Adds or removes `worker` as a holder of `hash`; true when that changed anything.
fn update(map: &mut BlockHashMap<WorkerSet>, hash: BlockHash, worker: u32, stored: bool) -> bool {
    if stored {
        map.entry(hash).or_default().insert(worker)
    } else {
        let Some(set) = map.get_mut(&hash) else {
            return false;
        };
        let changed = set.remove(worker);
        if set.is_empty() {
            map.remove(&hash);
        }
        changed
    }
}

fn bump(count: &mut u64, up: bool) {
    if up {
        *count += 1;
    } else {
        *count = count.saturating_sub(1);
    }
}

fn held_by(map: &BlockHashMap<WorkerSet>, worker: u32) -> Vec<BlockHash> {
    map.iter()
        .filter(|(_, s)| s.contains(worker))
        .map(|(&h, _)| h)
        .collect()
}
