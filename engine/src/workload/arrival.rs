//! Arrival processes: the gap before each request of an open-loop stage.

use super::dist;
use crate::rng::SimRng;

/// How requests arrive; every variant has mean gap `1 / rate` seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arrival {
    /// `UniformReqRate`: a fixed gap of `1 / rate` seconds.
    Uniform {
        /// Requests per second.
        rate: f64,
    },
    /// `ExponentialReqRate`: gap = mean·(1 − jitter) + Exp(mean)·jitter, mean = 1 / rate.
    /// `jitter = 1` is a Poisson process, `jitter = 0` the uniform rate.
    Exponential {
        /// Requests per second.
        rate: f64,
        /// Share of the gap that is random, in [0, 1].
        jitter: f64,
    },
    /// Bursty arrivals: gamma-distributed gaps with mean `1 / rate` and coefficient of
    /// variation `cv` (shape 1/cv², scale 1/(rate·shape)). cv 1 is Poisson; cv > 1 is burstier.
    Gamma {
        /// Requests per second.
        rate: f64,
        /// Coefficient of variation of the gaps (std / mean), > 0.
        cv: f64,
    },
}

impl Arrival {
    /// Mean gap, seconds.
    pub fn mean_gap(&self) -> f64 {
        match *self {
            Arrival::Uniform { rate }
            | Arrival::Exponential { rate, .. }
            | Arrival::Gamma { rate, .. } => 1.0 / rate,
        }
    }

    /// The next gap, seconds; ∞ (never) for a rate so low that its mean gap overflows.
    pub fn next_gap(&self, rng: &mut SimRng) -> f64 {
        let mean = self.mean_gap();
        if mean.is_infinite() {
            return f64::INFINITY; // not ∞ · 0 = NaN below
        }
        match *self {
            Arrival::Uniform { .. } => mean,
            Arrival::Exponential { jitter, .. } => {
                mean * (1.0 - jitter) + dist::exponential(rng, mean) * jitter
            }
            Arrival::Gamma { cv, .. } => {
                let shape = 1.0 / (cv * cv);
                dist::gamma(rng, shape, mean / shape)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gaps(a: Arrival, seed: u64, n: usize) -> Vec<f64> {
        let mut r = SimRng::stream(seed, "arrival");
        (0..n).map(|_| a.next_gap(&mut r)).collect()
    }

    fn mean_cv(xs: &[f64]) -> (f64, f64) {
        let n = xs.len() as f64;
        let m = xs.iter().sum::<f64>() / n;
        let v = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
        (m, v.sqrt() / m)
    }

    #[test]
    fn uniform_gap_is_exactly_one_over_rate() {
        assert!(gaps(Arrival::Uniform { rate: 4.0 }, 1, 10)
            .iter()
            .all(|&g| g == 0.25));
    }

    #[test]
    fn exponential_jitter_sets_the_spread_not_the_mean() {
        // rate 10 → mean 0.1 s. jitter j: gap = 0.1(1−j) + j·Exp(0.1), cv = j.
        for j in [0.0, 0.5, 1.0] {
            let (m, cv) = mean_cv(&gaps(
                Arrival::Exponential {
                    rate: 10.0,
                    jitter: j,
                },
                2,
                100_000,
            ));
            // Standard error of the mean is 0.1·j/√1e5 ≤ 3.2e-4; 5 se = 1.6e-3.
            assert!((m - 0.1).abs() < 1.6e-3, "jitter {j}: mean {m}");
            assert!((cv - j).abs() < 0.02, "jitter {j}: cv {cv}");
            if j == 0.0 {
                assert!(gaps(
                    Arrival::Exponential {
                        rate: 10.0,
                        jitter: 0.0
                    },
                    2,
                    5
                )
                .iter()
                .all(|&g| g == 0.1));
            }
        }
    }

    #[test]
    fn gamma_gaps_have_the_requested_rate_and_burstiness() {
        for cv in [0.5, 1.0, 3.0] {
            let (m, got) = mean_cv(&gaps(Arrival::Gamma { rate: 5.0, cv }, 3, 200_000));
            // mean 0.2 s; se = 0.2·cv/√2e5 ≤ 1.35e-3 at cv 3; 5 se ≈ 6.7e-3.
            assert!(
                (m - 0.2).abs() < 5.0 * 0.2 * cv / 200_000f64.sqrt(),
                "cv {cv}: mean {m}"
            );
            assert!((got / cv - 1.0).abs() < 0.05, "cv {cv}: got {got}");
        }
    }
}
