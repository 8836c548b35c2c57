//! The step-by-step scheduler: vLLM v1's `Scheduler.schedule()` / `update_from_output()`.
//!
//! Like vLLM v1 there is no separate prefill and decode phase: every sequence has
//! `num_tokens` (prompt + tokens generated so far) and `num_computed_tokens` (tokens whose
//! KV is in the cache), and each step schedules some of the difference. A sequence whose
//! `num_computed_tokens` reaches `num_tokens` samples one token at the end of the step.
//!
//! Prefix caching follows vLLM v1's `KVCacheManager.allocate_slots`: the full blocks a
//! step will fill are cached when they are allocated (a request admitted later in the
//! same step hits them), generated tokens are hashed like prompt tokens (the next turn of
//! a conversation hits the reply), and a request's blocks are freed last block first.
//! `engine/tests/vllm_*.rs` run vLLM's own tests against it.
//!
//! This file is the policy: the waiting and running queues, the token budget, chunked
//! prefill, preemption and prefix caching. How the sequences are stored is
//! [`super::sequences`]' business.

use super::opal_batch::{OpalBatch, StandingBatch};
use super::request_queue::{QueueKey, RequestQueue};
use super::sequences::{Progress, Sequence, Sequences, Slot};
use super::{
    FetchStart, KvReceive, OffloadLookup, ScheduledSeq, SchedulerConfig, SchedulerOutput,
    SchedulingPolicy, StepOutcome,
};
use crate::hardware::Hardware;
use crate::kv_cache::{BlockId, BlockPool, BlockTable};
use crate::kv_events::KvEvent;
use crate::model::Model;
use crate::request::{BlockHash, FailReason, Request, RequestState, Source, TokenSources};
use crate::timing::{SeqWork, TimingModel};

enum Consider {
    Admitted,
    Fetching,
    Blocked,
}

/// One worker's scheduler: waiting queue, running batch, KV blocks, step-time model.
///
/// `repr(C)`, cache-line aligned: the fields every step reads come first, together in a
/// few cache lines (with 64 workers a worker's state has left the L1 cache by its next
/// step, so each line a step touches is a miss).
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Scheduler {
    /// The requests on this worker (first: every step reads their progress).
    seqs: Sequences,
    /// Running requests in admission order.
    running: Vec<Slot>,
    /// The batch of the step in progress: (slot, tokens).
    in_flight: Vec<(Slot, u32)>,
    /// Reused buffer for the slots finishing in a step.
    finished: Vec<Slot>,
    /// Requests in FETCH_KVC or READY, in the order their fetches started.
    kvc: Vec<Slot>,
    /// WAITING requests in admission order (FIFO, or by priority).
    waiting: RequestQueue,
    steps: u64,
    /// Prefill tokens computed so far (every computed token but first-time decodes).
    prefill_tokens: u64,
    /// From a step's end to the client seeing its tokens (the front end's streaming).
    token_output_delay: f64,
    /// Tokens per offload chunk when the worker stores KV as it is computed.
    offload_chunk: Option<u32>,
    /// A prefill worker's: hand each request off after its first token.
    hand_off: bool,
    /// `cfg`'s figures every step reads, copied here so a step need not visit `cfg`.
    max_num_batched_tokens: u32,
    block_size: u32,
    /// Most tokens a request computes in one step: the long-prefill threshold under
    /// chunked prefill, otherwise no limit.
    chunk_cap: u32,
    /// Prices every step.
    timing: TimingModel,
    cfg: SchedulerConfig,
    pool: BlockPool,
    /// Prefilled requests handed to a decode worker, holding their blocks until released.
    sending: Vec<Slot>,
    worker: u32,
    max_model_len: u32,
    kv_bytes_per_token: u64,
    /// The original Opal's batching rules (all off: vLLM's).
    opal: OpalBatch,
    /// The persistent batch, under `opal.persistent`.
    standing: StandingBatch,
}

impl Scheduler {
    /// A scheduler for worker `worker` serving `model` on `hw`, sizing the KV cache from memory
    /// (or `num_gpu_blocks_override`). Errors say why the configuration cannot run.
    pub fn new(
        worker: u32,
        cfg: &SchedulerConfig,
        model: &Model,
        hw: &Hardware,
    ) -> Result<Self, String> {
        let mut problems = crate::validate::Problems::new();
        cfg.validate("worker", &mut problems);
        if let Some(p) = problems.as_slice().first() {
            return Err(p.to_string());
        }
        let blocks = cfg.gpu_blocks(model, hw).map_err(|e| e.to_string())?;
        let timing = TimingModel::new(&cfg.timing, model, hw, cfg.step_overhead);
        let cfg = cfg.across_ranks(hw.dp);
        Ok(Self::with_blocks(worker, &cfg, model, timing, blocks))
    }

    /// A scheduler with exactly `num_gpu_blocks` KV blocks and the given step-time model
    /// (`cfg` must have passed [`SchedulerConfig::validate`]).
    pub fn with_blocks(
        worker: u32,
        cfg: &SchedulerConfig,
        model: &Model,
        timing: TimingModel,
        num_gpu_blocks: u32,
    ) -> Self {
        Self {
            worker,
            max_num_batched_tokens: cfg.max_num_batched_tokens,
            block_size: cfg.block_size,
            chunk_cap: match cfg.long_prefill_token_threshold {
                t if cfg.chunked_prefill && t > 0 => t,
                _ => u32::MAX,
            },
            cfg: cfg.clone(),
            max_model_len: model.max_model_len(),
            kv_bytes_per_token: model.kv_bytes_per_token,
            pool: BlockPool::new(num_gpu_blocks, cfg.enable_prefix_caching),
            token_output_delay: timing.frontend().token_output,
            timing,
            seqs: Sequences::default(),
            waiting: RequestQueue::new(cfg.scheduling_policy),
            running: Vec::new(),
            sending: Vec::new(),
            hand_off: false,
            kvc: Vec::new(),
            in_flight: Vec::new(),
            finished: Vec::new(),
            steps: 0,
            offload_chunk: None,
            prefill_tokens: 0,
            opal: OpalBatch::default(),
            standing: StandingBatch::default(),
        }
    }

