//! GPU KV blocks: reference counts, the free queue and the prefix-cache index.
//!
//! Mirrors vLLM v1's `BlockPool`: every block with no reference sits in one free queue
//! and allocations take blocks from its head. A free block may still hold cached content
//! ("free but cached"); its content is evicted only when an allocation takes it. A cache
//! hit on a free block takes it out of the queue. When blocks are freed (a request's table
//! is handed over last block first), those holding no cached content go to the head, to be
//! reused first, and cached ones join the tail, so the least recently used content goes
//! first. Every operation costs O(blocks touched, amortised): the queue is a ring of block
//! ids where a block taken out of the middle (a cache hit) leaves a stale entry behind,
//! skipped when it reaches the head and swept out when stale entries outnumber live ones.
//! (An intrusive linked list did the same in O(1) but chased a pointer into a random block
//! per allocation: the cache misses were over half of a large run's time.) `hash → block`
//! is a hash map used for lookups only.
//!
//! Like vLLM, identical content computed twice is cached twice (block tables are
//! append-only, so a block is never swapped for its twin): a lookup returns the copy cached
//! first, and the hash leaves the index only with its last copy. Events are per hash:
//! `Stored` when it enters the index, `Removed` when its last copy is evicted.
//!
//! vLLM also reserves block 0 as a "null block" that is never handed out; this pool has
//! no null block, so vLLM's `num_gpu_blocks = N` is `N − 1` blocks here.
//!
//! Blocks never used yet are not stored: they stand in the free queue as one node, in id
//! order, behind the freed blocks without content and ahead of the cached ones (where the
//! queue that starts as every block in order keeps them). Memory therefore follows the
//! blocks a run touches, not the millions a small model on a large GPU is given.
//!
//! A finished request's private blocks (content only it could ever hit) are dead: they
//! keep their place in the LRU order, as vLLM's hashed blocks do, but nothing can tell
//! them apart. So they are queued as a count, not by id, and their ids are marked spare
//! in a bitmap (one bit an id: a worker may have had thousands of blocks in use at once);
//! taking a dead or never-used block from the head hands out the lowest spare id or a new
//! one. Which id a block gets is not observable in a run's results; the queue's order of
//! content is unchanged. On a workload of unique prompts this keeps a worker's memory to
//! the blocks in use, and the queue to one entry per finished request. Once the highest
//! ids are all spare their records go (in pages, see [`Paged`]), so a worker holds records
//! for about the blocks it uses now, not at its busiest: summed over many workers, their
//! busiest moments were most of a run's block memory.
//!
//! With caching off there is no content to track: the pool keeps no block records, only
//! the free queue as ids ([`FreeIds`]), in the same order.

use super::free_ids::FreeIds;
use super::paged::Paged;
use super::table::BlockTable;
use crate::fixed_hash::BlockHashMap;
use crate::kv_events::{KvChange, KvEvent, KvMedium};
use crate::request::BlockHash;
use std::collections::VecDeque;

/// The runs a table reserves at admission with caching on (p64-30k: 8.4 runs a table on
/// average, 97 % of tables in 16; with 8, two in five grew and were copied).
const RESERVED_RUNS: usize = 16;

/// Index of a GPU block.
pub type BlockId = u32;

/// The free queue's entry standing for every block never used yet (`unused` of them).
const UNUSED: u32 = u32::MAX - 1;
/// A free queue entry standing for dead blocks (a finished request's private content),
/// as many as its stamp field says.
const DEAD: u32 = u32::MAX - 2;
/// How many blocks ahead allocation and freeing ask the CPU to load: the pool is far larger
/// than the caches and the queue visits blocks in no useful order, so each one is a miss
/// unless it was requested early.
const PREFETCH_AHEAD: usize = 8;

/// [`Block::refs`]: the block holds reusable content, and [`Block::word`] is its slot in
/// [`BlockPool::contents`].
const CACHED: u32 = 1 << 31;

/// 8 bytes (a pool can hold millions, and a worker keeps one per block it has had in use
/// at once): what a cached block holds lives in a side table, since on a workload of
/// unique prompts most blocks in use are never cached (their content is private).
#[derive(Debug, Clone, Copy)]
struct Block {
    /// The reference count, and [`CACHED`].
    refs: u32,
    /// The block's stamp, or while it is cached its content's slot (the stamp is there).
    /// The stamp is bumped each time the block joins the free queue: a queue entry is
    /// live while its stamp is the block's and the block is unreferenced.
    word: u32,
}

impl Block {
    /// A block taken for the first time.
    const FRESH: Block = Block { refs: 1, word: 0 };

    fn ref_cnt(&self) -> u32 {
        self.refs & !CACHED
    }

    fn cached(&self) -> bool {
        self.refs & CACHED != 0
    }
}

/// What a cached block holds.
#[derive(Debug, Clone, Copy)]
struct Content {
    /// The block's stamp (see [`Block::word`]).
    stamp: u32,
    /// The chained hash of the content, or a private tag.
    hash: BlockHash,
    /// The request that filled the block.
    owner: u64,
    /// The hash is in the `hash → block` index (shareable content). Private blocks (content
    /// only their owner's sequence has) are cached without an index entry or an event: only
    /// the owner can ever hit them, after a preemption, and it remembers their ids.
    indexed: bool,
}

