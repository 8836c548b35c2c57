//! The statistics sink every process writes to: per-request records, per-stage
//! accumulators, per-second series and routing decisions.

use crate::request::{Request, RequestState};
use crate::router::RoutingDecision;
use crate::stats::{RequestRecord, SecondSeries, StageStats};
use crate::workload::generator::SessionTurn;
use serde::Serialize;

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
}

/// Everything the run records.
#[derive(Debug, Default)]
pub(crate) struct Recorder {
    /// Indexed by request id (ids are handed out densely from 0).
    pub records: Vec<RequestRecord>,
    pub stages: Vec<StageRun>,
    pub series: SecondSeries,
    pub decisions: Vec<RoutingRecord>,
    candidates_kept: usize,
    next_session: u32,
    /// Requests that completed or failed.
    pub finished: u64,
    /// Prefill tokens each worker computed, by worker id.
    pub worker_prefill: Vec<u64>,
}

impl Recorder {
    /// The id the next request will get.
    pub fn peek_id(&self) -> u64 {
        self.records.len() as u64
    }

    /// A fresh global session id.
    pub fn next_session(&mut self) -> u32 {
        self.next_session += 1;
        self.next_session - 1
    }

    /// Opens stage `index` at `now`.
    pub fn start_stage(&mut self, index: u32, now: f64) {
        self.stages.push(StageRun {
            stats: StageStats::new(index, now),
            end: None,
        });
    }

    /// Closes stage `index` at `now`.
    pub fn end_stage(&mut self, index: u32, now: f64) {
        if let Some(s) = self.stages.get_mut(index as usize) {
            s.end = Some(now);
        }
    }

    /// A request entered the platform.
    pub fn on_arrival(&mut self, req: &Request, session: Option<SessionTurn>) {
        debug_assert_eq!(req.id, self.peek_id());
        let mut r = RequestRecord::new(req.id, req.stage, req.times.created, req.prompt_len());
        r.session = session;
        r.priority = req.priority;
        self.records.push(r);
        self.series.on_arrival(req.times.created);
    }

    /// The router decided where `request` goes.
    pub fn on_routed(&mut self, request: u64, time: f64, mut decision: RoutingDecision) {
        if self.candidates_kept + decision.candidates.len() > CANDIDATE_BUDGET {
            decision.candidates = Vec::new();
        }
        self.candidates_kept += decision.candidates.len();
        self.decisions.push(RoutingRecord {
            request,
            time,
            decision,
        });
    }

    /// `n` output tokens were emitted at `t` by requests of `stage`.
    pub fn on_tokens(&mut self, stage: u32, t: f64, n: u64) {
        if let Some(s) = self.stages.get_mut(stage as usize) {
            s.stats.on_tokens(t, n);
        }
        self.series.on_tokens(t, n);
    }

    /// Worker `worker` computed `n` prefill tokens in a step.
    pub fn on_prefill(&mut self, worker: u32, n: u64) {
        let w = worker as usize;
        if self.worker_prefill.len() <= w {
            self.worker_prefill.resize(w + 1, 0);
        }
        self.worker_prefill[w] += n;
    }

    /// The stage of request `id`.
    pub fn stage_of(&self, id: u64) -> u32 {
        self.records.get(id as usize).map_or(0, |r| r.stage)
    }

    /// `count` tokens of `stage`'s requests came `gap` seconds after their previous token.
    pub fn on_itl(&mut self, stage: u32, gap: f64, count: u64) {
        if let Some(s) = self.stages.get_mut(stage as usize) {
            s.stats.on_itl(gap, count);
        }
    }

    /// A request left the platform (completed or failed): copy its history into its record.
    pub fn on_finished(&mut self, req: &Request) {
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
