//! The router's concurrent loops (SPEC §6), as the seed describes Opal's router. They
//! talk to everything else only through stores and events:
//!
//! - **accept**: input store → routing policy → the chosen worker's `queue_work`;
//! - **collect completions**: results store → statistics, the request's `completed`
//!   event, the owning stage's response store;
//! - **per-second statistics**: queue depths, KV usage and active workers, once a second;
//! - **process events**: workers' KV reports → the global KV view and each worker's
//!   reported KV usage;
//! - **autoscaler**: once a second, each pool's scale-up/scale-down rule;
//! - **hand-offs** (disaggregated deployments): a prefilled request → the decode policy →
//!   the chosen decode worker's `receive`; a released KV cache → its prefill worker's count.

use super::{
    Autoscaler, ClusterView, DenominatorHint, EvidenceRoom, KvIndex, RouteRequest, RoutingPolicy,
    ScaleAction, WorkerLoad,
};
use crate::deployment::pool::Pool;
use crate::deployment::PoolRole;
use crate::kernel::{Event, SimError, Store};
use crate::kv_events::KvReport;
use crate::platform::WorkerShared;
use crate::request::{FailReason, Request, RequestState};
use crate::worker::process::{Handoff, Worker};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// What a stage hears back about its requests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum StageMsg {
    /// One of the stage's requests left the platform (completed or failed).
    Finished,
    /// The stage's generator stopped after issuing `issued` requests.
    GenerationDone { issued: u64 },
}

/// A request handed to the router, with where to report its end.
pub(crate) struct Submission {
    pub request: Request,
    /// Fires with `true` when the request completes, `false` when it fails.
    pub completed: Event<bool>,
    pub responses: Store<StageMsg>,
}

struct WorkerSlot {
    id: u32,
    worker: Rc<Worker>,
    /// Its pool's index in `Router::pools`.
    pool: usize,
    /// Its pool's role (read for every worker of every routing decision).
    role: PoolRole,
    outstanding: u32,
    draining: bool,
    /// KV usage as last reported by the worker's flush (0 until its first report).
    reported_kv_usage: f64,
    /// Its GPU KV blocks.
    kv_blocks: u32,
}

struct State {
    /// Ascending by id (workers join with ever higher ids): a routing decision reads them
    /// all, and a vector is cheaper to walk than a map.
    workers: Vec<WorkerSlot>,
    policy: Box<dyn RoutingPolicy>,
    /// Chooses decode workers for prefilled requests (disaggregated deployments).
    decode_policy: Box<dyn RoutingPolicy>,
    kv_index: KvIndex,
    /// One per pool.
    autoscalers: Vec<Autoscaler>,
    next_worker_id: u32,
    /// Where to report each routed request's end.
    pending: BTreeMap<u64, (Event<bool>, Store<StageMsg>)>,
    /// Reused per decision.
    loads: Vec<WorkerLoad>,
    /// Where packing the next decision's KV usages starts (see [`DenominatorHint`]).
    denominators: DenominatorHint,
}

impl State {
    /// Where worker `id` sits in `workers` (sorted by id), if it is there.
    fn index(&self, id: u32) -> Option<usize> {
        self.workers.binary_search_by_key(&id, |w| w.id).ok()
    }

    fn slot(&self, id: u32) -> Option<&WorkerSlot> {
        self.index(id).map(|at| &self.workers[at])
    }

    fn slot_mut(&mut self, id: u32) -> Option<&mut WorkerSlot> {
        self.index(id).map(|at| &mut self.workers[at])
    }
}

/// The cluster's front door.
pub(crate) struct Router {
    /// What the workers share (the router starts and stops them).
    shared: Rc<WorkerShared>,
    /// The worker pools (one mixed pool without a deployment section).
    pools: Vec<Pool>,
    /// Requests from the workload stages.
    pub input: Store<Submission>,
    results: Store<Request>,
    kv_events: Store<KvReport>,
    handoffs: Store<Handoff>,
    state: RefCell<State>,
}

