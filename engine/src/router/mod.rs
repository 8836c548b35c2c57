//! The router: routing policies over a global KV view, the autoscaler rule (plain
//! data and pure functions), and the router's concurrent loops that call them
//! ([`process`]: accept, collect, per-second stats, events, autoscaler).

pub mod autoscaler;
pub mod config;
pub mod kv_index;
pub mod policy;
pub(crate) mod process;
pub mod routed_prefixes;
pub mod worker_set;

pub use autoscaler::{Autoscaler, AutoscalerConfig, ScaleAction, ScalingRecord};
pub use config::RouterConfig;
pub use kv_index::{KvIndex, KvIndexLayout, KvViewDiff, PrefixMatch, WorkerKvCounts};
pub use policy::{
    Basis, CacheAwareConfig, CandidateScore, Candidates, ClusterView, DenominatorHint,
    EvidenceRoom, PolicyConfig, RouteRequest, RoutingDecision, RoutingPolicy, WorkerLoad,
};
