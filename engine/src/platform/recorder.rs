//! The statistics sink every process writes to: per-request records, per-stage
//! accumulators, per-second series and routing decisions.
//!
//! The books stay consistent at every instant, not only at the end: a request's record
//! shows its worker once it is routed and its output tokens as they are emitted, so a run
//! cut short (by `simulation_time`, a limit, or the user) reports its requests in flight
//! with what they produced, and the routing decisions, per-second tokens, inter-token
//! gaps and per-request records all agree.

use crate::request::{Request, RequestState};
use crate::router::{EvidenceRoom, RoutingDecision, ScalingRecord};
use crate::stats::{Chunked, RequestRecord, SecondSeries, StageStats, TransferRecord};
use crate::worker::StepOutcome;
use crate::workload::generator::SessionTurn;
use serde::Serialize;
use std::collections::BTreeMap;

/// Candidate scores kept across all decisions; past this, decisions keep only the choice
/// (a 100,000-request run on 16 workers would otherwise spend ~60 MB on evidence).
const CANDIDATE_BUDGET: usize = 400_000;

/// One routing decision, as the app's "why did it go there" view shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoutingRecord {
    /// The request routed.
    pub request: u64,
    /// When (simulated seconds).
    pub time: f64,
    /// The policy's choice and the scores it saw (candidates dropped past the budget).
    pub decision: RoutingDecision,
}

/// A stage's accumulators and bounds.
#[derive(Debug, Clone)]
pub(crate) struct StageRun {
    pub stats: StageStats,
    pub end: Option<f64>,
    /// The id of the stage's first request: stages run one after another and ids are
    /// handed out in order, so a stage's records are the ids from here to the next stage's.
    pub first_id: u64,
}

/// Everything the run records.
#[derive(Debug)]
pub(crate) struct Recorder {
    /// Indexed by request id (ids are handed out densely from 0).
    pub records: Chunked<RequestRecord>,
    pub stages: Vec<StageRun>,
    pub series: SecondSeries,
    pub decisions: Chunked<RoutingRecord>,
    candidates_kept: usize,
    next_session: u32,
    /// Requests that completed or failed.
    pub finished: u64,
    /// Prefill tokens each worker computed, by worker id.
    pub worker_prefill: Vec<u64>,
    /// Per-stage token counts of the step being recorded (reused buffer, a few entries).
    step_tokens: Vec<(u32, u64)>,
    /// `simulation.max_requests`.
    max_requests: u64,
    /// True once a stage wanted to issue a request past `max_requests`.
    pub capped: bool,
    /// Each KV hand-off from a prefill to a decode worker, in hand-off order.
    pub transfers: Vec<TransferRecord>,
    /// Position in `transfers` by request id.
    transfer_at: BTreeMap<u64, usize>,
    /// Each worker's pool (index in the deployment), by worker id.
    pub worker_pool: Vec<usize>,
    /// Each decode-worker choice of a disaggregated deployment, in order.
    pub decode_decisions: Chunked<RoutingRecord>,
    /// Each worker an autoscaler asked for or released, in the order it asked.
    pub scaling: Vec<ScalingRecord>,
}

impl Recorder {
    /// Empty books for a run that may issue at most `max_requests` requests.
    pub(crate) fn new(max_requests: u64) -> Self {
        Self {
            records: Chunked::new(),
            stages: Vec::new(),
            series: SecondSeries::new(),
            decisions: Chunked::new(),
            candidates_kept: 0,
            next_session: 0,
            finished: 0,
            worker_prefill: Vec::new(),
            step_tokens: Vec::new(),
            max_requests,
            capped: false,
            transfers: Vec::new(),
            transfer_at: BTreeMap::new(),
            worker_pool: Vec::new(),
            decode_decisions: Chunked::new(),
            scaling: Vec::new(),
        }
    }

    /// Candidate scores the run may still keep: a decision with more is recorded without
    /// them (the router tells its policies, which then skip building them).
    pub(crate) fn evidence_room(&self) -> EvidenceRoom {
        EvidenceRoom::new(CANDIDATE_BUDGET.saturating_sub(self.candidates_kept))
    }

    /// Counts a decision's kept scores against the budget: its policy kept them only if
    /// [`Recorder::evidence_room`] allowed, so the verdict is the decision's.
    fn keep_evidence(&mut self, decision: &RoutingDecision) {
        let n = decision.candidates.len();
        debug_assert!(
            n == 0 || self.evidence_room().keeps(n),
            "a decision kept {n} scores past the budget"
        );
        self.candidates_kept += n;
    }

    /// Whether one more request may be issued; past `max_requests` the run is capped.
    pub(crate) fn may_issue(&mut self) -> bool {
        if self.peek_id() < self.max_requests {
            return true;
        }
        self.capped = true;
        false
    }

