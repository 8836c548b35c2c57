//! The `router` section of a scenario.

use crate::router::autoscaler::AutoscalerConfig;
use crate::router::policy::PolicyConfig;
use crate::validate::{join, Problems};
use serde::{Deserialize, Serialize};

/// Shortest `kv_event_interval`, seconds.
pub const MIN_KV_EVENT_INTERVAL: f64 = 0.001;

/// Router settings (`router`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RouterConfig {
    /// Routing policy and its parameters, e.g. `{"policy": "max_prefix"}`. Default `round_robin`.
    pub policy: PolicyConfig,
    /// Seconds between a worker's KV event flushes to the router, i.e. how stale
    /// the global KV view may be (> 0). Lives here because it is the router's view
    /// that it shapes. At least 0.001. Default 1.
    pub kv_event_interval: f64,
    /// Autoscaler settings. Default: disabled.
    pub autoscaler: AutoscalerConfig,
}

impl Default for RouterConfig {
    fn default() -> Self {
        Self {
            policy: PolicyConfig::default(),
            kv_event_interval: 1.0,
            autoscaler: AutoscalerConfig::default(),
        }
    }
}

impl RouterConfig {
    /// Records every problem under `path` (normally `router`).
    pub fn validate(&self, path: &str, problems: &mut Problems) {
        self.policy.validate(&join(path, "policy"), problems);
        if self.kv_event_interval.is_nan() || self.kv_event_interval < MIN_KV_EVENT_INTERVAL {
            problems.push(
                join(path, "kv_event_interval"),
                format!(
                    "must be at least {MIN_KV_EVENT_INTERVAL} s (a millisecond): a shorter \
                     interval changes nothing but the number of flushes"
                ),
            );
        }
        self.autoscaler
            .validate(&join(path, "autoscaler"), problems);
    }
}
