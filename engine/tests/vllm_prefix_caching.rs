//! vLLM v1's prefix-caching tests (`tests/v1/core/test_prefix_caching.py`) and free-queue
//! tests (`tests/v1/core/test_kv_cache_utils.py`), ported with vLLM's numbers.
//!
//! How vLLM's test vocabulary maps onto ours:
//! - `make_kv_cache_config(block_size, num_blocks)`: vLLM's `num_blocks` counts a null block
//!   (block 0, never handed out), so `num_blocks = N` is `N − 1` blocks here and vLLM's block
//!   `k` is our block `k − 1` ([`ours`]).
//! - Token ids become content: a run of equal tokens `[i] * 16` or `range(a, b)` is a source
//!   of its own (`Document`), tokens only one request has are `Unique(id)`. Equal content
//!   gives equal chained block hashes, as equal token ids do in vLLM.
//! - `get_computed_blocks` + `allocate_slots(req, n)` is the admission of a request in a
//!   `schedule()`; `manager.free(req)` is the request finishing (`max_tokens` reached). Two
//!   requests allocated one after the other without a free in between are admitted in the
//!   same step, which vLLM's caching at allocation makes equivalent.
//! - vLLM emits one `BlockStored` event per call with a list of hashes and one
//!   `BlockRemoved` per evicted block; ours are one event per hash.
//! - Not expressible: prompt logprobs (`test_prefill_plp`), `reset_prefix_cache`, hybrid
//!   and multimodal models, cache salts, LoRA.

use engine::kv_cache::{BlockPool, BlockTable};
use engine::kv_events::KvChange;
use engine::model::Model;
use engine::request::{PromptContent, Request, Source};
use engine::timing::TimingModel;
use engine::worker::{NoOffload, Scheduler, SchedulerConfig, SchedulerOutput, StepOutcome};

/// vLLM block ids (null block = 0) as ours.
fn ours(vllm_ids: &[u32]) -> Vec<u32> {
    vllm_ids.iter().map(|&b| b - 1).collect()
}

fn scheduler(block_size: u32, vllm_num_blocks: u32, caching: bool) -> Scheduler {
    let cfg = SchedulerConfig {
        block_size,
        enable_prefix_caching: caching,
        ..Default::default()
    };
    let model = Model::from_catalogue("granite-3.3-8b-instruct").unwrap();
    Scheduler::with_blocks(
        0,
        &cfg,
        &model,
        TimingModel::Constant(0.25),
        vllm_num_blocks - 1,
    )
}

fn req(id: u64, prompt: PromptContent, max_tokens: u32) -> Request {
    Request::new(id, prompt, max_tokens, 0.0)
}

/// `[i for i in range(3) for _ in range(16)]`: three full blocks of distinct content.
fn common_3_blocks() -> PromptContent {
    PromptContent::new()
        .with(Source::Document(0), 16)
        .with(Source::Document(1), 16)
        .with(Source::Document(2), 16)
}

/// `schedule()` at `now`.
fn schedule(s: &mut Scheduler, now: f64) -> SchedulerOutput {
    let mut out = SchedulerOutput::default();
    s.schedule(now, &mut NoOffload, &mut out);
    out
}

/// The step ends at `now`; returns the ids of the requests that finished.
fn finish(s: &mut Scheduler, now: f64) -> Vec<u64> {
    let mut outcome = StepOutcome::default();
    s.finish_step(now, &mut outcome);
    outcome.finished.iter().map(|r| r.id).collect()
}

fn step(s: &mut Scheduler) -> (SchedulerOutput, Vec<u64>) {
    let out = schedule(s, 0.0);
    s.check_invariants().unwrap();
    let done = finish(s, 0.0);
    s.check_invariants().unwrap();
    (out, done)
}

fn table(s: &Scheduler, id: u64) -> Vec<u32> {
    s.block_table(id).expect("on the worker").to_vec()
}

