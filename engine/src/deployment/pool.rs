//! A pool as a run uses it: resolved hardware, scheduler limits and KV blocks.

use super::PoolRole;
use crate::hardware::Hardware;
use crate::model::Model;
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

impl Pool {
    /// `num_workers` identical workers on `hardware` with `scheduler`'s limits, their GPU KV
    /// blocks sized for `model` (or the scheduler's override); what the memory does not
    /// hold, as a message.
    pub(crate) fn new(
        name: String,
        role: PoolRole,
        num_workers: u32,
        hardware: Hardware,
        scheduler: SchedulerConfig,
        model: &Model,
    ) -> Result<Self, String> {
        let num_gpu_blocks = scheduler
            .gpu_blocks(model, &hardware)
            .map_err(|e| e.to_string())?;
        let scheduler = scheduler.across_ranks(hardware.dp);
        Ok(Self {
            name,
            role,
            num_workers,
            hardware,
            scheduler,
            num_gpu_blocks,
        })
    }
}