/// The worker's GPU blocks, free queue and prefix-cache index.
#[derive(Debug, Clone)]
pub struct BlockPool {
    /// Block records by id: the blocks in use or holding live content, and the spare ids.
    blocks: Paged<Block>,
    /// The cached blocks' content, by slot ([`Block::word`]).
    contents: Vec<Content>,
    /// Slots of `contents` no block uses.
    free_contents: Vec<u32>,
    /// All blocks.
    total: u32,
    /// Blocks never used yet.
    unused: u32,
    /// Ids free for any new block: they stand for no queue entry (dead or never used).
    spare: SpareIds,
    /// Reused buffer for the blocks without content being freed.
    fresh: Vec<(u32, u32)>,
    /// Free queue, head (allocated and evicted first) at the front: (block, stamp), or
    /// ([`UNUSED`], 0) while never-used blocks remain.
    queue: VecDeque<(u32, u32)>,
    /// Queue entries whose block has left the queue since.
    stale: usize,
    num_free: u32,
    num_cached_free: u32,
    /// `hash → block`: the first copy cached.
    cached: BlockHashMap<BlockId>,
    /// Later copies of indexed hashes, in the order they were cached (rare).
    copies: BlockHashMap<Vec<BlockId>>,
    enable_caching: bool,
    /// The free queue when caching is off (then `blocks` and `queue` stay empty).
    free: FreeIds,
    events: Vec<KvEvent>,
    /// Off when nobody reads the events (no prefix-aware routing): saves a push per block.
    record_events: bool,
}

impl BlockPool {
    /// A pool of `num_blocks` empty blocks; `enable_caching` switches prefix caching on.
    pub fn new(num_blocks: u32, enable_caching: bool) -> Self {
        let mut queue = VecDeque::new();
        if num_blocks > 0 && enable_caching {
            queue.push_back((UNUSED, 0));
        }
        let free = FreeIds::new(if enable_caching { 0 } else { num_blocks });
        Self {
            blocks: Paged::default(),
            contents: Vec::new(),
            free_contents: Vec::new(),
            total: num_blocks,
            unused: num_blocks,
            spare: SpareIds::default(),
            queue,
            stale: 0,
            fresh: Vec::new(),
            num_free: num_blocks,
            num_cached_free: 0,
            cached: BlockHashMap::default(),
            copies: BlockHashMap::default(),
            enable_caching,
            free,
            events: Vec::new(),
            record_events: true,
        }
    }

    /// Total blocks.
    pub fn num_blocks(&self) -> u32 {
        self.total
    }

    /// Blocks never used yet.
    fn num_unused(&self) -> u32 {
        self.unused
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

    /// Distinct hashes currently in the prefix-cache index (used or free blocks).
    pub fn num_cached(&self) -> usize {
        self.cached.len()
    }

    /// True when prefix caching is on.
    pub fn caching_enabled(&self) -> bool {
        self.enable_caching
    }

    /// The block a lookup of `hash` finds (the copy cached first), if any.
    pub fn cached_block(&self, hash: BlockHash) -> Option<BlockId> {
        if !self.enable_caching {
            return None;
        }
        self.cached.get(&hash).copied()
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

    /// Takes a reference on the cached blocks for `hashes` (all must be cached) and appends them to `table`.
    pub fn touch(&mut self, hashes: &[BlockHash], table: &mut Vec<BlockId>) {
        let mut t = BlockTable::default();
        self.touch_to(hashes, &mut t);
        table.extend(t.ids());
    }

    /// [`BlockPool::touch`] onto a block table (caching on: in runs form).
    pub(crate) fn touch_to(&mut self, hashes: &[BlockHash], table: &mut BlockTable) {
        for h in hashes {
            let id = self.cached[h];
            self.take_ref(id);
            table.push(id);
        }
    }

    /// One more reference on a cached block (off the free queue if it was free).
    fn take_ref(&mut self, id: BlockId) {
        if self.blocks[id as usize].ref_cnt() == 0 {
            self.stale += 1;
            self.num_free -= 1;
            self.num_cached_free -= 1;
        }
        self.blocks[id as usize].refs += 1;
    }

    /// Allocates `n` fresh blocks onto `table` from the head of the free queue, evicting
    /// their cached content; false (and nothing done) if too few are free.
    pub fn allocate(&mut self, n: u32, table: &mut Vec<BlockId>) -> bool {
        let mut t = self.table_of(&[]);
        if !self.allocate_to(n, &mut t) {
            return false;
        }
        table.extend(t.ids());
        true
    }

    /// [`BlockPool::allocate`] onto a block table (in runs form with caching on, plain
    /// ids with it off, as [`BlockPool::table_of`] makes them).
    pub(crate) fn allocate_to(&mut self, n: u32, table: &mut BlockTable) -> bool {
        if n > self.num_free {
            return false;
        }
        if !self.enable_caching {
            self.free.pop_front(n, table.plain_mut());
            self.num_free -= n;
            return true;
        }
        let mut left = n;
        while left > 0 {
            if let Some(&(ahead, _)) = self.queue.get(PREFETCH_AHEAD) {
                self.prefetch(ahead);
            }
            let (id, count) = self.pop_head();
            if id == UNUSED || id == DEAD {
                // Slots without an id, taken as many at a time as the entry holds.
                let k = if id == UNUSED {
                    let k = left.min(self.unused);
                    self.unused -= k;
                    if self.unused > 0 {
                        self.queue.push_front((UNUSED, 0));
                    }
                    k
                } else {
                    // Dead blocks held (private) content: evicting them is only a count.
                    let k = left.min(count);
                    self.num_cached_free -= k;
                    if count > k {
                        self.queue.push_front((DEAD, count - k));
                    }
                    k
                };
                self.num_free -= k;
                left -= k;
                self.take_spares(k, table);
                continue;
            }
            self.num_free -= 1;
            left -= 1;
            if self.blocks[id as usize].cached() {
                self.num_cached_free -= 1;
                self.evict(id);
            }
            self.blocks[id as usize].refs = 1;
            table.push(id);
        }
        true
    }

    /// Ids for `k` blocks taken from dead or never-used slots, onto `table`: the lowest
    /// spare ids (their records are as their last owners left them: referenced once,
    /// uncached, so as good as new), then new ones (records as new too: fresh, or kept
    /// from when they were trimmed away as spare).
    fn take_spares(&mut self, k: u32, table: &mut BlockTable) {
        let reused = self
            .spare
            .take_lowest(k, |first, len| table.push_run(first, len));
        let first = self.blocks.len() as BlockId;
        let new = k - reused;
        let need = self.blocks.len() + new as usize;
        self.blocks.extend_to(need, Block::FRESH);
        table.push_run(first, new);
    }

    /// Drops the records of the highest ids once they are all spare: a worker then keeps
    /// records for about the blocks it has in use now rather than at its busiest (over many
    /// workers the busiest moments add up, though they come at different times). Only
    /// while no stale queue entry exists, as one could name a dropped id; a dropped id
    /// comes back as new, as it would have been taken after every lower spare id anyway.
    fn trim_spare_tail(&mut self) {
        let len = self.blocks.len();
        if self.stale > 0 || len == 0 || !self.spare.contains(len as u32 - 1) {
            return;
        }
        let keep = self.spare.trim_tail(len as u32);
        self.blocks.truncate(keep as usize);
    }

    /// Forgets block `id`'s content: out of the index (the next copy, if any, takes its place).
    fn evict(&mut self, id: BlockId) {
        let Some(content) = self.take_content(id) else {
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
                    if self.record_events {
                        self.events.push(KvEvent {
                            medium: KvMedium::Gpu,
                            change: KvChange::Removed,
                            hash,
                        });
                    }
                }
            }
        } else if let Some(later) = self.copies.get_mut(&hash) {
            later.retain(|&b| b != id);
            if later.is_empty() {
                self.copies.remove(&hash);
            }
        }
    }

