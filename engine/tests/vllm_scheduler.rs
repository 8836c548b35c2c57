//! vLLM v1's own scheduler tests (`tests/v1/core/test_scheduler.py`), ported to
//! [`Scheduler`] with vLLM's numbers and expected values.
//!
//! How vLLM's test vocabulary maps onto ours:
//! - `create_scheduler()` defaults: `max_num_seqs=16`, `max_num_batched_tokens=8192`,
//!   `block_size=16`, `num_blocks=10000`. vLLM's `num_blocks` counts one null block that is
//!   never handed out, so `num_blocks = N` is `N − 1` blocks here ([`vllm_blocks`]).
//! - `create_requests(n, num_tokens=10, max_tokens=16)`: request `i` has prompt
//!   `[i] * num_tokens` (content no other request has: `Source::Unique(i)`) and
//!   `max_tokens` output tokens; `arrival_time`/`priority` map to `created`/`priority`.
//! - One `schedule()` + `update_from_output()` pair is one `schedule()` + `finish_step()`
//!   here; `finish_requests(id)` is a request reaching its `max_tokens`.
//! - Not expressible (left out): scheduling while a step is in flight
//!   (`test_preempt_during_execution`, `test_schedule_concurrent_batches`), speculative
//!   decoding, stop tokens, multimodal inputs, external KV connectors, structured output.

use engine::model::Model;
use engine::request::{PromptContent, Request, Source};
use engine::timing::TimingModel;
use engine::worker::{
    NoOffload, Scheduler, SchedulerConfig, SchedulerOutput, SchedulingPolicy, StepOutcome,
};

/// vLLM's `num_blocks` (null block included) as our block count.
fn vllm_blocks(num_blocks: u32) -> u32 {
    num_blocks - 1
}

/// `create_scheduler` / `create_scheduler_with_priority` with vLLM's defaults.
struct Setup {
    cfg: SchedulerConfig,
    num_blocks: u32,
}

impl Setup {
    fn new() -> Self {
        Self {
            cfg: SchedulerConfig {
                max_num_seqs: 16,
                max_num_batched_tokens: 8192,
                block_size: 16,
                ..Default::default()
            },
            num_blocks: 10_000,
        }
    }

    fn priority(mut self) -> Self {
        self.cfg.scheduling_policy = SchedulingPolicy::Priority;
        // `create_scheduler_with_priority` leaves prefix caching off.
        self.cfg.enable_prefix_caching = false;
        self
    }

    fn with(mut self, f: impl FnOnce(&mut SchedulerConfig)) -> Self {
        f(&mut self.cfg);
        self
    }

    fn blocks(mut self, num_blocks: u32) -> Self {
        self.num_blocks = num_blocks;
        self
    }

    fn build(&self) -> Scheduler {
        let model = Model::from_catalogue("granite-3.3-8b-instruct").unwrap();
        Scheduler::with_blocks(
            0,
            &self.cfg,
            &model,
            TimingModel::Constant(0.25),
            vllm_blocks(self.num_blocks),
        )
    }
}

/// `create_requests_with_priority`: request `id` with prompt `[id] * num_tokens`.
fn request(id: u64, num_tokens: u32, max_tokens: u32, priority: i32, arrival: f64) -> Request {
    let prompt = PromptContent::new().with(Source::Unique(id), num_tokens);
    let mut r = Request::new(id, prompt, max_tokens, arrival);
    r.priority = priority;
    r
}

fn add(s: &mut Scheduler, r: Request) {
    let now = r.times.created;
    s.add_request(r, now).expect("admissible");
}

fn schedule(s: &mut Scheduler) -> SchedulerOutput {
    let mut out = SchedulerOutput::default();
    s.schedule(0.0, &mut NoOffload, &mut out);
    s.check_invariants().unwrap();
    out
}

/// `update_from_output` with one sampled token per finished sequence.
fn finish(s: &mut Scheduler) -> Vec<u64> {
    let mut outcome = StepOutcome::default();
    s.finish_step(0.0, &mut outcome);
    s.check_invariants().unwrap();
    outcome.finished.iter().map(|r| r.id).collect()
}

fn scheduled(out: &SchedulerOutput) -> Vec<(u64, u32)> {
    out.scheduled
        .iter()
        .map(|x| (x.request, x.work.new_tokens))
        .collect()
}

fn ids(out: &SchedulerOutput) -> Vec<u64> {
    out.scheduled.iter().map(|x| x.request).collect()
}

