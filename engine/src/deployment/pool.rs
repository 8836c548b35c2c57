//! A pool as a run uses it: resolved hardware, scheduler limits and KV blocks.

use super::{DeploymentConfig, PoolRole};
use crate::hardware::{Hardware, HardwareConfig};
use crate::model::Model;
use crate::router::Autoscaler;
use crate::scenario::Scenario;
use crate::validate::{index, join, Problem};
use crate::worker::SchedulerConfig;

/// One pool of identical workers, resolved.
#[derive(Debug, Clone)]
pub(crate) struct Pool {
    pub name: String,
    pub role: PoolRole,
    pub num_workers: u32,
    pub hardware: Hardware,
    pub scheduler: SchedulerConfig,
    /// GPU KV blocks per worker (derived from memory, or overridden).
    pub num_gpu_blocks: u32,
}

/// Each pool's `hardware` and `worker` sections, its keys over the top-level ones (none
/// without a deployment).
// Inline, as `Simulation::new` is: see `PoolConfig::effective_hardware`.
#[inline]
pub(crate) fn sections(scenario: &Scenario) -> Result<Vec<Sections>, Vec<Problem>> {
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
pub(crate) type Sections = (HardwareConfig, SchedulerConfig);

/// The run's pools and each pool's autoscaler: the deployment's (its pools' `sections`), or
/// one mixed pool of `simulation.num_workers` with the top-level sections and
/// `router.autoscaler`.
pub(crate) fn resolve(
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
        let blocks = scenario
            .worker
            .gpu_blocks(model, &hardware)
            .map_err(|e| problem("hardware".into(), e.to_string()))?;
        let pool = Pool {
            name: PoolRole::Mixed.name().into(),
            role: PoolRole::Mixed,
            num_workers: scenario.simulation.num_workers,
            hardware,
            scheduler: scenario.worker.clone(),
            num_gpu_blocks: blocks,
        };
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
        let scheduler = scheduler.clone();
        let num_gpu_blocks = scheduler
            .gpu_blocks(model, &hardware)
            .map_err(|e| problem("hardware", e.to_string()))?;
        pools.push(Pool {
            name: p.display_name().to_string(),
            role: p.role,
            num_workers: p.num_workers,
            hardware,
            scheduler,
            num_gpu_blocks,
        });
        scalers.push(Autoscaler::new(p.autoscaler.clone().unwrap_or_default()));
    }
    Ok((pools, scalers))
}