    /// Follows the original Opal's batching rules (see [`OpalBatch`]).
    pub fn set_opal_batch(&mut self, rules: OpalBatch) {
        self.opal = rules;
    }

    /// Whether the next [`Scheduler::schedule`] builds a batch: always under vLLM's rules,
    /// and under Opal's persistent batch when the batch is empty or a member completed.
    pub fn builds_batch(&self) -> bool {
        !self.opal.persistent || self.standing.members().is_none()
    }

    /// Queues `req` (arrived at `now`), or hands it back `Failed` if it can never run here.
    pub fn add_request(&mut self, mut req: Request, now: f64) -> Result<(), Box<Request>> {
        req.worker = Some(self.worker);
        req.times.worker_in = Some(now);
        if self.opal.prefill_step {
            // Opal's prefill step emits no token: its end is the first "token" here, and
            // `output` decode steps follow.
            req.output_len = req.output_len.saturating_add(1);
        }
        self.add_seq(req, now, None)
    }

    /// Queues a request prefilled on another worker (its first token sampled there) whose
    /// prompt KV waits there: once blocks for it are free here, the scheduler lists a
    /// [`KvReceive`] to move the KV this worker's prefix cache lacks, and the request runs
    /// after [`Scheduler::fetch_done`]. Hands it back `Failed` if it can never run here.
    pub fn add_transferred(&mut self, mut req: Request, now: f64) -> Result<(), Box<Request>> {
        req.decode_worker = Some(self.worker);
        let remote = req.prompt_len();
        self.add_seq(req, now, Some(remote))
    }

    fn add_seq(
        &mut self,
        mut req: Request,
        now: f64,
        remote: Option<u32>,
    ) -> Result<(), Box<Request>> {
        if let Some(reason) = self.rejection(&req) {
            req.fail(reason);
            req.times.completed = Some(now);
            return Err(Box::new(req));
        }
        req.state = RequestState::Waiting;
        // Prefill counted on its prefill worker, so `recomputed` adds up at the end.
        let prefill = if remote.is_some() {
            req.sources.computed as u64 + req.sources.recomputed as u64
        } else {
            0
        };
        let key = QueueKey::new(req.priority, req.times.created, req.id);
        let shareable_tokens = {
            let shareable = req.prompt.shareable_len();
            if shareable < req.prompt_len() {
                shareable
            } else if matches!(req.output_source(), Source::Reply { .. }) {
                u32::MAX
            } else {
                req.prompt_len()
            }
        };
        let seq = Sequence {
            req,
            key,
            blocks: BlockTable::default(),
            hashes: Vec::new(),
            shareable_blocks: shareable_tokens / self.block_size,
            ghost: Vec::new(),
            looked_up: false,
            tier_hit: None,
            fetch_to: 0,
            // With async scheduling the batch after the step in flight was decided when that
            // step started, so a request arriving now can join only the one after it.
            admissible_after: if self.cfg.async_scheduling && !self.in_flight.is_empty() {
                self.steps + 2
            } else {
                0
            },
            remote,
            prefill_elsewhere: prefill,
        };
        let slot = self.seqs.insert(seq);
        self.waiting.add(slot, key);
        Ok(())
    }

    fn rejection(&self, req: &Request) -> Option<FailReason> {
        let (prompt, output) = (req.prompt_len(), req.output_len);
        if prompt == 0 {
            return Some(FailReason::EmptyPrompt);
        }
        if output == 0 {
            return Some(FailReason::NoOutputTokens);
        }
        let tokens = prompt as u64 + output as u64;
        if tokens > self.max_model_len as u64 {
            return Some(FailReason::ExceedsMaxModelLen {
                tokens: tokens.min(u32::MAX as u64) as u32,
                max_model_len: self.max_model_len,
            });
        }
        // The last output token is sampled, never fed back: P + O − 1 tokens of KV.
        let blocks_needed = (tokens - 1).div_ceil(self.block_size as u64);
        if blocks_needed > self.pool.num_blocks() as u64 {
            return Some(FailReason::ExceedsKvCapacity {
                blocks_needed: blocks_needed as u32,
                gpu_blocks: self.pool.num_blocks(),
            });
        }
        if !self.cfg.chunked_prefill && prompt > self.cfg.max_num_batched_tokens {
            return Some(FailReason::PromptExceedsBatch {
                prompt,
                max_num_batched_tokens: self.cfg.max_num_batched_tokens,
            });
        }
        None
    }

    /// Decides the next step's batch at time `now` into `out` (cleared first; its lists keep
    /// their memory from step to step): running requests first (preempting when blocks run
    /// out: the most recently admitted, or under `priority` the lowest priority), then
    /// waiting ones in queue order. Blocks enter the prefix cache as they are allocated, so
    /// a request admitted later in the same step hits them.
    ///
    /// An empty batch means nothing can run until a new request arrives or a fetch
    /// finishes: the caller may sleep until then. Offload fetches listed in the output
    /// must be started even when the batch is empty.
    ///
    /// Under the original Opal's persistent batch ([`Scheduler::set_opal_batch`]), the batch
    /// built last runs again, step after step, until one of its members completes.
    pub fn schedule<L: OffloadLookup + ?Sized>(
        &mut self,
        now: f64,
        offload: &mut L,
        out: &mut SchedulerOutput,
    ) {
        debug_assert!(
            self.in_flight.is_empty(),
            "schedule() called again before finish_step()"
        );
        out.clear();
        if self.opal.persistent && self.schedule_standing(out) {
            return;
        }
        loop {
            let mut token_budget = self.max_num_batched_tokens;
            // First, schedule the RUNNING requests.
            self.schedule_running(&mut token_budget, out);
            // Next, schedule the WAITING requests. As vLLM: none in a step that had to
            // preempt — unless the batch is empty, or the caller would sleep with work queued.
            if out.preempted.is_empty() || out.scheduled.is_empty() {
                self.schedule_waiting(now, &mut token_budget, offload, out);
            }
            if out.scheduled.is_empty() && self.release_late_arrivals() {
                // Async scheduling with nothing else to run: the engine's batch queue is
                // empty, so requests that arrived during the last step run now.
                self.schedule_waiting(now, &mut token_budget, offload, out);
            }
            out.num_scheduled_tokens = self.max_num_batched_tokens - token_budget;
            // Under `priority` a request can preempt itself while others still run: vLLM's
            // step is then empty and the next one schedules them. Take that next step now,
            // at the same instant, rather than sleep with requests running.
            if !out.scheduled.is_empty() || self.running.is_empty() {
                break;
            }
        }
        if self.opal.persistent {
            self.standing.build(&self.in_flight);
        }
    }

