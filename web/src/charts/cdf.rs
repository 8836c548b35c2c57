//! Empirical distribution functions for latency CDFs (TTFT, TPOT, ITL, E2E).

use std::rc::Rc;

/// Samples of one run: plain sorted values, or `(value, weight)` pairs in any order.
#[derive(Clone, Debug, PartialEq)]
pub enum CdfInput {
    /// Ascending values, each weighing the same.
    Sorted(Rc<[f64]>),
    /// `(value, weight)` pairs; non-positive or non-finite weights are ignored.
    Weighted(Rc<[(f64, f64)]>),
}

/// The CDF as steps `(value, P[X <= value])` at each distinct value, ascending.
///
/// Non-finite values are ignored; no usable sample gives an empty curve.
pub fn cdf_steps(input: &CdfInput) -> Vec<(f64, f64)> {
    let mut pairs: Vec<(f64, f64)> = match input {
        CdfInput::Sorted(values) => values
            .iter()
            .filter(|v| v.is_finite())
            .map(|&v| (v, 1.0))
            .collect(),
        CdfInput::Weighted(pairs) => {
            let mut p: Vec<(f64, f64)> = pairs
                .iter()
                .copied()
                .filter(|&(v, w)| v.is_finite() && w.is_finite() && w > 0.0)
                .collect();
            crate::order::sort_by_number(&mut p, |p| p.0);
            p
        }
    };
    let total: f64 = pairs.iter().map(|p| p.1).sum();
    let mut out: Vec<(f64, f64)> = Vec::new();
    let mut acc = 0.0;
    for (v, w) in pairs.drain(..) {
        acc += w;
        match out.last_mut() {
            Some(last) if last.0 == v => last.1 = acc / total,
            _ => out.push((v, acc / total)),
        }
    }
    if let Some(last) = out.last_mut() {
        // Rounding must not leave the curve short of 1.
        last.1 = 1.0;
    }
    out
}

/// At most about `max_points` steps of a CDF, chosen on an even probability grid so the
/// drawn curve stays within 1/`max_points` of the true one. Keeps the first and last step.
pub fn thin_steps(steps: &[(f64, f64)], max_points: usize) -> Vec<(f64, f64)> {
    if steps.len() <= max_points.max(2) {
        return steps.to_vec();
    }
    let mut out = vec![steps[0]];
    let mut from = 1;
    for k in 1..=max_points {
        let target = k as f64 / max_points as f64;
        let i = from + steps[from..].partition_point(|s| s.1 < target);
        if i < steps.len() {
            out.push(steps[i]);
            from = i + 1;
        }
    }
    let last = steps[steps.len() - 1];
    if out.last() != Some(&last) {
        out.push(last);
    }
    out
}

/// The smallest value with `P[X <= value] >= p` (e.g. p = 0.99 for p99); `None` when empty.
pub fn quantile(steps: &[(f64, f64)], p: f64) -> Option<f64> {
    let i = steps.partition_point(|s| s.1 < p);
    steps.get(i.min(steps.len().saturating_sub(1))).map(|s| s.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_values_step_by_count() {
        // 4 samples, 2 equal: P(<=1) = 1/4, P(<=2) = 3/4, P(<=5) = 1.
        let steps = cdf_steps(&CdfInput::Sorted(Rc::from(vec![
            1.0,
            2.0,
            2.0,
            5.0,
            f64::NAN,
        ])));
        assert_eq!(steps, vec![(1.0, 0.25), (2.0, 0.75), (5.0, 1.0)]);
    }

    #[test]
    fn weighted_pairs_are_sorted_and_weighted() {
        // Weights 1, 3 (value 10 listed first), bad weights dropped: P(<=2) = 1/4, P(<=10) = 1.
        let pairs = vec![(10.0, 3.0), (2.0, 1.0), (5.0, 0.0), (7.0, f64::NAN)];
        let steps = cdf_steps(&CdfInput::Weighted(Rc::from(pairs)));
        assert_eq!(steps, vec![(2.0, 0.25), (10.0, 1.0)]);
    }

    #[test]
    fn empty_input_gives_empty_curve() {
        assert!(cdf_steps(&CdfInput::Sorted(Rc::from(vec![]))).is_empty());
        assert_eq!(quantile(&[], 0.5), None);
    }

    #[test]
    fn quantiles_read_the_steps() {
        // Values 1..=100: p50 = 50, p99 = 99, p100 = 100.
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let steps = cdf_steps(&CdfInput::Sorted(Rc::from(v)));
        assert_eq!(quantile(&steps, 0.5), Some(50.0));
        assert_eq!(quantile(&steps, 0.99), Some(99.0));
        assert_eq!(quantile(&steps, 1.0), Some(100.0));
    }

    #[test]
    fn thinning_stays_on_the_curve() {
        // 10_000 distinct values thinned to a 100-step grid: P steps of 0.01 each.
        let v: Vec<f64> = (1..=10_000).map(f64::from).collect();
        let steps = cdf_steps(&CdfInput::Sorted(Rc::from(v)));
        let thin = thin_steps(&steps, 100);
        assert_eq!(thin.first(), Some(&(1.0, 0.0001)));
        assert_eq!(thin.last(), Some(&(10_000.0, 1.0)));
        // First + one per 1% + nothing extra: 101 points, each step at most 0.01 + 1e-4 up.
        assert_eq!(thin.len(), 101);
        assert!(thin
            .windows(2)
            .all(|w| w[1].1 - w[0].1 <= 0.0101 && w[1].0 > w[0].0));
    }
}
