//! Random distributions drawn from a [`SimRng`], with `libm` for every transcendental.
//!
//! `f64::ln`, `exp`, `powf` and friends come from the platform's math library and may
//! differ in the last bit between native builds and WebAssembly; `libm` is one pure-Rust
//! implementation everywhere, so a seed gives bit-identical samples on every platform.

use crate::rng::SimRng;

/// An exponential variate with the given mean (inverse-CDF: `-mean · ln U`, U in (0, 1]).
pub fn exponential(rng: &mut SimRng, mean: f64) -> f64 {
    -mean * libm::log(rng.next_f64_open0())
}

/// A standard normal variate (Marsaglia's polar method; the second variate of the pair is
/// discarded so this stays a pure function of the stream).
pub fn standard_normal(rng: &mut SimRng) -> f64 {
    loop {
        let u = 2.0 * rng.next_f64() - 1.0;
        let v = 2.0 * rng.next_f64() - 1.0;
        let s = u * u + v * v;
        if s > 0.0 && s < 1.0 {
            return u * (-2.0 * libm::log(s) / s).sqrt();
        }
    }
}

/// A normal variate with mean `mean` and standard deviation `std`.
pub fn normal(rng: &mut SimRng, mean: f64, std: f64) -> f64 {
    mean + std * standard_normal(rng)
}

/// A lognormal variate parametrised by its own **mean** and **coefficient of variation**
/// (std / mean), not by the underlying normal's μ and σ.
///
/// With σ² = ln(1 + cv²) and μ = ln(mean) − σ²/2, `exp(N(μ, σ²))` has exactly that mean and cv.
pub fn lognormal(rng: &mut SimRng, mean: f64, cv: f64) -> f64 {
    let sigma2 = libm::log(1.0 + cv * cv);
    let mu = libm::log(mean) - sigma2 / 2.0;
    libm::exp(mu + sigma2.sqrt() * standard_normal(rng))
}

/// A gamma variate with `shape` k > 0 and `scale` θ > 0 (mean kθ, variance kθ²).
///
/// Marsaglia–Tsang squeeze method; for k < 1 it draws Gamma(k + 1) and multiplies by
/// U^(1/k), which is exact.
pub fn gamma(rng: &mut SimRng, shape: f64, scale: f64) -> f64 {
    if shape < 1.0 {
        let g = gamma(rng, shape + 1.0, 1.0);
        let u = rng.next_f64_open0();
        return g * libm::pow(u, 1.0 / shape) * scale;
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = standard_normal(rng);
        let v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        let v = v * v * v;
        let u = rng.next_f64_open0();
        let x2 = x * x;
        if u < 1.0 - 0.0331 * x2 * x2 || libm::log(u) < 0.5 * x2 + d * (1.0 - v + libm::log(v)) {
            return d * v * scale;
        }
    }
}

/// A discrete uniform integer in `lo..=hi`.
pub fn uniform_int(rng: &mut SimRng, lo: u64, hi: u64) -> u64 {
    rng.range_inclusive(lo, hi)
}

/// Zipf's law over ranks `1..=n` with exponent `s`: P(k) ∝ k^(−s).
///
/// The CDF is precomputed once (O(n) memory), so each draw is one uniform and a binary
/// search, O(log n). `s = 0` is the uniform distribution.
#[derive(Debug, Clone)]
pub struct Zipf {
    cdf: Vec<f64>,
}

impl Zipf {
    /// The distribution over `1..=n`; `None` when `n == 0` or `s` is negative or not finite.
    pub fn new(n: u32, s: f64) -> Option<Self> {
        if n == 0 || s.is_nan() || s < 0.0 || s.is_infinite() {
            return None;
        }
        let mut cdf = Vec::with_capacity(n as usize);
        let mut total = 0.0;
        for k in 1..=n {
            total += libm::pow(k as f64, -s);
            cdf.push(total);
        }
        for c in &mut cdf {
            *c /= total;
        }
        // Guard against rounding so every u in [0, 1) lands on a rank.
        *cdf.last_mut().expect("n > 0") = 1.0;
        Some(Self { cdf })
    }

    /// Number of ranks.
    pub fn n(&self) -> u32 {
        self.cdf.len() as u32
    }

    /// Probability of the ranks `1..=k` (1-based; 1 from `n` on).
    pub fn cumulative(&self, k: u32) -> f64 {
        match k {
            0 => 0.0,
            k => self.cdf[(k as usize).min(self.cdf.len()) - 1],
        }
    }

    /// Probability of rank `k` (1-based); 0 outside `1..=n`.
    pub fn probability(&self, k: u32) -> f64 {
        match k {
            0 => 0.0,
            1 => self.cdf[0],
            k if k as usize <= self.cdf.len() => {
                self.cdf[k as usize - 1] - self.cdf[k as usize - 2]
            }
            _ => 0.0,
        }
    }