/// Priority ports: `num_tokens=10`, `max_tokens=16`, given priorities and arrival times.
fn priority_requests(s: &mut Scheduler, priorities: &[i32], arrivals: &[f64]) {
    for (i, (&p, &a)) in priorities.iter().zip(arrivals).enumerate() {
        add(s, request(i as u64, 10, 16, p, a));
    }
}

#[test]
fn test_add_requests() {
    // test_add_requests: each request added lands in the waiting queue.
    let mut s = Setup::new().build();
    for i in 0..10 {
        add(&mut s, request(i, 10, 16, 0, 0.0));
        assert_eq!(s.num_waiting(), i as usize + 1);
    }
    assert_eq!(s.waiting_ids(), (0..10).collect::<Vec<_>>());
}

#[test]
fn test_schedule() {
    // test_schedule[enable_prefix_caching False / True]: 10 requests of 10 tokens are all
    // scheduled in the first step with their whole prompt, in order, and run in that order.
    for caching in [false, true] {
        let mut s = Setup::new()
            .with(|c| c.enable_prefix_caching = caching)
            .build();
        for i in 0..10 {
            add(&mut s, request(i, 10, 16, 0, 0.0));
        }
        let out = schedule(&mut s);
        assert_eq!(
            scheduled(&out),
            (0..10).map(|i| (i, 10)).collect::<Vec<_>>()
        );
        assert_eq!(s.num_waiting(), 0);
        assert_eq!(s.running_ids(), (0..10).collect::<Vec<_>>());
    }
}

#[test]
fn test_schedule_concurrent_partial_requests() {
    // test_schedule_concurrent_partial_requests[enable_prefix_caching True / False]:
    // max_num_batched_tokens=1024, long_prefill_token_threshold=400, three 800-token prompts.
    for caching in [true, false] {
        let mut s = Setup::new()
            .with(|c| {
                c.max_num_batched_tokens = 1024;
                c.long_prefill_token_threshold = 400;
                c.enable_prefix_caching = caching;
            })
            .build();
        for i in 0..3 {
            add(&mut s, request(i, 800, 16, 0, 0.0));
        }
        // 400, 400, then what is left of the budget: 1024 − 400 − 400 = 224.
        let out = schedule(&mut s);
        assert_eq!(scheduled(&out), [(0, 400), (1, 400), (2, 224)]);
        finish(&mut s);
        // All three running: the rest of the first two prompts, 224 more of the third.
        let out = schedule(&mut s);
        assert_eq!(scheduled(&out), [(0, 400), (1, 400), (2, 224)]);
        assert_eq!(s.num_running(), 3);
        finish(&mut s);
        // The first two decode; the third gets its remaining 800 − 224 − 224 = 352.
        let out = schedule(&mut s);
        assert_eq!(scheduled(&out), [(0, 1), (1, 1), (2, 352)]);
    }
}

#[test]
fn test_schedule_order() {
    // test_schedule_order[enable_chunked_prefill True / False]: max_num_batched_tokens=1024,
    // max_num_seqs=3, two 800-token requests then two 10-token ones.
    for chunked in [true, false] {
        let mut s = Setup::new()
            .with(|c| {
                c.max_num_batched_tokens = 1024;
                c.max_num_seqs = 3;
                c.chunked_prefill = chunked;
            })
            .build();
        add(&mut s, request(1, 800, 16, 0, 0.0));
        add(&mut s, request(2, 800, 16, 0, 0.0));
        add(&mut s, request(3, 10, 16, 0, 0.0));
        add(&mut s, request(4, 10, 16, 0, 0.0));
        let out = schedule(&mut s);
        if chunked {
            // The long requests are chunked: 800 + 224 use the whole budget.
            assert_eq!(scheduled(&out), [(1, 800), (2, 224)]);
        } else {
            // The second long request does not fit: the short ones do not jump the queue.
            assert_eq!(scheduled(&out), [(1, 800)]);
        }
    }
}

#[test]
fn test_stop_via_update_from_output_max_tokens() {
    // test_stop_via_update_from_output, case 3 (stop on max tokens), without speculative
    // tokens: two requests with max_tokens=2 stop after exactly two tokens and leave the
    // running batch, which is then empty.
    let mut s = Setup::new().build();
    add(&mut s, request(0, 10, 2, 0, 0.0));
    add(&mut s, request(1, 10, 2, 0, 0.0));
    schedule(&mut s);
    assert!(finish(&mut s).is_empty());
    schedule(&mut s);
    assert_eq!(finish(&mut s), [0, 1]);
    assert_eq!(s.num_running(), 0);
}