#[test]
fn test_prefill() {
    // num_blocks=11 (10 here), block_size=16.
    let mut s = scheduler(16, 11, true);
    // req0: 3 common blocks + 7 unique tokens = 55 tokens; req1: the common blocks + 5.
    // Both finish after one token, so both are freed at the end of the step (req0 first).
    s.add_request(req(0, common_3_blocks().with(Source::Unique(0), 7), 1), 0.0)
        .unwrap();
    s.add_request(req(1, common_3_blocks().with(Source::Unique(1), 5), 1), 0.0)
        .unwrap();
    let out = schedule(&mut s, 0.0);
    // req0 gets [1, 2, 3, 4]; req1 hits [1, 2, 3] (cached when req0 allocated them, in this
    // same step) and gets [5] for its 53 − 48 = 5 new tokens.
    assert_eq!(table(&s, 0), ours(&[1, 2, 3, 4]));
    assert_eq!(table(&s, 1), ours(&[1, 2, 3, 5]));
    assert_eq!(out.scheduled[1].work.new_tokens, 53 - 3 * 16);
    for b in ours(&[1, 2, 3]) {
        assert_eq!(s.block_pool().ref_count(b), 2);
        assert!(s.block_pool().block_hash(b).is_some());
    }
    assert_eq!(s.block_pool().block_hash(ours(&[4])[0]), None); // partial
    assert_eq!(s.block_pool().num_free(), 5);
    finish(&mut s, 0.25);
    // [partial blocks of req1 and req0 (5, 4) at the head][unallocated 6..10][common 3, 2, 1].
    assert_eq!(
        s.block_pool().free_queue(),
        ours(&[5, 4, 6, 7, 8, 9, 10, 3, 2, 1])
    );
    // req2: the common prefix + 6 hits the (free) cached blocks and reuses partial block 5.
    s.add_request(req(2, common_3_blocks().with(Source::Unique(2), 6), 1), 0.0)
        .unwrap();
    schedule(&mut s, 0.25);
    assert_eq!(table(&s, 2), ours(&[1, 2, 3, 5]));
    assert_eq!(s.block_pool().num_free(), 6);
    assert_eq!(s.block_pool().free_queue().len(), 6);
    finish(&mut s, 0.5);
    // req3: 160 tokens of new content take all ten blocks; the order is the eviction order.
    s.add_request(
        req(3, PromptContent::new().with(Source::Unique(3), 160), 1),
        0.5,
    )
    .unwrap();
    schedule(&mut s, 0.5);
    assert_eq!(table(&s, 3), ours(&[5, 4, 6, 7, 8, 9, 10, 3, 2, 1]));
    assert_eq!(s.block_pool().num_free(), 0);
    assert!(s.block_pool().free_queue().is_empty());
}

#[test]
fn test_decode() {
    // num_blocks=11, block_size=16; req0 = 3 common blocks + 7 tokens = 55 tokens.
    let mut s = scheduler(16, 11, true);
    s.add_request(
        req(0, common_3_blocks().with(Source::Unique(0), 7), 100),
        0.0,
    )
    .unwrap();
    step(&mut s); // prefill: [1, 2, 3, 4], 55 computed, first token sampled
    assert_eq!(table(&s, 0), ours(&[1, 2, 3, 4]));
    // Four more tokens (55 → 59) need no new block; the last block is not full: no hash.
    for _ in 0..4 {
        step(&mut s);
    }
    assert_eq!(table(&s, 0).len(), 4);
    assert_eq!(s.block_pool().block_hash(table(&s, 0)[3]), None);
    // 19 more tokens (59 → 78): one new block; block 3, filled by 7 prompt and 9 generated
    // tokens, is now cached (vLLM hashes generated tokens too); the new last block is not.
    for _ in 0..19 {
        step(&mut s);
    }
    let t = table(&s, 0);
    assert_eq!(t.len(), 5);
    // Block 3 is private (its tokens are unique): counted as cached, in the pool at a preemption.
    assert_eq!(s.num_cached_blocks(0), Some(4));
    assert_eq!(s.block_pool().block_hash(t[4]), None);
}

