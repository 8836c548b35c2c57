//! How a pool with prefix caching stores its blocks: their records, what cached blocks
//! hold, and the free queue. [`super::BlockPool`] decides what happens to blocks (vLLM's
//! policy); this file decides how that is kept, cheaply for millions of blocks.
//!
//! The free queue is a ring of block ids where a block taken out of the middle (a cache
//! hit) leaves a stale entry behind, skipped when it reaches the head and swept out when
//! stale entries outnumber live ones: every operation costs O(blocks touched, amortised).
//! (An intrusive linked list did the same in O(1) but chased a pointer into a random block
//! per allocation: the cache misses were over half of a large run's time.) An entry is
//! live while its stamp is the block's and the block is unreferenced; the stamp is bumped
//! each time the block joins the queue.
//!
//! Blocks never used yet are not stored: they stand in the queue as one entry, in id
//! order, behind the freed blocks without content and ahead of the cached ones (where the
//! queue that starts as every block in order keeps them). Memory therefore follows the
//! blocks a run touches, not the millions a small model on a large GPU is given.
//!
//! A finished request's private blocks (content only it could ever hit) are dead: they
//! keep their place in the LRU order, as vLLM's hashed blocks do, but nothing can tell
//! them apart. So they are queued as a count, not by id, and their ids are marked spare
//! ([`SpareIds`]); taking a dead or never-used block from the head hands out the lowest
//! spare id or a new one. Which id a block gets is not observable in a run's results; the
//! queue's order of content is unchanged. On a workload of unique prompts this keeps a
//! worker's memory to the blocks in use, and the queue to one entry per finished request.
//! Once the highest ids are all spare their records go (in pages, see [`Paged`]), so a
//! worker holds records for about the blocks it uses now, not at its busiest: summed over
//! many workers, their busiest moments were most of a run's block memory.

use super::paged::Paged;
use super::spare_ids::SpareIds;
use super::table::BlockTable;
use super::BlockId;
use crate::request::BlockHash;
use std::collections::VecDeque;
use std::ops::Range;

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
/// [`BlockStore::contents`].
const CACHED: u32 = 1 << 31;

/// 8 bytes (a pool can hold millions, and a worker keeps one per block it has had in use
/// at once): what a cached block holds lives in a side table, since on a workload of
/// unique prompts most blocks in use are never cached (their content is private).
#[derive(Debug, Clone, Copy)]
struct Block {
    /// The reference count, and [`CACHED`].
    refs: u32,
    /// The block's stamp, or while it is cached its content's slot (the stamp is there).
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
pub(super) struct Content {
    /// The block's stamp (see [`Block::word`]).
    stamp: u32,
    /// The chained hash of the content, or a private tag.
    pub(super) hash: BlockHash,
    /// The request that filled the block.
    pub(super) owner: u64,
    /// The hash is in the `hash → block` index (shareable content). Private blocks (content
    /// only their owner's sequence has) are cached without an index entry or an event: only
    /// the owner can ever hit them, after a preemption, and it remembers their ids.
    pub(super) indexed: bool,
}

impl Content {
    pub(super) fn new(hash: BlockHash, owner: u64, indexed: bool) -> Self {
        Content {
            stamp: 0,
            hash,
            owner,
            indexed,
        }
    }
}

/// What the head of the free queue gave an allocation.
pub(super) enum Popped {
    /// A block with an id, now unreferenced and off the queue (it may hold cached content).
    Block(BlockId),
    /// This many blocks without content (never used, or dead), already on the table with
    /// one reference each.
    Fresh(u32),
}

/// A block that has just lost its last reference, to be queued.
pub(super) struct Freed {
    id: BlockId,
    stamp: u32,
    cached: bool,
}

impl Freed {
    /// It holds cached content.
    pub(super) fn cached(&self) -> bool {
        self.cached
    }
}

/// Block records, cached content and the free queue of a pool with prefix caching.
#[derive(Debug, Clone)]
pub(super) struct BlockStore {
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
    /// Blocks without content freed and not queued yet (see [`BlockStore::defer_to_head`]).
    fresh: Vec<(u32, u32)>,
    /// Free queue, head (allocated and evicted first) at the front: (block, stamp),
    /// ([`UNUSED`], 0) while never-used blocks remain, or ([`DEAD`], count).
    queue: VecDeque<(u32, u32)>,
    /// Queue entries whose block has left the queue since.
    stale: usize,
    num_cached_free: u32,
}

impl BlockStore {
    /// `total` blocks, none used yet.
    pub(super) fn new(total: u32) -> Self {
        let mut queue = VecDeque::new();
        if total > 0 {
            queue.push_back((UNUSED, 0));
        }
        Self {
            blocks: Paged::default(),
            contents: Vec::new(),
            free_contents: Vec::new(),
            total,
            unused: total,
            spare: SpareIds::default(),
            fresh: Vec::new(),
            queue,
            stale: 0,
            num_cached_free: 0,
        }
    }

