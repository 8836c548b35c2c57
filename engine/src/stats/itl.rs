//! Pooled inter-token latencies, kept as (gap, count) so memory stays small.
//!
//! In a vLLM-style engine every decoding request in a step gets its token at the same
//! instant, so most gaps are shared exactly by many requests: a run with millions of tokens
//! has only as many distinct gaps as distinct step spacings. Percentiles over the (gap,
//! count) map are exact — equal to the percentiles of the fully expanded list.

use super::percentile::{lerp, virtual_index, LatencySummary};
use std::collections::BTreeMap;

/// Inter-token gaps (seconds) with multiplicities, ordered by value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ItlHistogram {
    counts: BTreeMap<u64, u64>,
    total: u64,
    sum: f64,
}

/// Maps an f64 to a u64 whose unsigned order is the numeric order (IEEE total order).
fn key(x: f64) -> u64 {
    let b = (x + 0.0).to_bits(); // + 0.0 folds −0 into +0
    if b >> 63 == 1 {
        !b
    } else {
        b | 1 << 63
    }
}

fn value(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

impl ItlHistogram {
    /// An empty histogram.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `count` gaps of `gap` seconds (NaN is ignored).
    pub fn add(&mut self, gap: f64, count: u64) {
        if gap.is_nan() || count == 0 {
            return;
        }
        *self.counts.entry(key(gap)).or_insert(0) += count;
        self.total += count;
        self.sum += gap * count as f64;
    }

    /// Adds every gap of `other`.
    pub fn merge(&mut self, other: &ItlHistogram) {
        for (&k, &c) in &other.counts {
            self.add(value(k), c);
        }
    }

    /// Every distinct gap (seconds) with how many times it occurred, ascending.
    pub fn iter(&self) -> impl Iterator<Item = (f64, u64)> + '_ {
        self.counts.iter().map(|(&k, &c)| (value(k), c))
    }

    /// Number of gaps recorded.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// Number of distinct gap values (the memory it uses).
    pub fn distinct(&self) -> usize {
        self.counts.len()
    }

    /// Mean gap, seconds (NaN when empty).
    pub fn mean(&self) -> f64 {
        if self.total == 0 {
            f64::NAN
        } else {
            self.sum / self.total as f64
        }
    }

    /// The `i`-th smallest gap (0-based) of the expanded list, and the one after it.
    fn at(&self, i: u64) -> (f64, f64) {
        let mut seen = 0;
        let mut it = self.counts.iter();
        for (&k, &c) in it.by_ref() {
            seen += c;
            if i < seen {
                let v = value(k);
                if i + 1 < seen {
                    return (v, v);
                }
                let next = it.next().map_or(v, |(&k2, _)| value(k2));
                return (v, next);
            }
        }
        (f64::NAN, f64::NAN)
    }

    /// Percentile `p` in seconds, numpy-linear over the expanded list (NaN when empty).
    pub fn percentile(&self, p: f64) -> f64 {
        if self.total == 0 {
            return f64::NAN;
        }
        let (i, g) = virtual_index(self.total, p);
        let (a, b) = self.at(i);
        if g == 0.0 {
            a
        } else {
            lerp(a, b, g)
        }
    }

    /// Mean / median / p90 / p99 in ms.
    pub fn summary(&self) -> LatencySummary {
        if self.total == 0 {
            return LatencySummary::empty();
        }
        LatencySummary::from_parts(self.total, self.mean(), |p| self.percentile(p))
    }
}
