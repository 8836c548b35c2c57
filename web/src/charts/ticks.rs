//! "Nice" axis ticks: steps of 1, 2 or 5 times a power of ten, for any range.

/// Evenly spaced tick positions `first, first + step, ...` inside a range.
#[derive(Clone, Debug, PartialEq)]
pub struct Ticks {
    /// Distance between neighbouring ticks (1, 2 or 5 × 10^k).
    pub step: f64,
    /// The tick positions, ascending.
    pub values: Vec<f64>,
}

/// The 1-2-5 step that cuts `span` into about `target` intervals.
///
/// Returns 1.0 for a span that is zero, negative or not finite, so callers never divide by zero.
pub fn nice_step(span: f64, target: usize) -> f64 {
    if !(span.is_finite() && span > 0.0) {
        return 1.0;
    }
    let raw = span / target.max(1) as f64;
    let magnitude = power_of_ten(decade(raw));
    let norm = raw / magnitude;
    // Thresholds at the geometric midpoints keep the tick count closest to `target`.
    let nice = if norm < 1.5 {
        1.0
    } else if norm < 3.5 {
        2.0
    } else if norm < 7.5 {
        5.0
    } else {
        10.0
    };
    nice * magnitude
}

/// The exponent `k` with `10^k <= v < 10^(k+1)`, for finite `v > 0`.
///
/// Found by comparing against exact powers of ten rather than with `log10`, whose last bit
/// differs between platforms and would move ticks on values like 1000.
pub fn decade(v: f64) -> i32 {
    let mut k = 0;
    while k < 308 && power_of_ten(k + 1) <= v {
        k += 1;
    }
    while k > -308 && power_of_ten(k) > v {
        k -= 1;
    }
    k
}

/// `10^k`, exactly rounded: integer powers up to 10^22 are exact in f64, and one division
/// rounds once.
pub fn power_of_ten(k: i32) -> f64 {
    let mut p = 1.0_f64;
    for _ in 0..k.unsigned_abs() {
        p *= 10.0;
    }
    if k < 0 {
        1.0 / p
    } else {
        p
    }
}

/// `k * step`, computed as `k / (1/step)` for small steps so 3 × 0.1 prints as 0.3.
fn at(k: f64, step: f64) -> f64 {
    if step < 1.0 {
        let inverse = (1.0 / step).round();
        if (inverse * step - 1.0).abs() < 1e-9 {
            return k / inverse;
        }
    }
    k * step
}

/// Ticks at multiples of a nice step inside `[lo, hi]` (about `target` of them).
///
/// The range is first made usable by [`usable_range`], so equal, reversed or non-finite
/// bounds still give a sensible axis.
pub fn ticks(lo: f64, hi: f64, target: usize) -> Ticks {
    let (lo, hi) = usable_range(lo, hi);
    let step = nice_step(hi - lo, target);
    // A tolerance of a millionth of a step keeps ticks that land on a bound after rounding.
    let first = (lo / step - 1e-6).ceil();
    let last = (hi / step + 1e-6).floor();
    let values = (0..=((last - first) as i64).max(-1))
        .map(|i| at(first + i as f64, step))
        .collect();
    Ticks { step, values }
}

/// Widens `[lo, hi]` outwards to the nearest multiples of the nice step, so the axis
/// starts and ends on a tick.
pub fn nice_domain(lo: f64, hi: f64, target: usize) -> (f64, f64) {
    let (lo, hi) = usable_range(lo, hi);
    let step = nice_step(hi - lo, target);
    (
        at((lo / step + 1e-9).floor(), step),
        at((hi / step - 1e-9).ceil(), step),
    )
}

