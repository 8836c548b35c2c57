//! One simulation run: built from a [`Scenario`], advanced in slices, read as results.
//!
//! ```
//! use engine::simulation::Simulation;
//!
//! // A document as someone writes it is read by the `opal` crate, above the engine.
//! let scenario = opal::parse_scenario(r#"{
//!     "simulation": { "num_workers": 2 },
//!     "workload": { "stages": [ { "type": "UniformReqRate", "request_rate": 4,
//!                                 "total_requests": 20 } ] }
//! }"#).unwrap();
//! let mut sim = Simulation::new(&scenario, &Default::default()).unwrap();
//! while !sim.advance(10_000).finished {} // the browser does this between frames
//! let results = sim.results();
//! assert_eq!(results.stages[0].successful_requests, 20);
//! ```

mod deployment_report;
mod results;
mod setup;
#[cfg(test)]
mod tests;
mod wire;

pub use crate::platform::recorder::RoutingRecord;
pub use deployment_report::{DeploymentReport, PoolSummary};
pub use results::{SimulationResults, Stop};
pub use wire::{ResultsReader, WireError};

use crate::kernel::{Environment, Process, SimError};
use crate::offload::{OffloadTiers, TransferLink};
use crate::platform::recorder::Recorder;
use crate::platform::{Books, KvLinks, Tiers, WorkerShared};
use crate::router::process::Router;
use crate::router::{KvIndex, KvIndexLayout};
use crate::scenario::{Scenario, ScenarioData};
use crate::stats::WorkerTable;
use crate::validate::Problem;
use crate::workload::stage::{orchestrate, Stage};
use serde::Serialize;
use setup::{build_stages, Setup};
use std::cell::RefCell;
use std::rc::Rc;

/// Where a run is, for a progress bar.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Progress {
    /// Simulated time, seconds.
    pub now: f64,
    /// Fraction done in [0, 1], when it can be estimated (a time bound or known request
    /// counts); `None` otherwise.
    pub fraction: Option<f64>,
    /// Requests issued so far.
    pub requests_issued: u64,
    /// Requests completed or failed so far.
    pub requests_finished: u64,
    /// Kernel events processed so far.
    pub events: u64,
    /// True when the run is over: the workload is done, or it was stopped by a bound, a
    /// limit or an error (the results say which).
    pub finished: bool,
}

/// A simulation run in progress.
pub struct Simulation {
    env: Environment,
    /// The run's books, shared with every loop.
    books: Books,
    /// KV blocks of each worker of the first pool.
    gpu_blocks: u32,
    orchestrator: Process<Result<(), SimError>>,
    router: Rc<Router>,
    /// `simulation.simulation_time`, or ∞.
    simulation_time: f64,
    /// `simulation.max_simulated_seconds`.
    max_seconds: f64,
    /// `simulation.max_events`.
    max_events: u64,
    /// Total requests when every stage says how many it issues.
    expected_requests: Option<u64>,
    num_tiers: usize,
    events: u64,
    /// What priced the steps (see `TimingConfig::describe`).
    timing: String,
    /// The scenario's SLO, judged in the results.
    slo: Option<crate::slo::SloConfig>,
    /// Which part of each stage is measured.
    measurement: crate::measure::MeasurementConfig,
    /// Each pool's name and role, when the scenario declares a deployment.
    pools: Option<Vec<(String, &'static str)>>,
}

impl Simulation {
    /// Builds a run: resolves the model and hardware, sizes the KV cache, parses trace and
    /// session data from `files`, and starts every process. Every problem is reported with
    /// its field path; nothing here panics on user input.
    pub fn new(scenario: &Scenario, files: &ScenarioData) -> Result<Self, Vec<Problem>> {
        // The document's checks, not the whole check (`opal::document::check`): a run reads neither
        // the sweep nor the race section (and checking them would parse scenarios,
        // compiling the deserializer into the engine).
        let problems = scenario.validate();
        if !problems.is_empty() {
            return Err(problems);
        }
        let sections = setup::sections(scenario)?;
        let setup = Setup::resolve(scenario, &sections)?;
        let (stages, expected) = build_stages(scenario, files)?;
        Ok(Self::start(scenario, setup, stages, expected))
    }

