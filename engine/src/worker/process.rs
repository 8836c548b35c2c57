//! A worker's concurrent loops (SPEC §3), shaped as the seed describes Opal's vLLM worker.
//!
//! - **intake**: the serving engine's front end. It drains the worker's local store in
//!   order, holds each request for the front end's delay (HTTP, tokenisation, hand-off to
//!   the engine; zero unless the timing model is calibrated), then puts it in the
//!   scheduler's waiting queue and wakes the scheduler loop, only if it is idle; with
//!   nothing to drain it sleeps on `timeout(∞)` until [`Worker::queue_work`] interrupts it.
//! - **scheduler loop**: steps while there is runnable work (each step inline, so it is
//!   atomic with respect to interrupts, like Opal's `yield from _scheduler_step()`), and
//!   otherwise sleeps on `timeout(∞)` until the intake or a finished KV fetch wakes it.
//! - **KV-event flush**: every `kv_event_interval` sends the GPU cache's and the offload
//!   tiers' stored/removed events and the GPU cache's usage to the router (only when the
//!   routing policy reads them); with nothing new to say it sleeps on `timeout(∞)` until
//!   a step or a tier write wakes it, so an idle worker costs no events.
//! - **KV fetches**: one short process per request in FETCH_KVC, moving its prefix over the
//!   tiers' links, then marking it READY.
//! - **KV transfers** (disaggregated deployments): a prefill worker hands each request off
//!   after its first token and holds its blocks; the decode worker, once it has allocated
//!   blocks for it, moves the KV over the prefill worker's link (one short process per
//!   request), marks it READY, and tells the prefill worker to free its blocks.
//!
//! Each idle flag is cleared by whoever sends the wake-up, so a process is interrupted at
//! most once per sleep and never while it waits on anything else.

use super::{
    FetchStart, KvReceive, OffloadLookup, Scheduler, SchedulerOutput, StepOutcome, TierHit,
    OPAL_STEP_DELAY,
};
use crate::deployment::pool::Pool;
use crate::deployment::PoolRole;
use crate::kernel::{AsEvent, Process, SimError, Store};
use crate::kv_events::{KvEvent, KvEventBatch, KvReport};
use crate::offload::OffloadTiers;
use crate::platform::WorkerShared;
use crate::request::{PromptContent, Request};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

type Loop = Process<Result<(), SimError>>;

/// What prefill and decode workers tell the router in a disaggregated deployment.
pub(crate) enum Handoff {
    /// Prefill worker `from` sampled `request`'s first token: it needs a decode worker.
    Prefilled { request: Box<Request>, from: u32 },
    /// Prefill worker `worker` freed a request's KV (its decode worker holds it now).
    Released { worker: u32 },
}

/// One vLLM-style worker: a scheduler driven by its loops.
pub(crate) struct Worker {
    /// Worker id (never reused within a run).
    pub id: u32,
    shared: Rc<WorkerShared>,
    local_queue: Store<Request>,
    /// The router's results store (completed and rejected requests go there at once).
    results: Store<Request>,
    /// The router's KV event store.
    kv_events: Store<KvReport>,
    /// The router's store of hand-offs and released KV (disaggregated deployments).
    handoffs: Store<Handoff>,
    /// The prefill worker each transferred request's KV waits on, by request id.
    sources: RefCell<BTreeMap<u64, Rc<Worker>>>,
    state: RefCell<State>,
    intake: RefCell<Option<Loop>>,
    scheduler_loop: RefCell<Option<Loop>>,
    flush: RefCell<Option<Loop>>,
}

struct State {
    scheduler: Scheduler,
    /// When the front end hands over the last request it took (it works in arrival order).
    frontend_free_at: f64,
    intake_idle: bool,
    scheduler_idle: bool,
    flush_idle: bool,
    stopped: bool,
    /// Tier events caused by this worker's stores, flushed with the GPU events.
    tier_events: Vec<KvEvent>,
    /// Prices a step's FLOPs and bytes at 100 % of peak, for the utilisation series.
    peak: crate::timing::Roofline,
    /// The timing model counts work as `peak` does, so a step's time follows from it.
    same_work: bool,
    /// The GPU's peak FLOP/s and HBM bytes/s, for the utilisation series (read every step:
    /// kept here rather than behind the pool's hardware).
    peak_flops: f64,
    peak_bandwidth: f64,
    /// The batch of the step in progress (reused from step to step).
    out: SchedulerOutput,
    /// What the last step produced (reused from step to step).
    outcome: StepOutcome,
    /// The end of a step that the original Opal's hand-back has yet to deal with
    /// (`step_delays`).
    opal_hand_back: Option<StepEnd>,
}

