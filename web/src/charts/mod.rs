//! Reusable chart components for simulation results. They take plain columns (`Rc<[f64]>`),
//! names and units, know nothing about the engine, and read their colours from CSS variables
//! (`--series-0` ... `--series-7`, `--phase-*`) so they work in light and dark themes.
//!
//! - [`LineChart`]: series over simulated time, hover read-out, optional pinned run (dashed),
//!   marks on single points and shaded bands ([`marks`]).
//! - [`CdfChart`]: latency CDFs of several runs.
//! - [`Histogram`]: counts on shared nice bins, one outline per run.
//! - [`Timeline`]: one bar per request on a canvas, phases coloured, zoom and pan.
//!
//! Every chart has `role="img"`, an `aria-label` summary, and a save button (SVG or PNG).
//! The pure parts ([`ticks`], [`scale`], [`format`], [`downsample`], [`cdf`], [`bins`],
//! [`lanes`], [`requests`]) build and test natively.
//!
//! ```ignore
//! use std::rc::Rc;
//! use crate::charts::*;
//!
//! let x: Rc<[f64]> = Rc::from(vec![0.0, 1.0, 2.0]);
//! let run = LineRun {
//!     label: "least-loaded".into(),
//!     x,
//!     series: Rc::from(vec![Series { name: "waiting".into(), values: Rc::from(vec![0.0, 4.0, 2.0]) }]),
//! };
//! html! {
//!     <>
//!         <LineChart title="Queue depth" run={run} pinned={None::<LineRun>} step=true />
//!         <CdfChart title="TTFT" unit={Unit::Seconds}
//!             runs={Rc::from(vec![CdfRun { label: "this run".into(), input: CdfInput::Sorted(ttft_sorted) }])} />
//!         <Histogram title="Prompt length" unit={Unit::Count}
//!             runs={Rc::from(vec![HistogramRun { label: "this run".into(), values: prompt_tokens }])} />
//!         <Timeline title="Requests" data={phases}
//!             tooltip={Callback::from(move |i: usize| describe_request(&phases_copy, i) + &routing[i])} />
//!     </>
//! }
//! ```

pub mod bins;
pub mod cdf;
mod cdf_chart;
pub mod downsample;
mod drawn_width;
pub mod export;
pub mod format;
mod histogram;
pub mod lanes;
mod line_chart;
pub mod marks;
pub mod requests;
pub mod scale;
pub mod svg;
pub mod ticks;
mod timeline;

pub use cdf::CdfInput;
pub use cdf_chart::{CdfChart, CdfChartProps, CdfRun};
pub use drawn_width::ChartScale;
pub use format::Unit;
pub use histogram::{Histogram, HistogramProps, HistogramRun};
pub use line_chart::{LineChart, LineChartProps, LineRun, Series};
pub use marks::{Band, MarkStyle, PointMark};
pub use requests::{describe_request, RequestPhases};
pub use timeline::{Timeline, TimelineProps};
