//! The scheduler driven by a tiny loop: schedule → constant step time → finish_step.

use engine::model::Model;
use engine::request::{FailReason, PromptContent, Request, RequestState, Source};
use engine::timing::TimingModel;
use engine::worker::{
    NoOffload, OffloadLookup, OpalBatch, Scheduler, SchedulerConfig, SchedulerOutput, StepOutcome,
    TierHit,
};

/// Step time used everywhere: a power of two, so timestamps are exact.
const DT: f64 = 0.25;

fn granite() -> Model {
    Model::from_catalogue("granite-3.3-8b-instruct").unwrap()
}

fn scheduler(cfg: &SchedulerConfig, blocks: u32) -> Scheduler {
    Scheduler::with_blocks(0, cfg, &granite(), TimingModel::Constant(DT), blocks)
}

fn unique(id: u64, prompt: u32, output: u32) -> Request {
    Request::new(
        id,
        PromptContent::new().with(Source::Unique(id), prompt),
        output,
        0.0,
    )
}

/// Runs until every request finished; returns them by id and the (request, tokens) batches.
fn run(s: &mut Scheduler, requests: Vec<Request>) -> (Vec<Request>, Vec<Vec<(u64, u32)>>) {
    let mut now = 0.0;
    for r in requests {
        s.add_request(r, now).expect("admissible");
    }
    let mut done = Vec::new();
    let mut batches = Vec::new();
    let (mut out, mut outcome) = (SchedulerOutput::default(), StepOutcome::default());
    loop {
        s.schedule(now, &mut NoOffload, &mut out);
        if out.is_empty() {
            break;
        }
        batches.push(
            out.scheduled
                .iter()
                .map(|x| (x.request, x.work.new_tokens))
                .collect(),
        );
        now += s.step_time(&out);
        s.finish_step(now, &mut outcome);
        done.append(&mut outcome.finished);
        s.check_invariants().unwrap();
    }
    assert_eq!(s.num_unfinished(), 0, "requests left hanging");
    assert_eq!(s.block_pool().num_used(), 0, "blocks leaked");
    done.sort_by_key(|r| r.id);
    (done, batches)
}

#[test]
fn one_request_has_exact_ttft_e2e_and_step_count() {
    let mut s = scheduler(&SchedulerConfig::default(), 100);
    let (done, batches) = run(&mut s, vec![unique(1, 100, 10)]);
    // Step 1 prefills all 100 tokens and samples token 1; steps 2..10 decode one each.
    assert_eq!(batches.len(), 10);
    assert_eq!(batches[0], [(1, 100)]);
    assert!(batches[1..].iter().all(|b| b == &[(1, 1)]));
    let r = &done[0];
    assert_eq!(r.state, RequestState::Completed);
    assert_eq!(r.ttft(), Some(0.25));
    assert_eq!(r.e2e(), Some(2.5)); // 10 steps · 0.25 s
    assert_eq!(r.tpot(), Some(0.25));
    assert_eq!(r.tokens_emitted, 10);
    assert_eq!(r.sources.computed, 100);
    assert_eq!(s.steps(), 10);
}

#[test]
fn opal_frozen_chunk_is_priced_whole_to_the_end_of_the_prompt() {
    // A 100-token prompt under a 64-token budget. Opal's batch gives it 64 tokens when it
    // is built and counts 64 again at the next step, though 36 are left (its
    // `request_tokens` stay as built); then one decode step for the second token.
    let cfg = SchedulerConfig {
        max_num_batched_tokens: 64,
        ..Default::default()
    };
    let persistent = OpalBatch {
        persistent: true,
        ..Default::default()
    };
    let mut s = scheduler(&cfg, 100);
    s.set_opal_batch(OpalBatch {
        frozen_chunks: true,
        ..persistent
    });
    let (done, batches) = run(&mut s, vec![unique(1, 100, 2)]);
    assert_eq!(batches, [vec![(1, 64)], vec![(1, 64)], vec![(1, 1)]]);
    assert_eq!(
        done[0].sources.computed, 100,
        "36 tokens computed, 64 priced"
    );
    // Unfrozen, the standing step plans the last 36 anew.
    let mut s = scheduler(&cfg, 100);
    s.set_opal_batch(persistent);
    let (_, batches) = run(&mut s, vec![unique(1, 100, 2)]);
    assert_eq!(batches, [vec![(1, 64)], vec![(1, 36)], vec![(1, 1)]]);
}