/// What a step leaves to do once it has run (see [`Worker::end_step`]).
struct StepEnd {
    computed_chunks: Option<Vec<crate::request::BlockHash>>,
    handoffs: Option<Vec<Request>>,
    finished: Option<Vec<Request>>,
    now: f64,
}

/// The scheduler's view of the offload tiers from one worker.
struct TierLookup<'a> {
    tiers: &'a OffloadTiers,
    worker: u32,
}

impl OffloadLookup for TierLookup<'_> {
    fn lookup(&mut self, prompt: &PromptContent, from_token: u32) -> Option<TierHit> {
        if self.tiers.is_empty() {
            return None;
        }
        let hashes: Vec<_> = prompt.block_hashes(self.tiers.chunk_size()).collect();
        let hit = self.tiers.lookup(self.worker, &hashes);
        (hit.tokens > from_token).then(|| TierHit {
            tier: hit.deepest_tier().unwrap_or(0),
            tokens: hit.tokens,
        })
    }
}

impl Worker {
    /// Builds worker `id` of pool `p` and starts its loops.
    pub(crate) fn start(
        shared: &Rc<WorkerShared>,
        p: &Pool,
        id: u32,
        results: Store<Request>,
        kv_events: Store<KvReport>,
        handoffs: Store<Handoff>,
    ) -> Rc<Self> {
        let mut scheduler = Scheduler::with_blocks(
            id,
            &p.scheduler,
            &shared.model,
            crate::timing::TimingModel::new(
                &p.scheduler.timing,
                &shared.model,
                &p.hardware,
                p.scheduler.step_overhead,
            ),
            p.num_gpu_blocks,
        );
        scheduler.set_record_kv_events(shared.kv_event_interval.is_some());
        scheduler.set_offload_chunks(shared.tiers.store_as_computed());
        scheduler.set_hand_off(p.role == PoolRole::Prefill);
        scheduler.set_opal_batch(shared.opal_batch);
        let peak = crate::timing::Roofline::new(
            &crate::timing::TimingConfig {
                compute_efficiency: 1.0,
                memory_efficiency: 1.0,
                ..Default::default()
            },
            &shared.model,
            &p.hardware,
            0.0,
        );
        let same_work = scheduler.timing().counts_work_as(&peak);
        let worker = Rc::new(Self {
            id,
            shared: Rc::clone(shared),
            local_queue: Store::new(&shared.env),
            results,
            kv_events,
            handoffs,
            sources: RefCell::new(BTreeMap::new()),
            state: RefCell::new(State {
                scheduler,
                frontend_free_at: 0.0,
                intake_idle: false,
                scheduler_idle: false,
                flush_idle: false,
                stopped: false,
                tier_events: Vec::new(),
                same_work,
                peak,
                peak_flops: p.hardware.peak_flops(),
                peak_bandwidth: p.hardware.bandwidth(),
                out: SchedulerOutput::default(),
                outcome: StepOutcome::default(),
                opal_hand_back: None,
            }),
            intake: RefCell::new(None),
            scheduler_loop: RefCell::new(None),
            flush: RefCell::new(None),
        });
        // The scheduler loop first, so the intake can always find it to wake.
        let env = &shared.env;
        *worker.scheduler_loop.borrow_mut() = Some(env.process(Rc::clone(&worker).schedule_loop()));
        *worker.intake.borrow_mut() = Some(env.process(Rc::clone(&worker).intake_loop()));
        if let Some(interval) = shared.kv_event_interval {
            *worker.flush.borrow_mut() = Some(env.process(Rc::clone(&worker).flush_loop(interval)));
        }
        worker
    }