    /// Drops one reference on each block of `table`, which is handed over in eviction
    /// order (vLLM frees a request's blocks last block first). Blocks left without a
    /// reference join the free queue: those holding no cached content at the head, in
    /// that order, to be reused first; cached ones at the tail. With caching off every
    /// block joins the tail (vLLM keeps recently used blocks last for GPU locality).
    pub fn free(&mut self, table: impl Iterator<Item = BlockId>) {
        // Blocks without content go to the head in the order freed: queued once all are seen.
        let fresh_from = self.fresh.len();
        for id in table {
            self.release(id);
        }
        self.queue_fresh(fresh_from);
    }

    /// Frees a request's block table (`table` in allocation order), as vLLM's
    /// `SingleTypeKVCacheManager.free`: its last block is evicted first.
    pub fn free_table(&mut self, table: &[BlockId]) {
        self.free_finished(table, 0..0);
    }

    /// Frees the block table of a request that has finished, as [`BlockPool::free_table`];
    /// `table[private]` are the private blocks it filled (only it held them, once each, and
    /// the pool has them uncached): nobody can hit them again, so they join the tail as a
    /// count of dead blocks and their ids are spared, without a visit to each block.
    pub fn free_finished(&mut self, table: &[BlockId], private: std::ops::Range<usize>) {
        let t = self.table_of(table);
        self.free_finished_of(&t, private);
    }