    /// Starts every process of a valid scenario's run.
    fn start(scenario: &Scenario, setup: Setup, stages: Vec<Stage>, expected: Option<u64>) -> Self {
        let Setup {
            model,
            pools,
            autoscalers,
            timing,
        } = setup;
        let worker = &scenario.worker;
        let seed = scenario.simulation.seed;
        let env = Environment::new();
        let tiers = OffloadTiers::new(&scenario.kv_cache, model.kv_bytes_per_token as f64);
        let layout = KvIndexLayout {
            block_size: worker.block_size,
            chunk_size: scenario.kv_cache.chunk_size,
            tier_scopes: scenario.kv_cache.scopes(),
        };
        let deployment = scenario.deployment.clone().unwrap_or_default();
        let kv_view = scenario.router.policy.uses_kv_view()
            || (deployment.is_disaggregated() && deployment.decode_policy.uses_kv_view());
        let pool_names = pools
            .iter()
            .map(|p| (p.name.clone(), p.role.name()))
            .collect();
        let books: Books = Rc::new(RefCell::new(Recorder::new(
            scenario.simulation.max_requests,
        )));
        let link = &deployment.kv_transfer;
        let shared = Rc::new(WorkerShared {
            env: env.clone(),
            model,
            kv_event_interval: kv_view.then_some(scenario.router.kv_event_interval),
            tiers: Tiers::new(env.clone(), tiers),
            kv_links: KvLinks::new(
                env.clone(),
                TransferLink::new(
                    link.bandwidth_bytes_per_s(),
                    link.latency_s,
                    link.concurrency,
                ),
            ),
            books: Rc::clone(&books),
            opal_batch: scenario.opal_compat.batch(),
        });
        let gpu_blocks = pools[0].num_gpu_blocks;
        let router = Router::start(
            &shared,
            pools,
            scenario.router.policy.build(seed),
            deployment.decode_policy.build_named(seed, "decode"),
            KvIndex::new(layout),
            autoscalers,
        );
        let orchestrator = env.process(orchestrate(
            env.clone(),
            Rc::clone(&books),
            Rc::clone(&router),
            stages,
        ));
        Self {
            env,
            books,
            gpu_blocks,
            orchestrator,
            router,
            simulation_time: scenario.simulation.simulation_time.unwrap_or(f64::INFINITY),
            max_seconds: scenario.simulation.max_simulated_seconds,
            max_events: scenario.simulation.max_events,
            expected_requests: expected,
            num_tiers: scenario.kv_cache.tiers.len(),
            events: 0,
            timing,
            slo: scenario.slo.clone(),
            measurement: scenario.measurement.clone(),
            pools: scenario.deployment.is_some().then_some(pool_names),
        }
    }

    /// Processes at most `max_events` kernel events and says where the run is.
    pub fn advance(&mut self, max_events: u64) -> Progress {
        let env = &self.env;
        // (No NaN here: both bounds are validated.)
        let until = self.simulation_time.min(self.max_seconds);
        for _ in 0..max_events {
            #[cfg(debug_assertions)]
            let may = self.may_step();
            // `may_step`'s tests, the kernel's in the same look as the step itself.
            let stepped = self.events < self.max_events
                && !self.books.borrow().capped
                && env.step_while_alive(&self.orchestrator, until);
            #[cfg(debug_assertions)]
            debug_assert_eq!(stepped, may, "advance and may_step disagree");
            if !stepped {
                break;
            }
            self.events += 1;
        }
        self.progress()
    }

    /// `self.end().is_none()`: the same tests, with nothing built (debug builds check that
    /// the two agree, and that [`advance`](Self::advance) steps exactly when this holds).
    fn may_step(&self) -> bool {
        let may = self.orchestrator.is_alive()
            && !self.books.borrow().capped
            && self.events < self.max_events
            // (No NaN here: queue times are valid and both bounds are validated.)
            && self.env.peek_unfaulted().is_some_and(|next| {
                next <= self.simulation_time && next <= self.max_seconds && next != f64::INFINITY
            });
        debug_assert_eq!(may, self.end().is_none(), "may_step and end disagree");
        may
    }

    /// Runs to the end.
    pub fn run(&mut self) -> Progress {
        while !self.is_finished() {
            self.advance(1 << 20);
        }
        self.progress()
    }

    /// True when the run can go no further: the workload is done, the next event lies past
    /// a time bound, a limit was reached, or the run hit an error.
    pub fn is_finished(&self) -> bool {
        !self.may_step()
    }

    /// Why the run can go no further, `None` while it can.
    fn end(&self) -> Option<End> {
        if !self.orchestrator.is_alive() {
            return Some(End::Done);
        }
        let env = &self.env;
        let stop = if let Some(fault) = env.fault() {
            Stop::Error(format!("at t = {} s: {fault}", env.now()))
        } else if self.books.borrow().capped {
            Stop::MaxRequests
        } else if self.events >= self.max_events {
            Stop::MaxEvents
        } else {
            let next = env.peek();
            if next > self.simulation_time {
                Stop::SimulationTime
            } else if next > self.max_seconds {
                Stop::MaxSimulatedSeconds
            } else if next == f64::INFINITY {
                let rec = self.books.borrow();
                Stop::Error(format!(
                    "at t = {} s nothing is left to happen, yet {} of {} requests are \
                     unfinished",
                    env.now(),
                    rec.peek_id() - rec.finished,
                    rec.peek_id()
                ))
            } else {
                return None;
            }
        };
        Some(End::Stopped(stop))
    }

    /// Consistency check for tests and debugging: every live worker's scheduler is
    /// consistent (block references match block tables); once the workload has finished,
    /// no worker holds a request or a KV block, the router awaits nothing, and every
    /// issued request has been reported finished.
    pub fn check_invariants(&self) -> Result<(), String> {
        let done = !self.orchestrator.is_alive();
        self.router.check_invariants(done)?;
        let rec = self.books.borrow();
        if done && rec.finished != rec.peek_id() {
            return Err(format!(
                "{} requests issued, {} finished",
                rec.peek_id(),
                rec.finished
            ));
        }
        Ok(())
    }

