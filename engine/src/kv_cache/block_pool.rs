//! GPU KV blocks as vLLM v1's `BlockPool` (`vllm/v1/core/block_pool.py`) manages them:
//! reference counts, the free queue's order and the prefix-cache index. How the blocks
//! are stored is [`BlockStore`]'s business (caching on) or [`FreeIds`]' (caching off).
//!
//! Every block with no reference sits in one free queue, and allocations take blocks from
//! its head ([`BlockPool::get_new_blocks`]). A free block may still hold cached content
//! ("free but cached"); its content is evicted only when an allocation takes it. A cache
//! hit on a free block takes it out of the queue ([`BlockPool::touch`]). When blocks are
//! freed (a request's table is handed over last block first, [`BlockPool::free_blocks`]),
//! those holding no cached content go to the head, to be reused first, and cached ones
//! join the tail, so the least recently used content goes first.
//!
//! Like vLLM, identical content computed twice is cached twice (block tables are
//! append-only, so a block is never swapped for its twin): a lookup returns the copy cached
//! first, and the hash leaves the index only with its last copy. Events are per hash:
//! `Stored` when it enters the index, `Removed` when its last copy is evicted.
//!
//! A request's private blocks (content only its own sequence has) are not indexed: they
//! are cached under its own tags only when it is preempted ([`BlockPool::cache_private`]),
//! found again by id ([`BlockPool::touch_private`]), and once it has finished nobody can
//! hit them ([`BlockPool::free_finished`]).
//!
//! vLLM also reserves block 0 as a "null block" that is never handed out; this pool has
//! no null block, so vLLM's `num_gpu_blocks = N` is `N − 1` blocks here. With caching off
//! there is no content to track: the free queue is all the state there is.
//!
//! Where the split differs from vLLM's: [`BlockPool::touch`] takes the hashes a lookup
//! matched (vLLM's takes the blocks); [`BlockPool::free_blocks`] takes a table in
//! allocation order and frees it last block first, the reversal vLLM's `KVCacheManager`
//! makes before calling its pool; and [`BlockPool::find_longest_cache_hit`] is here, where
//! vLLM has it on its `SingleTypeKVCacheManager`.

use super::free_ids::FreeIds;
use super::storage::{BlockStore, Content, Popped};
use super::table::BlockTable;
use crate::fixed_hash::BlockHashMap;
use crate::kv_events::{KvChange, KvEvent, KvMedium};
use crate::request::BlockHash;
use std::ops::Range;

/// The runs a table reserves at admission with caching on (p64-30k: 8.4 runs a table on
/// average, 97 % of tables in 16; with 8, two in five grew and were copied).
const RESERVED_RUNS: usize = 16;

/// Index of a GPU block.
pub type BlockId = u32;

/// The worker's GPU blocks, free queue and prefix-cache index.
#[derive(Debug, Clone)]
pub struct BlockPool {
    /// The blocks and their free queue (caching on).
    store: BlockStore,
    /// The free queue (caching off).
    plain: FreeIds,
    /// All blocks.
    total: u32,
    /// Blocks in the free queue.
    num_free: u32,
    /// `hash → block`: the first copy cached.
    cached: BlockHashMap<BlockId>,
    /// Later copies of indexed hashes, in the order they were cached (rare).
    copies: BlockHashMap<Vec<BlockId>>,
    enable_caching: bool,
    events: Vec<KvEvent>,
    /// Off when nobody reads the events (no prefix-aware routing): saves a push per block.
    record_events: bool,
}

impl BlockPool {
    /// A pool of `num_blocks` empty blocks; `enable_caching` switches prefix caching on.
    pub fn new(num_blocks: u32, enable_caching: bool) -> Self {
        let on = |n| if enable_caching { n } else { 0 };
        Self {
            store: BlockStore::new(on(num_blocks)),
            plain: FreeIds::new(num_blocks - on(num_blocks)),
            total: num_blocks,
            num_free: num_blocks,
            cached: BlockHashMap::default(),
            copies: BlockHashMap::default(),
            enable_caching,
            events: Vec::new(),
            record_events: true,
        }
    }