    /// Runs Opal's persistent batch again, as built: each member's next token if it
    /// decodes, else its prefill chunk (the size it was given, under `frozen_chunks`; else
    /// planned anew under the budget). False, with nothing scheduled, when there is no
    /// standing batch or its members' new blocks are not all free (the batch is then
    /// rebuilt, which preempts as vLLM does).
    fn schedule_standing(&mut self, out: &mut SchedulerOutput) -> bool {
        let mut plan = std::mem::take(&mut self.standing.plan);
        plan.clear();
        let Some(members) = self.standing.members() else {
            self.standing.plan = plan;
            return false;
        };
        let mut token_budget = self.max_num_batched_tokens;
        let mut blocks = 0;
        for &(slot, given) in members {
            let p = self.seqs.progress(slot);
            let remaining = p.num_new_tokens();
            let (n, priced) = if p.num_computed_tokens >= p.num_prompt_tokens {
                (remaining, remaining)
            } else if self.opal.frozen_chunks {
                (remaining.min(given), given)
            } else {
                let n = self.chunk(remaining, token_budget);
                (n, n)
            };
            if n == 0 {
                continue;
            }
            token_budget = token_budget.saturating_sub(n);
            blocks += self.blocks_needed(slot, n);
            plan.push((slot, n, priced));
        }
        if plan.is_empty() || blocks > self.pool.num_free() {
            self.standing.plan = plan;
            self.standing.invalidate();
            return false;
        }
        for &(slot, n, priced) in &plan {
            self.grow_and_cache(slot, n);
            self.push_scheduled(slot, n, out);
            if let Some(last) = out.scheduled.last_mut() {
                last.work.new_tokens = priced;
            }
            out.num_scheduled_tokens += n;
        }
        self.standing.plan = plan;
        true
    }

    /// Makes every waiting request admissible now; true if one was held back by async
    /// scheduling.
    fn release_late_arrivals(&mut self) -> bool {
        let steps = self.steps;
        let mut any = false;
        for slot in self.waiting.iter() {
            let seq = self.seqs.get_mut(slot);
            any |= seq.admissible_after > steps;
            seq.admissible_after = 0;
        }
        any
    }

    /// Gives each running request, in admission order, its next tokens (a whole decode
    /// token, or a prefill chunk) while the budget lasts, preempting others when the
    /// blocks for them run out.
    fn schedule_running(&mut self, token_budget: &mut u32, out: &mut SchedulerOutput) {
        let mut req_index = 0;
        while req_index < self.running.len() && *token_budget > 0 {
            let slot = self.running[req_index];
            let num_new_tokens =
                self.chunk(self.seqs.progress(slot).num_new_tokens(), *token_budget);
            // vLLM's `allocate_slots` loop: preempt until the new blocks fit.
            let mut preempted_self = false;
            while self.pool.num_free() < self.blocks_needed(slot, num_new_tokens) {
                let v = self.victim();
                let victim = self.running.remove(v);
                if v < req_index {
                    // Already scheduled this step (only under `priority`): give back its tokens.
                    req_index -= 1;
                    *token_budget += self.unschedule(victim, out);
                }
                self.preempt(victim, out);
                if victim == slot {
                    // No more requests to preempt: this one cannot run.
                    preempted_self = true;
                    break;
                }
            }
            if preempted_self {
                break;
            }
            self.grow_and_cache(slot, num_new_tokens);
            self.push_scheduled(slot, num_new_tokens, out);
            *token_budget -= num_new_tokens;
            req_index += 1;
        }
    }

    /// Index in `running` of the request to preempt: the last admitted (vLLM's
    /// `running.pop()`), or under `priority` the lowest priority, latest arrival among
    /// equals (vLLM's `max(running, key=(priority, arrival_time))`, first of ties).
    fn victim(&self) -> usize {
        match self.cfg.scheduling_policy {
            SchedulingPolicy::Fcfs => self.running.len() - 1,
            SchedulingPolicy::Priority => {
                let mut best = 0;
                for (k, &s) in self.running.iter().enumerate().skip(1) {
                    if self.seqs.get(s).key.rank() > self.seqs.get(self.running[best]).key.rank() {
                        best = k;
                    }
                }
                best
            }
        }
    }

    /// Takes `slot` out of this step's batch; returns the tokens it had.
    fn unschedule(&mut self, slot: Slot, out: &mut SchedulerOutput) -> u32 {
        let k = self
            .in_flight
            .iter()
            .position(|&(s, _)| s == slot)
            .expect("scheduled this step");
        let (_, n) = self.in_flight.remove(k);
        out.scheduled.remove(k);
        n
    }

    /// Admits fetched, then waiting requests while the budget and the batch have room.
    #[inline]
    fn schedule_waiting<L: OffloadLookup + ?Sized>(
        &mut self,
        now: f64,
        token_budget: &mut u32,
        offload: &mut L,
        out: &mut SchedulerOutput,
    ) {
        // Most steps have nobody queued: skip the call.
        if !self.kvc.is_empty() || !self.waiting.is_empty() {
            self.admit_queued(now, token_budget, offload, out);
        }
    }