    /// A block table of `ids` in the form this pool fills: runs with caching on, plain
    /// ids with it off.
    pub(crate) fn table_of(&self, ids: &[BlockId]) -> BlockTable {
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

    /// [`BlockPool::free_table`] of a block table.
    pub(crate) fn free_table_of(&mut self, table: &BlockTable) {
        self.free_finished_of(table, 0..0);
    }

    /// [`BlockPool::free_finished`] of a block table: its dead blocks are spared a run
    /// at a time.
    pub(crate) fn free_finished_of(&mut self, table: &BlockTable, private: std::ops::Range<usize>) {
        if !self.enable_caching {
            // Nothing is cached, so nothing is private: every block goes to the tail.
            self.release_all(table, 0..table.len());
            return;
        }
        let fresh_from = self.fresh.len();
        self.release_all(table, private.end..table.len());
        if !private.is_empty() {
            #[cfg(debug_assertions)]
            for id in table.ids_in(private.clone()) {
                let b = &self.blocks[id as usize];
                debug_assert!(b.refs == 1, "block {id} not private");
            }
            let n = private.len() as u32;
            self.num_free += n;
            self.num_cached_free += n;
            for (first, len) in table.runs_in(private.clone()) {
                self.spare.insert_run(first, first + len);
            }
            match self.queue.back_mut() {
                Some((DEAD, count)) => *count += n,
                _ => self.queue.push_back((DEAD, n)),
            }
            self.trim_spare_tail();
        }
        self.release_all(table, 0..private.start);
        self.queue_fresh(fresh_from);
    }

    /// Releases `table[range]`, last block first.
    fn release_all(&mut self, table: &BlockTable, range: std::ops::Range<usize>) {
        if !self.enable_caching {
            self.num_free += range.len() as u32;
            self.free.push_back_rev(&table.plain()[range]);
            return;
        }
        for (first, len) in table.runs_in(range).rev() {
            for id in (first..first + len).rev() {
                // Consecutive ids' records are neighbours: ask for the line a few ahead.
                if id >= first + PREFETCH_AHEAD as BlockId {
                    self.prefetch(id - PREFETCH_AHEAD as BlockId);
                }
                self.release(id);
            }
        }
    }

    /// Drops one reference on `id`; unreferenced, it is queued (at the tail if it holds
    /// cached content or caching is off, else set aside for the head).
    fn release(&mut self, id: BlockId) {
        if !self.enable_caching {
            self.num_free += 1;
            self.free.push_back(id);
            return;
        }
        let block = &mut self.blocks[id as usize];
        debug_assert!(block.ref_cnt() > 0, "block {id} freed twice");
        block.refs -= 1;
        if block.ref_cnt() > 0 {
            return;
        }
        self.num_free += 1;
        let cached = block.cached();
        let stamp = if cached {
            &mut self.contents[block.word as usize].stamp
        } else {
            &mut block.word
        };
        *stamp = stamp.wrapping_add(1);
        let entry = (id, *stamp);
        if cached {
            self.num_cached_free += 1;
            self.queue.push_back(entry);
        } else if self.enable_caching {
            self.fresh.push(entry);
        } else {
            self.queue.push_back(entry);
        }
    }

    /// Puts the blocks without content set aside since `fresh_from` at the head, in the
    /// order they were freed.
    fn queue_fresh(&mut self, fresh_from: usize) {
        while self.fresh.len() > fresh_from {
            let entry = self.fresh.pop().expect("non-empty");
            self.queue.push_front(entry);
        }
    }

    /// Asks the CPU to start loading block `id` (a hint; nothing on other targets).
    #[inline(always)]
    fn prefetch(&self, id: BlockId) {
        #[cfg(target_arch = "x86_64")]
        if let Some(b) = self.blocks.get(id as usize) {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            // SAFETY: a prefetch only hints the cache; the address is a live element.
            #[allow(unused_unsafe)]
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>((b as *const Block).cast());
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = id;
    }

    /// Indexes the full block `id` under `hash`, filled by request `owner`, so later
    /// prompts can reuse it. No-op when caching is off or the block is already cached.
    pub fn cache_block(&mut self, id: BlockId, hash: BlockHash, owner: u64) {
        if !self.enable_caching || self.blocks[id as usize].cached() {
            return;
        }
        match self.cached.entry(hash) {
            std::collections::hash_map::Entry::Occupied(_) => {
                self.copies.entry(hash).or_default().push(id);
            }
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(id);
                if self.record_events {
                    self.events.push(KvEvent {
                        medium: KvMedium::Gpu,
                        change: KvChange::Stored,
                        hash,
                    });
                }
            }
        }
        self.set_content(
            id,
            Content {
                stamp: 0,
                hash,
                owner,
                indexed: true,
            },
        );
    }

    /// Caches the full block `id` under its owner's private `tag` (no index entry, no
    /// event): it stays reusable by the owner until evicted. No-op when caching is off or
    /// the block is already cached.
    pub fn cache_private(&mut self, id: BlockId, tag: BlockHash, owner: u64) {
        if !self.enable_caching {
            return;
        }
        if self.blocks[id as usize].cached() {
            return;
        }
        self.set_content(
            id,
            Content {
                stamp: 0,
                hash: tag,
                owner,
                indexed: false,
            },
        );
    }

    /// Gives uncached block `id` its content (taking its stamp along), in a free slot of
    /// the side table.
    fn set_content(&mut self, id: BlockId, mut content: Content) {
        let block = &mut self.blocks[id as usize];
        content.stamp = block.word;
        let slot = match self.free_contents.pop() {
            Some(slot) => {
                self.contents[slot as usize] = content;
                slot
            }
            None => {
                self.contents.push(content);
                self.contents.len() as u32 - 1
            }
        };
        block.word = slot;
        block.refs |= CACHED;
    }

    /// Uncaches block `id`, returning what it held (its slot freed), if anything.
    fn take_content(&mut self, id: BlockId) -> Option<Content> {
        let block = &mut self.blocks[id as usize];
        if !block.cached() {
            return None;
        }
        let slot = block.word;
        let content = self.contents[slot as usize];
        block.refs &= !CACHED;
        block.word = content.stamp;
        self.free_contents.push(slot);
        Some(content)
    }

    /// What block `id` holds, if it exists and is cached.
    fn content(&self, id: BlockId) -> Option<&Content> {
        let b = self.blocks.get(id as usize)?;
        b.cached().then(|| &self.contents[b.word as usize])
    }

    /// Takes back the caching of a referenced block whose content will not be computed
    /// after all (its request was preempted in the step that cached it).
    pub fn uncache(&mut self, id: BlockId) {
        if !self.enable_caching {
            return;
        }
        debug_assert!(
            self.blocks[id as usize].ref_cnt() > 0,
            "uncache of a free block"
        );
        self.evict(id);
    }

    /// True when block `id` still holds the private content tagged `tag`.
    pub fn holds_private(&self, id: BlockId, tag: BlockHash) -> bool {
        self.content(id)
            .is_some_and(|c| !c.indexed && c.hash == tag)
    }

    /// The request that filled cached block `id`.
    pub fn owner(&self, id: BlockId) -> u64 {
        self.content(id).map_or(0, |c| c.owner)
    }

    /// The hash (or private tag) block `id` is cached under, if any.
    pub fn block_hash(&self, id: BlockId) -> Option<BlockHash> {
        self.content(id).map(|c| c.hash)
    }

    /// True when block `id` is unreferenced (in the free queue).
    pub fn is_free(&self, id: BlockId) -> bool {
        self.ref_count(id) == 0
    }

    /// Takes a reference on each block of `ids` (an owner's private blocks found by id)
    /// onto `table`. Back in their owner's table they are uncached: it caches them again
    /// if it is preempted, and they die with it.
    pub(crate) fn touch_ids(&mut self, ids: &[BlockId], table: &mut BlockTable) {
        for &id in ids {
            self.take_ref(id);
            let content = self.take_content(id);
            debug_assert!(!content.is_some_and(|c| c.indexed), "block {id} is shared");
            table.push(id);
        }
    }

    /// The free queue from head (allocated next) to tail (O(free blocks)); for tests. Never
    /// used blocks show as the ids they will get while no block is dead (then the ids past
    /// the used ones); dead blocks, which have no id, are left out.
    pub fn free_queue(&self) -> Vec<BlockId> {
        if !self.enable_caching {
            return self.free.ids();
        }
        let mut out = Vec::with_capacity(self.num_free as usize);
        for &(id, stamp) in &self.queue {
            if id == UNUSED {
                let next = self.blocks.len() as u32;
                out.extend(next..next + self.unused);
            } else if id == DEAD {
                continue;
            } else if self.is_live(id, stamp) {
                out.push(id);
            }
        }
        out
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
        if !self.enable_caching {
            // Unshared: one reference while not free.
            return (id < self.total && !self.free.contains(id)) as u32;
        }
        self.blocks.get(id as usize).map_or(0, |b| b.ref_cnt())
    }

    /// Sum of all reference counts (O(blocks)); for consistency checks.
    pub fn total_refs(&self) -> u64 {
        if !self.enable_caching {
            return self.num_used() as u64;
        }
        let spare = self.spare_marks();
        let named = self.blocks.iter().zip(&spare).filter(|(_, &s)| !s);
        named.map(|(b, _)| b.ref_cnt() as u64).sum()
    }

    /// Which ids are spare (their records are stale), by id.
    fn spare_marks(&self) -> Vec<bool> {
        let mut marks = vec![false; self.blocks.len()];
        for id in self.spare.ids() {
            marks[id as usize] = true;
        }
        marks
    }

    /// Full consistency check (O(blocks)); for tests and debugging.
    pub fn check_invariants(&self) -> Result<(), String> {
        if !self.enable_caching {
            return self.check_free_ids();
        }
        let mut walked = 0u32;
        let mut cached_free = 0u32;
        let mut stale = 0;
        let mut dead = 0u32;
        let mut seen = vec![false; self.blocks.len()];
        for (i, &(id, stamp)) in self.queue.iter().enumerate() {
            if id == UNUSED {
                if i != self.queue.len() - 1 && self.queue.iter().skip(i + 1).any(|e| e.0 == UNUSED)
                {
                    return Err("never-used blocks queued twice".into());
                }
                walked += self.num_unused();
                continue;
            }
            if id == DEAD {
                walked += stamp;
                cached_free += stamp;
                dead += stamp;
                continue;
            }
            if !self.is_live(id, stamp) {
                stale += 1;
                continue;
            }
            if std::mem::replace(&mut seen[id as usize], true) {
                return Err(format!("block {id} queued twice"));
            }
            cached_free += self.blocks[id as usize].cached() as u32;
            walked += 1;
        }
        if stale != self.stale {
            return Err(format!(
                "{} stale queue entries counted, {stale} found",
                self.stale
            ));
        }
        let mut spare = vec![false; self.blocks.len()];
        if self.spare.ids().count() != self.spare.len as usize {
            return Err("spare ids miscounted".into());
        }
        for id in self.spare.ids() {
            let Some(b) = self.blocks.get(id as usize) else {
                return Err(format!("spare id {id} was never handed out"));
            };
            if std::mem::replace(&mut spare[id as usize], true) || seen[id as usize] {
                return Err(format!("spare block {id} listed twice or queued"));
            }
            if b.refs != 1 {
                return Err(format!("spare block {id} is not as new"));
            }
        }
        // Every block is one with an id (in use or queued by id), dead, or never used.
        let with_id = (self.blocks.len() - self.spare.len as usize) as u64;
        if with_id + dead as u64 + self.num_unused() as u64 != self.total as u64 {
            return Err(format!(
                "{with_id} named, {dead} dead and {} never-used blocks of {}",
                self.num_unused(),
                self.total
            ));
        }
        let named = || {
            self.blocks
                .iter()
                .zip(&spare)
                .filter(|(_, &s)| !s)
                .map(|(b, _)| b)
        };
        let zero = named().filter(|b| b.ref_cnt() == 0).count() as u32 + dead + self.num_unused();
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
        let holding = named().filter(|b| b.cached()).count();
        if holding + self.free_contents.len() != self.contents.len() {
            return Err(format!(
                "{holding} cached blocks and {} free slots, but {} content slots",
                self.free_contents.len(),
                self.contents.len()
            ));
        }
        let indexed = named()
            .filter(|b| b.cached() && self.contents[b.word as usize].indexed)
            .count();
        let listed = self.cached.len() + self.copies.values().map(Vec::len).sum::<usize>();
        if indexed != listed {
            return Err(format!("{indexed} indexed blocks, {listed} in the index"));
        }
        Ok(())
    }

    /// [`BlockPool::check_invariants`] with caching off: the free queue holds `num_free`
    /// distinct ids of the pool, and nothing is cached.
    fn check_free_ids(&self) -> Result<(), String> {
        let ids = self.free.ids();
        let mut seen = vec![false; self.total as usize];
        for &id in &ids {
            match seen.get_mut(id as usize) {
                Some(s) if !*s => *s = true,
                _ => return Err(format!("block {id} queued twice or out of the pool")),
            }
        }
        if ids.len() as u32 != self.num_free || self.free.len() != self.num_free {
            return Err(format!(
                "free count {} but {} queued",
                self.num_free,
                ids.len()
            ));
        }
        if self.num_cached_free != 0 || !self.cached.is_empty() || !self.blocks.is_empty() {
            return Err("caching is off but blocks are cached".into());
        }
        Ok(())
    }

    /// True when the queue entry (`id`, `stamp`) still stands for a free block.
    fn is_live(&self, id: u32, stamp: u32) -> bool {
        is_live(&self.blocks, &self.contents, id, stamp)
    }

    /// Takes the head of the free queue (the caller knows one is free), dropping stale
    /// entries on the way; sweeps them all out once they outnumber the live ones.
    fn pop_head(&mut self) -> (u32, u32) {
        if self.stale > 64 && self.stale > self.queue.len() / 2 {
            let (blocks, contents) = (&self.blocks, &self.contents);
            self.queue.retain(|&(id, stamp)| {
                id == UNUSED || id == DEAD || is_live(blocks, contents, id, stamp)
            });
            self.stale = 0;
        }
        loop {
            let (id, stamp) = self.queue.pop_front().expect("a free block is queued");
            if id == UNUSED || id == DEAD || self.is_live(id, stamp) {
                return (id, stamp);
            }
            self.stale -= 1;
        }
    }
}

/// True when the queue entry (`id`, `stamp`) still stands for a free block.
fn is_live(blocks: &Paged<Block>, contents: &[Content], id: u32, stamp: u32) -> bool {
    let b = &blocks[id as usize];
    b.ref_cnt() == 0
        && if b.cached() {
            contents[b.word as usize].stamp == stamp
        } else {
            b.word == stamp
        }
}

/// A set of block ids, one bit each, taken lowest first.
#[derive(Debug, Clone, Default)]
struct SpareIds {
    words: Vec<u64>,
    len: u32,
    /// No id is set in the words before this one.
    first_word: usize,
}

impl SpareIds {
    /// Adds `ids` (none of them spare yet), a run at a time.
    #[cfg(test)]
    fn insert_all(&mut self, ids: &[BlockId]) {
        for (first, len) in BlockTable::from_ids_as_runs(ids).runs_in(0..ids.len()) {
            self.insert_run(first, first + len);
        }
    }