    /// A rank in `1..=n`.
    pub fn sample(&self, rng: &mut SimRng) -> u32 {
        let u = rng.next_f64();
        self.cdf.partition_point(|&c| c <= u) as u32 + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const N: usize = 200_000;

    fn moments(mut f: impl FnMut() -> f64) -> (f64, f64) {
        let xs: Vec<f64> = (0..N).map(|_| f()).collect();
        let mean = xs.iter().sum::<f64>() / N as f64;
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (N - 1) as f64;
        (mean, var)
    }

    /// |sample mean − μ| within 5 standard errors (σ/√N): fails by chance with p < 1e-6.
    fn assert_mean(mean: f64, mu: f64, sigma: f64) {
        let se = sigma / (N as f64).sqrt();
        assert!(
            (mean - mu).abs() < 5.0 * se,
            "mean {mean} vs {mu} (se {se})"
        );
    }

    /// Sample variance within 5% of the true one: at N = 200k its relative standard error
    /// is √((κ − 1)/N) ≈ 0.3%–1.2% for the kurtosis κ of these distributions.
    fn assert_var(var: f64, expected: f64) {
        assert!(
            (var / expected - 1.0).abs() < 0.05,
            "variance {var} vs {expected}"
        );
    }

    #[test]
    fn exponential_mean_and_variance() {
        let mut r = SimRng::stream(1, "dist.exp");
        let (m, v) = moments(|| exponential(&mut r, 2.0));
        assert_mean(m, 2.0, 2.0);
        assert_var(v, 4.0);
    }

    #[test]
    fn normal_mean_and_variance() {
        let mut r = SimRng::stream(2, "dist.normal");
        let (m, v) = moments(|| normal(&mut r, 10.0, 3.0));
        assert_mean(m, 10.0, 3.0);
        assert_var(v, 9.0);
    }

    #[test]
    fn lognormal_has_the_requested_mean_and_cv() {
        let mut r = SimRng::stream(3, "dist.lognormal");
        // mean 100, cv 0.5 → std 50, variance 2500.
        let (m, v) = moments(|| lognormal(&mut r, 100.0, 0.5));
        assert_mean(m, 100.0, 50.0);
        // Lognormal kurtosis is large (≈ 8 at cv 0.5); 5% still covers > 4 standard errors.
        assert_var(v, 2500.0);
    }

    #[test]
    fn gamma_mean_and_variance_for_shapes_above_and_below_one() {
        for (seed, shape, scale) in [(4u64, 4.0, 0.5), (5, 0.25, 8.0), (6, 1.0, 1.0)] {
            let mut r = SimRng::stream(seed, "dist.gamma");
            let (m, v) = moments(|| gamma(&mut r, shape, scale));
            // Mean kθ, variance kθ².
            assert_mean(m, shape * scale, (shape * scale * scale).sqrt());
            let tol = if shape < 1.0 { 0.1 } else { 0.05 }; // κ = 3 + 6/k is 27 at k = 0.25
            assert!(
                (v / (shape * scale * scale) - 1.0).abs() < tol,
                "k={shape}: var {v}"
            );
        }
    }

    #[test]
    fn uniform_int_mean_and_bounds() {
        let mut r = SimRng::stream(7, "dist.uniform");
        let (m, v) = moments(|| uniform_int(&mut r, 10, 20) as f64);
        // Discrete uniform on 11 values: mean 15, variance (11² − 1)/12 = 10.
        assert_mean(m, 15.0, 10f64.sqrt());
        assert_var(v, 10.0);
    }

    #[test]
    fn zipf_frequencies_match_probabilities_and_fall_with_rank() {
        let z = Zipf::new(10, 1.2).unwrap();
        let mut r = SimRng::stream(8, "dist.zipf");
        let mut counts = [0u32; 11];
        for _ in 0..N {
            counts[z.sample(&mut r) as usize] += 1;
        }
        assert_eq!(counts[0], 0);
        for k in 1..=10u32 {
            let p = z.probability(k);
            let f = counts[k as usize] as f64 / N as f64;
            let se = (p * (1.0 - p) / N as f64).sqrt();
            assert!((f - p).abs() < 5.0 * se, "rank {k}: {f} vs {p}");
            if k > 1 {
                assert!(counts[k as usize] < counts[k as usize - 1]);
            }
        }
        // P(1) = 1 / Σ k^-1.2 for k = 1..10 = 1 / 2.467713 = 0.405233.
        assert!((z.probability(1) - 0.405_233).abs() < 1e-6);
    }

    #[test]
    fn zipf_rejects_bad_parameters() {
        assert!(Zipf::new(0, 1.0).is_none());
        assert!(Zipf::new(5, -1.0).is_none());
        assert!(Zipf::new(5, f64::NAN).is_none());
        assert_eq!(
            Zipf::new(1, 3.0)
                .unwrap()
                .sample(&mut SimRng::stream(0, "z")),
            1
        );
    }

    #[test]
    fn samples_are_pinned_across_platforms() {
        // Bit-exact values for seed 42: a platform math library sneaking in would change them.
        let mut r = SimRng::stream(42, "dist.pinned");
        let e = exponential(&mut r, 1.0);
        let n = standard_normal(&mut r);
        let l = lognormal(&mut r, 100.0, 0.5);
        let g = gamma(&mut r, 0.5, 2.0);
        let got = [e.to_bits(), n.to_bits(), l.to_bits(), g.to_bits()];
        assert_eq!(got, PINNED, "{e} {n} {l} {g}");
    }

    // ≈ 1.16766, 1.83183, 64.8746, 0.00244235 (Exp(1), N(0,1), LogN(mean 100, cv 0.5), Gamma(0.5, 2)).
    const PINNED: [u64; 4] = [
        4_607_937_481_701_116_949,
        4_610_928_658_051_989_473,
        4_634_265_562_515_032_158,
        4_567_778_089_711_490_788,
    ];
}