    // ---- Allocation -------------------------------------------------------------------

    /// Takes `n` blocks from the head of the free queue onto `table`, evicting any cached
    /// content they hold; false (and nothing done) if fewer than `n` are free.
    pub fn get_new_blocks(&mut self, n: u32, table: &mut BlockTable) -> bool {
        if n > self.num_free {
            return false;
        }
        self.num_free -= n;
        if !self.enable_caching {
            self.plain.pop_front(n, table.plain_mut());
            return true;
        }
        let mut left = n;
        while left > 0 {
            match self.store.popleft(left, table) {
                Popped::Block(id) => {
                    self.maybe_evict_cached_block(id);
                    self.store.incr_ref(id);
                    table.push(id);
                    left -= 1;
                }
                Popped::Fresh(k) => left -= k,
            }
        }
        true
    }

    /// Forgets block `id`'s content, if any: out of the index (the next copy, if any,
    /// takes its place); `Removed` when it was the hash's last copy.
    fn maybe_evict_cached_block(&mut self, id: BlockId) {
        let Some(content) = self.store.take_content(id) else {
            return;
        };
        let hash = content.hash;
        if !content.indexed {
            return;
        }
        if self.cached.get(&hash) == Some(&id) {
            match self.copies.get_mut(&hash) {
                Some(later) => {
                    let next = later.remove(0);
                    if later.is_empty() {
                        self.copies.remove(&hash);
                    }
                    self.cached.insert(hash, next);
                }
                None => {
                    self.cached.remove(&hash);
                    self.record(KvChange::Removed, hash);
                }
            }
        } else if let Some(later) = self.copies.get_mut(&hash) {
            later.retain(|&b| b != id);
            if later.is_empty() {
                self.copies.remove(&hash);
            }
        }
    }

    // ---- Prefix-cache hits ------------------------------------------------------------

    /// The block a lookup of `hash` finds (the copy cached first), if any.
    pub fn get_cached_block(&self, hash: BlockHash) -> Option<BlockId> {
        if !self.enable_caching {
            return None;
        }
        self.cached.get(&hash).copied()
    }

    /// How many leading `hashes` are in the prefix cache (a miss ends the prefix).
    pub fn find_longest_cache_hit(&self, hashes: &[BlockHash]) -> usize {
        if !self.enable_caching {
            return 0;
        }
        hashes
            .iter()
            .take_while(|h| self.cached.contains_key(h))
            .count()
    }

    /// Takes a reference on the cached blocks for `hashes` (all must be cached) onto
    /// `table`.
    pub fn touch(&mut self, hashes: &[BlockHash], table: &mut BlockTable) {
        for h in hashes {
            let id = self.cached[h];
            self.touch_block(id);
            table.push(id);
        }
    }

    /// Takes a reference on each of `ids` (an owner's private blocks found by id) onto
    /// `table`. Back in their owner's table they are uncached: it caches them again if it
    /// is preempted, and they die with it.
    pub fn touch_private(&mut self, ids: &[BlockId], table: &mut BlockTable) {
        for &id in ids {
            self.touch_block(id);
            let content = self.store.take_content(id);
            debug_assert!(!content.is_some_and(|c| c.indexed), "block {id} is shared");
            table.push(id);
        }
    }

    /// One more reference on cached block `id`, off the free queue if it was free.
    #[inline]
    fn touch_block(&mut self, id: BlockId) {
        if self.store.ref_cnt(id) == 0 {
            self.num_free -= 1;
            self.store.remove(id);
        }
        self.store.incr_ref(id);
    }

    // ---- Caching ----------------------------------------------------------------------

