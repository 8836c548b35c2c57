//! The `simulation` section: seed, global bound and initial cluster size.

use crate::validate::{join, Problems};
use serde::{Deserialize, Serialize};

/// Seed, global time bound and cluster size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimulationConfig {
    /// Seed every random stream derives from. Default 42.
    pub seed: u64,
    /// Stop the whole run at this simulated time (seconds); `null` runs until the workload
    /// is done. Default `null`.
    pub simulation_time: Option<f64>,
    /// Workers at the start (the autoscaler may change it). Default 1.
    pub num_workers: u32,
}

impl Default for SimulationConfig {
    fn default() -> Self {
        Self {
            seed: 42,
            simulation_time: None,
            num_workers: 1,
        }
    }
}

/// Most workers a scenario may start with (each is a whole simulated GPU server).
pub const MAX_WORKERS: u32 = 1024;

impl SimulationConfig {
    /// Records every problem under `path`.
    pub fn validate(&self, path: &str, problems: &mut Problems) {
        if let Some(t) = self.simulation_time {
            problems.positive(path, "simulation_time", t);
        }
        if self.num_workers == 0 || self.num_workers > MAX_WORKERS {
            problems.push(
                join(path, "num_workers"),
                format!("must be between 1 and {MAX_WORKERS}"),
            );
        }
    }
}
