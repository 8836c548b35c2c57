//! Histogram binning on nice edges, shared by all overlaid runs so their bars line up.

use super::scale::extent;
use super::ticks::{nice_domain, nice_step, usable_range};

/// Bin edges and per-run counts. Bin `i` holds `edges[i] <= v < edges[i + 1]`; the last bin
/// also holds its upper edge.
#[derive(Clone, Debug, PartialEq)]
pub struct Bins {
    /// `counts[run].len() + 1` ascending edges at multiples of a 1-2-5 step; empty without data.
    pub edges: Vec<f64>,
    /// One row of counts per run, in the order the runs were given.
    pub counts: Vec<Vec<u64>>,
}

/// Bins every run's values into about `target_bins` bins over their common range.
/// Non-finite values are not counted.
pub fn bin_runs(runs: &[&[f64]], target_bins: usize) -> Bins {
    let Some((lo, hi)) = extent(runs.iter().copied()) else {
        return Bins {
            edges: Vec::new(),
            counts: runs.iter().map(|_| Vec::new()).collect(),
        };
    };
    let (lo, hi) = usable_range(lo, hi);
    let (lo, hi) = nice_domain(lo, hi, target_bins);
    let step = nice_step(hi - lo, target_bins);
    let n = (((hi - lo) / step).round() as usize).max(1);
    let edges: Vec<f64> = (0..=n).map(|i| lo + step * i as f64).collect();
    let counts = runs
        .iter()
        .map(|values| {
            let mut row = vec![0_u64; n];
            for &v in values.iter().filter(|v| v.is_finite()) {
                row[bin_of(&edges, v)] += 1;
            }
            row
        })
        .collect();
    Bins { edges, counts }
}

/// The bin holding `v` (clamped to the outer bins).
fn bin_of(edges: &[f64], v: f64) -> usize {
    let bins = edges.len() - 1;
    // Edges are sorted: the bin is the number of inner edges at or below v.
    edges[1..bins].partition_point(|&e| e <= v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_fall_in_half_open_bins() {
        // Range [0, 10], 5 bins → step 2, edges 0,2,...,10.
        // 0 → bin 0; 2 → bin 1 (lower edge inclusive); 9.9 → bin 4; 10 → bin 4 (last closed).
        let b = bin_runs(&[&[0.0, 2.0, 9.9, 10.0, f64::NAN]], 5);
        assert_eq!(b.edges, vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(b.counts, vec![vec![1, 1, 0, 0, 2]]);
    }

    #[test]
    fn runs_share_edges() {
        // Run A spans [1, 3], run B [2, 9]: common [1, 9] → 8/4 = 2 → step 2, edges 0..10.
        let b = bin_runs(&[&[1.0, 3.0], &[2.0, 9.0]], 4);
        assert_eq!(b.edges, vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(b.counts[0], vec![1, 1, 0, 0, 0]);
        assert_eq!(b.counts[1], vec![0, 1, 0, 0, 1]);
    }

    #[test]
    fn all_equal_values_get_one_populated_bin() {
        // Five 5s → range [4.5, 5.5] → step 0.2 → edges 4.4 .. 5.6; all in [5.0, 5.2).
        let b = bin_runs(&[&[5.0; 5]], 5);
        assert_eq!(b.counts[0].iter().sum::<u64>(), 5);
        let i = b.counts[0].iter().position(|&c| c == 5).unwrap();
        assert!(b.edges[i] <= 5.0 && 5.0 < b.edges[i + 1]);
    }

    #[test]
    fn no_data_gives_no_bins() {
        let b = bin_runs(&[&[], &[f64::INFINITY]], 5);
        assert!(b.edges.is_empty());
        assert_eq!(b.counts, vec![Vec::<u64>::new(), Vec::new()]);
    }
}