    /// The records of stage `index`, in id order.
    pub(crate) fn stage_records(
        &self,
        index: usize,
    ) -> impl DoubleEndedIterator<Item = &RequestRecord> + Clone {
        let id = |s: Option<&StageRun>| s.map_or(self.records.len(), |s| s.first_id as usize);
        let (from, to) = (id(self.stages.get(index)), id(self.stages.get(index + 1)));
        self.records.range(from.min(to)..to)
    }

    /// The id the next request will get.
    pub(crate) fn peek_id(&self) -> u64 {
        self.records.len() as u64
    }

    /// A fresh global session id.
    pub(crate) fn next_session(&mut self) -> u32 {
        self.next_session += 1;
        self.next_session - 1
    }

    /// Opens stage `index` at `now`.
    pub(crate) fn start_stage(&mut self, index: u32, now: f64) {
        let first_id = self.peek_id();
        self.stages.push(StageRun {
            stats: StageStats::new(index, now),
            end: None,
            first_id,
        });
    }

    /// Closes stage `index` at `now`.
    pub(crate) fn end_stage(&mut self, index: u32, now: f64) {
        if let Some(s) = self.stages.get_mut(index as usize) {
            s.end = Some(now);
        }
    }

    /// Worker `worker` of pool `pool` started.
    pub(crate) fn on_worker_started(&mut self, worker: u32, pool: usize) {
        let w = worker as usize;
        if self.worker_pool.len() <= w {
            self.worker_pool.resize(w + 1, 0);
        }
        self.worker_pool[w] = pool;
    }

    /// Pool `pool`'s autoscaler asked for a worker at `now`.
    pub(crate) fn on_scale_up(&mut self, pool: usize, now: f64) {
        self.scaling.push(ScalingRecord {
            pool: pool as u32,
            worker: None,
            requested: now,
            started: f64::NAN,
            released: f64::NAN,
        });
    }

    /// The worker pool `pool`'s autoscaler asked for started as `worker` at `now` (a pool has
    /// one scale-up in flight at a time: its last record without a worker).
    pub(crate) fn on_scaled_up(&mut self, worker: u32, pool: usize, now: f64) {
        if let Some(s) = self
            .scaling
            .iter_mut()
            .rev()
            .find(|s| s.pool == pool as u32 && s.worker.is_none())
        {
            s.worker = Some(worker);
            s.started = now;
        }
    }

    /// Worker `worker` of pool `pool`, drained, left the cluster at `now`.
    pub(crate) fn on_worker_released(&mut self, worker: u32, pool: usize, now: f64) {
        match self
            .scaling
            .iter_mut()
            .rev()
            .find(|s| s.worker == Some(worker))
        {
            Some(s) => s.released = now,
            // There from the start.
            None => self.scaling.push(ScalingRecord {
                pool: pool as u32,
                worker: Some(worker),
                requested: f64::NAN,
                started: f64::NAN,
                released: now,
            }),
        }
    }

    /// Prefill worker `worker` handed `request` off at `now` (its first token sampled).
    pub(crate) fn on_handoff(&mut self, request: u64, worker: u32, now: f64) {
        self.transfer_at.insert(request, self.transfers.len());
        self.transfers
            .push(TransferRecord::new(request, worker, now));
    }

    fn transfer(&mut self, request: u64) -> Option<&mut TransferRecord> {
        let &k = self.transfer_at.get(&request)?;
        self.transfers.get_mut(k)
    }

    /// The decode policy chose a decode worker for `request` at `time`.
    pub(crate) fn on_transfer_placed(
        &mut self,
        request: u64,
        time: f64,
        decision: RoutingDecision,
    ) {
        if let Some(t) = self.transfer(request) {
            t.decode_worker = Some(decision.worker);
        }
        self.keep_evidence(&decision);
        self.decode_decisions.push(RoutingRecord {
            request,
            time,
            decision,
        });
    }

    /// The decode worker allocated `request`'s blocks at `now`; `tokens` (`bytes`) start to
    /// move, `cached` were in its prefix cache.
    pub(crate) fn on_transfer_start(
        &mut self,
        request: u64,
        now: f64,
        tokens: u32,
        cached: u32,
        bytes: u64,
    ) {
        if let Some(t) = self.transfer(request) {
            t.start = now;
            t.tokens = tokens;
            t.cached_tokens = cached;
            t.bytes = bytes;
        }
    }

    /// `request`'s KV landed on its decode worker at `now`.
    pub(crate) fn on_transfer_end(&mut self, request: u64, now: f64) {
        if let Some(t) = self.transfer(request) {
            t.end = now;
        }
    }

    /// A request entered the platform.
    pub(crate) fn on_arrival(&mut self, req: &Request, session: Option<SessionTurn>) {
        debug_assert_eq!(req.id, self.peek_id());
        let mut r = RequestRecord::new(req.id, req.stage, req.times.created, req.prompt_len());
        r.set_session(session);
        r.priority = req.priority;
        self.records.push(r);
        self.series.on_arrival(req.times.created);
        if let Some(s) = self.stages.get_mut(req.stage as usize) {
            s.stats.on_arrival(req.times.created);
        }
    }

