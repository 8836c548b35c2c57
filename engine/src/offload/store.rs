//! One instance of one tier: a capacity-bounded LRU set of chunk hashes.

use crate::fixed_hash::BlockHashMap;
use crate::kv_events::{KvChange, KvEvent, KvMedium};
use crate::request::BlockHash;
use std::collections::BTreeMap;

/// The chunks one tier instance holds, evicted least recently used first.
#[derive(Debug, Clone)]
pub struct TierStore {
    tier: u8,
    capacity: u64,
    /// Use counter, bumped on every store or touch: larger = more recent.
    clock: u64,
    /// Chunk → its last-use stamp.
    stamps: BlockHashMap<u64>,
    /// Last-use stamp → chunk; the first entry is the LRU victim.
    lru: BTreeMap<u64, BlockHash>,
}

impl TierStore {
    /// An empty store for tier number `tier` holding at most `capacity` chunks.
    pub fn new(tier: u8, capacity: u64) -> Self {
        Self {
            tier,
            capacity,
            clock: 0,
            stamps: BlockHashMap::default(),
            lru: BTreeMap::new(),
        }
    }

    /// Capacity in chunks.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Chunks held.
    pub fn len(&self) -> usize {
        self.stamps.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.stamps.is_empty()
    }

    /// True when the chunk is held.
    pub fn contains(&self, hash: BlockHash) -> bool {
        self.stamps.contains_key(&hash)
    }

    /// Marks a held chunk as just used; false if it is not held.
    pub fn touch(&mut self, hash: BlockHash) -> bool {
        let Some(stamp) = self.stamps.get_mut(&hash) else {
            return false;
        };
        self.lru.remove(stamp);
        self.clock += 1;
        *stamp = self.clock;
        self.lru.insert(self.clock, hash);
        true
    }

    /// Stores a chunk (or touches it if held), evicting the least recently used
    /// chunk when full. Appends `Removed`/`Stored` events for what changed.
    pub fn store(&mut self, hash: BlockHash, events: &mut Vec<KvEvent>) {
        if self.capacity == 0 || self.touch(hash) {
            return;
        }
        if self.stamps.len() as u64 >= self.capacity {
            if let Some((_, victim)) = self.lru.pop_first() {
                self.stamps.remove(&victim);
                events.push(self.event(KvChange::Removed, victim));
            }
        }
        self.clock += 1;
        self.stamps.insert(hash, self.clock);
        self.lru.insert(self.clock, hash);
        events.push(self.event(KvChange::Stored, hash));
    }

    /// Held chunks from least to most recently used.
    pub fn lru_order(&self) -> Vec<BlockHash> {
        self.lru.values().copied().collect()
    }

    fn event(&self, change: KvChange, hash: BlockHash) -> KvEvent {
        KvEvent {
            medium: KvMedium::Tier(self.tier),
            change,
            hash,
        }
    }
}
