//! Timestamps of a request's journey, in simulated seconds.

use serde::Serialize;

/// When each milestone happened (seconds; `None` until it does).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Timestamps {
    /// Arrival at the platform.
    pub created: f64,
    /// Entered the router.
    pub router_in: Option<f64>,
    /// Entered a worker's waiting queue.
    pub worker_in: Option<f64>,
    /// First prefix lookup (GPU cache, then offload tiers).
    pub kv_lookup_start: Option<f64>,
    /// Its KV prefix was in place (immediately, or when an offload fetch finished).
    pub ready: Option<f64>,
    /// First admitted to the running batch.
    pub first_scheduled: Option<f64>,
    /// First output token emitted.
    pub first_token: Option<f64>,
    /// Last output token emitted (or rejection time for a failed request).
    pub completed: Option<f64>,
}