    fn admit_queued<L: OffloadLookup + ?Sized>(
        &mut self,
        now: f64,
        token_budget: &mut u32,
        offload: &mut L,
        out: &mut SchedulerOutput,
    ) {
        // Fetched requests first: like vLLM, a request whose KV arrived goes back to the
        // front of the queue. It already holds all its blocks, so it can always run once
        // there is room in the batch, which is what keeps a blocked head from deadlocking
        // against blocks held by fetched requests behind it.
        let mut k = 0;
        while k < self.kvc.len() {
            if *token_budget == 0 || self.running.len() as u32 >= self.cfg.max_num_seqs {
                return;
            }
            let slot = self.kvc[k];
            if self.seqs.progress(slot).state != RequestState::Ready {
                k += 1;
                continue;
            }
            match self.admit_ready(slot, now, token_budget, out) {
                Consider::Admitted => {
                    self.kvc.remove(k);
                }
                _ => return,
            }
        }
        while let Some(slot) = self.waiting.peek() {
            if *token_budget == 0 || self.running.len() as u32 >= self.cfg.max_num_seqs {
                return;
            }
            if self.seqs.get(slot).admissible_after > self.steps {
                // Arrived while the batch queue was full (async scheduling). Under FCFS
                // everyone behind it arrived later still; under `priority` the others wait
                // with it for this one step.
                return;
            }
            match self.consider(slot, now, token_budget, offload, out) {
                Consider::Admitted => {}
                Consider::Fetching => self.kvc.push(slot),
                // Head-of-line: the first request that does not fit stops admission.
                Consider::Blocked => return,
            }
            self.waiting.pop();
        }
    }

    /// Prefix lookup and admission of a WAITING request.
    fn consider<L: OffloadLookup + ?Sized>(
        &mut self,
        slot: Slot,
        now: f64,
        token_budget: &mut u32,
        offload: &mut L,
        out: &mut SchedulerOutput,
    ) -> Consider {
        let bs = self.block_size;
        let num_tokens = self.seqs.progress(slot).num_tokens();
        let times = &mut self.seqs.get_mut(slot).req.times;
        times.kv_lookup_start.get_or_insert(now);
        // Get already-cached tokens: in this worker's GPU cache...
        let (shared_hits, ghost_hits) = self.get_computed_blocks(slot);
        let gpu_blocks = shared_hits + ghost_hits;
        let gpu_tokens = gpu_blocks as u32 * bs;
        let seq = self.seqs.get_mut(slot);
        if let Some(remote) = seq.remote {
            return self.place_transfer(slot, remote, shared_hits, ghost_hits, out);
        }
        // ...and in the offload tiers (vLLM's KV connector).
        if !seq.looked_up {
            seq.tier_hit = offload.lookup(&seq.req.prompt, gpu_tokens);
            seq.looked_up = true;
        }
        let hit = seq.tier_hit;
        let tier_tokens = hit.map_or(0, |h| h.tokens.min(num_tokens - 1) / bs * bs);
        let (evictable_hits, own_prompt_tokens) =
            Self::classify_hits(&self.pool, seq, shared_hits, ghost_hits, bs);
        let prompt = seq.req.prompt_len();

        // A tier holds more: blocks for the whole sequence now, and a fetch into them (vLLM's
        // `load_kv_async`); it is admitted once the KV has landed.
        if let (Some(hit), true) = (hit, tier_tokens > gpu_tokens) {
            if self.kvc.len() as u32 >= self.cfg.max_kvc_ready_requests {
                return Consider::Blocked;
            }
            let Some(seq) =
                self.reserve_for_fetch(slot, shared_hits, ghost_hits, evictable_hits, tier_tokens)
            else {
                return Consider::Blocked;
            };
            seq.req.sources = TokenSources {
                gpu_cache: gpu_tokens - own_prompt_tokens,
                gpu_rehit: own_prompt_tokens,
                offload_tier: Some(hit.tier),
                offload: tier_tokens - gpu_tokens,
                computed: prompt.saturating_sub(tier_tokens),
                recomputed: 0,
            };
            let tokens = tier_tokens - gpu_tokens;
            out.fetches.push(FetchStart {
                request: seq.req.id,
                tier: hit.tier,
                tokens,
                bytes: tokens as u64 * self.kv_bytes_per_token,
            });
            return Consider::Fetching;
        }

        // Otherwise blocks for its first chunk beyond the hits (vLLM's `allocate_slots`), and
        // it runs this step.
        let remaining = num_tokens - gpu_tokens;
        let Some(n) = self.admissible_chunk(remaining, *token_budget) else {
            return Consider::Blocked;
        };
        let need = (gpu_tokens + n).div_ceil(bs) - gpu_blocks as u32;
        if self.pool.num_free() < need + evictable_hits {
            return Consider::Blocked;
        }
        let (seq, p) = self.seqs.both_mut(slot);
        Self::take_hits(&mut self.pool, seq, shared_hits, ghost_hits, bs);
        self.pool.get_new_blocks(need, &mut seq.blocks);
        p.num_blocks = seq.blocks.len() as u32;
        p.num_computed_tokens = gpu_tokens;
        p.num_cached_blocks = gpu_blocks as u32;
        seq.req.times.ready.get_or_insert(now);
        let gpu_prompt = gpu_tokens.min(prompt);
        seq.req.sources = TokenSources {
            gpu_cache: gpu_prompt - own_prompt_tokens,
            gpu_rehit: own_prompt_tokens,
            offload_tier: None,
            offload: 0,
            computed: prompt - gpu_prompt,
            recomputed: 0,
        };
        let upto = (gpu_tokens + n).min(num_tokens);
        Self::cache_full_blocks(&mut self.pool, seq, p, upto, bs);
        self.admit(slot, n, now, token_budget, out);
        Consider::Admitted
    }

    /// The leading blocks of `slot` already in the GPU cache, as vLLM's
    /// `get_computed_blocks`: shared ones found by hash, then (if it found all its shareable
    /// ones) its own private blocks cached when it was preempted. Returns (shared, private)
    /// counts. At least the last token is left to compute, so its logits can be sampled.
    fn get_computed_blocks(&mut self, slot: Slot) -> (usize, usize) {
        let bs = self.block_size;
        let (seq, p) = self.seqs.both_mut(slot);
        let max_hit_blocks = ((p.num_tokens() - 1) / bs) as usize;
        if self.pool.caching_enabled() {
            seq.ensure_hashes(max_hit_blocks as u32, bs, p.tokens_emitted);
        }
        let shared_hits = self
            .pool
            .find_longest_cache_hit(&seq.hashes[..max_hit_blocks.min(seq.hashes.len())]);
        let ghost_hits = if shared_hits as u32 == seq.shareable_blocks {
            let base = shared_hits as u64;
            let id = seq.req.id;
            seq.ghost
                .iter()
                .take(max_hit_blocks - shared_hits.min(max_hit_blocks))
                .enumerate()
                .take_while(|&(j, &b)| self.pool.holds_private(b, private_tag(id, base + j as u64)))
                .count()
        } else {
            0
        };
        (shared_hits, ghost_hits)
    }

