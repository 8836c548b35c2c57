//! Exact percentiles, computed the way `vllm bench serve` does (`numpy.percentile`, default
//! `linear` method), so our tables and theirs agree to the last digit.
//!
//! For n sorted values and percentile p: h = (n − 1)·(p / 100); i = ⌊h⌋, g = h − i; the
//! result interpolates x[i] and x[i+1] with numpy's `_lerp` (x[i] + (x[i+1] − x[i])·g, or
//! x[i+1] − (x[i+1] − x[i])·(1 − g) when g ≥ 0.5, which is what makes it exact at both ends).
//! h ≥ n − 1 gives the largest value.

use serde::Serialize;

/// numpy's linear interpolation between neighbours `a` and `b` at weight `g`.
pub fn lerp(a: f64, b: f64, g: f64) -> f64 {
    let d = b - a;
    if g >= 0.5 {
        b - d * (1.0 - g)
    } else {
        a + d * g
    }
}

/// Where percentile `p` falls among `n` values: `(i, g)` with the value between `x[i]` and
/// `x[i+1]` at weight `g` (`g = 0` and `i = n − 1` at the top).
pub fn virtual_index(n: u64, p: f64) -> (u64, f64) {
    let h = (n - 1) as f64 * (p / 100.0);
    if h >= (n - 1) as f64 {
        return (n - 1, 0.0);
    }
    let h = h.max(0.0);
    let i = h.floor();
    (i as u64, h - i)
}

/// Percentile `p` (0..=100) of ascending `sorted` values; NaN when empty. Values may end
/// in +∞ (e.g. requests that never finished): a percentile touching one is +∞.
pub fn percentile_sorted(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let (i, g) = virtual_index(sorted.len() as u64, p);
    let i = i as usize;
    if g == 0.0 {
        sorted[i]
    } else if sorted[i + 1].is_infinite() {
        // lerp's `b − d·(1 − g)` would be ∞ − ∞.
        f64::INFINITY
    } else {
        lerp(sorted[i], sorted[i + 1], g)
    }
}

/// Mean, median, p90 and p99 of a latency, in milliseconds (NaN, shown as `null` in JSON,
/// when there are no values).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LatencySummary {
    /// Number of values.
    pub count: u64,
    /// Arithmetic mean, ms.
    pub mean_ms: f64,
    /// 50th percentile, ms.
    pub median_ms: f64,
    /// 90th percentile, ms.
    pub p90_ms: f64,
    /// 99th percentile, ms.
    pub p99_ms: f64,
}

impl LatencySummary {
    /// The summary of no values.
    pub fn empty() -> Self {
        Self {
            count: 0,
            mean_ms: f64::NAN,
            median_ms: f64::NAN,
            p90_ms: f64::NAN,
            p99_ms: f64::NAN,
        }
    }

    /// The summary of `seconds` (any order; NaNs are skipped).
    pub fn from_seconds(mut seconds: Vec<f64>) -> Self {
        seconds.retain(|x| !x.is_nan());
        if seconds.is_empty() {
            return Self::empty();
        }
        // A radix sort: the end of a million-request run sorts four such lists.
        super::radix::sort_total(&mut seconds);
        let mean = seconds.iter().sum::<f64>() / seconds.len() as f64;
        Self::from_parts(seconds.len() as u64, mean, |p| {
            percentile_sorted(&seconds, p)
        })
    }

    /// From a count, a mean (seconds) and a percentile function (seconds).
    pub(crate) fn from_parts(count: u64, mean: f64, pct: impl Fn(f64) -> f64) -> Self {
        Self {
            count,
            mean_ms: mean * 1000.0,
            median_ms: pct(50.0) * 1000.0,
            p90_ms: pct(90.0) * 1000.0,
            p99_ms: pct(99.0) * 1000.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_percentile_touching_an_infinite_value_is_infinite() {
        // Four values, p50 sits halfway between 2 and 3: 2.5; p90 between 3 and ∞.
        let v = [1.0, 2.0, 3.0, f64::INFINITY];
        assert_eq!(percentile_sorted(&v, 50.0), 2.5);
        assert_eq!(percentile_sorted(&v, 90.0), f64::INFINITY);
        assert_eq!(percentile_sorted(&v, 100.0), f64::INFINITY);
    }

    #[test]
    fn matches_numpy_linear_percentiles() {
        // np.percentile([1, 2, 3, 4, 10], [50, 90, 99]) = [3.0, 7.6, 9.76]:
        // p90: h = 4·0.9 = 3.6 → 4 + (10 − 4)·0.6 = 7.6 (numpy: 10 − 6·0.4 = 7.6);
        // p99: h = 3.96 → 10 − 6·0.04 = 9.76.
        let xs = [1.0, 2.0, 3.0, 4.0, 10.0];
        assert_eq!(percentile_sorted(&xs, 50.0), 3.0);
        assert_eq!(
            percentile_sorted(&xs, 90.0),
            10.0 - 6.0 * (1.0 - (4.0 * 0.9 - 3.0))
        );
        assert!((percentile_sorted(&xs, 90.0) - 7.6).abs() < 1e-12);
        assert!((percentile_sorted(&xs, 99.0) - 9.76).abs() < 1e-12);
        assert_eq!(percentile_sorted(&xs, 0.0), 1.0);
        assert_eq!(percentile_sorted(&xs, 100.0), 10.0);
        assert_eq!(percentile_sorted(&[7.0], 99.0), 7.0);
        assert!(percentile_sorted(&[], 50.0).is_nan());
    }

    #[test]
    fn even_count_median_is_the_midpoint() {
        // h = 3·0.5 = 1.5 → between 2 and 4 at 0.5: 4 − 2·0.5 = 3.
        assert_eq!(percentile_sorted(&[1.0, 2.0, 4.0, 8.0], 50.0), 3.0);
    }

    #[test]
    fn summary_is_in_milliseconds_and_ignores_order() {
        let s = LatencySummary::from_seconds(vec![0.004, 0.001, 0.003, 0.002]);
        assert_eq!(s.count, 4);
        assert!((s.mean_ms - 2.5).abs() < 1e-12);
        assert!((s.median_ms - 2.5).abs() < 1e-12);
        // p90: h = 2.7 → 0.004 − 0.001·0.3 = 0.0037 s.
        assert!((s.p90_ms - 3.7).abs() < 1e-12);
        assert!(LatencySummary::from_seconds(vec![]).mean_ms.is_nan());
    }
}