#[test]
fn token_gaps_are_reported_per_token() {
    let mut s = scheduler(&SchedulerConfig::default(), 100);
    s.add_request(unique(1, 20, 3), 0.0).unwrap();
    let mut gaps = Vec::new();
    let mut firsts = Vec::new();
    let mut now = 0.0;
    let (mut out, mut o) = (SchedulerOutput::default(), StepOutcome::default());
    while s.num_unfinished() > 0 {
        s.schedule(now, &mut NoOffload, &mut out);
        now += s.step_time(&out);
        s.finish_step(now, &mut o);
        gaps.extend_from_slice(&o.token_gaps);
        firsts.extend_from_slice(&o.first_tokens);
    }
    // Three tokens at 0.25, 0.5, 0.75: one first token, two gaps of 0.25.
    assert_eq!(firsts, [1]);
    assert_eq!(gaps, [(1, 0.25), (1, 0.25)]);
}

#[test]
fn two_long_prompts_with_a_small_budget_are_chunked_exactly() {
    let cfg = SchedulerConfig {
        max_num_batched_tokens: 64,
        ..Default::default()
    };
    let mut s = scheduler(&cfg, 100);
    let (done, batches) = run(&mut s, vec![unique(1, 100, 2), unique(2, 100, 2)]);
    // Step 1: A takes the whole budget. Step 2: A's last 36, B gets the other 28.
    // Step 3: A decodes (1), B gets 63. Step 4: B's last 9. Step 5: B decodes.
    assert_eq!(
        batches,
        vec![
            vec![(1, 64)],
            vec![(1, 36), (2, 28)],
            vec![(1, 1), (2, 63)],
            vec![(2, 9)],
            vec![(2, 1)],
        ]
    );
    assert_eq!(done[0].ttft(), Some(0.5)); // end of step 2
    assert_eq!(done[0].e2e(), Some(0.75)); // end of step 3
    assert_eq!(done[1].ttft(), Some(1.0)); // end of step 4
    assert_eq!(done[1].e2e(), Some(1.25)); // end of step 5
}

#[test]
fn long_prefill_threshold_caps_each_chunk() {
    let cfg = SchedulerConfig {
        long_prefill_token_threshold: 40,
        ..Default::default()
    };
    let mut s = scheduler(&cfg, 100);
    let (_, batches) = run(&mut s, vec![unique(1, 100, 1), unique(2, 30, 1)]);
    // 100 = 40 + 40 + 20; the 30-token prompt fits under the cap and runs alongside.
    assert_eq!(
        batches,
        vec![vec![(1, 40), (2, 30)], vec![(1, 40)], vec![(1, 20)]]
    );
}

#[test]
fn memory_pressure_preempts_the_latest_admitted_and_everything_completes() {
    // 10 blocks of 16 tokens. A and B: 64-token prompts (4 blocks each), 40 output tokens.
    // Step 1 prefills both (8 blocks). Steps 2–17 decode positions 64..79 in a 5th block
    // each (all 10 used). Step 18: A needs a 6th block → B (admitted last) is preempted
    // after emitting 17 tokens; its blocks are freed, tail first. B cannot come back
    // while A runs: it would need ceil(81/16) = 6 blocks. A finishes at step 40.
    let cfg = SchedulerConfig {
        enable_prefix_caching: false,
        ..Default::default()
    };
    let mut s = scheduler(&cfg, 10);
    let (done, batches) = run(&mut s, vec![unique(1, 64, 40), unique(2, 64, 40)]);
    let (a, b) = (&done[0], &done[1]);
    assert_eq!((a.preemptions, b.preemptions), (0, 1));
    assert_eq!(batches[17], [(1, 1)]); // step 18: B gone
    assert_eq!(a.e2e(), Some(40.0 * DT));
    // Step 41 recomputes B's 64 + 17 = 81 tokens and samples token 18; 22 more steps.
    assert_eq!(batches[40], [(2, 81)]);
    // Sources describe the prompt: its 64 tokens were computed (the 17 recomputed output
    // tokens are not prompt tokens). The preemption cost the first admission's 64-token
    // prefill plus the 16 output positions 64..79 computed again (position 80 is token 17's
    // first decode, merged into the chunk): 64 + 16 = 80.
    assert_eq!(b.sources.computed, 64);
    assert_eq!(b.sources.recomputed, 80);
    assert_eq!(b.e2e(), Some(63.0 * DT));
    assert_eq!(b.ttft(), Some(DT)); // the first token was emitted before the preemption
    assert_eq!(b.tokens_emitted, 40);
}

