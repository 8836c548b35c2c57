//! Opal: a deterministic simulator of a distributed LLM inference platform, as its app and
//! command line use it — a scenario document in; a run, a sweep or a race out.
//!
//! The simulation itself is the `opal-engine` crate (its kernel, the platform's components
//! and the run). This crate is the layer above it: it reads and checks scenario documents
//! ([`document`]), holds the built-in presets and the import of original Opal configs, and
//! runs what a document asks beyond one run ([`sweep`], [`race`]), and the pictures of the
//! presets' answers ([`gallery`]).

pub mod document;
pub mod gallery;
pub mod race;
pub mod sweep;

pub use engine::validate::{count, Problem};
pub use engine::VERSION;

// What a document holds, a run gives, and the app and the CLI show: the engine's types, by
// the engine's names. The engine's insides (its kernel, the platform's processes, the
// scheduler and the block pool) are not part of this API.

/// The scenario document's data: the whole and its sections' own checks.
pub mod scenario {
    pub use engine::scenario::{
        DataReport, HostLimit, OpalCompatConfig, RequiredFile, Scenario, ScenarioData,
        SimulationConfig,
    };
}

/// The `simulation` run: built from a scenario, advanced in slices, read as results.
pub mod simulation {
    pub use engine::simulation::{
        DeploymentReport, PoolSummary, Progress, ResultsReader, RoutingRecord, Simulation,
        SimulationResults, Stop, WireError,
    };
}

/// The `model` section: the served model.
pub mod model {
    pub use engine::model::{catalogue, hf, Architecture, Model, ModelConfig};
}

/// The `hardware` section: the GPU catalogue and a worker's GPUs.
pub mod hardware {
    pub use engine::hardware::{catalogue, list_price, lookup, GpuSpec, HardwareConfig};
}

/// The `deployment` section: worker pools and the prefill-to-decode KV link.
pub mod deployment {
    pub use engine::deployment::{
        DeploymentConfig, KvTransferConfig, PoolConfig, PoolRole, TransferRecord,
    };
}

/// The `kv_cache` section: offload tiers behind the GPU prefix cache.
pub mod offload {
    pub use engine::offload::{OffloadConfig, TierConfig, TierScope};
}

/// The `timing` section: how a worker's step time is priced.
pub mod timing {
    pub use engine::timing::{calibration_for, Calibration, ErrorBand, TimingConfig, TimingKind};
}

/// The `router` section: routing policies and what they decided.
pub mod router {
    pub use engine::router::policy::{Basis, CandidateScore, RoutingDecision, ScoreTerm};
    pub use engine::router::{PolicyConfig, RouterConfig};
}

/// The `workload` section: stages and their generators.
pub mod workload {
    pub use engine::workload::config::{
        GeneratorConfig, RagConfig, SessionsConfig, SyntheticConfig, SyntheticSessionsConfig,
        TraceConfig,
    };
    pub use engine::workload::{LengthDist, StageConfig, WorkloadConfig};
}

/// The `measurement` section and the windows a run is judged on.
pub mod measure {
    pub use engine::measure::{MeasuredWindow, MeasurementConfig, Overload};
}

/// The `slo` section and the report judging a run against it.
pub mod slo {
    pub use engine::slo::{Metric, SloConfig, SloReport, SloSummary, Target};
}

/// A run's statistics: request records, latency summaries, per-worker series.
pub mod stats {
    pub use engine::stats::{
        sort_total, Chunked, FailReason, LatencySummary, RequestRecord, StageSummary,
        WorkerColumns, WorkerTable,
    };
}

/// Reads a scenario document someone wrote and checks it whole, the scenarios its sweep
/// and race make included: every problem found, each with its field path (see
/// [`document::check`]). What the CLI and the app read documents with.
pub fn parse_scenario(text: &str) -> Result<scenario::Scenario, Vec<Problem>> {
    document::parse(text)
}

/// Checks a scenario document whole (as [`parse_scenario`] does) and returns every problem
/// found, each with its field path.
pub fn check_scenario(text: &str) -> Vec<Problem> {
    match parse_scenario(text) {
        Ok(_) => Vec::new(),
        Err(problems) => problems,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_is_accepted() {
        assert!(check_scenario("{}").is_empty());
    }

    #[test]
    fn broken_json_reports_line_and_column() {
        let problems = check_scenario("{\n  \"seed\": ");
        assert_eq!(problems.len(), 1);
        assert!(problems[0].message.contains("line 2"), "{problems:?}");
    }

    #[test]
    fn non_object_is_rejected() {
        assert_eq!(
            check_scenario("[1]")[0].message,
            "a scenario must be a JSON object"
        );
    }

    #[test]
    fn bad_field_is_reported_with_its_path() {
        let problems = check_scenario(r#"{"worker": {"max_num_seqs": "many"}}"#);
        assert_eq!(problems[0].path, "worker.max_num_seqs", "{problems:?}");
    }
}
