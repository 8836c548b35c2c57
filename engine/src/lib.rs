//! Opal engine: a deterministic discrete-event simulator of a distributed LLM
//! inference platform (workloads → router → vLLM-style workers).
//!
//! The crate is pure Rust with no web dependencies; the same code runs natively
//! (CLI, tests, benches) and in WebAssembly inside the web app.

pub mod deployment;
pub mod fixed_hash;
pub mod hardware;
pub mod kernel;
pub mod kv_cache;
pub mod kv_events;
pub mod measure;
pub mod model;
pub mod offload;
pub(crate) mod platform;
pub mod request;
pub mod rng;
pub mod router;
pub mod scenario;
pub mod simulation;
pub mod slo;
pub mod stats;
pub mod timing;
pub mod tracked;
pub mod validate;
pub mod worker;
pub mod workload;

/// The engine's version, as shown in the app's header and the CLI.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