#[test]
fn test_memory_leak() {
    // test_memory_leak: prefix caching on, 5 requests of 10 tokens and 10 output tokens, each
    // added and stepped once, then stepped until done: no request, no reference left.
    let setup = Setup::new().with(|c| c.enable_prefix_caching = true);
    let mut s = setup.build();
    for i in 0..5 {
        add(&mut s, request(i, 10, 10, 0, 0.0));
        schedule(&mut s);
        finish(&mut s);
    }
    while !schedule(&mut s).is_empty() {
        finish(&mut s);
    }
    // assert_scheduler_empty: every block but the null block free, every ref count 0.
    assert_eq!(s.num_unfinished(), 0);
    let pool = s.block_pool();
    assert_eq!(pool.num_free(), vllm_blocks(10_000));
    assert_eq!(pool.total_refs(), 0);
}

#[test]
fn test_priority_scheduling_basic_ordering() {
    // Priorities [2, 0, 1] at arrivals [1, 2, 3]: scheduled "1", "2", "0".
    let mut s = Setup::new().priority().build();
    priority_requests(&mut s, &[2, 0, 1], &[1.0, 2.0, 3.0]);
    assert_eq!(ids(&schedule(&mut s)), [1, 2, 0]);
}

#[test]
fn test_priority_scheduling_arrival_time_tiebreaker() {
    // Equal priorities [1, 1, 1], arrivals [3, 1, 2]: by arrival, "1", "2", "0".
    let mut s = Setup::new().priority().build();
    priority_requests(&mut s, &[1, 1, 1], &[3.0, 1.0, 2.0]);
    assert_eq!(ids(&schedule(&mut s)), [1, 2, 0]);
}

#[test]
fn test_priority_scheduling_mixed_priority_and_arrival() {
    // Priorities [2, 1, 1, 0], arrivals [1, 3, 2, 4]: "3" (p0), "2" (p1, t2), "1" (p1, t3), "0".
    let mut s = Setup::new().priority().build();
    priority_requests(&mut s, &[2, 1, 1, 0], &[1.0, 3.0, 2.0, 4.0]);
    assert_eq!(ids(&schedule(&mut s)), [3, 2, 1, 0]);
}

#[test]
fn test_priority_scheduling_no_preemption_when_space_available() {
    // max_num_seqs=3, max_num_batched_tokens=200: two 30-token priority-5 requests run, a
    // priority-0 one arrives and is simply admitted next to them.
    let mut s = Setup::new()
        .priority()
        .with(|c| {
            c.max_num_seqs = 3;
            c.max_num_batched_tokens = 200;
        })
        .build();
    add(&mut s, request(10, 30, 16, 5, 1.0));
    add(&mut s, request(11, 30, 16, 5, 2.0));
    schedule(&mut s);
    finish(&mut s);
    add(&mut s, request(12, 30, 16, 0, 3.0));
    let out = schedule(&mut s);
    assert!(out.preempted.is_empty());
    assert_eq!(scheduled(&out), [(10, 1), (11, 1), (12, 30)]);
    assert_eq!((s.num_running(), s.num_waiting()), (3, 0));
}

#[test]
fn test_priority_scheduling_preemption_victim_selection() {
    // max_num_seqs=1, priorities [3, 2, 0]: "2" runs; the queue holds "1" (p2) then "0" (p3).
    let mut s = Setup::new().priority().with(|c| c.max_num_seqs = 1).build();
    priority_requests(&mut s, &[3, 2, 0], &[1.0, 2.0, 3.0]);
    assert_eq!(ids(&schedule(&mut s)), [2]);
    assert_eq!(s.waiting_ids(), [1, 0]);
}

#[test]
fn test_priority_scheduling_equal_priority_preemption() {
    // max_num_seqs=1, equal priorities, arrivals [3, 1, 2]: "1" runs; queue "2" then "0".
    let mut s = Setup::new().priority().with(|c| c.max_num_seqs = 1).build();
    priority_requests(&mut s, &[2, 2, 2], &[3.0, 1.0, 2.0]);
    assert_eq!(ids(&schedule(&mut s)), [1]);
    assert_eq!(s.waiting_ids(), [2, 0]);
}

