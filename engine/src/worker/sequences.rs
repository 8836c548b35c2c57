//! The scheduler's sequences: each request on the worker with its block table and
//! scheduling state, held under a [`Slot`] from arrival until it finishes or is released.
//!
//! A sequence is kept in two parts. [`Progress`] is what every step reads and advances
//! (tokens computed and emitted, the table's length, the state), by slot in one dense
//! array; [`Sequence`] is the rest (the request itself, its block table, hashes and
//! admission state), boxed, touched only when a sequence arrives, is admitted, fills a
//! block, finishes or is preempted. A step over the running batch thus reads one cache
//! line per sequence rather than each whole request. The request's own copies of what
//! `Progress` advances are brought up to date whenever the request is shown outside
//! ([`Sequences::request`], [`Sequences::remove`]).

use super::request_queue::QueueKey;
use super::TierHit;
use crate::fixed_hash::FixedHashMap;
use crate::kv_cache::{BlockId, BlockPool, BlockTable};
use crate::request::{BlockHash, Request, RequestState, Segment};

/// Where a sequence is held: its handle in the scheduler's queues and batch.
pub(super) type Slot = u32;

/// The most block-table room a sequence reserves at admission (16 KB of ids); longer
/// tables grow as they fill.
const MAX_RESERVED_BLOCKS: u64 = 4096;

/// A request on this worker with its blocks and admission state.
#[derive(Debug)]
pub(super) struct Sequence {
    pub(super) req: Request,
    /// Its place in a priority queue (and its rank as a preemption victim).
    pub(super) key: QueueKey,
    /// The block table.
    pub(super) blocks: BlockTable,
    /// Chained hashes of the sequence's leading *shareable* full blocks, prompt and generated
    /// tokens alike (vLLM's `request.block_hashes`), extended as blocks fill; only with
    /// prefix caching on.
    pub(super) hashes: Vec<BlockHash>,
    /// Leading full blocks whose content another request may have: those before its first
    /// private token (a `Unique` prompt run, or generated tokens no prompt quotes).
    pub(super) shareable_blocks: u32,
    /// Private blocks (content only this request has) it had cached when it was
    /// preempted, in order from block `shareable_blocks`: only it can hit them, so they are
    /// found by id rather than through the shared index.
    pub(super) ghost: Vec<BlockId>,
    /// The offload tiers were asked (once per admission attempt).
    pub(super) looked_up: bool,
    pub(super) tier_hit: Option<TierHit>,
    /// Prefix length an ongoing fetch will bring in.
    pub(super) fetch_to: u32,
    /// Async scheduling: the first step count at which this request may be admitted.
    pub(super) admissible_after: u64,
    /// Prompt tokens whose KV waits on its prefill worker (a disaggregated hand-off not yet
    /// placed here).
    pub(super) remote: Option<u32>,
    /// `prefill` when it arrived here (what its prefill worker computed).
    pub(super) prefill_elsewhere: u64,
}

impl Sequence {
    /// The `emitted` tokens generated so far, as content following the prompt.
    pub(super) fn output(&self, emitted: u32) -> Segment {
        Segment {
            source: self.req.output_source(),
            len: emitted,
        }
    }

    /// Reserves room in its table, if not done yet, for the whole sequence at once: a table
    /// grown block by block through its decode would be copied at every doubling. Capped,
    /// because the pool bounds the blocks all running tables hold together, not each one's
    /// reservation: without a cap, many long-output requests on a large pool would reserve
    /// far more than it has.
    pub(super) fn reserve_table(&mut self, pool: &BlockPool, block_size: u32) {
        if self.blocks.unreserved() {
            let tokens = self.req.prompt_len() as u64 + self.req.output_len as u64;
            let blocks = tokens.div_ceil(block_size as u64).min(MAX_RESERVED_BLOCKS);
            pool.reserve_table(&mut self.blocks, blocks as usize);
        }
    }

    /// Extends `hashes` to cover the first `blocks` full blocks (as far as they are
    /// shareable), `emitted` tokens generated so far.
    pub(super) fn ensure_hashes(&mut self, blocks: u32, block_size: u32, emitted: u32) {
        let want = blocks.min(self.shareable_blocks) as usize;
        let have = self.hashes.len();
        if have >= want {
            return;
        }
        let prev = self.hashes.last().copied().unwrap_or(0);
        let more = self
            .req
            .prompt
            .sequence_hashes(block_size, self.output(emitted), have as u32, prev)
            .take(want - have);
        self.hashes.extend(more);
    }
}

/// What every step reads and advances of a sequence. `tokens_emitted`, `last_token_at` and
/// `state` are the request's own, kept here while it is on the worker.
#[derive(Debug, Clone, Copy)]
pub(super) struct Progress {
    pub(super) id: u64,
    /// When it emitted its last token; NaN before its first (an `Option` would make this
    /// 72 bytes, more than a cache line).
    pub(super) last_token_at: f64,
    /// Prefill tokens computed over all its admissions (on its prefill worker too).
    pub(super) prefill: u64,
    /// Tokens whose KV is in GPU blocks (computed, cached or fetched).
    pub(super) num_computed_tokens: u32,
    pub(super) num_prompt_tokens: u32,
    pub(super) tokens_emitted: u32,
    pub(super) output_len: u32,
    /// Most tokens it had in KV before its last preemption: positions below it were
    /// computed (or found) before.
    pub(super) high_water: u32,
    /// Length of the block table (`Sequence::blocks`).
    pub(super) num_blocks: u32,
    /// Leading blocks already offered to the prefix cache.
    pub(super) num_cached_blocks: u32,
    pub(super) state: RequestState,
}

// A step reads one cache line per sequence.
const _: () = assert!(std::mem::size_of::<Progress>() <= 64);

