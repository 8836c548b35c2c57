//! A pool as a run uses it: resolved hardware, scheduler limits and KV blocks.

use super::{DeploymentConfig, PoolRole};
use crate::hardware::Hardware;
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

/// The run's pools and each pool's autoscaler: the deployment's, or one mixed pool of
/// `simulation.num_workers` with the top-level sections and `router.autoscaler`.
pub(crate) fn resolve(
    scenario: &Scenario,
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
    resolve_deployment(d, scenario, model)
}

fn resolve_deployment(
    d: &DeploymentConfig,
    scenario: &Scenario,
    model: &Model,
) -> Result<(Vec<Pool>, Vec<Autoscaler>), Vec<Problem>> {
    let mut pools = Vec::new();
    let mut scalers = Vec::new();
    for (i, p) in d.pools.iter().enumerate() {
        let at = index("deployment.pools", i);
        let problem = |field: &str, message: String| {
            vec![Problem {
                path: join(&at, field),
                message,
            }]
        };
        let hw_config = p
            .effective_hardware(&scenario.hardware)
            .map_err(|m| problem("hardware", m))?;
        let hardware = hw_config.resolve().map_err(|m| problem("hardware", m))?;
        let scheduler = p
            .effective_worker(&scenario.worker)
            .map_err(|m| problem("worker", m))?;
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
