//! The router's decision logic: routing policies over a global KV view, and
//! the autoscaler rule. Everything here is plain data and pure functions; the
//! router's concurrent loops (accept, collect, stats, events, autoscaler) call them.

pub mod autoscaler;
pub mod config;
pub mod kv_index;
pub mod policy;
pub mod worker_set;

pub use autoscaler::{Autoscaler, AutoscalerConfig, ScaleAction};
pub use config::RouterConfig;
pub use kv_index::{KvIndex, KvIndexLayout, KvViewDiff, PrefixMatch, WorkerKvCounts};
pub use policy::{
    CandidateScore, ClusterView, PolicyConfig, RouteRequest, RoutingDecision, RoutingPolicy,
    WorkerLoad,
};