    /// Places a prefilled request whose `remote` prompt tokens wait on its prefill worker:
    /// blocks for the whole sequence now (so it never waits for memory once its KV lands),
    /// the prefix-cache hits kept, and a transfer of the rest listed for the caller.
    fn place_transfer(
        &mut self,
        slot: Slot,
        remote: u32,
        shared_hits: usize,
        ghost_hits: usize,
        out: &mut SchedulerOutput,
    ) -> Consider {
        let bs = self.block_size;
        if self.kvc.len() as u32 >= self.cfg.max_kvc_ready_requests {
            return Consider::Blocked;
        }
        let seq = self.seqs.get(slot);
        let gpu_tokens = (shared_hits + ghost_hits) as u32 * bs;
        let (evictable_hits, _) = Self::classify_hits(&self.pool, seq, shared_hits, ghost_hits, bs);
        let Some(seq) =
            self.reserve_for_fetch(slot, shared_hits, ghost_hits, evictable_hits, remote)
        else {
            return Consider::Blocked;
        };
        seq.remote = None;
        let tokens = remote - gpu_tokens.min(remote);
        out.receives.push(KvReceive {
            request: seq.req.id,
            tokens,
            cached_tokens: gpu_tokens.min(remote),
            bytes: tokens as u64 * self.kv_bytes_per_token,
        });
        Consider::Fetching
    }

    /// Blocks for `slot`'s whole sequence at once, its prefix-cache hits kept, so a request
    /// whose KV comes from elsewhere (an offload tier, a prefill worker) never waits for
    /// memory once it lands; it then fetches up to `fetch_to`. `None`, with nothing taken,
    /// when the pool lacks room.
    fn reserve_for_fetch(
        &mut self,
        slot: Slot,
        shared_hits: usize,
        ghost_hits: usize,
        evictable_hits: u32,
        fetch_to: u32,
    ) -> Option<&mut Sequence> {
        let bs = self.block_size;
        let gpu_blocks = (shared_hits + ghost_hits) as u32;
        let (seq, p) = self.seqs.both_mut(slot);
        let need = p.num_tokens().div_ceil(bs) - gpu_blocks;
        if self.pool.num_free() < need + evictable_hits {
            return None;
        }
        Self::take_hits(&mut self.pool, seq, shared_hits, ghost_hits, bs);
        self.pool.get_new_blocks(need, &mut seq.blocks);
        p.num_blocks = seq.blocks.len() as u32;
        p.num_computed_tokens = gpu_blocks * bs;
        p.num_cached_blocks = gpu_blocks;
        seq.fetch_to = fetch_to;
        p.state = RequestState::FetchKvc;
        Some(seq)
    }

    /// Of a waiting request's prefix hits (`shared` found by hash, then `ghost` of its own
    /// private blocks): how many are free — taking them off the free queue costs a block
    /// each, as vLLM's `num_evictable_computed_blocks` counts — and how many of its prompt
    /// tokens they hold that it filled itself before a preemption (re-hits, not hits).
    fn classify_hits(
        pool: &BlockPool,
        seq: &Sequence,
        shared: usize,
        ghost: usize,
        block_size: u32,
    ) -> (u32, u32) {
        let prompt = seq.req.prompt_len();
        let prompt_in = |b: usize| {
            let b = b as u32;
            prompt
                .min((b + 1) * block_size)
                .saturating_sub(b * block_size)
        };
        let by_hash = seq.hashes[..shared]
            .iter()
            .map(|h| pool.get_cached_block(*h).expect("a hit is cached"));
        let (mut evictable, mut own) = (0, 0);
        for (b, id) in by_hash
            .chain(seq.ghost[..ghost].iter().copied())
            .enumerate()
        {
            evictable += pool.is_free(id) as u32;
            if pool.owner(id) == seq.req.id {
                own += prompt_in(b);
            }
        }
        (evictable, own)
    }

    /// Admission of a READY request (its prefix already fetched into its blocks).
    fn admit_ready(
        &mut self,
        slot: Slot,
        now: f64,
        token_budget: &mut u32,
        out: &mut SchedulerOutput,
    ) -> Consider {
        let remaining = self.seqs.progress(slot).num_new_tokens();
        let Some(n) = self.admissible_chunk(remaining, *token_budget) else {
            return Consider::Blocked;
        };
        if self.pool.num_free() < self.blocks_needed(slot, n) {
            return Consider::Blocked;
        }
        self.grow_and_cache(slot, n);
        self.admit(slot, n, now, token_budget, out);
        Consider::Admitted
    }

    fn admit(
        &mut self,
        slot: Slot,
        n: u32,
        now: f64,
        token_budget: &mut u32,
        out: &mut SchedulerOutput,
    ) {
        let times = &mut self.seqs.get_mut(slot).req.times;
        times.first_scheduled.get_or_insert(now);
        self.running.push(slot);
        self.push_scheduled(slot, n, out);
        *token_budget -= n;
    }

    /// Tokens a running request may compute this step.
    fn chunk(&self, remaining: u32, token_budget: u32) -> u32 {
        remaining.min(self.chunk_cap).min(token_budget)
    }

    /// Tokens a request being admitted may compute, or `None` when chunked prefill is off
    /// and the rest of its prompt does not fit the budget left (a recompute longer than
    /// the whole budget is chunked anyway, or it could never run again).
    fn admissible_chunk(&self, remaining: u32, token_budget: u32) -> Option<u32> {
        if !self.cfg.chunked_prefill
            && remaining > token_budget
            && remaining <= self.cfg.max_num_batched_tokens
        {
            return None;
        }
        Some(self.chunk(remaining, token_budget))
    }