    /// Adds the ids `start..end` (`start < end`).
    fn insert_run(&mut self, start: BlockId, end: BlockId) {
        let (first, last) = (start as usize / 64, (end - 1) as usize / 64);
        if last >= self.words.len() {
            self.words.resize(last + 1, 0);
        }
        for w in first..=last {
            let lo = if w == first { start % 64 } else { 0 };
            let hi = if w == last { (end - 1) % 64 + 1 } else { 64 };
            // Bits lo..hi (hi − lo ≥ 1), without a shift by 64.
            let mask = (u64::MAX >> (64 - (hi - lo))) << lo;
            debug_assert!(
                self.words[w] & mask == 0,
                "an id in {start}..{end} spared twice"
            );
            self.words[w] |= mask;
        }
        self.len += end - start;
        self.first_word = self.first_word.min(first);
    }

    /// True when `id` is spare.
    fn contains(&self, id: BlockId) -> bool {
        let w = id as usize / 64;
        w < self.words.len() && self.words[w] >> (id % 64) & 1 != 0
    }

    /// Removes the run of spare ids that ends at `end − 1` (no id at or above `end` is
    /// spare); where it starts.
    fn trim_tail(&mut self, end: BlockId) -> BlockId {
        let mut start = end;
        while start > 0 {
            let w = (start - 1) as usize / 64;
            // The word's bits below `start`, moved to its top: the run is its leading ones.
            let valid = (start - 1) % 64 + 1;
            let ones = (self.words[w] << (64 - valid)).leading_ones();
            start -= ones;
            if ones < valid {
                break;
            }
        }
        let w = start as usize / 64;
        self.words.truncate((start as usize).div_ceil(64));
        if start % 64 != 0 {
            self.words[w] &= (1 << (start % 64)) - 1;
        }
        self.len -= end - start;
        if self.len == 0 {
            self.first_word = 0;
        }
        start
    }

