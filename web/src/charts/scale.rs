//! Linear scales: data values to pixels and back, and the extent of data columns.

/// Maps the data interval `domain` linearly onto the pixel interval `range`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinearScale {
    d0: f64,
    d1: f64,
    r0: f64,
    r1: f64,
}

impl LinearScale {
    /// A scale from `domain` onto `range`; either may be reversed (e.g. a y axis growing upwards).
    pub fn new(domain: (f64, f64), range: (f64, f64)) -> Self {
        Self {
            d0: domain.0,
            d1: domain.1,
            r0: range.0,
            r1: range.1,
        }
    }

    /// The data interval.
    pub fn domain(&self) -> (f64, f64) {
        (self.d0, self.d1)
    }

    /// The pixel interval.
    pub fn range(&self) -> (f64, f64) {
        (self.r0, self.r1)
    }

    /// Pixel position of a data value; an empty domain maps everything to the middle.
    pub fn map(&self, v: f64) -> f64 {
        let span = self.d1 - self.d0;
        if span == 0.0 {
            return (self.r0 + self.r1) / 2.0;
        }
        self.r0 + (v - self.d0) / span * (self.r1 - self.r0)
    }

    /// Data value under a pixel position (the inverse of [`LinearScale::map`]).
    pub fn invert(&self, px: f64) -> f64 {
        let span = self.r1 - self.r0;
        if span == 0.0 {
            return (self.d0 + self.d1) / 2.0;
        }
        self.d0 + (px - self.r0) / span * (self.d1 - self.d0)
    }
}

/// Smallest and largest finite value over all columns; `None` when there is none.
///
/// NaN and ±inf are skipped: a diverging or missing sample must not stretch the axis.
pub fn extent<'a>(columns: impl IntoIterator<Item = &'a [f64]>) -> Option<(f64, f64)> {
    let mut out: Option<(f64, f64)> = None;
    for &v in columns.into_iter().flatten() {
        if v.is_finite() {
            out = Some(match out {
                None => (v, v),
                Some((lo, hi)) => (lo.min(v), hi.max(v)),
            });
        }
    }
    out
}

/// Index of the sample whose x is nearest to `target` in ascending `xs` (ties go left).
///
/// Non-finite xs are never chosen. `None` for an empty column.
pub fn nearest_index(xs: &[f64], target: f64) -> Option<usize> {
    let right = xs.partition_point(|&x| x < target);
    let left = (0..right).rev().find(|&i| xs[i].is_finite());
    let right = (right..xs.len()).find(|&i| xs[i].is_finite());
    match (left, right) {
        (Some(l), Some(r)) => Some(if target - xs[l] <= xs[r] - target {
            l
        } else {
            r
        }),
        (l, r) => l.or(r),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_and_inverts() {
        // Domain [0, 10] onto pixels [40, 240]: 2.5 → 40 + 0.25 × 200 = 90.
        let s = LinearScale::new((0.0, 10.0), (40.0, 240.0));
        assert_eq!(s.map(2.5), 90.0);
        assert_eq!(s.invert(90.0), 2.5);
        // A y axis: [0, 100] onto [200, 0]; 25 → 200 - 50 = 150.
        let y = LinearScale::new((0.0, 100.0), (200.0, 0.0));
        assert_eq!(y.map(25.0), 150.0);
        assert_eq!(y.invert(150.0), 25.0);
    }

    #[test]
    fn empty_domain_maps_to_the_middle() {
        let s = LinearScale::new((3.0, 3.0), (0.0, 100.0));
        assert_eq!(s.map(3.0), 50.0);
    }

    #[test]
    fn extent_skips_non_finite() {
        let a = [3.0, f64::NAN, -1.0];
        let b = [f64::INFINITY, 7.0, f64::NEG_INFINITY];
        assert_eq!(extent([&a[..], &b[..]]), Some((-1.0, 7.0)));
        assert_eq!(extent([&[f64::NAN][..], &[][..]]), None);
    }

    #[test]
    fn nearest_picks_the_closer_neighbour() {
        let xs = [0.0, 1.0, 2.0, 4.0];
        assert_eq!(nearest_index(&xs, 2.9), Some(2)); // 0.9 from 2, 1.1 from 4
        assert_eq!(nearest_index(&xs, 3.1), Some(3));
        assert_eq!(nearest_index(&xs, 3.0), Some(2)); // tie goes left
        assert_eq!(nearest_index(&xs, -5.0), Some(0));
        assert_eq!(nearest_index(&xs, 99.0), Some(3));
        assert_eq!(nearest_index(&[], 1.0), None);
        assert_eq!(nearest_index(&[0.0, f64::NAN, 5.0], 1.0), Some(0));
    }
}