    /// Blocks `slot` lacks for `n` more tokens.
    fn blocks_needed(&self, slot: Slot, n: u32) -> u32 {
        self.seqs.progress(slot).blocks_lacking(n, self.block_size)
    }

    /// Allocates the blocks `n` more tokens of `slot` need (the caller checked they are
    /// free) and offers the blocks they fill to the prefix cache, as vLLM's
    /// `allocate_slots` does.
    #[inline(always)]
    fn grow_and_cache(&mut self, slot: Slot, n: u32) {
        let bs = self.block_size;
        let p = self.seqs.progress(slot);
        let need = p.blocks_lacking(n, bs);
        let upto = (p.num_computed_tokens + n).min(p.num_tokens());
        let fills = Self::fills_block(&self.pool, p, upto, bs);
        // Most calls are decodes inside their last block: nothing to allocate or cache, and
        // no need to visit the rest of the sequence.
        if need == 0 && !fills {
            return;
        }
        let (seq, p) = self.seqs.both_mut(slot);
        if need > 0 {
            let ok = self.pool.get_new_blocks(need, &mut seq.blocks);
            debug_assert!(ok, "grow_and_cache() after a free-block check");
            p.num_blocks = seq.blocks.len() as u32;
        }
        if fills {
            Self::cache_filled_blocks(&mut self.pool, seq, p, upto, bs);
        }
    }

    #[inline]
    fn push_scheduled(&mut self, slot: Slot, n: u32, out: &mut SchedulerOutput) {
        let p = self.seqs.progress_mut(slot);
        let decode = p.num_computed_tokens >= p.num_prompt_tokens
            && p.num_computed_tokens + 1 == p.num_tokens();
        p.state = if decode {
            RequestState::Decode
        } else {
            RequestState::Prefill
        };
        let scheduled = ScheduledSeq {
            request: p.id,
            work: SeqWork {
                new_tokens: n,
                context: p.num_computed_tokens,
                decode,
            },
        };
        out.scheduled.push(scheduled);
        self.in_flight.push((slot, n));
    }

    /// Puts the prefix-cache hits into the block table: shared blocks by hash, then the
    /// request's own private blocks by id.
    fn take_hits(
        pool: &mut BlockPool,
        seq: &mut Sequence,
        shared_hits: usize,
        ghost_hits: usize,
        block_size: u32,
    ) {
        seq.reserve_table(pool, block_size);
        pool.touch(&seq.hashes[..shared_hits], &mut seq.blocks);
        pool.touch_private(&seq.ghost[..ghost_hits], &mut seq.blocks);
        seq.ghost.clear();
    }

    /// Recompute preemption: free the blocks, forget progress, back to the queue.
    fn preempt(&mut self, slot: Slot, out: &mut SchedulerOutput) {
        let bs = self.block_size;
        let (seq, p) = self.seqs.both_mut(slot);
        // Blocks cached for this step's tokens were never computed: forget their content.
        let computed_blocks = p.num_computed_tokens / bs;
        let uncomputed = computed_blocks as usize..p.num_cached_blocks as usize;
        for id in seq.blocks.ids_in(uncomputed) {
            self.pool.uncache(id);
        }
        let cached = p.num_cached_blocks.min(computed_blocks);
        // Its private computed blocks stay reusable (by it alone) until evicted: they are
        // cached under its tags now (see `cache_full_blocks`).
        let private = seq.shareable_blocks.min(cached)..cached;
        let private = private.start as usize..private.end as usize;
        // A fresh vector: cheaper than refilling the old one through the runs' ids.
        seq.ghost = seq.blocks.ids_in(private.clone()).collect();
        for (b, &id) in private.zip(&seq.ghost) {
            let tag = private_tag(seq.req.id, b as u64);
            self.pool.cache_private(id, tag, seq.req.id);
        }
        self.pool.free_blocks(&seq.blocks);
        seq.blocks.clear();
        p.num_blocks = 0;
        p.high_water = p.high_water.max(p.num_computed_tokens);
        p.num_computed_tokens = 0;
        p.num_cached_blocks = 0;
        seq.looked_up = false;
        seq.tier_hit = None;
        seq.req.preemptions += 1;
        p.state = RequestState::Waiting;
        out.preempted.push(p.id);
        let key = seq.key;
        self.waiting.prepend(slot, key);
    }

    /// Applies the step that `schedule` decided, ending at time `now`, into `outcome`
    /// (cleared first; its lists keep their memory from step to step): progress, tokens,
    /// completions. First tokens and completions are stamped when the client sees them
    /// (the front end's output delay later); gaps between tokens are the steps'.
    pub fn finish_step(&mut self, now: f64, outcome: &mut StepOutcome) {
        outcome.clear();
        let mut in_flight = std::mem::take(&mut self.in_flight);
        if !in_flight.is_empty() {
            self.steps += 1;
        }
        let mut finished = std::mem::take(&mut self.finished);
        finished.clear();
        for &(slot, n) in &in_flight {
            if let Some(cs) = self.offload_chunk {
                self.report_computed_chunks(slot, n, cs, outcome);
            }
            let p = self.seqs.progress_mut(slot);
            let computed = p.num_computed_tokens;
            // Every token but a first-time decode is prefill (recomputed ones included).
            let decode_from = computed.max(p.num_prompt_tokens).max(p.high_water);
            let prefill = n - (computed + n).saturating_sub(decode_from).min(n);
            p.prefill += prefill as u64;
            outcome.prefill_tokens += prefill as u64;
            p.num_computed_tokens = computed + n;
            if p.num_computed_tokens < p.num_tokens() {
                continue;
            }
            p.tokens_emitted += 1;
            outcome.tokens_emitted += 1;
            let first_token = p.last_token_at.is_nan();
            if !first_token {
                outcome.token_gaps.push((p.id, now - p.last_token_at));
            }
            p.last_token_at = now;
            let done = p.tokens_emitted >= p.output_len;
            let hand_off = self.hand_off && p.tokens_emitted == 1;
            if first_token {
                let id = p.id;
                self.seqs.get_mut(slot).req.times.first_token = Some(now + self.token_output_delay);
                outcome.first_tokens.push(id);
            }
            if !done && !hand_off {
                continue;
            }
            let (seq, p) = self.seqs.both_mut(slot);
            let req = &mut seq.req;
            req.sources.recomputed = p
                .prefill
                .saturating_sub(req.sources.computed as u64)
                .min(u32::MAX as u64) as u32;
            if done {
                req.decode_prefill = (p.prefill - seq.prefill_elsewhere) as u32;
                p.state = RequestState::Completed;
                req.times.completed = Some(now + self.token_output_delay);
                finished.push(slot);
            } else {
                p.state = RequestState::Transferring;
                outcome.handoffs.push(self.seqs.request(slot).clone());
                self.sending.push(slot);
            }
        }
        self.prefill_tokens += outcome.prefill_tokens;
        in_flight.clear();
        self.in_flight = in_flight;
        if !finished.is_empty() || !outcome.handoffs.is_empty() {
            self.standing.invalidate();
            let seqs = &self.seqs;
            self.running.retain(|&s| {
                !matches!(
                    seqs.progress(s).state,
                    RequestState::Completed | RequestState::Transferring
                )
            });
            for &slot in &finished {
                // Its private blocks are dead: nobody else has their content.
                let cached = self.seqs.progress(slot).num_cached_blocks as usize;
                let seq = self.seqs.remove(slot);
                let private = (seq.shareable_blocks as usize).min(cached)..cached;
                self.pool.free_finished(&seq.blocks, private);
                outcome.finished.push(seq.req);
            }
        }
        self.finished = finished;
    }