impl Progress {
    fn new(req: &Request, prefill: u64) -> Self {
        Self {
            id: req.id,
            last_token_at: req.last_token_at.unwrap_or(f64::NAN),
            prefill,
            num_computed_tokens: 0,
            num_prompt_tokens: req.prompt_len(),
            tokens_emitted: req.tokens_emitted,
            output_len: req.output_len,
            high_water: 0,
            num_blocks: 0,
            num_cached_blocks: 0,
            state: req.state,
        }
    }

    /// Prompt plus generated tokens: what must be in the KV cache to sample the next token.
    #[inline]
    pub(super) fn num_tokens(&self) -> u32 {
        self.num_prompt_tokens + self.tokens_emitted
    }

    /// Tokens still to compute before it samples its next token.
    #[inline]
    pub(super) fn num_new_tokens(&self) -> u32 {
        self.num_tokens() - self.num_computed_tokens
    }

    /// Blocks its table lacks for `n` more tokens (no division in the common case of a
    /// decode that fits its last block: this runs for every sequence of every step).
    #[inline]
    pub(super) fn blocks_lacking(&self, n: u32, block_size: u32) -> u32 {
        let tokens = self.num_computed_tokens + n;
        if tokens <= self.num_blocks * block_size {
            0
        } else {
            tokens.div_ceil(block_size) - self.num_blocks
        }
    }

    /// Copies the request's fields kept here back to it.
    fn sync(&self, req: &mut Request) {
        req.tokens_emitted = self.tokens_emitted;
        req.last_token_at = (!self.last_token_at.is_nan()).then_some(self.last_token_at);
        req.state = self.state;
    }
}

/// The sequences on a worker, by slot and by request id.
///
/// `repr(C)`: `progress`, which every step reads, first (the scheduler holds this first too).
#[derive(Debug, Default)]
#[repr(C)]
pub(super) struct Sequences {
    /// By slot (stale for a free slot).
    progress: Vec<Progress>,
    /// By slot. Boxed: the slots stay for the run, as many as the worker ever had requests
    /// at once, and a free one then costs a pointer rather than a whole `Sequence`.
    rest: Vec<Option<Box<Sequence>>>,
    free: Vec<Slot>,
    by_id: FixedHashMap<u64, Slot>,
}

impl Sequences {
    /// Holds `seq` (its progress taken from its request) under a free slot.
    pub(super) fn insert(&mut self, seq: Sequence) -> Slot {
        let progress = Progress::new(&seq.req, seq.prefill_elsewhere);
        let id = seq.req.id;
        debug_assert!(!self.by_id.contains_key(&id), "request id {id} added twice");
        let slot = match self.free.pop() {
            Some(s) => {
                self.rest[s as usize] = Some(Box::new(seq));
                self.progress[s as usize] = progress;
                s
            }
            None => {
                self.rest.push(Some(Box::new(seq)));
                self.progress.push(progress);
                (self.rest.len() - 1) as Slot
            }
        };
        self.by_id.insert(id, slot);
        slot
    }

    /// Takes `slot`'s sequence out, its request up to date; the slot is free again.
    pub(super) fn remove(&mut self, slot: Slot) -> Box<Sequence> {
        let mut seq = self.rest[slot as usize].take().expect("live slot");
        self.progress[slot as usize].sync(&mut seq.req);
        self.by_id.remove(&seq.req.id);
        self.free.push(slot);
        seq
    }

    /// The slot of request `id`, if it is here.
    pub(super) fn find(&self, id: u64) -> Option<Slot> {
        self.by_id.get(&id).copied()
    }

    /// Sequences held.
    pub(super) fn len(&self) -> usize {
        self.by_id.len()
    }

    #[inline]
    pub(super) fn progress(&self, slot: Slot) -> &Progress {
        &self.progress[slot as usize]
    }

    #[inline]
    pub(super) fn progress_mut(&mut self, slot: Slot) -> &mut Progress {
        &mut self.progress[slot as usize]
    }

    pub(super) fn get(&self, slot: Slot) -> &Sequence {
        self.rest[slot as usize].as_ref().expect("live slot")
    }

    pub(super) fn get_mut(&mut self, slot: Slot) -> &mut Sequence {
        self.rest[slot as usize].as_mut().expect("live slot")
    }

    /// Both parts of `slot`'s sequence.
    pub(super) fn both_mut(&mut self, slot: Slot) -> (&mut Sequence, &mut Progress) {
        (
            self.rest[slot as usize].as_mut().expect("live slot"),
            &mut self.progress[slot as usize],
        )
    }

    /// `slot`'s request, up to date.
    pub(super) fn request(&mut self, slot: Slot) -> &Request {
        let (seq, progress) = self.both_mut(slot);
        progress.sync(&mut seq.req);
        &seq.req
    }

    /// Checks that each sequence's parts agree and that its id finds it.
    pub(super) fn check(&self) -> Result<(), String> {
        let mut live = 0;
        for (slot, (seq, p)) in self.rest.iter().zip(&self.progress).enumerate() {
            let Some(seq) = seq else { continue };
            live += 1;
            if self.find(seq.req.id) != Some(slot as Slot) {
                return Err(format!("request {} is not found at its slot", seq.req.id));
            }
            if p.num_blocks as usize != seq.blocks.len() || p.id != seq.req.id {
                return Err(format!(
                    "request {} has {} blocks, its progress says {} (request {})",
                    seq.req.id,
                    seq.blocks.len(),
                    p.num_blocks,
                    p.id
                ));
            }
        }
        if live != self.by_id.len() {
            return Err(format!("{live} sequences, {} ids", self.by_id.len()));
        }
        Ok(())
    }
}