#[test]
fn recompute_reuses_the_prefix_cache_blocks_that_survived() {
    // As above with prefix caching on. B computed 64 + 16 = 80 tokens: five full blocks,
    // all cached (the fifth holds output tokens), freed last block first to the queue's
    // tail as [b5, b4, b3, b2, b1]. A takes b5 at step 18 and b4 at step 34 (evicting
    // them), so B's recompute at step 41 finds its own b1..b3 = 48 tokens again and computes
    // 33 (16 prompt + 17 output tokens). Those 48 are re-hits, not prefix-cache hits: of its
    // prompt none came from another request's blocks, 48 were its own, 16 were computed.
    let mut s = scheduler(&SchedulerConfig::default(), 10);
    let (done, batches) = run(&mut s, vec![unique(1, 64, 40), unique(2, 64, 40)]);
    let b = &done[1];
    assert_eq!(b.preemptions, 1);
    assert_eq!(
        (b.sources.gpu_cache, b.sources.gpu_rehit, b.sources.computed),
        (0, 48, 16)
    );
    // Prefill: 64 in the first admission, 32 in the second (positions 48..79; 80 is a first
    // decode), less the 16 prompt tokens that count as computed.
    assert_eq!(b.sources.recomputed, 64 + 32 - 16);
    assert_eq!(batches[40], [(2, 33)]);
    assert_eq!(b.e2e(), Some(63.0 * DT));
}

#[test]
fn without_chunked_prefill_a_prompt_is_admitted_whole() {
    let cfg = SchedulerConfig {
        max_num_batched_tokens: 100,
        chunked_prefill: false,
        ..Default::default()
    };
    let mut s = scheduler(&cfg, 100);
    let (_, batches) = run(&mut s, vec![unique(1, 80, 1), unique(2, 60, 1)]);
    // B's 60 tokens do not fit the 20 left after A, so B waits a whole step.
    assert_eq!(batches, vec![vec![(1, 80)], vec![(2, 60)]]);
    let mut chunked = scheduler(
        &SchedulerConfig {
            chunked_prefill: true,
            ..cfg.clone()
        },
        100,
    );
    let (_, batches) = run(&mut chunked, vec![unique(1, 80, 1), unique(2, 60, 1)]);
    assert_eq!(batches, vec![vec![(1, 80), (2, 20)], vec![(2, 40)]]);
    // A prompt longer than the budget can never run without chunking.
    let err = s.add_request(unique(3, 150, 1), 2.0).unwrap_err();
    assert_eq!(
        err.state,
        RequestState::Failed(FailReason::PromptExceedsBatch {
            prompt: 150,
            max_num_batched_tokens: 100
        })
    );
}

#[test]
fn impossible_requests_fail_with_their_reason_and_the_others_complete() {
    let model = Model::new(
        "short",
        engine::model::Architecture {
            max_model_len: 1000,
            ..granite().arch
        },
    );
    let mut s = Scheduler::with_blocks(
        3,
        &SchedulerConfig::default(),
        &model,
        TimingModel::Constant(DT),
        50,
    );
    // 900 + 200 = 1100 > 1000.
    let too_long = s.add_request(unique(1, 900, 200), 0.0).unwrap_err();
    assert_eq!(
        too_long.state,
        RequestState::Failed(FailReason::ExceedsMaxModelLen {
            tokens: 1100,
            max_model_len: 1000
        })
    );
    assert_eq!(too_long.times.completed, Some(0.0));
    assert_eq!(too_long.worker, Some(3));
    // 790 + 20 − 1 = 809 tokens of KV = 51 blocks > 50.
    let too_big = s.add_request(unique(2, 790, 20), 0.0).unwrap_err();
    assert_eq!(
        too_big.state,
        RequestState::Failed(FailReason::ExceedsKvCapacity {
            blocks_needed: 51,
            gpu_blocks: 50
        })
    );
    let empty = s
        .add_request(Request::new(4, PromptContent::new(), 5, 0.0), 0.0)
        .unwrap_err();
    assert_eq!(empty.state, RequestState::Failed(FailReason::EmptyPrompt));
    // 780 + 21 − 1 = 800 tokens = exactly 50 blocks: fits.
    let (done, _) = run(&mut s, vec![unique(5, 780, 21), unique(6, 10, 3)]);
    assert!(done.iter().all(|r| r.state == RequestState::Completed));
    assert_eq!(done.len(), 2);
}

