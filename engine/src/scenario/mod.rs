//! The scenario document: one versioned JSON document that describes a whole run.
//!
//! Sections: `simulation` (seed, bounds, cluster size), `model`, `hardware`,
//! `worker` (scheduler limits), `kv_cache` (offload tiers), `router`,
//! `workload.stages`, and optionally `deployment` (worker pools: prefill/decode
//! disaggregation), `measurement`, `slo`, `sweep`, `race` and `opal_compat`. Every field has a documented
//! default, so a partial document is valid. Here the document is plain data with its own
//! checks ([`Scenario::validate`]); reading one from text, the checks that need the
//! scenarios a sweep or a race makes, the presets and the Opal import are the `opal`
//! crate's, above the engine.
//!
//! Beside the document: [`ScenarioData`] (the trace and sessions files it names).

mod cross;
mod data;
mod opal_compat;
pub mod path;
pub mod race;
mod simulation;
pub mod sweep;
mod work;

pub(crate) use data::missing_data_file;
pub use data::{DataReport, RequiredFile, ScenarioData};
pub use opal_compat::OpalCompatConfig;
pub use simulation::{
    SimulationConfig, DEFAULT_MAX_EVENTS, DEFAULT_MAX_REQUESTS, DEFAULT_MAX_SIMULATED_SECONDS,
    MAX_WORKERS,
};
pub use work::{HostLimit, WorkEstimate, EVENTS_PER_REQUEST};

use crate::deployment::DeploymentConfig;
use crate::hardware::HardwareConfig;
use crate::measure::MeasurementConfig;
use crate::model::ModelConfig;
use crate::offload::OffloadConfig;
use crate::router::RouterConfig;
use crate::slo::SloConfig;
use crate::timing::ErrorBand;
use crate::validate::{Problem, Problems};
use crate::worker::SchedulerConfig;
use crate::workload::WorkloadConfig;
use race::RaceConfig;
use serde::{Deserialize, Serialize};
use sweep::SweepConfig;

/// The scenario format version this engine writes and reads.
pub const SCENARIO_VERSION: u32 = 1;

/// A whole simulation run, as the user describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Scenario {
    /// Format version (currently 1).
    pub version: u32,
    /// Seed, bounds and cluster size.
    pub simulation: SimulationConfig,
    /// The served model (catalogue name, custom architecture, or a Hugging Face config).
    pub model: ModelConfig,
    /// The GPU each worker runs on, and tensor parallelism.
    pub hardware: HardwareConfig,
    /// Each worker's vLLM scheduler limits and timing model.
    pub worker: SchedulerConfig,
    /// KV offload tiers behind the GPU prefix cache.
    pub kv_cache: OffloadConfig,
    /// Routing policy, KV event interval and autoscaler.
    pub router: RouterConfig,
    /// The workload: stages run one after another.
    pub workload: WorkloadConfig,
    /// Worker pools with roles and the prefill→decode KV link (none: one mixed pool of
    /// `simulation.num_workers` workers with the sections above).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deployment: Option<DeploymentConfig>,
    /// Which part of each stage the results and the SLO are judged on (warm-up left out),
    /// and when a stage counts as overloaded.
    #[serde(skip_serializing_if = "MeasurementConfig::is_default")]
    pub measurement: MeasurementConfig,
    /// Latency targets the run is judged against (none: no SLO report).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slo: Option<SloConfig>,
    /// Fields varied over values and searches for the SLO's edge (`opal sweep`; a plain run
    /// ignores it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sweep: Option<SweepConfig>,
    /// Variants of this scenario raced side by side on the same arrivals (the app's race
    /// view; a plain run ignores it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub race: Option<RaceConfig>,
    /// Behaviours of the original Opal that vLLM does not share, each off by default (on:
    /// an imported Opal config reproduces the original's figures).
    #[serde(skip_serializing_if = "OpalCompatConfig::is_default")]
    pub opal_compat: OpalCompatConfig,
}

