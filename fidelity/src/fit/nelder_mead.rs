//! Nelder–Mead minimisation in a box: derivative-free, which is what fitting through a
//! simulator needs.

/// Minimises `f` over the box `lo..=hi` from `x0`; returns the best point and its value.
/// Points are clamped into the box; `evals` bounds the work.
pub fn minimise(
    f: &mut dyn FnMut(&[f64]) -> f64,
    x0: &[f64],
    lo: &[f64],
    hi: &[f64],
    evals: usize,
) -> (Vec<f64>, f64) {
    let n = x0.len();
    let clamp = |x: &mut Vec<f64>| {
        for ((v, l), h) in x.iter_mut().zip(lo).zip(hi) {
            *v = v.clamp(*l, *h);
        }
    };
    let mut simplex: Vec<(Vec<f64>, f64)> = Vec::with_capacity(n + 1);
    let mut start = x0.to_vec();
    clamp(&mut start);
    let fx = f(&start);
    simplex.push((start.clone(), fx));
    for i in 0..n {
        let mut x = start.clone();
        // A step of a tenth of the box, away from the nearer bound.
        let step = 0.1 * (hi[i] - lo[i]);
        x[i] = if x[i] + step <= hi[i] {
            x[i] + step
        } else {
            x[i] - step
        };
        let fx = f(&x);
        simplex.push((x, fx));
    }
    let mut used = n + 1;
    while used < evals {
        simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
        let (best, worst) = (simplex[0].1, simplex[n].1);
        if (worst - best).abs() <= 1e-9 * best.abs().max(1e-12) {
            break;
        }
        let centroid: Vec<f64> = (0..n)
            .map(|i| simplex[..n].iter().map(|p| p.0[i]).sum::<f64>() / n as f64)
            .collect();
        let towards = |t: f64, simplex: &[(Vec<f64>, f64)]| -> Vec<f64> {
            let mut x: Vec<f64> = (0..n)
                .map(|i| centroid[i] + t * (simplex[n].0[i] - centroid[i]))
                .collect();
            clamp(&mut x);
            x
        };
        let xr = towards(-1.0, &simplex);
        let fr = f(&xr);
        used += 1;
        if fr < simplex[0].1 {
            let xe = towards(-2.0, &simplex);
            let fe = f(&xe);
            used += 1;
            simplex[n] = if fe < fr { (xe, fe) } else { (xr, fr) };
        } else if fr < simplex[n - 1].1 {
            simplex[n] = (xr, fr);
        } else {
            let xc = towards(if fr < simplex[n].1 { -0.5 } else { 0.5 }, &simplex);
            let fc = f(&xc);
            used += 1;
            if fc < simplex[n].1.min(fr) {
                simplex[n] = (xc, fc);
            } else {
                // Shrink towards the best point.
                let best = simplex[0].0.clone();
                for p in simplex.iter_mut().skip(1) {
                    for (x, b) in p.0.iter_mut().zip(&best) {
                        *x = b + 0.5 * (*x - b);
                    }
                    p.1 = f(&p.0);
                    used += 1;
                }
            }
        }
    }
    simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
    simplex.swap_remove(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_minimum_of_a_bowl_inside_the_box() {
        // (x − 1)² + 10 (y + 2)², minimum 0 at (1, −2).
        let mut f = |x: &[f64]| (x[0] - 1.0).powi(2) + 10.0 * (x[1] + 2.0).powi(2);
        let (x, fx) = minimise(&mut f, &[5.0, 5.0], &[-10.0, -10.0], &[10.0, 10.0], 2000);
        assert!(
            (x[0] - 1.0).abs() < 1e-3 && (x[1] + 2.0).abs() < 1e-3,
            "{x:?}"
        );
        assert!(fx < 1e-6);
    }

    #[test]
    fn stays_in_the_box() {
        // The unconstrained minimum (−3) lies outside [0, 4]: the edge is the answer.
        let mut f = |x: &[f64]| (x[0] + 3.0).powi(2);
        let (x, _) = minimise(&mut f, &[2.0], &[0.0], &[4.0], 500);
        assert!(x[0].abs() < 1e-6, "{x:?}");
    }
}