    /// Lists the offload chunks of `chunk_size` tokens that `n` more computed tokens of
    /// `slot` complete.
    fn report_computed_chunks(
        &self,
        slot: Slot,
        n: u32,
        chunk_size: u32,
        outcome: &mut StepOutcome,
    ) {
        let p = self.seqs.progress(slot);
        let (from, to) = (
            p.num_computed_tokens / chunk_size,
            (p.num_computed_tokens + n) / chunk_size,
        );
        if to > from {
            let seq = self.seqs.get(slot);
            let output = seq.output(p.tokens_emitted);
            let hashes = seq.req.prompt.sequence_hashes(chunk_size, output, 0, 0);
            outcome
                .computed_chunks
                .extend(hashes.take(to as usize).skip(from as usize));
        }
    }

    /// Caches the full blocks among the first `tokens` tokens not cached yet: shareable
    /// ones under their hash. Private ones are only counted: only this request can hit
    /// them, and only after a preemption, so `preempt` caches them under its own tags then
    /// (and at its end they are dead), sparing the pool a visit to each block.
    #[inline]
    fn cache_full_blocks(
        pool: &mut BlockPool,
        seq: &mut Sequence,
        p: &mut Progress,
        tokens: u32,
        block_size: u32,
    ) {
        // Most calls (decodes inside a block) fill nothing: skip the division, and the call.
        if Self::fills_block(pool, p, tokens, block_size) {
            Self::cache_filled_blocks(pool, seq, p, tokens, block_size);
        }
    }

    /// True when the first `tokens` tokens fill a block not offered to the prefix cache yet.
    #[inline]
    fn fills_block(pool: &BlockPool, p: &Progress, tokens: u32, block_size: u32) -> bool {
        pool.caching_enabled() && tokens >= (p.num_cached_blocks + 1) * block_size
    }

    /// [`Scheduler::cache_full_blocks`] once a block is known to have filled.
    #[inline(never)]
    fn cache_filled_blocks(
        pool: &mut BlockPool,
        seq: &mut Sequence,
        p: &mut Progress,
        tokens: u32,
        block_size: u32,
    ) {
        let full = tokens / block_size;
        seq.ensure_hashes(full, block_size, p.tokens_emitted);
        let shareable = full.min(seq.hashes.len() as u32);
        pool.cache_full_blocks(
            &seq.blocks,
            &seq.hashes[..shareable as usize],
            p.num_cached_blocks as usize,
            p.id,
        );
        p.num_cached_blocks = full;
    }

    /// The offload fetch of request `id` finished at `now`: it becomes READY.
    /// Returns false if `id` is not fetching on this worker.
    pub fn fetch_done(&mut self, id: u64, now: f64) -> bool {
        let Some(slot) = self.seqs.find(id) else {
            return false;
        };
        let bs = self.block_size;
        let (seq, p) = self.seqs.both_mut(slot);
        if p.state != RequestState::FetchKvc {
            return false;
        }
        let fetched = seq.fetch_to;
        p.num_computed_tokens = fetched;
        Self::cache_full_blocks(&mut self.pool, seq, p, fetched, bs);
        p.state = RequestState::Ready;
        seq.req.times.ready.get_or_insert(now);
        true
    }

    /// A decode worker holds request `id`'s KV now: free the blocks it held here (their
    /// content stays in the prefix cache). Returns false if `id` is not handed off here.
    pub fn release(&mut self, id: u64) -> bool {
        let Some(slot) = self.seqs.find(id) else {
            return false;
        };
        let Some(k) = self.sending.iter().position(|&s| s == slot) else {
            return false;
        };
        self.sending.remove(k);
        let seq = self.seqs.remove(slot);
        self.pool.free_blocks(&seq.blocks);
        true
    }

    /// Makes this a prefill worker's scheduler: each request that samples its first token
    /// (and wants more) is handed off ([`StepOutcome::handoffs`]) instead of decoding here.
    pub fn set_hand_off(&mut self, on: bool) {
        self.hand_off = on;
    }

    /// Requests handed off whose blocks this worker still holds.
    pub fn num_sending(&self) -> usize {
        self.sending.len()
    }

    /// From a step's end to the client seeing its tokens, seconds.
    pub fn token_output_delay(&self) -> f64 {
        self.token_output_delay
    }

    /// Duration of the step `out` describes, from the configured timing model, seconds.
    pub fn step_time(&self, out: &SchedulerOutput) -> f64 {
        self.timing.step_time(out.work())
    }

