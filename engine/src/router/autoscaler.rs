//! The autoscaler rule, as a pure state machine the router's per-second loop calls.
//!
//! Scale-up is the original Opal rule: when the busiest worker has more than
//! `max_queue_threshold` outstanding requests and the cluster (counting a
//! pending scale-up) is below `max_workers`, add one worker; it becomes active
//! `scale_latency` seconds later, and only one scale-up is in flight at a time.
//! Scale-down is ours: after `cooldown` seconds in which no worker had more
//! than `scale_down_threshold` outstanding requests, remove one worker (never
//! below `min_workers`); it drains — receives nothing new and leaves when empty.

use crate::validate::{join, Problems};
use serde::{Deserialize, Serialize};

/// Autoscaler settings (`router.autoscaler`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AutoscalerConfig {
    /// Whether the autoscaler runs at all. Default false.
    pub enabled: bool,
    /// Scale up when some worker has more than this many outstanding requests (count). Default 16.
    pub max_queue_threshold: u32,
    /// Never more workers than this, pending ones included (count). Default 8.
    pub max_workers: u32,
    /// Never fewer workers than this (count, ≥ 1). Default 1.
    pub min_workers: u32,
    /// Seconds from the scale-up decision until the new worker accepts requests. Default 30.
    pub scale_latency: f64,
    /// Load counts as low while no worker has more than this many outstanding requests
    /// (count, below `max_queue_threshold`). Default 2.
    pub scale_down_threshold: u32,
    /// Seconds load must stay low (and since the last scaling action) before scaling down. Default 60.
    pub cooldown: f64,
}

impl Default for AutoscalerConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            max_queue_threshold: 16,
            max_workers: 8,
            min_workers: 1,
            scale_latency: 30.0,
            scale_down_threshold: 2,
            cooldown: 60.0,
        }
    }
}

impl AutoscalerConfig {
    /// Records every problem under `path` (e.g. `router.autoscaler`).
    pub fn validate(&self, path: &str, problems: &mut Problems) {
        if self.min_workers == 0 {
            problems.push(join(path, "min_workers"), "must be >= 1");
        }
        if self.max_workers < self.min_workers {
            problems.push(
                join(path, "max_workers"),
                format!("must be >= min_workers ({})", self.min_workers),
            );
        }
        problems.non_negative(path, "scale_latency", self.scale_latency);
        problems.non_negative(path, "cooldown", self.cooldown);
        if self.scale_down_threshold >= self.max_queue_threshold {
            problems.push(
                join(path, "scale_down_threshold"),
                format!(
                    "must be < max_queue_threshold ({}), or the cluster would scale up and down at the same load",
                    self.max_queue_threshold
                ),
            );
        }
    }
}

/// One worker an autoscaler added or released, as a run's results list them (`scaling`):
/// what a bill needs to charge the seconds each worker was provisioned.
///
/// Times are simulated seconds; NaN (`null` in JSON) for a step that did not happen.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScalingRecord {
    /// The worker's pool (its index in the deployment; 0 without one).
    pub pool: u32,
    /// The worker (`None` while its scale-up is still pending).
    pub worker: Option<u32>,
    /// The autoscaler asked for it (NaN: it was there from the start).
    pub requested: f64,
    /// It started accepting requests, `scale_latency` after the request (NaN: there from
    /// the start, or still starting).
    pub started: f64,
    /// It left the cluster, drained (NaN: still there at the end).
    pub released: f64,
}

/// What the router should do after one observation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum ScaleAction {
    /// Nothing.
    Hold,
    /// Start a new worker now; it becomes active at `ready_at` (call
    /// [`Autoscaler::scale_up_done`] then).
    ScaleUp {
        /// Simulated time the new worker accepts requests.
        ready_at: f64,
    },
    /// Stop routing to `worker`; it leaves once its outstanding requests complete.
    ScaleDown {
        /// The worker to drain.
        worker: u32,
    },
}

/// The autoscaler's memory between observations.
#[derive(Debug, Clone)]
pub struct Autoscaler {
    config: AutoscalerConfig,
    pending_until: Option<f64>,
    quiet_since: Option<f64>,
}

impl Autoscaler {
    /// A rule with nothing in flight.
    pub fn new(config: AutoscalerConfig) -> Self {
        Self {
            config,
            pending_until: None,
            quiet_since: None,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &AutoscalerConfig {
        &self.config
    }

    /// When the in-flight scale-up completes, if one is in flight.
    pub fn pending_until(&self) -> Option<f64> {
        self.pending_until
    }

    /// The router reports that the pending worker became active.
    pub fn scale_up_done(&mut self) {
        self.pending_until = None;
    }

    /// One per-second observation. `outstanding` lists `(worker id, outstanding
    /// requests)` for the active, non-draining workers; `workers` counts them
    /// plus any pending scale-up. Always `Hold` when disabled.
    pub fn observe(&mut self, now: f64, outstanding: &[(u32, u32)], workers: u32) -> ScaleAction {
        let c = &self.config;
        if !c.enabled {
            return ScaleAction::Hold;
        }
        let busiest = outstanding.iter().map(|&(_, n)| n).max().unwrap_or(0);

        if busiest > c.max_queue_threshold {
            self.quiet_since = None;
            if self.pending_until.is_none() && workers < c.max_workers {
                let ready_at = now + c.scale_latency;
                self.pending_until = Some(ready_at);
                return ScaleAction::ScaleUp { ready_at };
            }
            return ScaleAction::Hold;
        }

        if busiest > c.scale_down_threshold || self.pending_until.is_some() {
            self.quiet_since = None;
            return ScaleAction::Hold;
        }
        let since = *self.quiet_since.get_or_insert(now);
        if now - since >= c.cooldown && workers > c.min_workers {
            // Fewest outstanding drains fastest; among equals the newest (highest id) goes.
            if let Some(&(worker, _)) = outstanding
                .iter()
                .min_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
            {
                // The next scale-down needs a fresh quiet period.
                self.quiet_since = Some(now);
                return ScaleAction::ScaleDown { worker };
            }
        }
        ScaleAction::Hold
    }
}
