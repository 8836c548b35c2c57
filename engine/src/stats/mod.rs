//! Statistics: per-request records, the per-stage results table, per-second series.
//!
//! - [`chunked`]: [`Chunked`], the list records are kept in (grows without moving them).
//! - [`record`]: [`RequestRecord`], small and plain, one per request.
//! - [`percentile`]: exact numpy-linear percentiles and [`LatencySummary`].
//! - `radix`: the radix sort behind the large sorts.
//! - [`itl`]: pooled inter-token gaps as (gap, count) with exact percentiles.
//! - [`summary`]: [`StageStats`] (what the loops accumulate) → [`StageSummary`].
//! - [`series`]: [`SecondSeries`] → columnar per-second data for charts.
//! - [`transfer`]: [`TransferRecord`], one per KV transfer of a disaggregated run.
//! - [`workers`]: the per-worker table ([`WorkerTable`]).
//! - [`csv`]: the per-request CSV export.

pub mod chunked;
pub mod csv;
pub mod itl;
pub mod percentile;
pub(crate) mod radix;
pub mod record;
pub mod series;
pub mod summary;
pub mod transfer;
pub mod workers;

pub use chunked::Chunked;
pub use itl::ItlHistogram;
pub use percentile::{percentile_sorted, LatencySummary};
pub use radix::sort_total;
pub use record::{FailReason, PromptSources, RequestRecord, MAX_TIERS};
pub use series::{SecondSeries, SeriesColumns, WorkerColumns};
pub use summary::{PrefixHitRates, StageStats, StageSummary};
pub use transfer::TransferRecord;
pub use workers::{WorkerSummary, WorkerTable};

/// `t.max(0.0) as u64` (NaN and negative times are 0): through `i64` below 2⁶³, which
/// baseline x86-64 converts in one instruction (to `u64` it takes several), since this
/// runs a few times per worker step. The rare large case is out of line: inline, both
/// conversions were computed and one picked, which cost every call the slow path too.
#[inline]
pub(crate) fn whole_seconds(t: f64) -> u64 {
    let t = t.max(0.0);
    if t < 9.0e18 {
        t as i64 as u64
    } else {
        huge_whole_seconds(t)
    }
}

#[cold]
#[inline(never)]
fn huge_whole_seconds(t: f64) -> u64 {
    t as u64
}

#[cfg(test)]
mod tests {
    #[test]
    fn whole_seconds_is_the_saturating_floor_of_a_non_negative_time() {
        let want = |t: f64| t.max(0.0) as u64;
        for t in [
            f64::NAN,
            f64::NEG_INFINITY,
            -3.5,
            -0.0,
            0.0,
            0.999_999,
            2.7,
            4e9 + 0.5,
            8.999_999_999_999_998e18,
            9.0e18,
            1.5e19,
            1e30,
            f64::INFINITY,
        ] {
            assert_eq!(super::whole_seconds(t), want(t), "t = {t}");
        }
        assert_eq!(super::whole_seconds(2.7), 2);
        assert_eq!(super::whole_seconds(f64::NAN), 0);
        assert_eq!(super::whole_seconds(1e30), u64::MAX);
    }
}
