//! Token-length distributions for prompts, outputs and turns, clamped to a range.

use super::dist;
use crate::rng::SimRng;
use crate::validate::{join, Problems};
use serde::{Deserialize, Serialize};

/// A distribution of token counts. Every sample is rounded to the nearest integer and
/// clamped to `[max(min, 1), max]` (clamping shifts the mean slightly when the tails are cut).
///
/// JSON: `{"type": "constant", "value": 128}`, `{"type": "uniform", "min": 10, "max": 100}`,
/// `{"type": "normal", "mean": 500, "std": 100, "min": 1, "max": 4096}`,
/// `{"type": "lognormal", "mean": 500, "cv": 0.8, "min": 1, "max": 8192}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum LengthDist {
    /// Always `value` tokens.
    Constant {
        /// Tokens (≥ 1).
        value: u32,
    },
    /// Uniform over the integers `min..=max` (tokens).
    Uniform {
        /// Smallest length, tokens (≥ 1).
        min: u32,
        /// Largest length, tokens (≥ min).
        max: u32,
    },
    /// Normal with `mean` and `std` (tokens), clamped to `[min, max]`.
    Normal {
        /// Mean, tokens.
        mean: f64,
        /// Standard deviation, tokens.
        std: f64,
        /// Lower clamp, tokens (default 1).
        #[serde(default = "one")]
        min: u32,
        /// Upper clamp, tokens.
        max: u32,
    },
    /// Lognormal with the given `mean` (tokens) and coefficient of variation `cv`
    /// (std / mean), clamped to `[min, max]`. Heavy right tail, like real prompt lengths.
    Lognormal {
        /// Mean, tokens (before clamping).
        mean: f64,
        /// Coefficient of variation (std / mean), ≥ 0.
        cv: f64,
        /// Lower clamp, tokens (default 1).
        #[serde(default = "one")]
        min: u32,
        /// Upper clamp, tokens.
        max: u32,
    },
}

fn one() -> u32 {
    1
}

impl LengthDist {
    /// A constant length.
    pub fn constant(value: u32) -> Self {
        LengthDist::Constant { value }
    }

    /// A uniform length in `min..=max`.
    pub fn uniform(min: u32, max: u32) -> Self {
        LengthDist::Uniform { min, max }
    }

    /// The clamp range `[lo, hi]` every sample falls in.
    pub fn bounds(&self) -> (u32, u32) {
        let (lo, hi) = match *self {
            LengthDist::Constant { value } => (value, value),
            LengthDist::Uniform { min, max }
            | LengthDist::Normal { min, max, .. }
            | LengthDist::Lognormal { min, max, .. } => (min, max),
        };
        let hi = hi.max(1);
        (lo.clamp(1, hi), hi)
    }

    /// The mean length, roughly (the clamp's effect on the tails aside), for estimates.
    pub fn mean(&self) -> f64 {
        let (lo, hi) = self.bounds();
        let m = match *self {
            LengthDist::Constant { .. } => lo as f64,
            LengthDist::Uniform { .. } => (lo as f64 + hi as f64) / 2.0,
            LengthDist::Normal { mean, .. } | LengthDist::Lognormal { mean, .. } => mean,
        };
        m.clamp(lo as f64, hi as f64)
    }

    /// One length in tokens.
    pub fn sample(&self, rng: &mut SimRng) -> u32 {
        let (lo, hi) = self.bounds();
        let x = match *self {
            LengthDist::Constant { .. } => return lo,
            LengthDist::Uniform { .. } => {
                return dist::uniform_int(rng, lo as u64, hi as u64) as u32
            }
            LengthDist::Normal { mean, std, .. } => dist::normal(rng, mean, std),
            LengthDist::Lognormal { mean, cv, .. } => dist::lognormal(rng, mean, cv),
        };
        // `round` and the comparisons are exact; NaN (impossible after validation) falls to `lo`.
        let x = x.round();
        if x >= hi as f64 {
            hi
        } else if x >= lo as f64 {
            x as u32
        } else {
            lo
        }
    }