#[test]
fn test_evict() {
    // num_blocks=11, block_size=16. req0: range(87) = 5 full blocks + 7 tokens (6 blocks);
    // req1: range(87, 135) = 3 full blocks. 10 − (6 + 3) = 1 free.
    let mut s = scheduler(16, 11, true);
    s.add_request(
        req(0, PromptContent::new().with(Source::Document(7), 87), 1),
        0.0,
    )
    .unwrap();
    s.add_request(
        req(1, PromptContent::new().with(Source::Document(8), 48), 1),
        0.0,
    )
    .unwrap();
    schedule(&mut s, 0.0);
    assert_eq!(table(&s, 0).len(), 6);
    assert_eq!(table(&s, 1).len(), 3);
    assert_eq!(s.block_pool().num_free(), 1);
    // Freed req0 then req1: the partial block (6) at the head before the free block 10, the
    // cached blocks at the tail, each request's last block first.
    finish(&mut s, 0.25);
    assert_eq!(
        s.block_pool().free_queue(),
        ours(&[6, 10, 5, 4, 3, 2, 1, 9, 8, 7])
    );
    // req2: range(35) hits the first two blocks and takes the head block 6.
    s.add_request(
        req(2, PromptContent::new().with(Source::Document(7), 35), 1),
        0.25,
    )
    .unwrap();
    schedule(&mut s, 0.25);
    assert_eq!(table(&s, 2), ours(&[1, 2, 6]));
    assert_eq!(s.block_pool().num_free(), 7);
}

#[test]
fn test_hash_block_correct_reuse() {
    // num_blocks=2 (one block here). A cached full block, reused for a 15-token prompt
    // (no full block: no hit), loses its hash.
    let mut s = scheduler(16, 2, true);
    s.add_request(
        req(0, PromptContent::new().with(Source::Document(1), 16), 1),
        0.0,
    )
    .unwrap();
    step(&mut s);
    assert!(s.block_pool().block_hash(0).is_some());
    s.add_request(
        req(1, PromptContent::new().with(Source::Document(1), 15), 1),
        0.25,
    )
    .unwrap();
    schedule(&mut s, 0.25);
    assert_eq!(table(&s, 1).len(), 1);
    assert_eq!(s.block_pool().block_hash(table(&s, 1)[0]), None);
}

#[test]
fn test_computed_blocks_not_evicted() {
    // num_blocks=3 (two here). req0 and req1 cache one block each ([1], [2]); both freed.
    // req2 = req0's block + 16 new tokens hits block 1 and must evict block 2, not block 1.
    let mut s = scheduler(16, 3, true);
    s.add_request(
        req(0, PromptContent::new().with(Source::Document(1), 16), 1),
        0.0,
    )
    .unwrap();
    s.add_request(
        req(1, PromptContent::new().with(Source::Document(2), 16), 1),
        0.0,
    )
    .unwrap();
    schedule(&mut s, 0.0);
    assert_eq!((table(&s, 0), table(&s, 1)), (ours(&[1]), ours(&[2])));
    finish(&mut s, 0.25);
    let prompt = PromptContent::new()
        .with(Source::Document(1), 16)
        .with(Source::Unique(2), 16);
    s.add_request(req(2, prompt, 1), 0.25).unwrap();
    let out = schedule(&mut s, 0.25);
    assert_eq!(out.scheduled[0].work.context, 16); // num_computed_tokens == block_size
    assert_eq!(table(&s, 2), ours(&[1, 2]));
}

