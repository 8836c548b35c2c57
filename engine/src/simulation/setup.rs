//! Building a run's parts from a valid scenario: the model and pools ([`Setup`]) and the
//! workload's stages ([`build_stages`]).

use crate::scenario::{missing_data_file, Scenario, ScenarioData};
use crate::validate::Problem;
use crate::workload::stage::Stage;

/// What a run is built from besides its stages: the model and pools, resolved.
pub(super) struct Setup {
    pub(super) model: crate::model::Model,
    pub(super) pools: Vec<crate::deployment::pool::Pool>,
    pub(super) autoscalers: Vec<crate::router::Autoscaler>,
    /// What prices the steps (see `TimingConfig::describe`).
    pub(super) timing: String,
}

impl Setup {
    /// Resolves a valid scenario's model and pools (its pools' `sections`).
    pub(super) fn resolve(
        scenario: &Scenario,
        sections: &[crate::deployment::pool::Sections],
    ) -> Result<Self, Vec<Problem>> {
        let model = scenario.model.resolve().map_err(|message| {
            vec![Problem {
                path: "model".into(),
                message,
            }]
        })?;
        let (pools, autoscalers) = crate::deployment::pool::resolve(scenario, sections, &model)?;
        let timing = match &scenario.deployment {
            None => scenario.worker.timing.describe(&pools[0].hardware),
            Some(_) => pools
                .iter()
                .map(|p| format!("{}: {}", p.name, p.scheduler.timing.describe(&p.hardware)))
                .collect::<Vec<_>>()
                .join("; "),
        };
        Ok(Self {
            model,
            pools,
            autoscalers,
            timing,
        })
    }
}

/// A valid scenario's stages, their generators reading trace and session data from `files`,
/// and the requests they issue in all when every stage says how many.
// Inline, as `Simulation::new` is: the stages' checks and the data files' parsing are
// compiled where runs are built (the generators' draws stay in the engine).
#[inline]
pub(super) fn build_stages(
    scenario: &Scenario,
    files: &ScenarioData,
) -> Result<(Vec<Stage>, Option<u64>), Vec<Problem>> {
    let seed = scenario.simulation.seed;
    let mut stages = Vec::new();
    let mut problems = Vec::new();
    let mut expected = Some(0u64);
    for (i, config) in scenario.workload.stages.iter().enumerate() {
        let data = match config.data_file() {
            Some(name) => match files.get(name) {
                Some(text) => Some(text),
                None => {
                    problems.push(missing_data_file(i, config));
                    continue;
                }
            },
            None => None,
        };
        match config.build(seed, i, data) {
            Ok(generator) => stages.push(Stage::new(i as u32, config, seed, generator)),
            Err(mut p) => problems.append(&mut p),
        }
        expected = expected
            .zip(config.total_requests)
            .and_then(|(a, b)| a.checked_add(b));
    }
    if problems.is_empty() {
        // The files' share of the work, now that they are parsed.
        let shapes: Vec<_> = stages.iter().map(|s| s.generator.data_shape()).collect();
        problems = scenario.work_problems(&shapes);
    }
    if problems.is_empty() {
        Ok((stages, expected))
    } else {
        Err(problems)
    }
}