impl Router {
    /// Builds the router with each pool's workers and starts every loop.
    pub(crate) fn start(
        shared: &Rc<WorkerShared>,
        pools: Vec<Pool>,
        policy: Box<dyn RoutingPolicy>,
        decode_policy: Box<dyn RoutingPolicy>,
        kv_index: KvIndex,
        autoscalers: Vec<Autoscaler>,
    ) -> Rc<Self> {
        let env = &shared.env;
        let router = Rc::new(Self {
            shared: Rc::clone(shared),
            pools,
            input: Store::new(env),
            results: Store::new(env),
            kv_events: Store::new(env),
            handoffs: Store::new(env),
            state: RefCell::new(State {
                workers: Vec::new(),
                policy,
                decode_policy,
                kv_index,
                autoscalers,
                next_worker_id: 0,
                pending: BTreeMap::new(),
                loads: Vec::new(),
                denominators: DenominatorHint::default(),
            }),
        });
        for (pool, p) in router.pools.iter().enumerate() {
            for _ in 0..p.num_workers {
                router.add_worker(pool);
            }
        }
        env.process(Rc::clone(&router).accept_loop());
        env.process(Rc::clone(&router).collect_loop());
        env.process(Rc::clone(&router).per_second_loop());
        env.process(Rc::clone(&router).events_loop());
        if router.pools.iter().any(|p| p.role != PoolRole::Mixed) {
            env.process(Rc::clone(&router).handoff_loop());
        }
        let scaling = router
            .state
            .borrow()
            .autoscalers
            .iter()
            .any(|a| a.config().enabled);
        if scaling {
            env.process(Rc::clone(&router).autoscaler_loop());
        }
        router
    }

    /// Starts a new worker in pool `pool` and makes it routable; its id.
    fn add_worker(&self, pool: usize) -> u32 {
        let mut st = self.state.borrow_mut();
        let id = st.next_worker_id;
        st.next_worker_id += 1;
        let worker = Worker::start(
            &self.shared,
            &self.pools[pool],
            id,
            self.results.clone(),
            self.kv_events.clone(),
            self.handoffs.clone(),
        );
        self.shared.books.borrow_mut().on_worker_started(id, pool);
        debug_assert!(st.workers.last().is_none_or(|w| w.id < id));
        st.workers.push(WorkerSlot {
            id,
            worker,
            pool,
            role: self.pools[pool].role,
            outstanding: 0,
            draining: false,
            reported_kv_usage: 0.0,
            kv_blocks: self.pools[pool].num_gpu_blocks,
        });
        id
    }

    /// Removes a drained worker: it stops, its KV leaves the global view, and the books
    /// note when it left (it is billed until then).
    fn remove_worker(shared: &WorkerShared, st: &mut State, id: u32) {
        if let Some(at) = st.index(id) {
            let slot = st.workers.remove(at);
            slot.worker.stop();
            st.kv_index.remove_worker(id);
            shared.tiers.borrow_mut().remove_worker(id);
            shared
                .books
                .borrow_mut()
                .on_worker_released(id, slot.pool, shared.env.now());
        }
    }

    /// Every live worker's consistency check; with `idle` (the run is over), also that
    /// no request is still held by a worker or awaited by the router.
    pub(crate) fn check_invariants(&self, idle: bool) -> Result<(), String> {
        let st = self.state.borrow();
        for slot in &st.workers {
            slot.worker.check_invariants(idle)?;
        }
        if idle && !st.pending.is_empty() {
            return Err(format!("router still awaits {} requests", st.pending.len()));
        }
        Ok(())
    }

    async fn accept_loop(self: Rc<Self>) -> Result<(), SimError> {
        let env = self.shared.env.clone();
        loop {
            let Submission {
                mut request,
                completed,
                responses,
            } = self.input.get().await?;
            let now = env.now();
            request.times.router_in = Some(now);
            let mut st = self.state.borrow_mut();
            let st = &mut *st;
            st.pending.insert(request.id, (completed, responses));
            let room = self.shared.books.borrow().evidence_room();
            let live = st.policy.counts_kv_itself();
            self.collect_loads(st, |role| role.takes_new_requests(), room, live);
            let decision = ClusterView::new(&st.loads, &st.kv_index).map(|view| {
                let view = view
                    .with_evidence(room)
                    .with_denominator_hint(&st.denominators);
                st.policy.choose(&route_of(&request, now), &view)
            });
            match decision {
                Some(decision) => {
                    let slot = st
                        .slot_mut(decision.worker)
                        .expect("policies choose among the workers they were shown");
                    slot.outstanding += 1;
                    let worker = Rc::clone(&slot.worker);
                    self.shared
                        .books
                        .borrow_mut()
                        .on_routed(request.id, now, decision);
                    worker.queue_work(request);
                }
                None => {
                    request.fail(FailReason::NoWorker);
                    request.times.completed = Some(now);
                    self.results.try_put(request).ok();
                }
            }
        }
    }