    /// Reports problems under `path.field`.
    pub fn validate(&self, path: &str, field: &str, problems: &mut Problems) {
        let p = join(path, field);
        match *self {
            LengthDist::Constant { value } => {
                if value == 0 {
                    problems.push(join(&p, "value"), "must be >= 1");
                }
            }
            LengthDist::Uniform { min, max } => {
                if min == 0 {
                    problems.push(join(&p, "min"), "must be >= 1");
                }
                if max < min {
                    problems.push(join(&p, "max"), "must be >= min");
                }
            }
            LengthDist::Normal {
                mean,
                std,
                min,
                max,
            } => {
                problems.positive(&p, "mean", mean);
                problems.non_negative(&p, "std", std);
                clamp_problems(&p, min, max, problems);
            }
            LengthDist::Lognormal { mean, cv, min, max } => {
                problems.positive(&p, "mean", mean);
                problems.non_negative(&p, "cv", cv);
                clamp_problems(&p, min, max, problems);
            }
        }
    }
}

fn clamp_problems(p: &str, min: u32, max: u32, problems: &mut Problems) {
    if max == 0 {
        problems.push(join(p, "max"), "must be >= 1");
    } else if max < min {
        problems.push(join(p, "max"), "must be >= min");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_stays_within_its_clamp() {
        let dists = [
            LengthDist::constant(7),
            LengthDist::uniform(3, 9),
            LengthDist::Normal {
                mean: 5.0,
                std: 50.0,
                min: 2,
                max: 12,
            },
            LengthDist::Lognormal {
                mean: 10.0,
                cv: 3.0,
                min: 1,
                max: 40,
            },
        ];
        let mut r = SimRng::stream(1, "len");
        for d in &dists {
            let (lo, hi) = d.bounds();
            let xs: Vec<u32> = (0..5000).map(|_| d.sample(&mut r)).collect();
            assert!(xs.iter().all(|&x| (lo..=hi).contains(&x)), "{d:?}");
            // The wide normal and lognormal hit both clamps; the uniform covers its range.
            if !matches!(d, LengthDist::Constant { .. }) {
                assert!(xs.contains(&lo) && xs.contains(&hi), "{d:?}");
            }
        }
    }

    #[test]
    fn zero_lower_clamp_still_gives_at_least_one_token() {
        let d = LengthDist::Normal {
            mean: 0.5,
            std: 2.0,
            min: 0,
            max: 3,
        };
        let mut r = SimRng::stream(2, "len");
        assert!((0..1000).all(|_| d.sample(&mut r) >= 1));
    }

    #[test]
    fn parses_from_json_and_rejects_unknown_fields() {
        let d: LengthDist =
            serde_json::from_str(r#"{"type":"lognormal","mean":500,"cv":0.8,"max":8192}"#).unwrap();
        assert_eq!(
            d,
            LengthDist::Lognormal {
                mean: 500.0,
                cv: 0.8,
                min: 1,
                max: 8192
            }
        );
        assert!(
            serde_json::from_str::<LengthDist>(r#"{"type":"constant","value":1,"x":2}"#).is_err()
        );
    }

    #[test]
    fn validation_names_the_field() {
        let mut p = Problems::new();
        LengthDist::uniform(0, 5).validate("s", "input_length", &mut p);
        LengthDist::Normal {
            mean: 1.0,
            std: -1.0,
            min: 5,
            max: 4,
        }
        .validate("s", "out", &mut p);
        let got: Vec<String> = p.into_vec().iter().map(|x| x.to_string()).collect();
        assert_eq!(
            got,
            [
                "s.input_length.min: must be >= 1",
                "s.out.std: must be >= 0",
                "s.out.max: must be >= min"
            ]
        );
    }
}