    /// The router hands a request to this worker (Opal's `queue_work`).
    pub(crate) fn queue_work(&self, req: Request) {
        // Unbounded, so the put cannot wait.
        if self.local_queue.try_put(req).is_err() {
            unreachable!("the local queue is unbounded");
        }
        let mut st = self.state.borrow_mut();
        if st.intake_idle {
            st.intake_idle = false;
            drop(st);
            wake(&self.intake);
        }
    }

    /// A prefill worker of `source` handed `req` off after its first token: queue it here
    /// (no front end: the hand-off is engine to engine). Its KV moves once blocks for it
    /// are free; a request that can never run here is failed and `source` frees its blocks.
    pub(crate) fn receive(self: &Rc<Self>, req: Request, source: Rc<Worker>) {
        let now = self.shared.env.now();
        let id = req.id;
        let mut st = self.state.borrow_mut();
        if let Err(rejected) = st.scheduler.add_transferred(req, now) {
            drop(st);
            source.release_kv(id);
            self.handoffs
                .try_put(Handoff::Released { worker: source.id })
                .ok();
            self.results.try_put(*rejected).ok();
            return;
        }
        self.sources.borrow_mut().insert(id, source);
        if st.scheduler_idle {
            st.scheduler_idle = false;
            drop(st);
            wake(&self.scheduler_loop);
        }
    }

    /// The decode worker holds request `id`'s KV: free its blocks here, and wake the
    /// scheduler loop, which may have slept for want of them.
    pub(crate) fn release_kv(&self, id: u64) {
        let mut st = self.state.borrow_mut();
        st.scheduler.release(id);
        if st.scheduler_idle {
            st.scheduler_idle = false;
            drop(st);
            wake(&self.scheduler_loop);
        }
    }

    /// Waiting (incl. fetching), running, and KV blocks in use: the per-second sample.
    pub(crate) fn load(&self) -> (u32, u32, u32) {
        let st = self.state.borrow();
        let s = &st.scheduler;
        (
            s.num_waiting() as u32,
            s.num_running() as u32,
            s.block_pool().num_used(),
        )
    }

    /// Fraction of GPU KV blocks in use.
    pub(crate) fn kv_usage(&self) -> f64 {
        self.state.borrow().scheduler.kv_usage()
    }

    /// The scheduler's consistency check; with `idle`, also that it holds no request and
    /// no KV block is referenced (nothing leaked once the run is over).
    pub(crate) fn check_invariants(&self, idle: bool) -> Result<(), String> {
        let st = self.state.borrow();
        let s = &st.scheduler;
        s.check_invariants()
            .map_err(|e| format!("worker {}: {e}", self.id))?;
        if idle && (s.num_unfinished() > 0 || s.block_pool().num_used() > 0) {
            return Err(format!(
                "worker {} still holds {} requests and {} KV blocks after the run",
                self.id,
                s.num_unfinished(),
                s.block_pool().num_used()
            ));
        }
        Ok(())
    }

    /// Stops the loops (the worker was drained and leaves the cluster).
    pub(crate) fn stop(&self) {
        let mut st = self.state.borrow_mut();
        st.stopped = true;
        let (intake, scheduler) = (st.intake_idle, st.scheduler_idle);
        st.intake_idle = false;
        st.scheduler_idle = false;
        st.flush_idle = false;
        drop(st);
        if intake {
            wake(&self.intake);
        }
        if scheduler {
            wake(&self.scheduler_loop);
        }
        wake(&self.flush);
    }