    /// Fills `st.loads` with the routable workers whose pool's role passes `role`, for a
    /// decision that may keep `evidence_room` candidate scores.
    fn collect_loads(
        &self,
        st: &mut State,
        role: impl Fn(PoolRole) -> bool,
        evidence_room: EvidenceRoom,
        live_kv: bool,
    ) {
        st.loads.clear();
        // KV usage as the workers last reported it when they report (the policy reads
        // the KV view); otherwise the live figure, shown for information only: once the
        // run keeps no more candidate scores nobody sees it, and reading it from every
        // worker for every request cost two cache misses a worker.
        // A router that counts the KV its requests hold as it routes them reads it now,
        // whether or not the run still keeps the scores.
        let reported = self.shared.kv_event_interval.is_some() && !live_kv;
        let shown = live_kv || evidence_room.keeps_any();
        for slot in &st.workers {
            if !slot.draining && role(slot.role) {
                st.loads.push(WorkerLoad {
                    id: slot.id,
                    outstanding: slot.outstanding,
                    kv_blocks: slot.kv_blocks,
                    kv_usage: if reported {
                        slot.reported_kv_usage
                    } else if shown {
                        slot.worker.kv_usage()
                    } else {
                        0.0
                    },
                });
            }
        }
    }

    /// Prefilled requests to decode workers, and released KV caches to their prefill
    /// workers' counts.
    async fn handoff_loop(self: Rc<Self>) -> Result<(), SimError> {
        loop {
            match self.handoffs.get().await? {
                Handoff::Prefilled { request, from } => self.place(*request, from),
                Handoff::Released { worker } => {
                    let mut st = self.state.borrow_mut();
                    self.done_with(&mut st, worker);
                }
            }
        }
    }

    /// Chooses a decode worker for `request`, prefilled on worker `from`, and hands it over.
    fn place(&self, mut request: Request, from: u32) {
        let mut st = self.state.borrow_mut();
        let st = &mut *st;
        let source = st.slot(from).map(|s| Rc::clone(&s.worker));
        let room = self.shared.books.borrow().evidence_room();
        let live = st.decode_policy.counts_kv_itself();
        self.collect_loads(st, |role| role == PoolRole::Decode, room, live);
        let decision = ClusterView::new(&st.loads, &st.kv_index).map(|view| {
            let view = view
                .with_evidence(room)
                .with_denominator_hint(&st.denominators);
            st.decode_policy
                .choose(&route_of(&request, self.shared.env.now()), &view)
        });
        let (Some(decision), Some(source)) = (decision, source) else {
            // No decode worker to take it: it fails, and its prefill worker lets go.
            if let Some(slot) = st.slot(from) {
                slot.worker.release_kv(request.id);
            }
            request.fail(FailReason::NoWorker);
            request.times.completed = Some(self.shared.env.now());
            self.results.try_put(request).ok();
            return;
        };
        let slot = st
            .slot_mut(decision.worker)
            .expect("policies choose among the workers they were shown");
        slot.outstanding += 1;
        let decode = Rc::clone(&slot.worker);
        let now = self.shared.env.now();
        self.shared
            .books
            .borrow_mut()
            .on_transfer_placed(request.id, now, decision);
        decode.receive(request, source);
    }

    /// Worker `id` is done with one request: one fewer outstanding, and a draining worker
    /// with none left leaves.
    fn done_with(&self, st: &mut State, id: u32) {
        let drained = st.slot_mut(id).is_some_and(|slot| {
            slot.outstanding = slot.outstanding.saturating_sub(1);
            slot.draining && slot.outstanding == 0
        });
        if drained {
            Self::remove_worker(&self.shared, st, id);
        }
    }

    /// A session's last turn is over: stateful policies may forget it.
    pub(crate) fn end_session(&self, session: u32) {
        self.state.borrow_mut().policy.end_session(session.into());
    }

