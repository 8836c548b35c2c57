//! Randomized workloads (seeded): invariants after every step, and determinism.

use engine::model::Model;
use engine::request::{PromptContent, Request, RequestState, Source};
use engine::rng::SimRng;
use engine::timing::{TimingConfig, TimingModel};
use engine::worker::{
    OffloadLookup, Scheduler, SchedulerConfig, SchedulerOutput, SchedulingPolicy, StepOutcome,
    TierHit,
};

/// A fake tier: a prompt opening with system prompt `g` has its first `g·64` tokens offloaded.
struct FakeTier {
    enabled: bool,
}

impl OffloadLookup for FakeTier {
    fn lookup(&mut self, prompt: &PromptContent, from_token: u32) -> Option<TierHit> {
        let Source::SystemPrompt(g) = prompt.segments().first()?.source else {
            return None;
        };
        let tokens = (g * 64).min(prompt.len());
        (self.enabled && tokens > from_token).then_some(TierHit {
            tier: (g % 3) as u8,
            tokens,
        })
    }
}

struct Workload {
    cfg: SchedulerConfig,
    blocks: u32,
    arrivals: Vec<(f64, Request)>,
    offload: bool,
}

fn random_workload(seed: u64) -> Workload {
    let mut rng = SimRng::stream(seed, "worker.properties");
    let pick = |rng: &mut SimRng, lo: u64, hi: u64| rng.range_inclusive(lo, hi) as u32;
    let block_size = [4, 16, 32][rng.below(3) as usize];
    let cfg = SchedulerConfig {
        max_num_batched_tokens: pick(&mut rng, 16, 600),
        max_num_seqs: pick(&mut rng, 1, 12),
        block_size,
        chunked_prefill: rng.below(4) != 0,
        long_prefill_token_threshold: [0, 0, 24, 100][rng.below(4) as usize],
        enable_prefix_caching: rng.below(3) != 0,
        max_kvc_ready_requests: pick(&mut rng, 1, 4),
        scheduling_policy: if rng.below(3) == 0 {
            SchedulingPolicy::Priority
        } else {
            SchedulingPolicy::Fcfs
        },
        ..Default::default()
    };
    let blocks = pick(&mut rng, 8, 120);
    let n = pick(&mut rng, 1, 40);
    let mut t = 0.0;
    let arrivals = (0..n as u64)
        .map(|id| {
            t += rng.below(4) as f64 * 0.125;
            let mut prompt = PromptContent::new();
            if rng.below(2) == 0 {
                prompt.push(
                    Source::SystemPrompt(pick(&mut rng, 0, 3)),
                    pick(&mut rng, 1, 200),
                );
            }
            prompt.push(Source::Unique(id), pick(&mut rng, 0, 200));
            let mut r = Request::new(id, prompt, pick(&mut rng, 0, 60), t);
            r.priority = rng.below(3) as i32;
            if rng.below(3) == 0 {
                // A session turn: its reply is shareable content.
                (r.session, r.turn) = (Some(id as u32 % 4), Some(id as u32));
            }
            (t, r)
        })
        .collect();
    Workload {
        cfg,
        blocks,
        arrivals,
        offload: rng.below(2) == 0,
    }
}