#[test]
fn a_repeated_prompt_skips_its_cached_blocks() {
    let mut s = scheduler(&SchedulerConfig::default(), 100);
    let doc = |id| {
        Request::new(
            id,
            PromptContent::new().with(Source::Document(5), 100),
            1,
            0.0,
        )
    };
    run(&mut s, vec![doc(1)]);
    // 100 tokens = 6 full blocks (96 tokens) stored, in order.
    let events = s.take_kv_events();
    assert_eq!(events.len(), 6);
    let hashes: Vec<u64> = PromptContent::new()
        .with(Source::Document(5), 100)
        .block_hashes(16)
        .collect();
    assert_eq!(events.iter().map(|e| e.hash).collect::<Vec<_>>(), hashes);
    let (done, batches) = run(&mut s, vec![doc(2)]);
    // All 6 blocks hit: only 4 tokens are computed, with 96 tokens of context.
    assert_eq!(batches[0], [(2, 4)]);
    assert_eq!(
        (done[0].sources.gpu_cache, done[0].sources.computed),
        (96, 4)
    );
    assert!(s.take_kv_events().is_empty());
    // A 96-token prompt is fully cached, yet its last block is recomputed (5 hits = 80).
    let exact = Request::new(
        3,
        PromptContent::new().with(Source::Document(5), 96),
        1,
        0.0,
    );
    let (done, _) = run(&mut s, vec![exact]);
    assert_eq!(
        (done[0].sources.gpu_cache, done[0].sources.computed),
        (80, 16)
    );
}

#[test]
fn admission_is_fifo_and_head_of_line() {
    // Sequence cap 1: requests run strictly one after another, in arrival order.
    let cfg = SchedulerConfig {
        max_num_seqs: 1,
        ..Default::default()
    };
    let mut s = scheduler(&cfg, 100);
    let (done, batches) = run(
        &mut s,
        vec![unique(1, 30, 2), unique(2, 10, 1), unique(3, 10, 1)],
    );
    assert_eq!(
        batches,
        vec![vec![(1, 30)], vec![(1, 1)], vec![(2, 10)], vec![(3, 10)]]
    );
    assert_eq!(done[2].times.first_scheduled, Some(0.75));
}

/// A fake tier that holds the first 256 tokens of every prompt starting with document 1.
struct DocTier {
    lookups: u32,
}

impl OffloadLookup for DocTier {
    fn lookup(&mut self, prompt: &PromptContent, from_token: u32) -> Option<TierHit> {
        self.lookups += 1;
        let first = prompt.segments().first()?;
        (first.source == Source::Document(1) && from_token < 256).then_some(TierHit {
            tier: 1,
            tokens: 256,
        })
    }
}

