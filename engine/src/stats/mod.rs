//! Statistics: per-request records, the per-stage results table, per-second series.
//!
//! - [`record`]: [`RequestRecord`], small and plain, one per request.
//! - [`percentile`]: exact numpy-linear percentiles and [`LatencySummary`].
//! - `radix`: the radix sort behind the large sorts.
//! - [`itl`]: pooled inter-token gaps as (gap, count) with exact percentiles.
//! - [`summary`]: [`StageStats`] (what the loops accumulate) → [`StageSummary`].
//! - [`series`]: [`SecondSeries`] → columnar per-second data for charts.
//! - [`workers`]: the per-worker table ([`WorkerTable`]).
//! - [`csv`]: the per-request CSV export.

pub mod csv;
pub mod itl;
pub mod percentile;
pub(crate) mod radix;
pub mod record;
pub mod series;
pub mod summary;
pub mod workers;

pub use itl::ItlHistogram;
pub use percentile::{percentile_sorted, LatencySummary};
pub use record::{FailReason, PromptSources, RequestRecord, MAX_TIERS};
pub use series::{SecondSeries, SeriesColumns, WorkerColumns};
pub use summary::{PrefixHitRates, StageStats, StageSummary};
pub use workers::{WorkerSummary, WorkerTable};