    /// Takes the lowest `k` ids (or all, if fewer), handing them to `push` as runs
    /// (first, length), ascending; how many.
    fn take_lowest(&mut self, k: u32, mut push: impl FnMut(BlockId, u32)) -> u32 {
        let n = k.min(self.len);
        let mut left = n;
        let mut w = self.first_word;
        while left > 0 {
            let mut bits = self.words[w];
            // A run of set bits at a time (a dead table's ids are mostly runs).
            while bits != 0 && left > 0 {
                let low = bits.trailing_zeros();
                let len = (bits >> low).trailing_ones().min(left);
                let base = (w * 64) as BlockId + low;
                push(base, len);
                // Bits low..low + len (len = 64 only for a whole word, from bit 0).
                bits &= !(u64::MAX >> (64 - len) << low);
                left -= len;
            }
            self.words[w] = bits;
            if bits == 0 {
                w += 1;
            }
        }
        self.len -= n;
        self.first_word = if self.len == 0 { 0 } else { w };
        n
    }

    /// The ids, ascending.
    fn ids(&self) -> impl Iterator<Item = BlockId> + '_ {
        self.words.iter().enumerate().flat_map(|(w, &bits)| {
            (0..64)
                .filter(move |b| bits >> b & 1 != 0)
                .map(move |b| (w * 64 + b) as BlockId)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spare_ids_are_set_by_runs_and_taken_lowest_first_a_word_at_a_time() {
        let mut spare = SpareIds::default();
        // Runs 3..70 (across a word boundary) and 130..260 (two full words, 192..256, and
        // parts of two more), in a table's order, with loose ids between them.
        let mut ids: Vec<BlockId> = (130..260).collect();
        ids.push(1);
        ids.extend(3..70);
        ids.push(100);
        spare.insert_all(&ids);
        assert_eq!(spare.len, 130 + 1 + 67 + 1);
        let all: Vec<BlockId> = spare.ids().collect();
        let mut want = ids.clone();
        want.sort_unstable();
        assert_eq!(all, want);
        // The lowest 70: 1, 3..70 and 100, 130; then 200 more: 131..260 and nothing past.
        let mut table = Vec::new();
        assert_eq!(spare.take_lowest(70, |f, l| table.extend(f..f + l)), 70);
        let mut first = vec![1];
        first.extend(3..70);
        first.extend([100, 130]);
        assert_eq!(table, first);
        table.clear();
        assert_eq!(spare.take_lowest(200, |f, l| table.extend(f..f + l)), 129);
        assert_eq!(table, (131..260).collect::<Vec<_>>());
        assert_eq!((spare.len, spare.ids().count()), (0, 0));
        // A full word is taken whole only when all 64 are wanted.
        spare.insert_all(&(64..128).collect::<Vec<_>>());
        table.clear();
        spare.take_lowest(63, |f, l| table.extend(f..f + l));
        assert_eq!(table, (64..127).collect::<Vec<_>>());
        assert_eq!(spare.ids().collect::<Vec<_>>(), [127]);
    }

    #[test]
    fn ids_are_taken_a_run_at_a_time_from_scattered_bits() {
        // Runs within a word, across a word boundary, and single ids, taken in pieces
        // that end inside runs: the ids come out ascending, each exactly once.
        let mut spare = SpareIds::default();
        let ids: Vec<BlockId> = [2..5, 9..10, 60..70, 128..192, 200..201]
            .into_iter()
            .flatten()
            .collect();
        spare.insert_all(&ids);
        let mut table = Vec::new();
        for k in [2, 3, 7, 60, 100] {
            spare.take_lowest(k, |f, l| table.extend(f..f + l));
        }
        assert_eq!(table, ids);
        assert_eq!(spare.len, 0);
    }

    #[test]
    fn never_used_blocks_take_no_memory_and_keep_their_place_in_the_queue() {
        // 2^24 blocks (the most a worker may have) cost nothing until used.
        let mut big = BlockPool::new(1 << 24, true);
        assert_eq!((big.num_blocks(), big.num_free()), (1 << 24, 1 << 24));
        let mut a = Vec::new();
        assert!(big.allocate(3, &mut a));
        assert_eq!(a, [0, 1, 2]);
        assert_eq!(big.blocks.len(), 3);
        big.check_invariants().unwrap();
        // The queue is what it would be with every block stored: freed blocks without
        // content ahead of the never-used ones, cached ones behind them.
        let mut pool = BlockPool::new(5, true);
        let mut t = Vec::new();
        pool.allocate(2, &mut t); // 0, 1
        pool.cache_block(t[0], 7, 1);
        pool.free_table(&t); // 1 (no content) to the head, 0 (cached) to the tail
        assert_eq!(pool.free_queue(), [1, 2, 3, 4, 0]);
        let mut u = Vec::new();
        assert!(pool.allocate(4, &mut u));
        assert_eq!(u, [1, 2, 3, 4]);
        assert_eq!(pool.free_queue(), [0]);
        pool.check_invariants().unwrap();
    }

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
        pool.cache_block(a[0], 100, 1);
        pool.cache_block(a[1], 101, 1);
        pool.cache_block(b[0], 200, 2);
        pool.free_table(&a); // queue: 1, 0 (tail block first)
        pool.free_table(&b); // 3 holds nothing: to the head; 2 to the tail
        assert_eq!(pool.free_queue(), [3, 1, 0, 2]);
        assert_eq!((pool.num_free(), pool.num_cached_free()), (4, 3));
        // A repeat of prompt a hits both blocks and takes them out of the queue.
        assert_eq!(pool.cached_prefix(&[100, 101, 102]), 2);
        let mut again = Vec::new();
        pool.touch(&[100, 101], &mut again);
        assert_eq!(again, a);
        assert_eq!((pool.num_free(), pool.num_cached_free()), (2, 1));
        pool.free_table(&again); // queue: 3, 2, 1, 0
                                 // A new allocation of 3 takes 3 (empty), 2 (evicts 200), 1 (evicts 101).
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
    fn a_finished_requests_private_blocks_keep_their_lru_place_without_an_id() {
        let mut pool = BlockPool::new(4, true);
        let mut a = Vec::new();
        pool.allocate(2, &mut a); // 0, 1
        pool.cache_block(a[0], 100, 1);
        // Last block first: the dead block 1 (private: never cached), then block 0.
        pool.free_finished(&a, 1..2);
        assert_eq!((pool.num_free(), pool.num_cached_free()), (4, 2));
        // The dead block has no id, and its record went with it (the highest id): the
        // never-used blocks will get ids 1 and 2.
        assert_eq!(pool.free_queue(), [1, 2, 0]);
        assert_eq!(pool.blocks.len(), 1);
        pool.check_invariants().unwrap();
        // Two never-used blocks, then the dead one; hash 100 (behind it) stays cached.
        let mut b = Vec::new();
        assert!(pool.allocate(3, &mut b));
        assert_eq!(b, [1, 2, 3]); // the lowest ids first
        assert_eq!(
            (pool.cached_block(100), pool.num_cached_free()),
            (Some(0), 1)
        );
        pool.check_invariants().unwrap();
        assert!(pool.allocate(1, &mut b)); // evicts 100
        assert_eq!(pool.cached_block(100), None);
        assert_eq!(
            pool.take_events(),
            [ev(KvChange::Stored, 100), ev(KvChange::Removed, 100)]
        );
        assert_eq!(pool.blocks.len(), 4);
        pool.check_invariants().unwrap();
    }

    #[test]
    fn records_of_a_busy_moment_are_handed_back_once_the_highest_ids_die() {
        let mut pool = BlockPool::new(10_000, true);
        let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
        pool.allocate(3000, &mut a); // 0..3000
        pool.allocate(100, &mut b); // 3000..3100
        pool.free_finished(&a, 0..3000);
        // Block 3099 is in use: every record stays.
        assert_eq!(pool.blocks.len(), 3100);
        pool.check_invariants().unwrap();
        pool.allocate(10, &mut c); // the lowest spare ids
        assert_eq!(c, (0..10).collect::<Vec<_>>());
        pool.free_finished(&b, 0..100);
        // 10..3100 are spare: the records above block 9 go.
        assert_eq!(pool.blocks.len(), 10);
        pool.check_invariants().unwrap();
        // Ids are handed out as before: the lowest free first.
        let mut d = Vec::new();
        pool.allocate(5, &mut d);
        assert_eq!(d, (10..15).collect::<Vec<_>>());
        assert_eq!(pool.num_free(), 10_000 - 15);
        pool.check_invariants().unwrap();
    }

    #[test]
    fn spare_runs_are_trimmed_from_the_top_across_words() {
        let mut spare = SpareIds::default();
        spare.insert_all(&[3, 5, 6, 7]);
        spare.insert_run(60, 200);
        assert_eq!(spare.trim_tail(200), 60);
        assert_eq!(spare.ids().collect::<Vec<_>>(), [3, 5, 6, 7]);
        assert_eq!((spare.len, spare.words.len()), (4, 1));
        assert_eq!(spare.trim_tail(8), 5);
        assert_eq!(spare.ids().collect::<Vec<_>>(), [3]);
        assert_eq!(spare.trim_tail(4), 3);
        assert_eq!((spare.len, spare.first_word), (0, 0));
        spare.insert_run(0, 128);
        assert_eq!(spare.trim_tail(128), 0);
        assert_eq!((spare.len, spare.words.len()), (0, 0));
    }

    #[test]
    fn a_block_stays_small() {
        assert_eq!(std::mem::size_of::<Block>(), 8);
        assert_eq!(std::mem::size_of::<Content>(), 24);
    }

    #[test]
    fn shared_blocks_are_reference_counted() {
        let mut pool = BlockPool::new(2, true);
        let mut a = Vec::new();
        pool.allocate(1, &mut a);
        pool.cache_block(a[0], 7, 1);
        let mut b = Vec::new();
        assert!(!pool.is_free(a[0])); // still in use by a
        pool.touch(&[7], &mut b);
        assert_eq!(pool.ref_count(a[0]), 2);
        pool.free_table(&a);
        assert_eq!((pool.ref_count(b[0]), pool.num_free()), (1, 1));
        pool.free_table(&b);
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
    fn caching_off_records_nothing_and_frees_to_the_tail() {
        let mut pool = BlockPool::new(3, false);
        let mut t = Vec::new();
        pool.allocate(2, &mut t);
        pool.cache_block(t[0], 9, 1);
        assert_eq!(pool.cached_prefix(&[9]), 0);
        assert_eq!(pool.pending_events(), 0);
        pool.free_table(&t);
        assert_eq!(pool.num_cached_free(), 0);
        assert_eq!(pool.free_queue(), [2, 1, 0]);
    }

    #[test]
    fn a_second_copy_is_cached_and_outlives_the_first() {
        // Two requests computing the same block concurrently: both copies are cached, a
        // lookup finds the first, and the hash leaves the index with the last copy.
        let mut pool = BlockPool::new(3, true);
        let mut t = Vec::new();
        pool.allocate(2, &mut t);
        pool.cache_block(t[0], 5, 1);
        pool.cache_block(t[1], 5, 2);
        assert_eq!((pool.num_cached(), pool.cached_block(5)), (1, Some(0)));
        pool.free(t.iter().copied()); // queue: 2, 0, 1
        assert_eq!(pool.num_cached_free(), 2);
        let mut u = Vec::new();
        pool.allocate(2, &mut u); // 2, then 0: the first copy goes, the second takes over
        assert_eq!(pool.cached_block(5), Some(1));
        assert_eq!(pool.take_events(), [ev(KvChange::Stored, 5)]);
        pool.allocate(1, &mut u); // 1: the last copy
        assert_eq!(pool.cached_block(5), None);
        assert_eq!(pool.take_events(), [ev(KvChange::Removed, 5)]);
        pool.check_invariants().unwrap();
    }

    #[test]
    fn uncache_forgets_content_that_was_never_computed() {
        let mut pool = BlockPool::new(2, true);
        let mut t = Vec::new();
        pool.allocate(1, &mut t);
        pool.cache_block(t[0], 8, 1);
        pool.uncache(t[0]);
        assert_eq!(pool.cached_block(8), None);
        pool.free_table(&t);
        assert_eq!(pool.num_cached_free(), 0);
        assert_eq!(
            pool.take_events(),
            [ev(KvChange::Stored, 8), ev(KvChange::Removed, 8)]
        );
        pool.check_invariants().unwrap();
    }
}