/// A range with `lo < hi`, both finite, made from whatever bounds the data gave.
///
/// No finite bound gives `[0, 1]`; a single value `v` gives `v ± |v|/10` (or `±1` for zero),
/// so a flat series is drawn in the middle of its axis instead of on its edge.
pub fn usable_range(lo: f64, hi: f64) -> (f64, f64) {
    match (lo.is_finite(), hi.is_finite()) {
        (false, false) => (0.0, 1.0),
        (true, false) => usable_range(lo, lo),
        (false, true) => usable_range(hi, hi),
        (true, true) if lo < hi => (lo, hi),
        (true, true) if lo > hi => (hi, lo),
        (true, true) => {
            let pad = if lo == 0.0 { 1.0 } else { lo.abs() / 10.0 };
            (lo - pad, lo + pad)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_follow_one_two_five() {
        // 10/5 = 2 → 2; 7/5 = 1.4 → 1; 30/5 = 6 → 5; 0.9/5 = 0.18 → 0.2; 80/5 = 16 → 20.
        assert_eq!(nice_step(10.0, 5), 2.0);
        assert_eq!(nice_step(7.0, 5), 1.0);
        assert_eq!(nice_step(30.0, 5), 5.0);
        assert!((nice_step(0.9, 5) - 0.2).abs() < 1e-15);
        assert_eq!(nice_step(80.0, 5), 20.0);
        assert_eq!(nice_step(0.0, 5), 1.0);
        assert_eq!(nice_step(f64::NAN, 5), 1.0);
    }

    #[test]
    fn decades_are_exact_at_powers_of_ten() {
        assert_eq!(decade(1000.0), 3);
        assert_eq!(decade(999.999), 2);
        assert_eq!(decade(0.001), -3);
        assert_eq!(decade(0.0015), -3);
        assert_eq!(decade(1.0), 0);
        assert_eq!(power_of_ten(-3), 0.001);
    }

    #[test]
    fn ticks_land_on_multiples_inside_the_range() {
        // [0.3, 9.7], span 9.4/5 = 1.88 → step 2; multiples of 2 inside: 2, 4, 6, 8.
        let t = ticks(0.3, 9.7, 5);
        assert_eq!(t.step, 2.0);
        assert_eq!(t.values, vec![2.0, 4.0, 6.0, 8.0]);
    }

    #[test]
    fn decimal_ticks_print_exactly() {
        // [0, 1], 1/5 = 0.2 → step 0.2; 3 × 0.2 must be 0.6, not 0.6000000000000001.
        let t = ticks(0.0, 1.0, 5);
        assert_eq!(t.values, vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
    }

    #[test]
    fn negative_and_huge_ranges() {
        // [-25, 25] /5 = 10 → step 10: -20..20.
        assert_eq!(
            ticks(-25.0, 25.0, 5).values,
            vec![-20.0, -10.0, 0.0, 10.0, 20.0]
        );
        // [0, 3e9] /3 = 1e9 → step 1e9.
        assert_eq!(ticks(0.0, 3e9, 3).values, vec![0.0, 1e9, 2e9, 3e9]);
    }

    #[test]
    fn degenerate_ranges_still_give_ticks() {
        // One value 5 → [4.5, 5.5], 1/5 = 0.2 → 4.6, 4.8, 5.0, 5.2, 5.4.
        assert_eq!(ticks(5.0, 5.0, 5).values, vec![4.6, 4.8, 5.0, 5.2, 5.4]);
        // Zero → [-1, 1] → step 0.5 (2/5 = 0.4 → 0.5).
        assert_eq!(ticks(0.0, 0.0, 5).values, vec![-1.0, -0.5, 0.0, 0.5, 1.0]);
        // No data at all → [0, 1].
        assert_eq!(ticks(f64::NAN, f64::INFINITY, 5).values.first(), Some(&0.0));
        assert_eq!(ticks(f64::NAN, f64::INFINITY, 5).values.last(), Some(&1.0));
        // Reversed bounds are swapped.
        assert_eq!(ticks(10.0, 0.0, 5).values, ticks(0.0, 10.0, 5).values);
    }

    #[test]
    fn nice_domain_extends_to_ticks() {
        // [0.3, 9.7] step 2 → [0, 10].
        assert_eq!(nice_domain(0.3, 9.7, 5), (0.0, 10.0));
        // Already on ticks stays put: [0, 1] step 0.2.
        assert_eq!(nice_domain(0.0, 1.0, 5), (0.0, 1.0));
    }
}