    /// The router decided where `request` goes.
    pub(crate) fn on_routed(&mut self, request: u64, time: f64, decision: RoutingDecision) {
        if let Some(r) = self.records.get_mut(request as usize) {
            r.worker = Some(decision.worker);
            r.router_in = time;
        }
        self.keep_evidence(&decision);
        self.decisions.push(RoutingRecord {
            request,
            time,
            decision,
        });
    }

    /// Worker `worker` finished a step it started at `start`, achieving `utilization` =
    /// (compute, memory) shares of its peak: its busy time and prefill tokens, each request's
    /// new token (on its record, in its stage's throughput and in the series), and the
    /// inter-token gaps, run-length grouped (the requests decoding together share one gap,
    /// so the histogram grows per step, not per token).
    pub(crate) fn on_step(
        &mut self,
        worker: u32,
        start: f64,
        now: f64,
        utilization: (f64, f64),
        outcome: &StepOutcome,
    ) {
        let (compute, memory) = utilization;
        self.series
            .on_busy(worker as usize, start, now, compute, memory);
        let w = worker as usize;
        if self.worker_prefill.len() <= w {
            self.worker_prefill.resize(w + 1, 0);
        }
        self.worker_prefill[w] += outcome.prefill_tokens;
        let mut stage_tokens = std::mem::take(&mut self.step_tokens);
        stage_tokens.clear();
        let mut count =
            |stage: u32, k: u64| match stage_tokens.iter_mut().find(|(s, _)| *s == stage) {
                Some((_, n)) => *n += k,
                None => stage_tokens.push((stage, k)),
            };
        for &id in &outcome.first_tokens {
            if let Some(r) = self.records.get_mut(id as usize) {
                r.output_tokens += 1;
                r.first_token = now;
                count(r.stage, 1);
            }
        }
        // A run's tokens are counted for its stage once, when it ends.
        let mut run: Option<(u32, f64, u64)> = None;
        for &(id, gap) in &outcome.token_gaps {
            let Some(r) = self.records.get_mut(id as usize) else {
                continue;
            };
            r.output_tokens += 1;
            let stage = r.stage;
            match &mut run {
                Some((s, g, n)) if *s == stage && *g == gap => *n += 1,
                _ => {
                    if let Some((s, g, n)) = run.take() {
                        count(s, n);
                        self.on_itl(s, g, n);
                    }
                    run = Some((stage, gap, 1));
                }
            }
        }
        if let Some((s, g, n)) = run {
            count(s, n);
            self.on_itl(s, g, n);
        }
        let mut total = 0;
        for &(stage, n) in &stage_tokens {
            if let Some(s) = self.stages.get_mut(stage as usize) {
                s.stats.on_tokens(now, n);
            }
            total += n;
        }
        if total > 0 {
            self.series.on_tokens(now, total);
        }
        self.step_tokens = stage_tokens;
    }

    /// `count` tokens of `stage`'s requests came `gap` seconds after their previous token.
    fn on_itl(&mut self, stage: u32, gap: f64, count: u64) {
        if let Some(s) = self.stages.get_mut(stage as usize) {
            s.stats.on_itl(gap, count);
        }
    }

    /// A request left the platform (completed or failed): copy its history into its record.
    pub(crate) fn on_finished(&mut self, req: &Request) {
        if let Some(&k) = self.transfer_at.get(&req.id) {
            self.transfers[k].decode_prefill = req.decode_prefill;
        }
        let Some(r) = self.records.get_mut(req.id as usize) else {
            return;
        };
        let t = &req.times;
        let at = |x: Option<f64>| x.unwrap_or(f64::NAN);
        r.worker = req.worker;
        r.output_tokens = req.tokens_emitted;
        r.router_in = at(t.router_in);
        r.worker_in = at(t.worker_in);
        r.kv_lookup_start = at(t.kv_lookup_start);
        r.ready = at(t.ready);
        r.first_scheduled = at(t.first_scheduled);
        r.first_token = at(t.first_token);
        r.completion = at(t.completed);
        r.preemptions = req.preemptions;
        r.sources.gpu_cache = req.sources.gpu_cache;
        r.sources.gpu_rehit = req.sources.gpu_rehit;
        r.sources.computed = req.sources.computed;
        r.recomputed = req.sources.recomputed;
        if let Some(tier) = req.sources.offload_tier {
            r.sources.add_tier(tier as usize, req.sources.offload);
        }
        if let RequestState::Failed(reason) = req.state {
            r.failed = Some(reason);
        }

        self.finished += 1;
        if r.failed.is_none() {
            self.series.on_completion(r.completion);
        }
    }
}