    async fn collect_loop(self: Rc<Self>) -> Result<(), SimError> {
        loop {
            let request = self.results.get().await?;
            let ok = !matches!(request.state, RequestState::Failed(_));
            self.shared.books.borrow_mut().on_finished(&request);
            let report = {
                let mut st = self.state.borrow_mut();
                // A decoded request counted on its decode worker (its prefill worker's count
                // fell when it released the KV).
                if let Some(id) = request.decode_worker.or(request.worker) {
                    self.done_with(&mut st, id);
                }
                st.pending.remove(&request.id)
            };
            if let Some((completed, responses)) = report {
                completed.succeed(ok).ok();
                responses.try_put(StageMsg::Finished).ok();
            }
        }
    }

    /// Samples every worker's load once a second while anything happens; when the next
    /// event of any other process lies seconds ahead, nothing can change before it, so the
    /// loop sleeps to the first whole second at or after it (the samples hold meanwhile)
    /// and an idle platform or a long step costs one wake-up, not one per second.
    async fn per_second_loop(self: Rc<Self>) -> Result<(), SimError> {
        let env = self.shared.env.clone();
        loop {
            let now = env.now();
            let second = now.floor();
            {
                let st = self.state.borrow();
                let mut rec = self.shared.books.borrow_mut();
                let loads = st.workers.iter().map(|slot| {
                    let (waiting, running, blocks) = slot.worker.load();
                    (slot.id as usize, waiting, running, blocks)
                });
                rec.series.sample_workers(second as usize, loads);
                let active = st.workers.iter().filter(|s| !s.draining).count();
                rec.series
                    .sample_active_workers(second as usize, active as u32);
            }
            let next = (second + 1.0).max(env.peek().ceil());
            env.timeout(next - now).await?;
        }
    }

    async fn events_loop(self: Rc<Self>) -> Result<(), SimError> {
        loop {
            let report = self.kv_events.get().await?;
            let mut st = self.state.borrow_mut();
            let st = &mut *st;
            // A removed worker's last report must not resurrect its entries.
            if let Some(slot) = st.slot_mut(report.batch.worker) {
                slot.reported_kv_usage = report.kv_usage;
            } else {
                continue;
            }
            st.kv_index.apply(&report.batch);
        }
    }

    async fn autoscaler_loop(self: Rc<Self>) -> Result<(), SimError> {
        let env = self.shared.env.clone();
        loop {
            env.timeout(1.0).await?;
            for pool in 0..self.pools.len() {
                self.autoscale(pool);
            }
        }
    }

    /// One observation of pool `pool`'s autoscaler, and its action.
    fn autoscale(self: &Rc<Self>, pool: usize) {
        let env = &self.shared.env;
        let action = {
            let mut st = self.state.borrow_mut();
            let outstanding: Vec<(u32, u32)> = st
                .workers
                .iter()
                .filter(|s| !s.draining && s.pool == pool)
                .map(|s| (s.id, s.outstanding))
                .collect();
            let scaler = &mut st.autoscalers[pool];
            let pending = u32::from(scaler.pending_until().is_some());
            let workers = outstanding.len() as u32 + pending;
            scaler.observe(env.now(), &outstanding, workers)
        };
        match action {
            ScaleAction::Hold => {}
            ScaleAction::ScaleUp { ready_at } => {
                // Billed from now: the provisioning delay is paid for.
                self.shared.books.borrow_mut().on_scale_up(pool, env.now());
                let router = Rc::clone(self);
                let env2 = env.clone();
                env.process(async move {
                    env2.timeout(ready_at - env2.now()).await?;
                    let id = router.add_worker(pool);
                    router
                        .shared
                        .books
                        .borrow_mut()
                        .on_scaled_up(id, pool, env2.now());
                    router.state.borrow_mut().autoscalers[pool].scale_up_done();
                    Ok::<_, SimError>(())
                });
            }
            ScaleAction::ScaleDown { worker } => {
                let mut st = self.state.borrow_mut();
                let empty = st.slot_mut(worker).is_some_and(|slot| {
                    slot.draining = true;
                    slot.outstanding == 0
                });
                if empty {
                    Self::remove_worker(&self.shared, &mut st, worker);
                }
            }
        }
    }
}

/// What a routing policy reads of `request`, routed at `now`.
fn route_of(request: &Request, now: f64) -> RouteRequest<'_> {
    RouteRequest {
        id: request.id,
        session: request.session.map(u64::from),
        prompt_len: request.prompt_len(),
        content: &request.prompt,
        now,
    }
}