#[test]
fn test_basic_prefix_caching_disabled() {
    // block_size=4, num_blocks=5 (4 here), caching off. req1: 10 tokens = 3 blocks, freed.
    let mut s = scheduler(4, 5, false);
    s.add_request(
        req(1, PromptContent::new().with(Source::Document(1), 10), 1),
        0.0,
    )
    .unwrap();
    schedule(&mut s, 0.0);
    assert_eq!(table(&s, 1).len(), 3);
    finish(&mut s, 0.25);
    // req2: 16 tokens sharing req1's prefix: no hit, 4 blocks. req3 (4 tokens) then finds no
    // free block and waits.
    s.add_request(
        req(2, PromptContent::new().with(Source::Document(1), 16), 1),
        0.25,
    )
    .unwrap();
    s.add_request(
        req(3, PromptContent::new().with(Source::Document(1), 4), 1),
        0.25,
    )
    .unwrap();
    let out = schedule(&mut s, 0.25);
    assert_eq!(out.scheduled[0].work.context, 0);
    assert_eq!(table(&s, 2).len(), 4);
    assert_eq!(out.scheduled.len(), 1);
    assert_eq!(s.waiting_ids(), [3]);
}

#[test]
fn test_prefill_not_enough_free_blocks_with_computed_blocks() {
    // num_blocks=11 (10 here), block_size=16. A request whose cached prefix is found but
    // that cannot get its new blocks leaves the reference counts of that prefix untouched.
    //
    // vLLM allocates req0 (3 common blocks) and never decodes it; here req0 must keep its
    // blocks across a step, so it decodes one token into a 4th block: one free block fewer
    // at the end (4 instead of vLLM's 5), which does not change the outcome.
    let mut s = scheduler(16, 11, true);
    s.add_request(req(0, common_3_blocks(), 100), 0.0).unwrap();
    // req1 = common × 2: hits the 3 common blocks (same step), allocates 3 more, then finishes.
    let common_twice = common_3_blocks()
        .with(Source::Document(0), 16)
        .with(Source::Document(1), 16)
        .with(Source::Document(2), 16);
    s.add_request(req(1, common_twice.clone(), 1), 0.0).unwrap();
    schedule(&mut s, 0.0);
    let block_part0 = table(&s, 0);
    let block_part1 = table(&s, 1);
    assert_eq!(block_part1[..3], block_part0[..]);
    finish(&mut s, 0.25);
    for b in &block_part1[..3] {
        assert_eq!(s.block_pool().ref_count(*b), 1); // req0's
    }
    for b in &block_part1[3..] {
        assert_eq!(s.block_pool().ref_count(*b), 0); // free but cached
    }
    // req2: 2 new blocks ([7] × 31 here rather than × 32, so that its decoding stays in its
    // second block), and it keeps running.
    s.add_request(
        req(2, PromptContent::new().with(Source::Document(7), 31), 100),
        0.25,
    )
    .unwrap();
    schedule(&mut s, 0.25);
    assert_eq!(table(&s, 2).len(), 2);
    assert_eq!(s.block_pool().num_free(), 4);
    finish(&mut s, 0.5);
    // req3 = common × 3: its first 6 blocks are cached (block_part1), but it needs 3 new ones
    // plus the 3 free cached ones it would take off the free queue: 6 > 4 free.
    let common_thrice = common_twice
        .with(Source::Document(0), 16)
        .with(Source::Document(1), 16)
        .with(Source::Document(2), 16);
    s.add_request(req(3, common_thrice, 1), 0.5).unwrap();
    let out = schedule(&mut s, 0.5);
    assert_eq!(s.block_pool().num_free(), 4);
    assert!(out.scheduled.iter().all(|x| x.request != 3));
    assert_eq!(s.waiting_ids(), [3]);
    for b in &block_part1[..3] {
        assert_eq!(s.block_pool().ref_count(*b), 1);
    }
    for b in &block_part1[3..] {
        assert_eq!(s.block_pool().ref_count(*b), 0);
    }
}

