//! Workloads: what arrives at the platform, stage by stage.
//!
//! - [`dist`]: random distributions on [`crate::rng::SimRng`] (libm only).
//! - [`length`], [`arrival`]: token-length distributions and arrival processes.
//! - [`generator`]: pure producers of request specs (synthetic, RAG, trace, sessions).
//! - [`config`]: the stage configuration, its validation, and the generator builder.
//!
//! The async stage loops on the simulation kernel call these generators.

pub mod arrival;
pub mod config;
pub mod dist;
pub mod generator;
pub mod jsonl;
pub mod length;
pub(crate) mod stage;

pub use arrival::Arrival;
pub use config::{
    GeneratorConfig, PoolOrder, PromptPoolConfig, StageConfig, StagePriority, WorkloadConfig,
};
pub use generator::{
    RequestGenerator, RequestSpec, SessionCursor, SessionGenerator, SessionStart, SessionTurn,
    StageGenerator,
};
pub use jsonl::DataError;
pub use length::LengthDist;