#[test]
fn test_priority_scheduling_waiting_queue_order() {
    // max_num_seqs=1, priorities [3, 1, 2, 0]: "3" runs; queue "1", "2", "0".
    let mut s = Setup::new().priority().with(|c| c.max_num_seqs = 1).build();
    priority_requests(&mut s, &[3, 1, 2, 0], &[1.0, 2.0, 3.0, 4.0]);
    assert_eq!(ids(&schedule(&mut s)), [3]);
    assert_eq!(s.waiting_ids(), [1, 2, 0]);
}

#[test]
fn test_priority_scheduling_fcfs_fallback() {
    // Equal priorities, arrivals [4, 1, 3, 2]: arrival order "1", "3", "2", "0".
    let mut s = Setup::new().priority().build();
    priority_requests(&mut s, &[1, 1, 1, 1], &[4.0, 1.0, 3.0, 2.0]);
    assert_eq!(ids(&schedule(&mut s)), [1, 3, 2, 0]);
}

#[test]
fn test_priority_scheduling_with_limited_slots() {
    // max_num_seqs=2, max_num_batched_tokens=1000, priorities [3, 1, 2, 0]: "3" and "1" run,
    // "2" then "0" wait.
    let mut s = Setup::new()
        .priority()
        .with(|c| {
            c.max_num_seqs = 2;
            c.max_num_batched_tokens = 1000;
        })
        .build();
    priority_requests(&mut s, &[3, 1, 2, 0], &[1.0, 2.0, 3.0, 4.0]);
    assert_eq!(ids(&schedule(&mut s)), [3, 1]);
    assert_eq!(s.waiting_ids(), [2, 0]);
}

#[test]
fn test_priority_scheduling_heap_property() {
    // max_num_seqs=1, priorities [5, 1, 8, 3, 2, 7, 4, 6] at arrivals 0..8, each request
    // finished right after its first step (max_tokens=1 stands in for finish_requests):
    // they run in ascending priority.
    let mut s = Setup::new().priority().with(|c| c.max_num_seqs = 1).build();
    let priorities = [5, 1, 8, 3, 2, 7, 4, 6];
    for (i, &p) in priorities.iter().enumerate() {
        add(&mut s, request(i as u64, 10, 1, p, i as f64));
    }
    let mut order = Vec::new();
    loop {
        let out = schedule(&mut s);
        if out.is_empty() {
            break;
        }
        order.extend(ids(&out).iter().map(|&id| priorities[id as usize]));
        finish(&mut s);
    }
    assert_eq!(order, [1, 2, 3, 4, 5, 6, 7, 8]);
}

#[test]
fn test_priority_scheduling_preemption_and_resumption_when_out_of_kv() {
    // max_num_seqs=2, max_num_batched_tokens=200, num_blocks=5 (4 usable: 64 tokens),
    // block_size=16.
    let mut s = Setup::new()
        .priority()
        .with(|c| {
            c.max_num_seqs = 2;
            c.max_num_batched_tokens = 200;
        })
        .blocks(5)
        .build();
    // A 30-token priority-1 request: 1st schedule, then its 1st decode.
    add(&mut s, request(0, 30, 16, 1, 0.0));
    assert_eq!(scheduled(&schedule(&mut s)), [(0, 30)]);
    finish(&mut s);
    // A 32-token priority-0 request joins; the KV cache is then full (2 + 2 blocks).
    // Its max_tokens=2 stands in for vLLM's finish_requests after its second token.
    add(&mut s, request(1, 32, 2, 0, 1.0));
    let out = schedule(&mut s);
    assert_eq!(scheduled(&out), [(0, 1), (1, 32)]);
    assert_eq!(s.block_pool().num_free(), 0);
    assert_eq!((s.num_waiting(), s.num_running()), (0, 2));
    finish(&mut s);
    // 3rd schedule: the low request needs 32 tokens = 2 blocks (it has them), the high one 33
    // tokens = 3 blocks: 5 > 4. The low one — already scheduled this step — is preempted.
    let out = schedule(&mut s);
    assert_eq!(scheduled(&out), [(1, 1)]);
    assert_eq!(out.preempted, [0]);
    assert_eq!((s.num_waiting(), s.num_running()), (1, 1));
    assert_eq!(finish(&mut s), [1]);
    // 4th schedule: the low request resumes with its 30 prompt + 2 decoded tokens.
    let out = schedule(&mut s);
    assert_eq!(scheduled(&out), [(0, 32)]);
    assert_eq!((s.num_waiting(), s.num_running()), (0, 1));
    assert_eq!(s.request(0).unwrap().tokens_emitted, 2);
}
