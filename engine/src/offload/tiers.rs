//! The cluster's offload tiers: per-worker instances and shared instances, in
//! lookup order.
//!
//! Policy choices (SPEC §5 leaves them open):
//! - **Store** writes a completed prompt's chunks to *every* tier (write-through,
//!   as LMCache does with several backends); each tier evicts LRU on its own.
//!   The chunks are stored last-to-first, so a prompt's leading chunks are the
//!   most recently used and a full tier evicts tails before the prefixes that
//!   other prompts share.
//! - **Lookup** walks the prompt's chunks in order; each chunk is served by the
//!   fastest (first) tier that holds it for this worker, and the prefix ends at
//!   the first chunk no tier holds. The hit says how many chunks come from each
//!   tier, so the worker can fetch each tier's part on that tier's link and be
//!   ready when the last part lands.

use crate::kv_events::KvEvent;
use crate::offload::{OffloadConfig, StoreWhen, TierConfig, TierScope, TierStore};
use crate::request::BlockHash;
use serde::Serialize;
use std::collections::BTreeMap;

/// The contiguous prefix the tiers can supply for one prompt on one worker.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct TierHit {
    /// Chunks in the contiguous prefix.
    pub chunks: u32,
    /// Tokens in the contiguous prefix (`chunks · chunk_size`).
    pub tokens: u32,
    /// Chunks served by each tier (index = tier number).
    pub per_tier: Vec<u32>,
}

impl TierHit {
    /// The slowest (deepest) tier involved, if any chunk hit.
    pub fn deepest_tier(&self) -> Option<u8> {
        self.per_tier.iter().rposition(|&c| c > 0).map(|t| t as u8)
    }
}

#[derive(Debug, Clone)]
enum Instances {
    PerWorker(BTreeMap<u32, TierStore>),
    Shared(TierStore),
}

/// All offload tiers of the cluster.
#[derive(Debug, Clone)]
pub struct OffloadTiers {
    configs: Vec<TierConfig>,
    chunk_size: u32,
    chunk_bytes: f64,
    store: StoreWhen,
    capacities: Vec<u64>,
    instances: Vec<Instances>,
}

impl OffloadTiers {
    /// Empty tiers for `config`, with chunks of `chunk_size · kv_bytes_per_token` bytes.
    pub fn new(config: &OffloadConfig, kv_bytes_per_token: f64) -> Self {
        let chunk_size = config.chunk_size.max(1);
        let chunk_bytes = chunk_size as f64 * kv_bytes_per_token;
        let capacities: Vec<u64> = config
            .tiers
            .iter()
            .map(|t| t.capacity_chunks(chunk_bytes))
            .collect();
        let instances = config
            .tiers
            .iter()
            .enumerate()
            .map(|(i, t)| match t.scope {
                TierScope::PerWorker => Instances::PerWorker(BTreeMap::new()),
                TierScope::Shared => Instances::Shared(TierStore::new(i as u8, capacities[i])),
            })
            .collect();
        Self {
            configs: config.tiers.clone(),
            chunk_size,
            chunk_bytes,
            store: config.store,
            capacities,
            instances,
        }
    }

    /// When workers write KV to the tiers.
    pub fn store_when(&self) -> StoreWhen {
        self.store
    }

    /// Tokens per chunk.
    pub fn chunk_size(&self) -> u32 {
        self.chunk_size
    }

    /// Bytes per chunk.
    pub fn chunk_bytes(&self) -> f64 {
        self.chunk_bytes
    }

    /// Number of tiers.
    pub fn len(&self) -> usize {
        self.configs.len()
    }

    /// True when offloading is off (no tiers).
    pub fn is_empty(&self) -> bool {
        self.configs.is_empty()
    }

    /// Tier `tier`'s configuration.
    pub fn config(&self, tier: u8) -> Option<&TierConfig> {
        self.configs.get(tier as usize)
    }

    /// Capacity of one instance of tier `tier`, in chunks.
    pub fn capacity_chunks(&self, tier: u8) -> u64 {
        self.capacities.get(tier as usize).copied().unwrap_or(0)
    }

    /// Writes a completed prompt's chunk hashes (at `chunk_size`) from `worker`
    /// to every tier, appending the resulting events (to go in `worker`'s next batch).
    pub fn store(&mut self, worker: u32, chunk_hashes: &[BlockHash], events: &mut Vec<KvEvent>) {
        for tier in 0..self.instances.len() {
            self.store_in(worker, tier as u8, chunk_hashes, events);
        }
    }

