//! Thinning long series to what a pixel grid can show, without losing spikes.
//!
//! Per pixel column we keep the first, lowest, highest and last sample (the "M4" rule):
//! the polyline through them covers exactly the pixels the full series would, so a 100k-point
//! series draws as at most 4 points per column.

/// Indices of the samples to draw for ascending `x` spread over `columns` pixel columns
/// spanning `[x0, x1]`. Non-finite samples are dropped. Short series come back whole.
///
/// Deterministic: ties for lowest/highest keep the earliest sample.
pub fn min_max_per_column(
    x: &[f64],
    y: &[f64],
    (x0, x1): (f64, f64),
    columns: usize,
) -> Vec<usize> {
    let n = x.len().min(y.len());
    let finite = |i: usize| x[i].is_finite() && y[i].is_finite();
    if n <= 4 * columns.max(1) || x1 <= x0 {
        return (0..n).filter(|&i| finite(i)).collect();
    }
    let per_x = columns as f64 / (x1 - x0);
    let column_of = |v: f64| (((v - x0) * per_x) as i64).clamp(0, columns as i64 - 1);

    let mut out = Vec::with_capacity(4 * columns);
    // (column, first, lowest, highest, last) of the column being filled.
    let mut current: Option<(i64, usize, usize, usize, usize)> = None;
    let flush = |out: &mut Vec<usize>,
                 (_, first, low, high, last): (i64, usize, usize, usize, usize)| {
        let mut keep = [first, low, high, last];
        // Four items: an insertion sort, not a copy of the standard library's sort for `usize`.
        for k in 1..keep.len() {
            let mut j = k;
            while j > 0 && keep[j - 1] > keep[j] {
                keep.swap(j - 1, j);
                j -= 1;
            }
        }
        for (k, &i) in keep.iter().enumerate() {
            if k == 0 || keep[k - 1] != i {
                out.push(i);
            }
        }
    };
    for i in (0..n).filter(|&i| finite(i)) {
        let c = column_of(x[i]);
        match current.as_mut() {
            Some(cur) if cur.0 == c => {
                if y[i] < y[cur.2] {
                    cur.2 = i;
                }
                if y[i] > y[cur.3] {
                    cur.3 = i;
                }
                cur.4 = i;
            }
            _ => {
                if let Some(done) = current.take() {
                    flush(&mut out, done);
                }
                current = Some((c, i, i, i, i));
            }
        }
    }
    if let Some(done) = current {
        flush(&mut out, done);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_series_are_kept_whole_minus_non_finite() {
        let x = [0.0, 1.0, 2.0];
        let y = [1.0, f64::NAN, 3.0];
        assert_eq!(min_max_per_column(&x, &y, (0.0, 2.0), 10), vec![0, 2]);
    }

    #[test]
    fn keeps_first_low_high_last_per_column() {
        // 100 samples over x in [0, 100) into 2 columns of 50 samples each.
        // y is flat 0 except a spike 9 at i=10 and a dip -9 at i=70.
        let x: Vec<f64> = (0..100).map(f64::from).collect();
        let mut y = vec![0.0; 100];
        y[10] = 9.0;
        y[70] = -9.0;
        let kept = min_max_per_column(&x, &y, (0.0, 100.0), 2);
        // Column 0 (i 0..50): first 0, low 0 (earliest of the zeros), high 10, last 49.
        // Column 1 (i 50..100): first 50, low 70, high 50 (earliest zero), last 99.
        assert_eq!(kept, vec![0, 10, 49, 50, 70, 99]);
    }

    #[test]
    fn a_hundred_thousand_points_shrink_to_the_pixel_grid() {
        let x: Vec<f64> = (0..100_000).map(|i| i as f64 * 0.001).collect();
        let y: Vec<f64> = (0..100_000).map(|i| ((i * 7919) % 1000) as f64).collect();
        let kept = min_max_per_column(&x, &y, (0.0, 100.0), 600);
        // At most 4 samples per column, and the global max and min survive.
        assert!(kept.len() <= 4 * 600, "{}", kept.len());
        let max = kept.iter().map(|&i| y[i]).fold(f64::MIN, f64::max);
        let min = kept.iter().map(|&i| y[i]).fold(f64::MAX, f64::min);
        assert_eq!((min, max), (0.0, 999.0));
        // Kept indices are strictly increasing, so the polyline keeps time order.
        assert!(kept.windows(2).all(|w| w[0] < w[1]));
    }
}
