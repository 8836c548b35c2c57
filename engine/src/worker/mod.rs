//! A vLLM v1-style worker's scheduler, as a pure state machine.
//!
//! The worker's concurrent loops (intake, interrupt-driven scheduler loop, KV
//! event flush) wrap a [`Scheduler`]: each step the loop calls
//! [`Scheduler::schedule`], waits [`Scheduler::step_time`] simulated seconds,
//! then calls [`Scheduler::finish_step`] with the new time. Both write into buffers
//! the caller keeps from step to step, so a step allocates nothing once they have grown.
//! The scheduler never sleeps and never reads a clock; it only decides and updates.

mod config;
mod memory;
mod offload;
mod opal_batch;
mod output;
pub(crate) mod process;
mod request_queue;
mod scheduler;
mod sequences;

pub use config::{SchedulerConfig, SchedulingPolicy};

/// Most workers a scenario may start with (each is a whole simulated GPU server): the
/// limit of `simulation.num_workers`, of each deployment pool and of every autoscaler.
pub const MAX_WORKERS: u32 = 1024;
pub use memory::{num_gpu_blocks, MemoryError, MAX_GPU_BLOCKS};
pub use offload::{NoOffload, OffloadLookup, TierHit};
pub use opal_batch::OpalBatch;
pub(crate) use opal_batch::OPAL_STEP_DELAY;
pub use output::{FetchStart, KvReceive, ScheduledSeq, SchedulerOutput, StepOutcome};
pub use scheduler::Scheduler;