#[test]
fn a_finished_requests_private_blocks_are_free_with_no_reference() {
    // Not a vLLM test: vLLM's `free` decrements every block, so a finished request's blocks
    // read `ref_cnt == 0`. Here its private blocks are freed as a count without a visit to
    // each record; the pool must still say they have no reference, also while a later
    // request holds higher ids (so their records are kept).
    let mut s = scheduler(16, 101, true);
    s.add_request(
        req(0, PromptContent::new().with(Source::Unique(0), 64), 1),
        0.0,
    )
    .unwrap();
    s.add_request(
        req(1, PromptContent::new().with(Source::Unique(1), 64), 50),
        0.0,
    )
    .unwrap();
    schedule(&mut s, 0.0);
    let (t0, t1) = (table(&s, 0), table(&s, 1));
    assert!(t0.iter().max() < t1.iter().min());
    let done: Vec<u64> = finish(&mut s, 0.0);
    assert_eq!(done, [0]);
    s.check_invariants().unwrap();
    let pool = s.block_pool();
    for &b in &t0 {
        assert_eq!(pool.ref_count(b), 0, "block {b} of the finished request");
        assert!(pool.is_free(b));
    }
    for &b in &t1 {
        assert_eq!(pool.ref_count(b), 1, "block {b} of the running request");
    }
    assert_eq!(pool.total_refs(), t1.len() as u64);
}

#[test]
fn test_cache_blocks() {
    // BlockPool(num_gpu_blocks=5), block_size=4: caching two full blocks indexes two hashes,
    // caching a third (not from the start) makes three.
    let mut pool = BlockPool::new(4, true);
    let hashes: Vec<_> = PromptContent::new()
        .with(Source::Document(1), 14)
        .block_hashes(4)
        .collect();
    assert_eq!(hashes.len(), 3); // 14 tokens: 3 full blocks + 2
    let mut blocks = BlockTable::default();
    assert!(pool.get_new_blocks(3, &mut blocks));
    pool.cache_full_blocks(&blocks, &hashes[..2], 0, 0);
    assert_eq!(pool.num_cached(), 2);
    pool.cache_full_blocks(&blocks, &hashes, 2, 0);
    assert_eq!(pool.num_cached(), 3);
    assert!(pool.block_hash(blocks.to_vec()[0]).is_some());
}

#[test]
fn test_maybe_evict_cached_block() {
    // Four blocks cached under [h0, h1, h2, h0]: evicting block 1 drops h1; evicting block 0
    // keeps h0 (block 3 holds it too); evicting 2 then 3 empties the index.
    let mut pool = BlockPool::new(4, true);
    let mut t = BlockTable::default();
    assert!(pool.get_new_blocks(4, &mut t));
    assert_eq!(t.to_vec(), [0, 1, 2, 3]);
    let (h0, h1, h2) = (10, 20, 30);
    pool.cache_full_blocks(&t, &[h0, h1, h2, h0], 0, 0);
    assert_eq!(pool.num_cached(), 3);
    // Free in the order the evictions should happen (all cached: they join the tail): a
    // table is freed last block first.
    pool.free_blocks(&pool.table_of(&[3, 2, 0, 1]));
    let mut reuse = BlockTable::default();
    assert!(pool.get_new_blocks(1, &mut reuse)); // evicts block 1
    assert_eq!(
        (pool.get_cached_block(h1), pool.get_cached_block(h0)),
        (None, Some(0))
    );
    assert!(pool.get_new_blocks(1, &mut reuse)); // evicts block 0: h0 stays, held by block 3
    assert_eq!(pool.get_cached_block(h0), Some(3));
    assert_eq!(pool.num_cached(), 2);
    assert!(pool.get_new_blocks(1, &mut reuse)); // block 2
    assert_eq!(pool.num_cached(), 1);
    assert!(pool.get_new_blocks(1, &mut reuse)); // block 3
    assert_eq!(pool.num_cached(), 0);
    pool.check_invariants().unwrap();
}

