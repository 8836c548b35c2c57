//! Building a run's parts from a valid scenario: the pools' sections ([`sections`]), the
//! model and pools ([`Setup`]) and the workload's stages ([`build_stages`]).

use crate::deployment::pool::Pool;
use crate::deployment::{DeploymentConfig, PoolRole};
use crate::hardware::HardwareConfig;
use crate::model::Model;
use crate::router::Autoscaler;
use crate::scenario::{missing_data_file, Scenario, ScenarioData};
use crate::validate::{index, join, Problem};
use crate::worker::SchedulerConfig;
use crate::workload::stage::Stage;

/// What a run is built from besides its stages: the model and pools, resolved.
pub(super) struct Setup {
    pub(super) model: Model,
    pub(super) pools: Vec<Pool>,
    pub(super) autoscalers: Vec<Autoscaler>,
    /// What prices the steps (see `TimingConfig::describe`).
    pub(super) timing: String,
}

impl Setup {
    /// Resolves a valid scenario's model and pools (its pools' `sections`).
    pub(super) fn resolve(
        scenario: &Scenario,
        sections: &[Sections],
    ) -> Result<Self, Vec<Problem>> {
        let model = scenario.model.resolve().map_err(|message| {
            vec![Problem {
                path: "model".into(),
                message,
            }]
        })?;
        let (pools, autoscalers) = resolve_pools(scenario, sections, &model)?;
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
            Ok(generator) => {
                let mut stage = Stage::new(i as u32, config, seed, generator);
                stage.opal_ids =
                    scenario.opal_compat.shared_prompt_ids && config.generator.is_synthetic();
                stages.push(stage);
            }
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

/// Each pool's `hardware` and `worker` sections, its keys over the top-level ones (none
/// without a deployment).
pub(super) fn sections(scenario: &Scenario) -> Result<Vec<Sections>, Vec<Problem>> {
    let Some(d) = &scenario.deployment else {
        return Ok(Vec::new());
    };
    let problem = |i: usize, field: &str, message: String| {
        vec![Problem {
            path: join(&index("deployment.pools", i), field),
            message,
        }]
    };
    let mut sections = Vec::with_capacity(d.pools.len());
    for (i, p) in d.pools.iter().enumerate() {
        let hardware = p
            .effective_hardware(&scenario.hardware)
            .map_err(|m| problem(i, "hardware", m))?;
        let worker = p
            .effective_worker(&scenario.worker)
            .map_err(|m| problem(i, "worker", m))?;
        sections.push((hardware, worker));
    }
    Ok(sections)
}

/// A pool's `hardware` and `worker` sections (see [`sections`]).
pub(super) type Sections = (HardwareConfig, SchedulerConfig);

/// The run's pools and each pool's autoscaler: the deployment's (its pools' `sections`), or
/// one mixed pool of `simulation.num_workers` with the top-level sections and
/// `router.autoscaler`.
fn resolve_pools(
    scenario: &Scenario,
    sections: &[Sections],
    model: &Model,
) -> Result<(Vec<Pool>, Vec<Autoscaler>), Vec<Problem>> {
    let problem = |path: String, message: String| vec![Problem { path, message }];
    let Some(d) = &scenario.deployment else {
        let hardware = scenario
            .hardware
            .resolve()
            .map_err(|m| problem("hardware".into(), m))?;
        let pool = Pool::new(
            PoolRole::Mixed.name().into(),
            PoolRole::Mixed,
            scenario.simulation.num_workers,
            hardware,
            scenario.worker.clone(),
            model,
        )
        .map_err(|m| problem("hardware".into(), m))?;
        return Ok((
            vec![pool],
            vec![Autoscaler::new(scenario.router.autoscaler.clone())],
        ));
    };
    resolve_deployment(d, sections, model)
}

fn resolve_deployment(
    d: &DeploymentConfig,
    sections: &[Sections],
    model: &Model,
) -> Result<(Vec<Pool>, Vec<Autoscaler>), Vec<Problem>> {
    let mut pools = Vec::new();
    let mut scalers = Vec::new();
    for (i, (p, (hw_config, scheduler))) in d.pools.iter().zip(sections).enumerate() {
        let at = index("deployment.pools", i);
        let problem = |field: &str, message: String| {
            vec![Problem {
                path: join(&at, field),
                message,
            }]
        };
        let hardware = hw_config.resolve().map_err(|m| problem("hardware", m))?;
        let pool = Pool::new(
            p.display_name().to_string(),
            p.role,
            p.num_workers,
            hardware,
            scheduler.clone(),
            model,
        )
        .map_err(|m| problem("hardware", m))?;
        pools.push(pool);
        scalers.push(Autoscaler::new(p.autoscaler.clone().unwrap_or_default()));
    }
    Ok((pools, scalers))
}