    /// Free blocks that still hold cached content.
    pub(super) fn num_cached_free(&self) -> u32 {
        self.num_cached_free
    }

    /// The reference count of block `id`: 0 for a block free under no id (dead, never
    /// used), whatever its record says.
    pub(super) fn ref_count(&self, id: BlockId) -> u32 {
        if self.spare.contains(id) {
            return 0;
        }
        self.blocks.get(id as usize).map_or(0, |b| b.ref_cnt())
    }

    /// The reference count of block `id`, which has an id (in use or queued by id).
    #[inline]
    pub(super) fn ref_cnt(&self, id: BlockId) -> u32 {
        self.blocks[id as usize].ref_cnt()
    }

    /// One more reference on block `id`.
    #[inline]
    pub(super) fn incr_ref(&mut self, id: BlockId) {
        self.blocks[id as usize].refs += 1;
    }

    /// Takes free cached block `id` out of the free queue (its entry goes stale).
    #[inline]
    pub(super) fn remove(&mut self, id: BlockId) {
        debug_assert!(self.blocks[id as usize].cached(), "a hit on uncached {id}");
        self.stale += 1;
        self.num_cached_free -= 1;
    }

    /// Takes the head of the free queue (one is free) for an allocation that wants `want`
    /// more blocks (the caller counts them out of the free blocks).
    #[inline]
    pub(super) fn popleft(&mut self, want: u32, table: &mut BlockTable) -> Popped {
        if let Some(&(ahead, _)) = self.queue.get(PREFETCH_AHEAD) {
            self.prefetch(ahead);
        }
        let (id, count) = self.pop_head();
        if id == UNUSED || id == DEAD {
            // Slots without an id, taken as many at a time as the entry holds.
            let k = if id == UNUSED {
                let k = want.min(self.unused);
                self.unused -= k;
                if self.unused > 0 {
                    self.queue.push_front((UNUSED, 0));
                }
                k
            } else {
                // Dead blocks held (private) content: evicting them is only a count.
                let k = want.min(count);
                self.num_cached_free -= k;
                if count > k {
                    self.queue.push_front((DEAD, count - k));
                }
                k
            };
            self.take_spares(k, table);
            return Popped::Fresh(k);
        }
        if self.blocks[id as usize].cached() {
            self.num_cached_free -= 1;
        }
        Popped::Block(id)
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

    /// One reference fewer on block `id`; the block, if that was its last.
    #[inline]
    pub(super) fn decr_ref(&mut self, id: BlockId) -> Option<Freed> {
        let block = &mut self.blocks[id as usize];
        debug_assert!(block.ref_cnt() > 0, "block {id} freed twice");
        block.refs -= 1;
        if block.ref_cnt() > 0 {
            return None;
        }
        let cached = block.cached();
        let stamp = if cached {
            &mut self.contents[block.word as usize].stamp
        } else {
            &mut block.word
        };
        *stamp = stamp.wrapping_add(1);
        Some(Freed {
            id,
            stamp: *stamp,
            cached,
        })
    }

    /// Queues `block` at the tail.
    #[inline]
    pub(super) fn append(&mut self, block: Freed) {
        if block.cached {
            self.num_cached_free += 1;
        }
        self.queue.push_back((block.id, block.stamp));
    }

    /// Sets `block` aside for the head: the blocks set aside since `batch` (a
    /// [`BlockStore::batch`]) join it by [`BlockStore::prepend_batch`], in the order they
    /// were set aside.
    #[inline]
    pub(super) fn defer_to_head(&mut self, block: Freed) {
        debug_assert!(!block.cached, "cached block {} to the head", block.id);
        self.fresh.push((block.id, block.stamp));
    }

    /// Where a batch of blocks set aside for the head starts.
    pub(super) fn batch(&self) -> usize {
        self.fresh.len()
    }

    /// Puts the blocks set aside since `batch` at the head, in the order they were set
    /// aside.
    pub(super) fn prepend_batch(&mut self, batch: usize) {
        while self.fresh.len() > batch {
            let entry = self.fresh.pop().expect("non-empty");
            self.queue.push_front(entry);
        }
    }

    /// Queues the blocks at `table[range]` as dead at the tail: each had one reference
    /// (its owner's) and no cached content, and nothing can hit them again. Their ids are
    /// spared, a run at a time, without a visit to each block.
    pub(super) fn append_dead(&mut self, table: &BlockTable, range: Range<usize>) {
        #[cfg(debug_assertions)]
        for id in table.ids_in(range.clone()) {
            let b = &self.blocks[id as usize];
            debug_assert!(b.refs == 1, "block {id} not private");
        }
        let n = range.len() as u32;
        self.num_cached_free += n;
        for (first, len) in table.runs_in(range) {
            self.spare.insert_run(first, first + len);
        }
        match self.queue.back_mut() {
            Some((DEAD, count)) => *count += n,
            _ => self.queue.push_back((DEAD, n)),
        }
        self.trim_spare_tail();
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

    /// Calls `f` on each block of `table[range]`, last first, asking the CPU to load
    /// records ahead (consecutive ids' records are neighbours).
    #[inline]
    pub(super) fn for_each_rev(
        &mut self,
        table: &BlockTable,
        range: Range<usize>,
        mut f: impl FnMut(&mut Self, BlockId),
    ) {
        for (first, len) in table.runs_in(range).rev() {
            for id in (first..first + len).rev() {
                if id >= first + PREFETCH_AHEAD as BlockId {
                    self.prefetch(id - PREFETCH_AHEAD as BlockId);
                }
                f(self, id);
            }
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

    /// True when block `id` holds cached content.
    #[inline]
    pub(super) fn is_cached(&self, id: BlockId) -> bool {
        self.blocks[id as usize].cached()
    }

    /// Gives uncached block `id` its content (taking its stamp along), in a free slot of
    /// the side table.
    pub(super) fn set_content(&mut self, id: BlockId, mut content: Content) {
        let block = &mut self.blocks[id as usize];
        debug_assert!(!block.cached(), "block {id} cached twice");
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
    pub(super) fn take_content(&mut self, id: BlockId) -> Option<Content> {
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
    pub(super) fn content(&self, id: BlockId) -> Option<&Content> {
        let b = self.blocks.get(id as usize)?;
        b.cached().then(|| &self.contents[b.word as usize])
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

    /// True when the queue entry (`id`, `stamp`) still stands for a free block.
    fn is_live(&self, id: u32, stamp: u32) -> bool {
        is_live(&self.blocks, &self.contents, id, stamp)
    }

    /// The free queue from head (allocated next) to tail (O(free blocks)). Never used
    /// blocks show as the ids they will get while no block is dead (then the ids past the
    /// used ones); dead blocks, which have no id, are left out.
    pub(super) fn free_queue(&self) -> Vec<BlockId> {
        let mut out = Vec::new();
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

    /// The blocks with an id (in use or queued by id), with whether they are spare.
    fn named(&self) -> impl Iterator<Item = (BlockId, &Block)> + '_ {
        let mut spare = vec![false; self.blocks.len()];
        for id in self.spare.ids() {
            spare[id as usize] = true;
        }
        self.blocks
            .iter()
            .zip(0..)
            .zip(spare)
            .filter(|(_, s)| !s)
            .map(|((b, id), _)| (id, b))
    }

    /// Sum of all reference counts (O(blocks)).
    pub(super) fn total_refs(&self) -> u64 {
        self.named().map(|(_, b)| b.ref_cnt() as u64).sum()
    }

    /// The cached blocks with an id and what they hold (O(blocks)).
    pub(super) fn cached_blocks(&self) -> impl Iterator<Item = (BlockId, &Content)> + '_ {
        self.named()
            .filter(|(_, b)| b.cached())
            .map(|(id, b)| (id, &self.contents[b.word as usize]))
    }

    /// Full consistency check of the records, the spare ids and the free queue, which
    /// should hold `num_free` blocks (O(blocks)).
    pub(super) fn check_invariants(&self, num_free: u32) -> Result<(), String> {
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
                walked += self.unused;
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
        if with_id + dead as u64 + self.unused as u64 != self.total as u64 {
            return Err(format!(
                "{with_id} named, {dead} dead and {} never-used blocks of {}",
                self.unused, self.total
            ));
        }
        let zero = self.named().filter(|(_, b)| b.ref_cnt() == 0).count() as u32;
        let zero = zero + dead + self.unused;
        if walked != num_free || zero != num_free {
            return Err(format!(
                "free count {num_free} but {walked} queued and {zero} unreferenced"
            ));
        }
        if cached_free != self.num_cached_free {
            return Err(format!(
                "cached-free count {} but {cached_free} found",
                self.num_cached_free
            ));
        }
        let holding = self.cached_blocks().count();
        if holding + self.free_contents.len() != self.contents.len() {
            return Err(format!(
                "{holding} cached blocks and {} free slots, but {} content slots",
                self.free_contents.len(),
                self.contents.len()
            ));
        }
        Ok(())
    }

    /// Records kept (blocks with an id, and spare ids below the highest).
    #[cfg(test)]
    pub(super) fn records(&self) -> usize {
        self.blocks.len()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_stays_small() {
        assert_eq!(std::mem::size_of::<Block>(), 8);
        assert_eq!(std::mem::size_of::<Content>(), 24);
    }
}
