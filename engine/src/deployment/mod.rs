//! Deployments: pools of workers with roles, for prefill/decode disaggregation
//! (DistServe, Splitwise, Mooncake, llm-d, NVIDIA Dynamo).
//!
//! A `prefill` worker computes a request's prompt and samples its first token (as vLLM's
//! P/D connectors do), then the request's KV cache crosses the prefill worker's link
//! ([`KvTransferConfig`]) to a `decode` worker chosen by the deployment's decode policy.
//! The decode worker allocates the blocks first (a transfer that finds no room waits), skips
//! the blocks its own prefix cache already holds, and schedules the request once the last
//! byte has landed; the prefill worker frees its blocks then (they stay in its prefix cache).

mod config;
pub(crate) mod pool;

pub use crate::stats::TransferRecord;
pub use config::{DeploymentConfig, KvTransferConfig, PoolConfig, PoolRole, MAX_POOLS};