#[test]
fn offload_hits_go_through_fetch_kvc_under_the_ready_cap() {
    let cfg = SchedulerConfig {
        max_kvc_ready_requests: 1,
        ..Default::default()
    };
    let mut s = scheduler(&cfg, 100);
    let doc = |id| {
        Request::new(
            id,
            PromptContent::new()
                .with(Source::Document(1), 256)
                .with(Source::Unique(id), 44),
            2,
            0.0,
        )
    };
    let mut tier = DocTier { lookups: 0 };
    for r in [doc(1), doc(2), unique(3, 50, 1)] {
        s.add_request(r, 0.0).unwrap();
    }
    // t = 0: A hits the tier (256 tokens) and starts a fetch; B would too, but the cap
    // of 1 is taken, so B blocks the queue and C waits behind it. Nothing runs.
    let (mut out, mut outcome) = (SchedulerOutput::default(), StepOutcome::default());
    s.schedule(0.0, &mut tier, &mut out);
    assert!(out.is_empty());
    assert_eq!(out.fetches.len(), 1);
    let f = out.fetches[0];
    assert_eq!((f.request, f.tier, f.tokens), (1, 1, 256));
    assert_eq!(f.bytes, 256 * 163_840);
    assert_eq!(s.request(1).unwrap().state, RequestState::FetchKvc);
    assert_eq!(s.num_kvc_pending(), 1);
    // Blocks for A's whole prompt are held during the fetch: ceil(300/16) = 19.
    assert_eq!(s.block_pool().num_used(), 19);
    s.check_invariants().unwrap();
    s.schedule(0.5, &mut tier, &mut out);
    assert!(out.is_empty()); // still fetching
                             // The fetch lands at t = 1: A is READY and its 16 fetched blocks enter the prefix cache.
    assert!(s.fetch_done(1, 1.0));
    assert!(!s.fetch_done(1, 1.0));
    assert_eq!(s.take_kv_events().len(), 16);
    s.schedule(1.0, &mut tier, &mut out);
    // A computes its last 44 tokens on top of 256 fetched ones. B now finds those 256
    // tokens in the GPU cache, which the tier does not beat: no fetch, 44 computed. C: 50.
    let batch: Vec<(u64, u32, u32)> = out
        .scheduled
        .iter()
        .map(|x| (x.request, x.work.new_tokens, x.work.context))
        .collect();
    assert_eq!(batch, [(1, 44, 256), (2, 44, 256), (3, 50, 0)]);
    assert!(out.fetches.is_empty());
    s.finish_step(1.25, &mut outcome);
    let mut now = 1.25;
    let mut done = Vec::new();
    while s.num_unfinished() > 0 {
        s.schedule(now, &mut tier, &mut out);
        now += s.step_time(&out);
        s.finish_step(now, &mut outcome);
        done.append(&mut outcome.finished);
        s.check_invariants().unwrap();
    }
    done.sort_by_key(|r| r.id);
    let a = &done[0];
    assert_eq!(a.sources.offload_tier, Some(1));
    assert_eq!((a.sources.offload, a.sources.computed), (256, 44));
    assert_eq!(a.times.kv_lookup_start, Some(0.0));
    assert_eq!(a.times.ready, Some(1.0));
    assert_eq!(a.times.first_token, Some(1.25));
    assert_eq!(done[1].sources.gpu_cache, 256);
    assert_eq!(done[1].sources.offload_tier, None);
    // Each request asked the tier once: A, B (at t = 0, then remembered), C.
    assert_eq!(tier.lookups, 3);
    assert_eq!(s.block_pool().num_used(), 0);
}

#[test]
fn the_next_turn_of_a_conversation_hits_the_previous_reply() {
    // Turn 0: 1,000 system + 200 user tokens, a 300-token reply. Its KV holds the
    // 1,200 + 300 − 1 = 1,499 tokens it computed (the last reply token is sampled, never fed
    // back): ⌊1,499 / 16⌋ = 93 full blocks, cached as they fill, reply tokens included.
    // Turn 1 (= turn 0's prompt + reply + 50 user tokens = 1,550) finds all 93 blocks:
    // 93 · 16 = 1,488 tokens, not just turn 0's 1,200 prompt tokens.
    let mut s = scheduler(&SchedulerConfig::default(), 1000);
    let turn0 = PromptContent::new()
        .with(Source::SystemPrompt(0), 1000)
        .with(
            Source::Turn {
                session: 7,
                turn: 0,
            },
            200,
        );
    let turn1 = turn0
        .clone()
        .with(
            Source::Reply {
                session: 7,
                turn: 0,
            },
            300,
        )
        .with(
            Source::Turn {
                session: 7,
                turn: 1,
            },
            50,
        );
    let mut a = Request::new(0, turn0, 300, 0.0);
    (a.session, a.turn) = (Some(7), Some(0));
    let mut b = Request::new(1, turn1, 10, 0.0);
    (b.session, b.turn) = (Some(7), Some(1));
    let (done, _) = run(&mut s, vec![a]);
    assert_eq!(done[0].sources.gpu_cache, 0);
    let (done, _) = run(&mut s, vec![b]);
    let t1 = &done[0];
    assert_eq!(
        (
            t1.sources.gpu_cache,
            t1.sources.gpu_rehit,
            t1.sources.computed
        ),
        (1488, 0, 1550 - 1488)
    );
}

#[test]
fn two_requests_admitted_in_one_step_share_their_common_prefix() {
    // Same-step prefix sharing: B, admitted right after A in the same step, hits the 4
    // system-prompt blocks A allocated (cached at allocation) instead of computing them.
    let mut s = scheduler(&SchedulerConfig::default(), 100);
    let prompt = |id| {
        PromptContent::new()
            .with(Source::SystemPrompt(1), 64)
            .with(Source::Unique(id), 20)
    };
    let (done, batches) = run(
        &mut s,
        vec![
            Request::new(1, prompt(1), 1, 0.0),
            Request::new(2, prompt(2), 1, 0.0),
        ],
    );
    assert_eq!(batches[0], [(1, 84), (2, 20)]);
    assert_eq!(done[1].sources.gpu_cache, 64);
}