    /// Indexes the full blocks of `table` from position `num_cached_blocks` to the end of
    /// `hashes` under those hashes, filled by request `owner`, so later prompts can reuse
    /// them. No-op when caching is off; a block already cached keeps its content.
    pub fn cache_full_blocks(
        &mut self,
        table: &BlockTable,
        hashes: &[BlockHash],
        num_cached_blocks: usize,
        owner: u64,
    ) {
        if !self.enable_caching || hashes.len() <= num_cached_blocks {
            return;
        }
        let range = num_cached_blocks..hashes.len();
        for (id, &hash) in table.ids_in(range.clone()).zip(&hashes[range]) {
            self.cache_block(id, hash, owner);
        }
    }

    /// Indexes full block `id` under `hash` (a later copy if the hash is indexed already).
    fn cache_block(&mut self, id: BlockId, hash: BlockHash, owner: u64) {
        if self.store.is_cached(id) {
            return;
        }
        match self.cached.entry(hash) {
            std::collections::hash_map::Entry::Occupied(_) => {
                self.copies.entry(hash).or_default().push(id);
            }
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(id);
                self.record(KvChange::Stored, hash);
            }
        }
        self.store.set_content(id, Content::new(hash, owner, true));
    }

    /// Caches the full block `id` under its owner's private `tag` (no index entry, no
    /// event): it stays reusable by the owner until evicted. No-op when caching is off or
    /// the block is already cached.
    pub fn cache_private(&mut self, id: BlockId, tag: BlockHash, owner: u64) {
        if !self.enable_caching || self.store.is_cached(id) {
            return;
        }
        self.store.set_content(id, Content::new(tag, owner, false));
    }

    /// Takes back the caching of a referenced block whose content will not be computed
    /// after all (its request was preempted in the step that cached it).
    pub fn uncache(&mut self, id: BlockId) {
        if !self.enable_caching {
            return;
        }
        debug_assert!(self.store.ref_cnt(id) > 0, "uncache of a free block");
        self.maybe_evict_cached_block(id);
    }

    // ---- Freeing ----------------------------------------------------------------------

    /// Frees a request's block table (in allocation order), as vLLM's
    /// `KVCacheManager.free`: one reference fewer on each block, its last block first.
    /// Blocks left without a reference join the free queue: those holding no cached content
    /// at the head, in the order freed, to be reused first; cached ones at the tail. With
    /// caching off every block joins the tail (vLLM keeps recently used blocks last for
    /// GPU locality).
    pub fn free_blocks(&mut self, table: &BlockTable) {
        self.free_finished(table, 0..0);
    }

    /// Frees the block table of a request that has finished, as
    /// [`BlockPool::free_blocks`]; `table[private]` are the private blocks it filled (only
    /// it held them, once each, and the pool has them uncached): nobody can hit them
    /// again, so they join the tail as dead blocks in their place in the order.
    pub fn free_finished(&mut self, table: &BlockTable, private: Range<usize>) {
        if !self.enable_caching {
            // Nothing is cached, so nothing is private: every block goes to the tail.
            self.num_free += table.len() as u32;
            self.plain.push_back_rev(table.plain());
            return;
        }
        let batch = self.store.batch();
        self.num_free += private.len() as u32;
        let num_free = &mut self.num_free;
        let mut free_block = |store: &mut BlockStore, id| Self::free_block(store, num_free, id);
        self.store
            .for_each_rev(table, private.end..table.len(), &mut free_block);
        if !private.is_empty() {
            self.store.append_dead(table, private.clone());
        }
        self.store.for_each_rev(table, 0..private.start, free_block);
        self.store.prepend_batch(batch);
    }

    /// One reference fewer on block `id`; its last gone, the block is queued: at the tail
    /// if it holds cached content, else at the head once the whole table is seen.
    #[inline]
    fn free_block(store: &mut BlockStore, num_free: &mut u32, id: BlockId) {
        if let Some(block) = store.decr_ref(id) {
            *num_free += 1;
            if block.cached() {
                store.append(block);
            } else {
                store.defer_to_head(block);
            }
        }
    }

    // ---- Block tables -----------------------------------------------------------------

    /// A block table of `ids` in the form this pool fills: runs with caching on, plain
    /// ids with it off.
    pub fn table_of(&self, ids: &[BlockId]) -> BlockTable {
        if self.enable_caching {
            BlockTable::from_ids_as_runs(ids)
        } else {
            BlockTable::from_ids(ids)
        }
    }

    /// Reserves room in an empty `table` for `blocks` blocks in the form this pool fills:
    /// with caching on, runs of ids (a few, whatever the table's length); with it off,
    /// one id a block.
    pub(crate) fn reserve_table(&self, table: &mut BlockTable, blocks: usize) {
        if self.enable_caching {
            table.reserve(0, RESERVED_RUNS);
        } else {
            table.reserve(blocks, 0);
        }
    }

    // ---- Events -----------------------------------------------------------------------

    fn record(&mut self, change: KvChange, hash: BlockHash) {
        if self.record_events {
            self.events.push(KvEvent {
                medium: KvMedium::Gpu,
                change,
                hash,
            });
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

    // ---- Accessors --------------------------------------------------------------------

    /// Total blocks.
    pub fn num_blocks(&self) -> u32 {
        self.total
    }

    /// Blocks an allocation can take now (empty or free-but-cached).
    #[inline]
    pub fn num_free(&self) -> u32 {
        self.num_free
    }

    /// Free blocks that still hold cached content.
    pub fn num_cached_free(&self) -> u32 {
        self.store.num_cached_free()
    }

    /// Blocks referenced by at least one request.
    pub fn num_used(&self) -> u32 {
        self.num_blocks() - self.num_free()
    }

    /// Distinct hashes currently in the prefix-cache index (used or free blocks).
    pub fn num_cached(&self) -> usize {
        self.cached.len()
    }

    /// True when prefix caching is on.
    pub fn caching_enabled(&self) -> bool {
        self.enable_caching
    }

    /// The reference count of block `id` (0 while it is free).
    pub fn ref_count(&self, id: BlockId) -> u32 {
        if !self.enable_caching {
            // Unshared: one reference while not free.
            return (id < self.total && !self.plain.contains(id)) as u32;
        }
        self.store.ref_count(id)
    }

    /// True when block `id` is unreferenced (in the free queue).
    pub fn is_free(&self, id: BlockId) -> bool {
        self.ref_count(id) == 0
    }

    /// True when block `id` still holds the private content tagged `tag`.
    pub fn holds_private(&self, id: BlockId, tag: BlockHash) -> bool {
        self.store
            .content(id)
            .is_some_and(|c| !c.indexed && c.hash == tag)
    }

    /// The request that filled cached block `id` (0 if it holds nothing).
    pub fn owner(&self, id: BlockId) -> u64 {
        self.store.content(id).map_or(0, |c| c.owner)
    }

    /// The hash (or private tag) block `id` is cached under, if any.
    pub fn block_hash(&self, id: BlockId) -> Option<BlockHash> {
        self.store.content(id).map(|c| c.hash)
    }

    /// The free queue from head (allocated next) to tail (O(free blocks)); for tests. Never
    /// used blocks show as the ids they will get while no block is dead (then the ids past
    /// the used ones); dead blocks, which have no id, are left out.
    pub fn free_queue(&self) -> Vec<BlockId> {
        if self.enable_caching {
            self.store.free_queue()
        } else {
            self.plain.ids()
        }
    }

    /// Sum of all reference counts (O(blocks)); for consistency checks.
    pub fn total_refs(&self) -> u64 {
        if self.enable_caching {
            self.store.total_refs()
        } else {
            self.num_used() as u64
        }
    }

    /// Full consistency check (O(blocks)); for tests and debugging.
    pub fn check_invariants(&self) -> Result<(), String> {
        if !self.enable_caching {
            return self.check_free_ids();
        }
        self.store.check_invariants(self.num_free)?;
        for (h, &id) in &self.cached {
            if self.block_hash(id) != Some(*h) {
                return Err(format!(
                    "cache index points {h} at block {id} with another hash"
                ));
            }
        }
        for (h, ids) in &self.copies {
            if !self.cached.contains_key(h) || ids.is_empty() {
                return Err(format!("copies of {h} without a first copy"));
            }
            if ids.iter().any(|&id| self.block_hash(id) != Some(*h)) {
                return Err(format!("a copy of {h} holds another hash"));
            }
        }
        let indexed = self
            .store
            .cached_blocks()
            .filter(|(_, c)| c.indexed)
            .count();
        let listed = self.cached.len() + self.copies.values().map(Vec::len).sum::<usize>();
        if indexed != listed {
            return Err(format!("{indexed} indexed blocks, {listed} in the index"));
        }
        Ok(())
    }

    /// [`BlockPool::check_invariants`] with caching off: the free queue holds distinct ids
    /// of the pool, and nothing is cached.
    fn check_free_ids(&self) -> Result<(), String> {
        let ids = self.plain.ids();
        let mut seen = vec![false; self.total as usize];
        for &id in &ids {
            match seen.get_mut(id as usize) {
                Some(s) if !*s => *s = true,
                _ => return Err(format!("block {id} queued twice or out of the pool")),
            }
        }
        if ids.len() as u32 != self.num_free || self.plain.len() != self.num_free {
            return Err(format!(
                "free count {} but {} queued",
                self.num_free,
                ids.len()
            ));
        }
        if self.store.num_cached_free() != 0 || !self.cached.is_empty() {
            return Err("caching is off but blocks are cached".into());
        }
        Ok(())
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

    /// A new table of `n` blocks from `pool`.
    fn take(pool: &mut BlockPool, n: u32) -> BlockTable {
        let mut t = BlockTable::default();
        assert!(pool.get_new_blocks(n, &mut t));
        t
    }

    /// Caches `table`'s blocks under `hashes`, filled by `owner`.
    fn cache(pool: &mut BlockPool, table: &BlockTable, hashes: &[BlockHash], owner: u64) {
        pool.cache_full_blocks(table, hashes, 0, owner);
    }

    #[test]
    fn never_used_blocks_take_no_memory_and_keep_their_place_in_the_queue() {
        // 2^24 blocks (the most a worker may have) cost nothing until used.
        let mut big = BlockPool::new(1 << 24, true);
        assert_eq!((big.num_blocks(), big.num_free()), (1 << 24, 1 << 24));
        assert_eq!(take(&mut big, 3).to_vec(), [0, 1, 2]);
        assert_eq!(big.store.records(), 3);
        big.check_invariants().unwrap();
        // The queue is what it would be with every block stored: freed blocks without
        // content ahead of the never-used ones, cached ones behind them.
        let mut pool = BlockPool::new(5, true);
        let t = take(&mut pool, 2); // 0, 1
        cache(&mut pool, &t, &[7], 1);
        pool.free_blocks(&t); // 1 (no content) to the head, 0 (cached) to the tail
        assert_eq!(pool.free_queue(), [1, 2, 3, 4, 0]);
        assert_eq!(take(&mut pool, 4).to_vec(), [1, 2, 3, 4]);
        assert_eq!(pool.free_queue(), [0]);
        pool.check_invariants().unwrap();
    }

    #[test]
    fn freed_blocks_stay_cached_until_evicted_lru() {
        let mut pool = BlockPool::new(4, true);
        let a = take(&mut pool, 2); // blocks 0, 1
        let b = take(&mut pool, 2); // blocks 2, 3
        cache(&mut pool, &a, &[100, 101], 1);
        cache(&mut pool, &b, &[200], 2);
        pool.free_blocks(&a); // queue: 1, 0 (tail block first)
        pool.free_blocks(&b); // 3 holds nothing: to the head; 2 to the tail
        assert_eq!(pool.free_queue(), [3, 1, 0, 2]);
        assert_eq!((pool.num_free(), pool.num_cached_free()), (4, 3));
        // A repeat of prompt a hits both blocks and takes them out of the queue.
        assert_eq!(pool.find_longest_cache_hit(&[100, 101, 102]), 2);
        let mut again = BlockTable::default();
        pool.touch(&[100, 101], &mut again);
        assert_eq!(again.to_vec(), a.to_vec());
        assert_eq!((pool.num_free(), pool.num_cached_free()), (2, 1));
        pool.free_blocks(&again); // queue: 3, 2, 1, 0
                                  // A new allocation of 3 takes 3 (empty), 2 (evicts 200), 1 (evicts 101).
        assert_eq!(take(&mut pool, 3).to_vec(), [3, 2, 1]);
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
        assert_eq!(pool.find_longest_cache_hit(&[100, 101]), 1);
        assert!(pool.take_events().is_empty());
        pool.check_invariants().unwrap();
    }

    #[test]
    fn a_finished_requests_private_blocks_keep_their_lru_place_without_an_id() {
        let mut pool = BlockPool::new(4, true);
        let a = take(&mut pool, 2); // 0, 1
        cache(&mut pool, &a, &[100], 1);
        // Last block first: the dead block 1 (private: never cached), then block 0.
        pool.free_finished(&a, 1..2);
        assert_eq!((pool.num_free(), pool.num_cached_free()), (4, 2));
        // The dead block has no id, and its record went with it (the highest id): the
        // never-used blocks will get ids 1 and 2.
        assert_eq!(pool.free_queue(), [1, 2, 0]);
        assert_eq!(pool.store.records(), 1);
        pool.check_invariants().unwrap();
        // Two never-used blocks, then the dead one; hash 100 (behind it) stays cached.
        let mut b = take(&mut pool, 3);
        assert_eq!(b.to_vec(), [1, 2, 3]); // the lowest ids first
        assert_eq!(
            (pool.get_cached_block(100), pool.num_cached_free()),
            (Some(0), 1)
        );
        pool.check_invariants().unwrap();
        assert!(pool.get_new_blocks(1, &mut b)); // evicts 100
        assert_eq!(pool.get_cached_block(100), None);
        assert_eq!(
            pool.take_events(),
            [ev(KvChange::Stored, 100), ev(KvChange::Removed, 100)]
        );
        assert_eq!(pool.store.records(), 4);
        pool.check_invariants().unwrap();
    }

    #[test]
    fn a_finished_requests_private_blocks_have_no_reference_left() {
        // Block 2 stays in use, so the dead blocks' records stay too: they must not read
        // as referenced, whatever they hold.
        let mut pool = BlockPool::new(4, true);
        let a = take(&mut pool, 2); // 0, 1
        let b = take(&mut pool, 1); // 2
        pool.free_finished(&a, 0..2);
        assert_eq!(pool.store.records(), 3);
        assert_eq!((pool.ref_count(0), pool.ref_count(1)), (0, 0));
        assert!(pool.is_free(0) && pool.is_free(1));
        assert_eq!((pool.ref_count(2), pool.ref_count(3)), (1, 0));
        assert_eq!(pool.total_refs(), 1);
        // Handed out again, they count one reference each.
        let c = take(&mut pool, 2);
        assert_eq!(c.to_vec(), [0, 1]);
        assert_eq!((pool.ref_count(0), pool.ref_count(1)), (1, 1));
        pool.free_blocks(&b);
        pool.free_blocks(&c);
        assert_eq!((pool.total_refs(), pool.num_free()), (0, 4));
        pool.check_invariants().unwrap();
    }

    #[test]
    fn records_of_a_busy_moment_are_handed_back_once_the_highest_ids_die() {
        let mut pool = BlockPool::new(10_000, true);
        let a = take(&mut pool, 3000); // 0..3000
        let b = take(&mut pool, 100); // 3000..3100
        pool.free_finished(&a, 0..3000);
        // Block 3099 is in use: every record stays.
        assert_eq!(pool.store.records(), 3100);
        pool.check_invariants().unwrap();
        // The lowest spare ids.
        assert_eq!(take(&mut pool, 10).to_vec(), (0..10).collect::<Vec<_>>());
        pool.free_finished(&b, 0..100);
        // 10..3100 are spare: the records above block 9 go.
        assert_eq!(pool.store.records(), 10);
        pool.check_invariants().unwrap();
        // Ids are handed out as before: the lowest free first.
        assert_eq!(take(&mut pool, 5).to_vec(), (10..15).collect::<Vec<_>>());
        assert_eq!(pool.num_free(), 10_000 - 15);
        pool.check_invariants().unwrap();
    }

    #[test]
    fn shared_blocks_are_reference_counted() {
        let mut pool = BlockPool::new(2, true);
        let a = take(&mut pool, 1);
        cache(&mut pool, &a, &[7], 1);
        let mut b = BlockTable::default();
        let id = a.to_vec()[0];
        assert!(!pool.is_free(id)); // still in use by a
        pool.touch(&[7], &mut b);
        assert_eq!(pool.ref_count(id), 2);
        pool.free_blocks(&a);
        assert_eq!((pool.ref_count(id), pool.num_free()), (1, 1));
        pool.free_blocks(&b);
        assert_eq!((pool.ref_count(id), pool.num_free()), (0, 2));
        pool.check_invariants().unwrap();
    }

    #[test]
    fn allocation_beyond_free_blocks_changes_nothing() {
        let mut pool = BlockPool::new(3, true);
        let mut t = BlockTable::default();
        assert!(!pool.get_new_blocks(4, &mut t));
        assert!(t.is_empty());
        assert_eq!(pool.num_free(), 3);
    }

    #[test]
    fn caching_off_records_nothing_and_frees_to_the_tail() {
        let mut pool = BlockPool::new(3, false);
        let t = take(&mut pool, 2);
        cache(&mut pool, &t, &[9], 1);
        assert_eq!(pool.find_longest_cache_hit(&[9]), 0);
        assert_eq!(pool.pending_events(), 0);
        assert_eq!((pool.ref_count(0), pool.ref_count(2)), (1, 0));
        pool.free_blocks(&t);
        assert_eq!((pool.num_cached_free(), pool.ref_count(0)), (0, 0));
        assert_eq!(pool.free_queue(), [2, 1, 0]);
        pool.check_invariants().unwrap();
    }

    #[test]
    fn a_second_copy_is_cached_and_outlives_the_first() {
        // Two requests computing the same block concurrently: both copies are cached, a
        // lookup finds the first, and the hash leaves the index with the last copy.
        let mut pool = BlockPool::new(3, true);
        let t = take(&mut pool, 2);
        cache(&mut pool, &t, &[5, 5], 1);
        assert_eq!((pool.num_cached(), pool.get_cached_block(5)), (1, Some(0)));
        // Freed in allocation order (a table of 1, 0 freed last first): queue 2, 0, 1.
        pool.free_blocks(&pool.table_of(&[1, 0]));
        assert_eq!(pool.num_cached_free(), 2);
        let mut u = take(&mut pool, 2); // 2, then 0: the first copy goes, the second takes over
        assert_eq!(pool.get_cached_block(5), Some(1));
        assert_eq!(pool.take_events(), [ev(KvChange::Stored, 5)]);
        assert!(pool.get_new_blocks(1, &mut u)); // 1: the last copy
        assert_eq!(pool.get_cached_block(5), None);
        assert_eq!(pool.take_events(), [ev(KvChange::Removed, 5)]);
        pool.check_invariants().unwrap();
    }

    #[test]
    fn uncache_forgets_content_that_was_never_computed() {
        let mut pool = BlockPool::new(2, true);
        let t = take(&mut pool, 1);
        cache(&mut pool, &t, &[8], 1);
        pool.uncache(t.to_vec()[0]);
        assert_eq!(pool.get_cached_block(8), None);
        pool.free_blocks(&t);
        assert_eq!(pool.num_cached_free(), 0);
        assert_eq!(
            pool.take_events(),
            [ev(KvChange::Stored, 8), ev(KvChange::Removed, 8)]
        );
        pool.check_invariants().unwrap();
    }
}