impl Default for Scenario {
    fn default() -> Self {
        Self {
            version: SCENARIO_VERSION,
            simulation: SimulationConfig::default(),
            model: ModelConfig::default(),
            hardware: HardwareConfig::default(),
            worker: SchedulerConfig::default(),
            kv_cache: OffloadConfig::default(),
            router: RouterConfig::default(),
            workload: WorkloadConfig::default(),
            deployment: None,
            measurement: MeasurementConfig::default(),
            slo: None,
            sweep: None,
            race: None,
            opal_compat: OpalCompatConfig::default(),
        }
    }
}

impl Scenario {
    /// Every problem in the scenario, each with its field path: each section's own checks,
    /// then the checks between sections (does the model fit the GPU, do the scheduler
    /// limits agree with the model, does the autoscaler's range hold the starting cluster),
    /// then, when those find none, the work estimate's. What a run reads: the sweep's points
    /// and the race's entrants are whole scenarios, checked by `opal::document::check`.
    pub fn validate(&self) -> Vec<Problem> {
        self.with_work_problems(self.section_problems())
    }

    /// Each section's own checks and the checks across sections.
    pub fn section_problems(&self) -> Problems {
        let mut p = Problems::new();
        if self.version != SCENARIO_VERSION {
            p.push(
                "version",
                format!(
                    "this engine reads version {SCENARIO_VERSION}, not {}",
                    self.version
                ),
            );
        }
        self.simulation.validate("simulation", &mut p);
        self.model.validate("model", &mut p);
        self.hardware.validate("hardware", &mut p);
        self.worker.validate("worker", &mut p);
        self.kv_cache.validate("kv_cache", &mut p);
        self.router.validate("router", &mut p);
        self.workload.validate_with(
            "workload",
            self.simulation.simulation_time.is_some(),
            &mut p,
        );
        if let Some(d) = &self.deployment {
            d.validate("deployment", &self.hardware, &self.worker, &mut p);
        }
        self.measurement.validate("measurement", &mut p);
        if let Some(slo) = &self.slo {
            slo.validate("slo", &mut p);
        }
        if let Some(sweep) = &self.sweep {
            sweep.validate("sweep", &mut p);
        }
        if let Some(race) = &self.race {
            race.validate("race", &mut p);
        }
        self.opal_compat.validate("opal_compat", &mut p);
        cross::validate(self, &mut p);
        p
    }

    /// How far this scenario's latencies may land from a real vLLM's: the error band of
    /// its GPU's calibration, measured on real runs (see [`ErrorBand`]), for one pool of
    /// workers priced by the calibrated model as vLLM behaves; `None` for pools, another
    /// timing model, Opal's behaviours, or a GPU no real run has measured.
    pub fn error_band(&self) -> Option<ErrorBand> {
        if self.deployment.is_some() || !self.opal_compat.is_default() {
            return None;
        }
        let hw = self.hardware.resolve().ok()?;
        self.worker.timing.error_band(&hw)
    }

    /// `p`'s problems, or when there are none, the work estimate's.
    pub fn with_work_problems(&self, p: Problems) -> Vec<Problem> {
        let problems = p.into_vec();
        // The estimate needs sound sections (a rate of NaN estimates nothing useful).
        if problems.is_empty() {
            self.work_problems(&[])
        } else {
            problems
        }
    }
}

#[cfg(test)]
impl Scenario {
    /// A unit test's document: read by serde (the `opal` crate reads documents people write,
    /// with every mistake at its field) and checked as a run checks it.
    pub(crate) fn from_test_json(text: &str) -> Result<Self, Vec<Problem>> {
        let scenario: Self =
            serde_json::from_str(text).map_err(|e| vec![Problem::new("", e.to_string())])?;
        let problems = scenario.validate();
        if problems.is_empty() {
            Ok(scenario)
        } else {
            Err(problems)
        }
    }
}