    async fn intake_loop(self: Rc<Self>) -> Result<(), SimError> {
        let env = self.shared.env.clone();
        loop {
            if self.state.borrow().stopped {
                return Ok(());
            }
            if !self.local_queue.is_empty() {
                let req = self.local_queue.get().await?;
                let delay = self.frontend_delay(&req);
                if delay > 0.0 {
                    env.timeout(delay).await?;
                }
                self.admit(req);
                continue;
            }
            // Nothing to drain: sleep until queue_work interrupts (no polling).
            self.state.borrow_mut().intake_idle = true;
            match env.timeout(f64::INFINITY).await {
                Ok(()) | Err(SimError::Interrupt(_)) => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// How long the front end holds `req` from now: its delay from the moment it reached the
    /// server, after the requests before it.
    fn frontend_delay(&self, req: &Request) -> f64 {
        let now = self.shared.env.now();
        let mut st = self.state.borrow_mut();
        let f = st.scheduler.timing().frontend();
        if f.request == 0.0 && f.per_prompt_token == 0.0 {
            return 0.0;
        }
        let arrived = req.times.router_in.unwrap_or(now);
        let ready = (arrived + f.request + f.per_prompt_token * req.prompt_len() as f64)
            .max(st.frontend_free_at);
        st.frontend_free_at = ready;
        (ready - now).max(0.0)
    }

    /// Moves one request into the scheduler, or straight back to the router if it can
    /// never run here; wakes the scheduler loop if it sleeps.
    fn admit(&self, req: Request) {
        let now = self.shared.env.now();
        let mut st = self.state.borrow_mut();
        if let Err(rejected) = st.scheduler.add_request(req, now) {
            self.results.try_put(*rejected).ok();
            return;
        }
        if st.scheduler_idle {
            st.scheduler_idle = false;
            drop(st);
            wake(&self.scheduler_loop);
        }
    }

    async fn schedule_loop(self: Rc<Self>) -> Result<(), SimError> {
        let env = self.shared.env.clone();
        loop {
            if self.shared.opal_batch.step_delays {
                // Boxed: vLLM's loop stays as small as it was.
                Box::pin(self.opal_pauses()).await?;
            }
            let has_work = self.state.borrow().scheduler.num_unfinished() > 0;
            if has_work && self.step().await? {
                continue;
            }
            if self.state.borrow().stopped {
                return Ok(());
            }
            // Idle, or only waiting for KV fetches: sleep until woken.
            self.state.borrow_mut().scheduler_idle = true;
            match env.timeout(f64::INFINITY).await {
                Ok(()) | Err(SimError::Interrupt(_)) => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// One scheduler step: build the batch, run it for the timing model's time, apply it.
    /// Returns false when nothing could run (the loop then sleeps until woken). The batch
    /// and its outcome stay in the worker's buffers: a step moves and allocates nothing
    /// but the requests that leave.
    async fn step(self: &Rc<Self>) -> Result<bool, SimError> {
        let env = &self.shared.env;
        let start = env.now();
        let (step_time, utilization, idle, transfers) = {
            let mut st = self.state.borrow_mut();
            let st = &mut *st;
            let tiers = self.shared.tiers.borrow();
            let mut lookup = TierLookup {
                tiers: &tiers,
                worker: self.id,
            };
            st.scheduler.schedule(start, &mut lookup, &mut st.out);
            let out = &st.out;
            let work = st.peak.work(out.work());
            let t = st
                .scheduler
                .timing()
                .step_time_of_work(out.work(), st.same_work, work);
            // Fetches and KV receives are rare: copied out, as starting them borrows the state.
            let transfers = (!out.fetches.is_empty() || !out.receives.is_empty())
                .then(|| (out.fetches.clone(), out.receives.clone()));
            let utilization = utilization(work, t, st.peak_flops, st.peak_bandwidth);
            (t, utilization, out.is_empty(), transfers)
        };
        if let Some((fetches, receives)) = transfers {
            for fetch in fetches {
                self.start_fetch(fetch);
            }
            for receive in receives {
                self.start_receive(receive);
            }
        }
        if idle {
            return Ok(false);
        }
        if !step_time.is_finite() {
            // A step that never ends (e.g. a GPU of ~0 FLOP/s) would park the worker forever.
            return Err(env.fail(SimError::Fault(
                format!(
                    "worker {}: a scheduler step would take {step_time} s (check the GPU's \
                     peak_tflops and hbm_tbps, and the timing model)",
                    self.id
                )
                .into(),
            )));
        }
        env.sleep(step_time).await?;
        let now = env.now();
        let (computed_chunks, handoffs, finished) = {
            let mut st = self.state.borrow_mut();
            let st = &mut *st;
            st.scheduler.finish_step(now, &mut st.outcome);
            let outcome = &mut st.outcome;
            self.shared
                .books
                .borrow_mut()
                .on_step(self.id, start, now, utilization, outcome);
            let take = |v: &mut Vec<Request>| (!v.is_empty()).then(|| std::mem::take(v));
            (
                (!outcome.computed_chunks.is_empty())
                    .then(|| std::mem::take(&mut outcome.computed_chunks)),
                take(&mut outcome.handoffs),
                take(&mut outcome.finished),
            )
        };
        self.wake_flush();
        let end = StepEnd {
            computed_chunks,
            handoffs,
            finished,
            now,
        };
        if self.shared.opal_batch.step_delays && end.finished.is_some() {
            // The original Opal hands back later; the scheduler loop does it (`opal_pauses`).
            self.state.borrow_mut().opal_hand_back = Some(end);
        } else {
            self.end_step(end, None);
        }
        Ok(true)
    }

    /// A step's end: stores its KV to the tiers (the chunks it computed, when the tiers
    /// take KV as it is computed, else the prompts it completed), sends its prefilled
    /// requests on to decode workers, and hands back its finished ones. The tier writes go
    /// on in the background; `wait_for`, if given, keeps them for a caller that waits.
    // Always inlined: it is the end of every step, and a call here measurably slows the
    // step loop.
    #[inline(always)]
    fn end_step(
        self: &Rc<Self>,
        end: StepEnd,
        mut wait_for: Option<&mut Vec<Process<Result<(), SimError>>>>,
    ) {
        let StepEnd {
            computed_chunks,
            handoffs,
            finished,
            now,
        } = end;
        if self.shared.tiers.store_as_computed().is_some() {
            if let Some(chunks) = computed_chunks {
                self.store_chunks(&chunks, wait_for);
                // Back to the buffer, to keep its memory.
                self.state.borrow_mut().outcome.computed_chunks = chunks;
            }
        } else if !self.shared.tiers.borrow().is_empty() {
            // (Without tiers there is nowhere to store: skip hashing every prompt.)
            for req in finished.iter().flatten() {
                let tiers = self.shared.tiers.borrow();
                let hashes: Vec<_> = req.prompt.block_hashes(tiers.chunk_size()).collect();
                drop(tiers);
                self.store_chunks(&hashes, wait_for.as_deref_mut());
            }
        }
        if let Some(handoffs) = handoffs {
            for request in handoffs {
                self.shared
                    .books
                    .borrow_mut()
                    .on_handoff(request.id, self.id, now);
                self.handoffs
                    .try_put(Handoff::Prefilled {
                        request: Box::new(request),
                        from: self.id,
                    })
                    .ok();
            }
        }
        if let Some(finished) = finished {
            if let Some(emptied) = self.hand_back(finished) {
                // Back to the buffer, to keep its memory (a finished request is ~470 bytes:
                // a new buffer for each step that finishes one was a malloc and a free).
                self.state.borrow_mut().outcome.finished = emptied;
            }
        }
    }

    /// The original Opal's pauses (`step_delays`), before a step: after a step that
    /// completed requests, 1 ms, then the step's end (see [`Worker::end_step`]) and the
    /// writes of their KV to the tiers, which the worker waits for; then 1 ms before
    /// building a batch.
    async fn opal_pauses(self: &Rc<Self>) -> Result<(), SimError> {
        let env = &self.shared.env;
        let end = self.state.borrow_mut().opal_hand_back.take();
        if let Some(end) = end {
            env.timeout(OPAL_STEP_DELAY).await?;
            let mut writes = Vec::new();
            self.end_step(end, Some(&mut writes));
            if !writes.is_empty() {
                env.all_of(writes.iter().map(|w| w.as_event())).await?;
            }
        }
        let builds = {
            let st = self.state.borrow();
            st.scheduler.num_unfinished() > 0 && st.scheduler.builds_batch()
        };
        if builds {
            env.timeout(OPAL_STEP_DELAY).await?;
        }
        Ok(())
    }

    /// Starts moving a transferred request's KV from its prefill worker over that worker's
    /// link; READY here and freed there when the last byte lands.
    fn start_receive(self: &Rc<Self>, receive: KvReceive) {
        let Some(source) = self.sources.borrow_mut().remove(&receive.request) else {
            return;
        };
        let now = self.shared.env.now();
        self.shared.books.borrow_mut().on_transfer_start(
            receive.request,
            now,
            receive.tokens,
            receive.cached_tokens,
            receive.bytes,
        );
        let moved = self
            .shared
            .kv_links
            .link(source.id)
            .transfer(receive.bytes as f64);
        let worker = Rc::clone(self);
        self.shared.env.process(async move {
            moved.await?;
            let id = receive.request;
            let now = worker.shared.env.now();
            worker.shared.books.borrow_mut().on_transfer_end(id, now);
            worker.fetch_done(id);
            source.release_kv(id);
            worker
                .handoffs
                .try_put(Handoff::Released { worker: source.id })
                .ok();
            Ok::<_, SimError>(())
        });
    }

    /// Returns finished requests to the router once the client has seen their last token
    /// (the front end's output delay after the step). Gives the emptied vector back when
    /// that is now.
    fn hand_back(&self, mut finished: Vec<Request>) -> Option<Vec<Request>> {
        let delay = self.state.borrow().scheduler.token_output_delay();
        if delay == 0.0 {
            for req in finished.drain(..) {
                self.results.try_put(req).ok();
            }
            return Some(finished);
        }
        let (env, results) = (self.shared.env.clone(), self.results.clone());
        self.shared.env.process(async move {
            env.timeout(delay).await?;
            for req in finished {
                results.try_put(req).ok();
            }
            Ok::<_, SimError>(())
        });
        None
    }

    /// Writes KV chunks (`hashes`, chained) to every offload tier in the background (the
    /// worker does not wait): the chunks a tier lacks move over its link, sharing its
    /// bandwidth with fetches, and become available there once written. Chunks a tier
    /// already holds are only refreshed in its LRU order. The writes are added to `landed`,
    /// if given, for a caller that waits for them.
    fn store_chunks(
        self: &Rc<Self>,
        hashes: &[crate::request::BlockHash],
        mut landed: Option<&mut Vec<Process<Result<(), SimError>>>>,
    ) {
        let (hashes, writes) = {
            let tiers = self.shared.tiers.borrow();
            if tiers.is_empty() || hashes.is_empty() {
                return;
            }
            let writes: Vec<(u8, u32)> = (0..tiers.len() as u8)
                .map(|t| (t, tiers.missing(self.id, t, hashes)))
                .collect();
            (Rc::new(hashes.to_vec()), writes)
        };
        let chunk_bytes = self.shared.tiers.borrow().chunk_bytes();
        for (tier, missing) in writes {
            let link = match missing {
                0 => None,
                n => self.shared.tiers.link(tier, self.id).map(|l| (l, n)),
            };
            let Some((link, n)) = link else {
                self.store_in(tier, &hashes);
                continue;
            };
            let written = link.transfer(n as f64 * chunk_bytes);
            let (worker, hashes) = (Rc::clone(self), Rc::clone(&hashes));
            let write = self.shared.env.process(async move {
                written.await?;
                worker.store_in(tier, &hashes);
                Ok::<_, SimError>(())
            });
            if let Some(landed) = landed.as_deref_mut() {
                landed.push(write);
            }
        }
    }

    /// Records `hashes` as held by tier `tier` (the write has landed). A worker that has
    /// left the cluster keeps nothing: its per-worker tiers went with it.
    fn store_in(&self, tier: u8, hashes: &[crate::request::BlockHash]) {
        let mut st = self.state.borrow_mut();
        if st.stopped {
            return;
        }
        let mut tiers = self.shared.tiers.borrow_mut();
        tiers.store_in(self.id, tier, hashes, &mut st.tier_events);
        if self.shared.kv_event_interval.is_none() {
            st.tier_events.clear();
        }
        drop(st);
        self.wake_flush();
    }

    /// Starts moving a request's prefix from the tiers into its GPU blocks: each tier's
    /// part over that tier's link, READY when the last part has landed.
    fn start_fetch(self: &Rc<Self>, fetch: FetchStart) {
        let plan = {
            let mut st = self.state.borrow_mut();
            let mut tiers = self.shared.tiers.borrow_mut();
            let Some(req) = st.scheduler.request(fetch.request) else {
                return;
            };
            let hashes: Vec<_> = req.prompt.block_hashes(tiers.chunk_size()).collect();
            let hit = tiers.lookup(self.id, &hashes);
            // A fetch is a use: the chunks it reads become the tiers' most recent.
            tiers.touch(self.id, &hashes, &hit);
            let kv_bytes = self.shared.model.kv_bytes_per_token as f64;
            // Each tier supplies its chunks of the prefix, up to what the scheduler fetches.
            let mut left = fetch.tokens;
            let mut plan = Vec::new();
            for (tier, &chunks) in hit.per_tier.iter().enumerate() {
                let tokens = (chunks * tiers.chunk_size()).min(left);
                if tokens > 0 {
                    plan.push((tier as u8, tokens as f64 * kv_bytes));
                    left -= tokens;
                }
            }
            if left > 0 {
                // The tiers changed since the lookup; fetch the rest at the reported tier.
                plan.push((fetch.tier, left as f64 * kv_bytes));
            }
            plan
        };
        let transfers: Vec<_> = plan
            .into_iter()
            .filter_map(|(tier, bytes)| {
                Some(self.shared.tiers.link(tier, self.id)?.transfer(bytes))
            })
            .collect();
        let worker = Rc::clone(self);
        let env = self.shared.env.clone();
        env.clone().process(async move {
            env.all_of(transfers.iter().map(|t| t.as_event())).await?;
            worker.fetch_done(fetch.request);
            Ok::<_, SimError>(())
        });
    }

    fn fetch_done(&self, request: u64) {
        let now = self.shared.env.now();
        let mut st = self.state.borrow_mut();
        st.scheduler.fetch_done(request, now);
        if st.scheduler_idle {
            st.scheduler_idle = false;
            drop(st);
            wake(&self.scheduler_loop);
        }
    }

    /// Wakes the KV-event flush if it sleeps for want of news.
    fn wake_flush(&self) {
        let mut st = self.state.borrow_mut();
        if st.flush_idle {
            st.flush_idle = false;
            drop(st);
            wake(&self.flush);
        }
    }

    async fn flush_loop(self: Rc<Self>, interval: f64) -> Result<(), SimError> {
        let env = self.shared.env.clone();
        let mut reported_usage = 0.0;
        let mut news = true;
        loop {
            let wait = if news { interval } else { f64::INFINITY };
            match env.timeout(wait).await {
                Ok(()) | Err(SimError::Interrupt(_)) => {}
                Err(e) => return Err(e),
            }
            if !news {
                // Woken by a step or a tier write: report after one interval, as ever.
                news = true;
                continue;
            }
            let (events, kv_usage) = {
                let mut st = self.state.borrow_mut();
                let mut events = st.scheduler.take_kv_events();
                events.append(&mut st.tier_events);
                (events, st.scheduler.kv_usage())
            };
            news = !events.is_empty() || kv_usage != reported_usage;
            if news {
                reported_usage = kv_usage;
                let batch = KvEventBatch {
                    worker: self.id,
                    events,
                };
                self.kv_events.try_put(KvReport { batch, kv_usage }).ok();
            }
            let mut st = self.state.borrow_mut();
            if st.stopped {
                return Ok(());
            }
            // With nothing new, sleep until woken; otherwise look again next interval.
            st.flush_idle = !news;
        }
    }
}

/// Interrupts a loop parked in its idle sleep (a finished loop is ignored).
fn wake(process: &RefCell<Option<Loop>>) {
    if let Some(p) = process.borrow().as_ref() {
        p.interrupt().ok();
    }
}

/// A step's achieved FLOP/s and HBM bandwidth as shares of the GPU's peak ones.
fn utilization(
    work: crate::timing::StepWork,
    step_time: f64,
    peak_flops: f64,
    peak_bandwidth: f64,
) -> (f64, f64) {
    if step_time <= 0.0 {
        return (0.0, 0.0);
    }
    let share = |x: f64, peak: f64| (x / (step_time * peak)).clamp(0.0, 1.0);
    (
        share(work.flops, peak_flops),
        share(work.bytes, peak_bandwidth),
    )
}