#[test]
fn test_kv_cache_events() {
    // blocks_to_cache ∈ {2, 3, 10}, num_blocks = blocks_to_cache + 1, block_size=16.
    for n in [2u32, 3, 10] {
        let mut pool = BlockPool::new(n, true);
        let hashes: Vec<_> = PromptContent::new()
            .with(Source::Document(5), 16 * n)
            .block_hashes(16)
            .collect();
        let mut t = BlockTable::default();
        assert!(pool.get_new_blocks(n, &mut t));
        pool.cache_full_blocks(&t, &hashes, 0, 0);
        let events = pool.take_events();
        assert_eq!(events.len(), n as usize);
        assert!(events.iter().all(|e| e.change == KvChange::Stored));
        assert_eq!(pool.num_cached(), n as usize);
        assert_eq!(pool.pending_events(), 0);
        // Freed, then the same tokens allocated without a lookup: every block is evicted
        // (n removals) before being stored again.
        pool.free_blocks(&t);
        let mut again = BlockTable::default();
        assert!(pool.get_new_blocks(n, &mut again));
        pool.cache_full_blocks(&again, &hashes, 0, 1);
        let events = pool.take_events();
        assert_eq!(events.len(), 2 * n as usize);
        let removed = events.iter().filter(|e| e.change == KvChange::Removed);
        assert_eq!(removed.count(), n as usize);
        assert!(events[..n as usize]
            .iter()
            .all(|e| e.change == KvChange::Removed && hashes.contains(&e.hash)));
        assert_eq!(pool.num_cached(), n as usize);
    }
}

#[test]
fn test_free_kv_cache_block_queue_initialization() {
    // test_kv_cache_utils.py: a queue of one block has it at both ends.
    let pool = BlockPool::new(1, true);
    assert_eq!(pool.num_free(), 1);
    assert_eq!(pool.free_queue(), [0]);
}

#[test]
fn test_free_kv_cache_block_queue_operations() {
    // test_kv_cache_utils.py, over 5 blocks: the queue starts 0..4; popleft takes block 0
    // (head 1, tail 4); appending it back makes it the tail. (Removing a block from the
    // middle is a cache hit on a free block: see test_evict and test_prefill.)
    let mut pool = BlockPool::new(5, false);
    assert_eq!(pool.free_queue(), [0, 1, 2, 3, 4]);
    let mut t = BlockTable::default();
    assert!(pool.get_new_blocks(1, &mut t));
    assert_eq!(t.to_vec(), [0]);
    assert_eq!(pool.num_free(), 4);
    assert_eq!(pool.free_queue(), [1, 2, 3, 4]);
    pool.free_blocks(&t); // caching off: freed blocks are appended
    assert_eq!(pool.free_queue(), [1, 2, 3, 4, 0]);
    let mut rest = BlockTable::default();
    assert!(pool.get_new_blocks(5, &mut rest));
    assert_eq!((rest.to_vec(), pool.num_free()), (vec![1, 2, 3, 4, 0], 0));
}

#[test]
fn test_hash_block_tokens_chain() {
    // test_kv_cache_utils.py (hash_block_tokens / request block hasher): a block's hash
    // depends on its tokens and on its parent's hash; equal histories give equal hashes, and
    // generated tokens are hashed like prompt tokens.
    let a = PromptContent::new()
        .with(Source::Document(0), 3)
        .with(Source::Document(1), 3);
    let b = PromptContent::new()
        .with(Source::Document(9), 3)
        .with(Source::Document(1), 3);
    let (ha, hb): (Vec<_>, Vec<_>) = (a.block_hashes(3).collect(), b.block_hashes(3).collect());
    assert_eq!(ha.len(), 2);
    assert_ne!(ha[1], hb[1], "same tokens, different parent");
    assert_eq!(ha, a.clone().block_hashes(3).collect::<Vec<_>>());
}
