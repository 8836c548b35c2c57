//! Measurement as benchmarks do it: each stage is judged on a window of its requests —
//! warm-up and cool-down left out, and only requests arriving inside the window counted, so
//! the drain after the last arrival never flatters the figures — and a window that cannot
//! keep up with its load is marked overloaded.
//!
//! - [`config`]: the scenario's `measurement` section.
//! - [`window`]: [`MeasuredWindow`], each stage's window and its figures.
//! - [`overload`]: the two overload tests.

mod config;
mod overload;
#[cfg(test)]
mod tests;
mod window;

pub use config::{MeasurementConfig, Span, DEFAULT_WARMUP_FRACTION};
pub use overload::Overload;
pub use window::{measure, window_of, MeasuredWindow, Pooled};
