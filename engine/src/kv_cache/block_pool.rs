//! GPU KV blocks: reference counts, the free queue (LRU) and the prefix-cache index.
//!
//! Mirrors vLLM v1's `BlockPool`: every block with no reference sits in one
//! free queue, oldest-freed first. A free block may still hold cached content
//! ("free but cached"); it is reused — and its content evicted — only when it
//! reaches the head of the queue and a new allocation needs it. A cache hit on
//! a free block takes it out of the queue. Every operation costs O(blocks
//! touched): the queue is an intrusive doubly-linked list over block indices,
//! and `hash → block` is a hash map used for lookups only.

use crate::fixed_hash::BlockHashMap;
use crate::kv_events::{KvChange, KvEvent, KvMedium};
use crate::request::BlockHash;

/// Index of a GPU block.
pub type BlockId = u32;

const NIL: u32 = u32::MAX;

#[derive(Debug, Clone)]
struct Block {
    ref_cnt: u32,
    /// The chained hash of the content (or a private tag), while the block is cached.
    hash: Option<BlockHash>,
    /// The hash is in the `hash → block` index (shareable content). Private blocks (content
    /// only their owner's prompt has) are cached without an index entry or an event: only
    /// the owner can ever hit them, after a preemption, and it remembers their ids.
    indexed: bool,
    /// Free-queue links (meaningful only while `ref_cnt == 0`).
    prev: u32,
    next: u32,
}

/// The worker's GPU blocks, free queue and prefix-cache index.
#[derive(Debug, Clone)]
pub struct BlockPool {
    blocks: Vec<Block>,
    /// Free queue: `head` is evicted first, freed blocks join at `tail`.
    head: u32,
    tail: u32,
    num_free: u32,
    num_cached_free: u32,
    cached: BlockHashMap<BlockId>,
    enable_caching: bool,
    events: Vec<KvEvent>,
    /// Off when nobody reads the events (no prefix-aware routing): saves a push per block.
    record_events: bool,
}

impl BlockPool {
    /// A pool of `num_blocks` empty blocks; `enable_caching` switches prefix caching on.
    pub fn new(num_blocks: u32, enable_caching: bool) -> Self {
        let n = num_blocks as usize;
        let blocks = (0..num_blocks)
            .map(|i| Block {
                ref_cnt: 0,
                hash: None,
                indexed: false,
                prev: if i == 0 { NIL } else { i - 1 },
                next: if i + 1 == num_blocks { NIL } else { i + 1 },
            })
            .collect();
        Self {
            blocks,
            head: if n == 0 { NIL } else { 0 },
            tail: if n == 0 { NIL } else { num_blocks - 1 },
            num_free: num_blocks,
            num_cached_free: 0,
            cached: BlockHashMap::default(),
            enable_caching,
            events: Vec::new(),
            record_events: true,
        }
    }

    /// Total blocks.
    pub fn num_blocks(&self) -> u32 {
        self.blocks.len() as u32
    }

    /// Blocks an allocation can take now (empty or free-but-cached).
    pub fn num_free(&self) -> u32 {
        self.num_free
    }

    /// Free blocks that still hold cached content.
    pub fn num_cached_free(&self) -> u32 {
        self.num_cached_free
    }

    /// Blocks referenced by at least one request.
    pub fn num_used(&self) -> u32 {
        self.num_blocks() - self.num_free
    }

    /// Blocks currently indexed in the prefix cache (used or free).
    pub fn num_cached(&self) -> usize {
        self.cached.len()
    }

    /// True when prefix caching is on.
    pub fn caching_enabled(&self) -> bool {
        self.enable_caching
    }

    /// How many leading `hashes` are in the prefix cache (a miss ends the prefix).
    pub fn cached_prefix(&self, hashes: &[BlockHash]) -> usize {
        if !self.enable_caching {
            return 0;
        }
        hashes
            .iter()
            .take_while(|h| self.cached.contains_key(h))
            .count()
    }

    /// Of the cached blocks for `hashes` (all must be cached), how many are free —
    /// touching them removes them from the free queue.
    pub fn free_among_cached(&self, hashes: &[BlockHash]) -> u32 {
        hashes
            .iter()
            .filter(|h| self.blocks[self.cached[h] as usize].ref_cnt == 0)
            .count() as u32
    }

    /// Takes a reference on the cached blocks for `hashes` (all must be cached) and appends them to `table`.
    pub fn touch(&mut self, hashes: &[BlockHash], table: &mut Vec<BlockId>) {
        for h in hashes {
            let id = self.cached[h];
            self.take_ref(id);
            table.push(id);
        }
    }

    /// One more reference on a cached block (off the free queue if it was free).
    fn take_ref(&mut self, id: BlockId) {
        if self.blocks[id as usize].ref_cnt == 0 {
            self.unlink(id);
            self.num_free -= 1;
            self.num_cached_free -= 1;
        }
        self.blocks[id as usize].ref_cnt += 1;
    }