/// Runs a workload to the end, checking invariants after every step; returns every request.
fn simulate(w: &Workload) -> Vec<Request> {
    let model = Model::from_catalogue("granite-3.3-8b-instruct").unwrap();
    let hw = engine::hardware::HardwareConfig::default()
        .resolve()
        .unwrap();
    let timing = TimingModel::new(&TimingConfig::default(), &model, &hw, 0.001);
    let mut s = Scheduler::with_blocks(0, &w.cfg, &model, timing, w.blocks);
    let mut tier = FakeTier { enabled: w.offload };
    let mut arrivals = w.arrivals.iter().cloned().peekable();
    let mut fetches: Vec<(f64, u64)> = Vec::new(); // (done time, request)
    let mut results = Vec::new();
    let (mut out, mut outcome) = (SchedulerOutput::default(), StepOutcome::default());
    let mut admitted = 0usize;
    let mut now = 0.0;
    loop {
        while let Some((_, r)) = arrivals.next_if(|(t, _)| *t <= now) {
            admitted += 1;
            if let Err(failed) = s.add_request(r, now) {
                results.push(*failed);
            }
        }
        fetches.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        while fetches.first().is_some_and(|f| f.0 <= now) {
            assert!(s.fetch_done(fetches.remove(0).1, now));
        }
        s.schedule(now, &mut tier, &mut out);
        assert!(out.num_scheduled_tokens <= w.cfg.max_num_batched_tokens);
        assert_eq!(
            out.num_scheduled_tokens,
            out.scheduled.iter().map(|x| x.work.new_tokens).sum::<u32>()
        );
        assert!(out.scheduled.len() <= w.cfg.max_num_seqs as usize);
        for f in &out.fetches {
            // A fetch takes 0.3 s, whatever its size.
            fetches.push((now + 0.3, f.request));
        }
        s.check_invariants().unwrap();
        if out.is_empty() {
            let next_arrival = arrivals.peek().map(|(t, _)| *t);
            let next_fetch = fetches.iter().map(|f| f.0).reduce(f64::min);
            match (next_arrival, next_fetch) {
                (None, None) => break,
                (a, f) => now = a.unwrap_or(f64::INFINITY).min(f.unwrap_or(f64::INFINITY)),
            }
            continue;
        }
        now += s.step_time(&out);
        s.finish_step(now, &mut outcome);
        results.append(&mut outcome.finished);
        s.check_invariants().unwrap();
        let pool = s.block_pool();
        assert!(pool.num_used() + pool.num_free() == pool.num_blocks());
    }
    // Every request completed or failed; nothing left, no block leaked.
    assert_eq!(
        results.len(),
        admitted,
        "idle with {} waiting, {} fetching under {:?}",
        s.num_waiting(),
        s.num_kvc_pending(),
        w.cfg
    );
    assert_eq!(s.num_unfinished(), 0);
    assert_eq!(s.block_pool().num_used(), 0);
    assert_eq!(s.block_pool().num_free(), w.blocks);
    // The prefill the worker computed is every request's computed prompt plus what its
    // preemptions cost.
    let prefill: u64 = results
        .iter()
        .map(|r| (r.sources.computed + r.sources.recomputed) as u64)
        .sum();
    assert_eq!(s.prefill_tokens(), prefill, "{:?}", w.cfg);
    results.sort_by_key(|r| r.id);
    results
}

#[test]
fn random_workloads_keep_every_invariant() {
    let mut completed = 0;
    let mut preempted = 0;
    let mut fetched = 0;
    for seed in 0..300 {
        let w = random_workload(seed);
        let results = simulate(&w);
        for r in &results {
            match r.state {
                RequestState::Completed => {
                    completed += 1;
                    assert_eq!(r.tokens_emitted, r.output_len);
                    let t = r.times;
                    let ordered = [
                        Some(t.created),
                        t.worker_in,
                        t.kv_lookup_start,
                        t.ready,
                        t.first_scheduled,
                        t.first_token,
                        t.completed,
                    ];
                    assert!(
                        ordered.windows(2).all(|p| p[0].unwrap() <= p[1].unwrap()),
                        "{r:?}"
                    );
                    // The last admission's sources cover the prompt exactly.
                    assert_eq!(r.sources.prompt_total(), r.prompt_len(), "{r:?}");
                    if r.preemptions == 0 {
                        assert_eq!((r.sources.gpu_rehit, r.sources.recomputed), (0, 0));
                    }
                }
                RequestState::Failed(_) => assert!(r.times.completed.is_some()),
                other => panic!("request {} ended {other:?}", r.id),
            }
            preempted += r.preemptions;
            fetched += r.sources.offload_tier.is_some() as u32;
        }
        // Without offload skipping, FCFS admission is FIFO: first admissions in arrival order.
        if !w.offload && w.cfg.scheduling_policy == SchedulingPolicy::Fcfs {
            let firsts: Vec<f64> = results
                .iter()
                .filter_map(|r| r.times.first_scheduled)
                .collect();
            assert!(firsts.windows(2).all(|p| p[0] <= p[1]), "seed {seed}");
        }
    }
    // The workloads exercise the interesting paths.
    assert!(completed > 1000 && preempted > 50 && fetched > 50);
}

#[test]
fn same_inputs_give_identical_timestamps() {
    for seed in [3, 17, 99] {
        let w = random_workload(seed);
        let a = simulate(&w);
        let b = simulate(&w);
        assert_eq!(a, b);
    }
}