    /// KV blocks each worker's GPU holds (derived from memory, or the override); in a
    /// deployment, each worker of the first pool.
    pub fn gpu_blocks(&self) -> u32 {
        self.gpu_blocks
    }

    /// Where the run is now.
    pub fn progress(&self) -> Progress {
        let rec = self.books.borrow();
        let now = self.env.now();
        let finished = self.is_finished();
        let by_time = self
            .simulation_time
            .is_finite()
            .then(|| now / self.simulation_time);
        let by_requests = self
            .expected_requests
            .filter(|&n| n > 0)
            .map(|n| rec.finished as f64 / n as f64);
        let fraction = if finished {
            Some(1.0)
        } else {
            match (by_time, by_requests) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            }
            .map(|f| f.clamp(0.0, 1.0))
        };
        Progress {
            now,
            fraction,
            requests_issued: rec.peek_id(),
            requests_finished: rec.finished,
            events: self.events,
            finished,
        }
    }

    /// The results so far (final once [`Simulation::is_finished`]).
    pub fn results(&self) -> SimulationResults {
        let end = self.end();
        self.report(&mut self.books.borrow_mut(), end, false)
    }

    /// The results, ending the run: the per-request records, routing decisions and
    /// inter-token gaps move into them instead of being copied (the CLI's way, which
    /// halves the peak memory of a large run).
    pub fn finish(self) -> SimulationResults {
        let end = self.end();
        // The workers' KV block pools and queues go before the summaries are computed, so
        // their memory and the summaries' scratch are never held at once.
        self.env.shutdown();
        let report = self.report(&mut self.books.borrow_mut(), end, true);
        report
    }

    /// The results from the books in `rec`, moving its bulky parts out when `take`.
    fn report(&self, rec: &mut Recorder, end: Option<End>, take: bool) -> SimulationResults {
        let now = self.env.now();
        let stop = match end {
            Some(End::Done) => None,
            Some(End::Stopped(stop)) => Some(stop),
            None => Some(Stop::Interrupted),
        };
        // A run cut off by a time bound was observed up to the bound itself.
        let end_time = match stop {
            Some(Stop::SimulationTime) => self.simulation_time,
            Some(Stop::MaxSimulatedSeconds) => self.max_seconds,
            _ => now,
        };
        for s in &mut rec.stages {
            s.stats.flush_itl();
        }
        let stages: Vec<_> = rec
            .stages
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let end = s.end.unwrap_or(end_time);
                s.stats.summarize(end, self.num_tiers, rec.stage_records(i))
            })
            .collect();
        let series = rec.series.finish(end_time);
        let windows =
            crate::measure::measure(&self.measurement, &rec.records, stages.len(), end_time);
        let slo = (self.slo.as_ref()).map(|c| c.report(&rec.records, &windows, &rec.transfers));
        let mut workers = WorkerTable::new(&rec.records, &series, &rec.worker_prefill, end_time);
        if let Some(pools) = &self.pools {
            workers.load_imbalance =
                deployment_report::routed_imbalance(pools, &rec.worker_pool, &workers);
        }
        let deployment = self.pools.as_ref().map(|pools| {
            DeploymentReport::new(
                pools,
                &rec.worker_pool,
                &rec.records,
                &rec.transfers,
                &workers,
            )
        });
        let (transfers, decode_decisions) = if take {
            (
                std::mem::take(&mut rec.transfers),
                std::mem::take(&mut rec.decode_decisions),
            )
        } else {
            (rec.transfers.clone(), rec.decode_decisions.clone())
        };
        let (itl, requests, decisions) = if take {
            (
                rec.stages
                    .iter_mut()
                    .map(|s| s.stats.take_itl().into_gaps())
                    .collect(),
                std::mem::take(&mut rec.records),
                std::mem::take(&mut rec.decisions),
            )
        } else {
            (
                rec.stages
                    .iter()
                    .map(|s| s.stats.itl().iter().collect())
                    .collect(),
                rec.records.clone(),
                rec.decisions.clone(),
            )
        };
        SimulationResults {
            engine_version: crate::VERSION,
            timing: self.timing.clone(),
            end_time,
            truncated: stop.is_some(),
            stop,
            events: self.events,
            stages,
            windows,
            workers,
            series,
            itl,
            requests,
            decisions,
            slo,
            deployment,
            transfers,
            decode_decisions,
            scaling: rec.scaling.clone(),
        }
    }
}

/// How a run ended.
enum End {
    /// The workload ran to its end.
    Done,
    /// Something else ended it first.
    Stopped(Stop),
}

impl Drop for Simulation {
    fn drop(&mut self) {
        // Processes and the environment reference each other; end the run's cycle.
        self.env.shutdown();
    }
}