    /// Writes a completed prompt's chunk hashes from `worker` to tier `tier` only.
    pub fn store_in(
        &mut self,
        worker: u32,
        tier: u8,
        chunk_hashes: &[BlockHash],
        events: &mut Vec<KvEvent>,
    ) {
        let i = tier as usize;
        let Some(inst) = self.instances.get_mut(i) else {
            return;
        };
        let store = match inst {
            Instances::PerWorker(map) => map
                .entry(worker)
                .or_insert_with(|| TierStore::new(tier, self.capacities[i])),
            Instances::Shared(s) => s,
        };
        for &h in chunk_hashes.iter().rev() {
            store.store(h, events);
        }
    }

    /// How many of `chunk_hashes` tier `tier` does not hold for `worker` (what writing them
    /// there moves).
    pub fn missing(&self, worker: u32, tier: u8, chunk_hashes: &[BlockHash]) -> u32 {
        let t = tier as usize;
        if t >= self.instances.len() {
            return 0;
        }
        chunk_hashes
            .iter()
            .filter(|&&h| !self.holds(worker, t, h))
            .count() as u32
    }

    /// The contiguous prefix of `chunk_hashes` the tiers can supply to `worker`.
    pub fn lookup(&self, worker: u32, chunk_hashes: &[BlockHash]) -> TierHit {
        let mut per_tier = vec![0u32; self.instances.len()];
        let mut chunks = 0u32;
        for &h in chunk_hashes {
            let Some(t) = (0..self.instances.len()).find(|&t| self.holds(worker, t, h)) else {
                break;
            };
            per_tier[t] += 1;
            chunks += 1;
        }
        TierHit {
            chunks,
            tokens: chunks * self.chunk_size,
            per_tier,
        }
    }

    /// Marks the chunks of `hit` as just used in the tiers that serve them (a fetch is a use).
    pub fn touch(&mut self, worker: u32, chunk_hashes: &[BlockHash], hit: &TierHit) {
        for &h in chunk_hashes.iter().take(hit.chunks as usize).rev() {
            if let Some(t) = (0..self.instances.len()).find(|&t| self.holds(worker, t, h)) {
                if let Some(store) = self.instance_mut(worker, t) {
                    store.touch(h);
                }
            }
        }
    }

    /// Bytes to fetch from each tier for `hit`, as `(tier, bytes)` for tiers with a share.
    pub fn fetch_plan(&self, hit: &TierHit) -> Vec<(u8, f64)> {
        hit.per_tier
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(t, &c)| (t as u8, c as f64 * self.chunk_bytes))
            .collect()
    }

    /// True when tier `tier` holds `hash` where `worker` can read it.
    pub fn contains(&self, worker: u32, tier: u8, hash: BlockHash) -> bool {
        self.holds(worker, tier as usize, hash)
    }

    /// The chunks of tier `tier` readable by `worker`, least recently used first.
    pub fn contents(&self, worker: u32, tier: u8) -> Vec<BlockHash> {
        match self.instances.get(tier as usize) {
            Some(Instances::PerWorker(map)) => {
                map.get(&worker).map(|s| s.lru_order()).unwrap_or_default()
            }
            Some(Instances::Shared(s)) => s.lru_order(),
            None => Vec::new(),
        }
    }

    /// Drops `worker`'s per-worker tier instances (it left); shared tiers keep their data.
    pub fn remove_worker(&mut self, worker: u32) {
        for inst in &mut self.instances {
            if let Instances::PerWorker(map) = inst {
                map.remove(&worker);
            }
        }
    }

    fn holds(&self, worker: u32, tier: usize, hash: BlockHash) -> bool {
        match &self.instances[tier] {
            Instances::PerWorker(map) => map.get(&worker).is_some_and(|s| s.contains(hash)),
            Instances::Shared(s) => s.contains(hash),
        }
    }

    fn instance_mut(&mut self, worker: u32, tier: usize) -> Option<&mut TierStore> {
        match &mut self.instances[tier] {
            Instances::PerWorker(map) => map.get_mut(&worker),
            Instances::Shared(s) => Some(s),
        }
    }
}