    /// Allocates `n` fresh blocks onto `table`, evicting cached content LRU; false (and nothing done) if too few are free.
    pub fn allocate(&mut self, n: u32, table: &mut Vec<BlockId>) -> bool {
        if n > self.num_free {
            return false;
        }
        for _ in 0..n {
            let id = self.head;
            self.unlink(id);
            self.num_free -= 1;
            let block = &mut self.blocks[id as usize];
            block.ref_cnt = 1;
            if let Some(hash) = block.hash.take() {
                self.num_cached_free -= 1;
                if std::mem::take(&mut block.indexed) {
                    self.cached.remove(&hash);
                    if self.record_events {
                        self.events.push(KvEvent {
                            medium: KvMedium::Gpu,
                            change: KvChange::Removed,
                            hash,
                        });
                    }
                }
            }
            table.push(id);
        }
        true
    }

    /// Drops one reference on each block of `table`, last block first, so a
    /// request's tail blocks are evicted before its (more shareable) head blocks.
    pub fn free(&mut self, table: &[BlockId]) {
        for &id in table.iter().rev() {
            let block = &mut self.blocks[id as usize];
            debug_assert!(block.ref_cnt > 0, "block {id} freed twice");
            block.ref_cnt -= 1;
            if block.ref_cnt == 0 {
                if block.hash.is_some() {
                    self.num_cached_free += 1;
                }
                self.num_free += 1;
                self.push_back(id);
            }
        }
    }

