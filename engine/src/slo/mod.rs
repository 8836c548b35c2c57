//! Service-level objectives: the `slo` section of a scenario (latency targets per request
//! or at a percentile) and the report a run gets against it — attainment (share of requests
//! meeting every per-request target), each percentile target checked, and goodput (requests
//! and output tokens per second of the requests that met them), per stage and per worker.

mod charge;
mod config;
mod part;
mod report;
#[cfg(test)]
mod tests;

pub use config::{Metric, SloConfig, Target};
pub use report::{GroupSlo, PercentileCheck, SloReport, SloSummary};