    /// The step-time model.
    pub fn timing(&self) -> &TimingModel {
        &self.timing
    }

    /// Drains the GPU prefix cache's stored/removed events, in order (for the periodic flush).
    pub fn take_kv_events(&mut self) -> Vec<KvEvent> {
        self.pool.take_events()
    }

    /// Reports the offload chunks of `chunk_size` tokens each step completes
    /// ([`StepOutcome::computed_chunks`]); `None` (the default) reports none.
    pub fn set_offload_chunks(&mut self, chunk_size: Option<u32>) {
        self.offload_chunk = chunk_size.filter(|&c| c > 0);
    }

    /// Records KV events for the router (on by default; off when no policy reads them).
    pub fn set_record_kv_events(&mut self, on: bool) {
        self.pool.set_record_events(on);
    }

    /// The GPU block pool (read-only), for statistics.
    pub fn block_pool(&self) -> &BlockPool {
        &self.pool
    }

    /// Worker id stamped on requests.
    pub fn worker_id(&self) -> u32 {
        self.worker
    }

    /// The configuration in force.
    pub fn config(&self) -> &SchedulerConfig {
        &self.cfg
    }

    /// Requests queued (WAITING, FETCH_KVC or READY).
    pub fn num_waiting(&self) -> usize {
        self.waiting.len() + self.kvc.len()
    }

    /// Requests in the running batch.
    pub fn num_running(&self) -> usize {
        self.running.len()
    }

    /// Requests fetching from offload tiers or fetched and not yet admitted.
    pub fn num_kvc_pending(&self) -> u32 {
        self.kvc.len() as u32
    }

    /// Requests on this worker that have not finished (handed-off ones still holding
    /// blocks included).
    pub fn num_unfinished(&self) -> usize {
        self.waiting.len() + self.kvc.len() + self.running.len() + self.sending.len()
    }

    /// Steps completed so far.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Prefill tokens computed so far: every computed token except each generated token's
    /// first decode (prompt chunks and recomputation after preemption). Equals the sum of
    /// `sources.computed + sources.recomputed` over the requests once they finish.
    pub fn prefill_tokens(&self) -> u64 {
        self.prefill_tokens
    }

    /// Ids of the waiting requests, in the order they will be considered.
    pub fn waiting_ids(&self) -> Vec<u64> {
        self.waiting
            .iter()
            .map(|s| self.seqs.get(s).req.id)
            .collect()
    }

    /// Ids of the running requests, in admission order.
    pub fn running_ids(&self) -> Vec<u64> {
        self.running
            .iter()
            .map(|&s| self.seqs.get(s).req.id)
            .collect()
    }

    /// The block table of request `id`, if it is on this worker.
    pub fn block_table(&self, id: u64) -> Option<Vec<BlockId>> {
        let slot = self.seqs.find(id)?;
        Some(self.seqs.get(slot).blocks.ids().collect())
    }

    /// How many leading blocks of request `id`'s table hold cached content (shareable
    /// blocks in the prefix cache, then private ones), if it is on this worker.
    pub fn num_cached_blocks(&self, id: u64) -> Option<u32> {
        let slot = self.seqs.find(id)?;
        Some(self.seqs.progress(slot).num_cached_blocks)
    }

    /// Fraction of KV blocks referenced by requests, in [0, 1].
    pub fn kv_usage(&self) -> f64 {
        let total = self.pool.num_blocks();
        if total == 0 {
            0.0
        } else {
            self.pool.num_used() as f64 / total as f64
        }
    }

    /// The state of request `id` if it is on this worker (`&mut`: the fields a step
    /// updates are kept apart from the request and copied back to it first).
    pub fn request(&mut self, id: u64) -> Option<&Request> {
        let slot = self.seqs.find(id)?;
        Some(self.seqs.request(slot))
    }

    /// Full consistency check (O(requests + blocks)); for tests and debugging.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.pool.check_invariants()?;
        if self.running.len() > self.cfg.max_num_seqs as usize {
            return Err(format!("{} running > max_num_seqs", self.running.len()));
        }
        let mut refs = 0u64;
        for &s in &self.running {
            let (seq, state) = (self.seqs.get(s), self.seqs.progress(s).state);
            if !matches!(state, RequestState::Prefill | RequestState::Decode) {
                return Err(format!("running request {} is {:?}", seq.req.id, state));
            }
            refs += seq.blocks.len() as u64;
        }
        for s in self.waiting.iter() {
            let (seq, state) = (self.seqs.get(s), self.seqs.progress(s).state);
            if state != RequestState::Waiting || !seq.blocks.is_empty() {
                return Err(format!(
                    "queued request {} is {:?} with {} blocks",
                    seq.req.id,
                    state,
                    seq.blocks.len()
                ));
            }
        }
        if self.kvc.len() > self.cfg.max_kvc_ready_requests as usize {
            return Err(format!("{} requests fetching or fetched", self.kvc.len()));
        }
        for &s in &self.kvc {
            let (seq, state) = (self.seqs.get(s), self.seqs.progress(s).state);
            if !matches!(state, RequestState::FetchKvc | RequestState::Ready) {
                return Err(format!("fetch list holds {} in {:?}", seq.req.id, state));
            }
            refs += seq.blocks.len() as u64;
        }
        for &s in &self.sending {
            let (seq, state) = (self.seqs.get(s), self.seqs.progress(s).state);
            if state != RequestState::Transferring {
                return Err(format!("sending list holds {} in {:?}", seq.req.id, state));
            }
            refs += seq.blocks.len() as u64;
        }
        self.seqs.check()?;
        if refs != self.pool.total_refs() {
            return Err(format!(
                "block tables hold {refs} references, pool counts {}",
                self.pool.total_refs()
            ));
        }
        if self.seqs.len() != self.num_unfinished() {
            return Err("id index out of step with the queues".into());
        }
        Ok(())
    }
}

/// The tag of block `index` of request `id`'s private content (never in the shared index).
fn private_tag(id: u64, index: u64) -> BlockHash {
    crate::rng::splitmix64(id.rotate_left(29) ^ crate::rng::splitmix64(index))
}