    /// Indexes the full block `id` under `hash` so later prompts can reuse it.
    /// No-op when caching is off, the block is already cached, or another block holds that hash.
    pub fn cache_block(&mut self, id: BlockId, hash: BlockHash) {
        if !self.enable_caching || self.blocks[id as usize].hash.is_some() {
            return;
        }
        match self.cached.entry(hash) {
            std::collections::hash_map::Entry::Occupied(_) => return,
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(id);
            }
        }
        let block = &mut self.blocks[id as usize];
        block.hash = Some(hash);
        block.indexed = true;
        if self.record_events {
            self.events.push(KvEvent {
                medium: KvMedium::Gpu,
                change: KvChange::Stored,
                hash,
            });
        }
    }

    /// Caches the full block `id` under its owner's private `tag` (no index entry, no
    /// event): it stays reusable by the owner until evicted. No-op when caching is off or
    /// the block is already cached.
    pub fn cache_private(&mut self, id: BlockId, tag: BlockHash) {
        let block = &mut self.blocks[id as usize];
        if !self.enable_caching || block.hash.is_some() {
            return;
        }
        block.hash = Some(tag);
    }

    /// True when block `id` still holds the private content tagged `tag`.
    pub fn holds_private(&self, id: BlockId, tag: BlockHash) -> bool {
        let b = &self.blocks[id as usize];
        !b.indexed && b.hash == Some(tag)
    }

    /// Of the blocks `ids`, how many are free (touching them takes them off the free queue).
    pub fn free_among(&self, ids: &[BlockId]) -> u32 {
        ids.iter()
            .filter(|&&id| self.blocks[id as usize].ref_cnt == 0)
            .count() as u32
    }

    /// Takes a reference on each block of `ids` (cached blocks found by id) onto `table`.
    pub fn touch_ids(&mut self, ids: &[BlockId], table: &mut Vec<BlockId>) {
        for &id in ids {
            self.take_ref(id);
            table.push(id);
        }
    }

    /// Turns recording of stored/removed events on or off (on by default).
    pub fn set_record_events(&mut self, on: bool) {
        self.record_events = on;
        if !on {
            self.events.clear();
        }
    }

    /// Drains the stored/removed events recorded since the last call, in order.
    pub fn take_events(&mut self) -> Vec<KvEvent> {
        std::mem::take(&mut self.events)
    }

    /// Events recorded and not yet drained.
    pub fn pending_events(&self) -> usize {
        self.events.len()
    }

    /// The reference count of block `id`.
    pub fn ref_count(&self, id: BlockId) -> u32 {
        self.blocks[id as usize].ref_cnt
    }

    /// Sum of all reference counts (O(blocks)); for consistency checks.
    pub fn total_refs(&self) -> u64 {
        self.blocks.iter().map(|b| b.ref_cnt as u64).sum()
    }

    /// Full consistency check (O(blocks)); for tests and debugging.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut walked = 0u32;
        let mut cached_free = 0u32;
        let mut cur = self.head;
        let mut prev = NIL;
        while cur != NIL {
            let b = &self.blocks[cur as usize];
            if b.ref_cnt != 0 {
                return Err(format!(
                    "block {cur} in free queue with ref_cnt {}",
                    b.ref_cnt
                ));
            }
            if b.prev != prev {
                return Err(format!("block {cur} has a broken back link"));
            }
            cached_free += b.hash.is_some() as u32;
            walked += 1;
            prev = cur;
            cur = b.next;
        }
        if prev != self.tail {
            return Err("free queue tail is wrong".into());
        }
        let zero = self.blocks.iter().filter(|b| b.ref_cnt == 0).count() as u32;
        if walked != self.num_free || zero != self.num_free {
            return Err(format!(
                "free count {} but {walked} queued and {zero} unreferenced",
                self.num_free
            ));
        }
        if cached_free != self.num_cached_free {
            return Err(format!(
                "cached-free count {} but {cached_free} found",
                self.num_cached_free
            ));
        }
        for (h, &id) in &self.cached {
            if self.blocks[id as usize].hash != Some(*h) {
                return Err(format!(
                    "cache index points {h} at block {id} with another hash"
                ));
            }
        }
        Ok(())
    }

    fn unlink(&mut self, id: BlockId) {
        let (prev, next) = {
            let b = &self.blocks[id as usize];
            (b.prev, b.next)
        };
        if prev == NIL {
            self.head = next;
        } else {
            self.blocks[prev as usize].next = next;
        }
        if next == NIL {
            self.tail = prev;
        } else {
            self.blocks[next as usize].prev = prev;
        }
        let b = &mut self.blocks[id as usize];
        b.prev = NIL;
        b.next = NIL;
    }

    fn push_back(&mut self, id: BlockId) {
        let tail = self.tail;
        {
            let b = &mut self.blocks[id as usize];
            b.prev = tail;
            b.next = NIL;
        }
        if tail == NIL {
            self.head = id;
        } else {
            self.blocks[tail as usize].next = id;
        }
        self.tail = id;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(change: KvChange, hash: BlockHash) -> KvEvent {
        KvEvent {
            medium: KvMedium::Gpu,
            change,
            hash,
        }
    }

    #[test]
    fn freed_blocks_stay_cached_until_evicted_lru() {
        let mut pool = BlockPool::new(4, true);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        assert!(pool.allocate(2, &mut a)); // blocks 0, 1
        assert!(pool.allocate(2, &mut b)); // blocks 2, 3
        pool.cache_block(a[0], 100);
        pool.cache_block(a[1], 101);
        pool.cache_block(b[0], 200);
        pool.free(&a); // queue: 1, 0 (tail block first)
        pool.free(&b); // queue: 1, 0, 3, 2
        assert_eq!((pool.num_free(), pool.num_cached_free()), (4, 3));
        // A repeat of prompt a hits both blocks and takes them out of the queue.
        assert_eq!(pool.cached_prefix(&[100, 101, 102]), 2);
        let mut again = Vec::new();
        assert_eq!(pool.free_among_cached(&[100, 101]), 2);
        pool.touch(&[100, 101], &mut again);
        assert_eq!(again, a);
        assert_eq!((pool.num_free(), pool.num_cached_free()), (2, 1));
        pool.free(&again); // queue: 3, 2, 1, 0
                           // A new allocation of 3 takes 3 (uncached), 2 (evicts 200), 1 (evicts 101).
        let mut c = Vec::new();
        assert!(pool.allocate(3, &mut c));
        assert_eq!(c, [3, 2, 1]);
        assert_eq!(
            pool.take_events(),
            [
                ev(KvChange::Stored, 100),
                ev(KvChange::Stored, 101),
                ev(KvChange::Stored, 200),
                ev(KvChange::Removed, 200),
                ev(KvChange::Removed, 101),
            ]
        );
        assert_eq!(pool.cached_prefix(&[100, 101]), 1);
        assert!(pool.take_events().is_empty());
        pool.check_invariants().unwrap();
    }

    #[test]
    fn shared_blocks_are_reference_counted() {
        let mut pool = BlockPool::new(2, true);
        let mut a = Vec::new();
        pool.allocate(1, &mut a);
        pool.cache_block(a[0], 7);
        let mut b = Vec::new();
        assert_eq!(pool.free_among_cached(&[7]), 0); // still in use by a
        pool.touch(&[7], &mut b);
        assert_eq!(pool.ref_count(a[0]), 2);
        pool.free(&a);
        assert_eq!((pool.ref_count(b[0]), pool.num_free()), (1, 1));
        pool.free(&b);
        assert_eq!((pool.ref_count(b[0]), pool.num_free()), (0, 2));
        pool.check_invariants().unwrap();
    }

    #[test]
    fn allocation_beyond_free_blocks_changes_nothing() {
        let mut pool = BlockPool::new(3, true);
        let mut t = Vec::new();
        assert!(!pool.allocate(4, &mut t));
        assert!(t.is_empty());
        assert_eq!(pool.num_free(), 3);
    }

    #[test]
    fn caching_off_records_nothing() {
        let mut pool = BlockPool::new(2, false);
        let mut t = Vec::new();
        pool.allocate(1, &mut t);
        pool.cache_block(t[0], 9);
        assert_eq!(pool.cached_prefix(&[9]), 0);
        assert_eq!(pool.pending_events(), 0);
        pool.free(&t);
        assert_eq!(pool.num_cached_free(), 0);
    }

    #[test]
    fn a_hash_is_indexed_once() {
        // Two requests computing the same block concurrently: only the first is cached.
        let mut pool = BlockPool::new(2, true);
        let mut t = Vec::new();
        pool.allocate(2, &mut t);
        pool.cache_block(t[0], 5);
        pool.cache_block(t[1], 5);
        assert_eq!(pool.num_cached(), 1);
        pool.free(&t);
        assert_eq!(pool.num_cached_free(), 1);
        pool.check_invariants().unwrap();
    }
}
