//! Predicted against measured, per run and as medians across runs: the shape of a
//! published simulator comparison (median absolute percentage error of each metric).

use crate::replay::Prediction;
use crate::run::Run;
use engine::timing::ErrorBand;
use std::fmt::Write;

/// The metrics compared, in table order.
pub const METRICS: [&str; 7] = [
    "TTFT mean",
    "TTFT p90",
    "TTFT p99",
    "E2E mean",
    "E2E p90",
    "E2E p99",
    "ITL mean",
];

/// One run, measured and predicted.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// The run.
    pub run: Run,
    /// The simulator's prediction.
    pub predicted: Prediction,
}

impl Comparison {
    /// `(measured, predicted)` of each of [`METRICS`], ms.
    pub fn pairs(&self) -> [(f64, f64); 7] {
        let (m, p) = (&self.run.measured, &self.predicted);
        [
            (m.ttft_ms.mean, p.ttft_ms.mean),
            (m.ttft_ms.p90, p.ttft_ms.p90),
            (m.ttft_ms.p99, p.ttft_ms.p99),
            (m.e2e_ms.mean, p.e2e_ms.mean),
            (m.e2e_ms.p90, p.e2e_ms.p90),
            (m.e2e_ms.p99, p.e2e_ms.p99),
            (m.itl_ms.mean, p.itl_ms),
        ]
    }

    /// Absolute percentage error of each of [`METRICS`].
    pub fn errors(&self) -> [f64; 7] {
        self.pairs().map(|(m, p)| ape(m, p))
    }
}

/// Absolute percentage error of `predicted` against `measured`.
pub fn ape(measured: f64, predicted: f64) -> f64 {
    ((predicted - measured) / measured).abs() * 100.0
}

/// Median of `xs` (mean of the middle two for an even count); NaN when empty.
pub fn median(mut xs: Vec<f64>) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// Median absolute percentage error of each metric over the scored runs of `split`
/// (`None`: every scored run).
pub fn median_errors(comparisons: &[Comparison], split: Option<&str>) -> [f64; 7] {
    let scored: Vec<&Comparison> = comparisons
        .iter()
        .filter(|c| c.run.is_scored() && split.is_none_or(|s| c.run.split == s))
        .collect();
    std::array::from_fn(|k| median(scored.iter().map(|c| c.errors()[k]).collect()))
}

/// The whole comparison as text: one line per run (measured / predicted and the absolute
/// error of each metric), then the medians by split.
pub fn render(comparisons: &[Comparison]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<40} {:>13}  {:>21} {:>21} {:>21} {:>21} {:>19}",
        "run (split)",
        "KV blocks",
        "TTFT mean ms",
        "TTFT p99 ms",
        "E2E mean ms",
        "E2E p99 ms",
        "ITL mean ms"
    );
    for c in comparisons {
        let (p, e) = (c.pairs(), c.errors());
        let cell = |k: usize| format!("{:>7.1}/{:<7.1}{:>5.1}%", p[k].0, p[k].1, e[k]);
        let run = format!("{} ({})", c.run.name, c.run.split);
        let blocks = format!("{}/{}", c.run.kv_blocks_total_gpu, c.predicted.gpu_blocks);
        let note = if c.run.is_scored() {
            ""
        } else {
            "  overloaded: not scored"
        };
        let _ = writeln!(
            out,
            "{run:<40} {blocks:>13}  {} {} {} {} {}{note}",
            cell(0),
            cell(2),
            cell(3),
            cell(5),
            cell(6),
        );
    }
    let _ = writeln!(
        out,
        "\nmedian absolute error over scored runs (measured/predicted above):"
    );
    let _ = writeln!(
        out,
        "{:<12} {}",
        "split",
        METRICS.map(|m| format!("{m:>10}")).join("")
    );
    for split in [Some("train"), Some("validate"), Some("test"), None] {
        let n = comparisons
            .iter()
            .filter(|c| c.run.is_scored() && split.is_none_or(|s| c.run.split == s))
            .count();
        if n == 0 {
            continue;
        }
        let m = median_errors(comparisons, split);
        let _ = writeln!(
            out,
            "{:<12} {}",
            format!("{} ({n})", split.unwrap_or("all")),
            m.map(|x| format!("{x:>9.1}%")).join("")
        );
    }
    out
}

/// Where each of [`ErrorBand`]'s metrics is in [`METRICS`]: TTFT mean and p99, E2E mean and
/// p99, ITL mean.
const BAND_METRICS: [usize; 5] = [0, 2, 3, 5, 6];

/// The `q`-quantile of sorted `xs`, interpolated between ranks (numpy's default).
fn quantile(xs: &[f64], q: f64) -> f64 {
    let h = (xs.len() - 1) as f64 * q;
    let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
    xs[lo] + (h - lo as f64) * (xs[hi] - xs[lo])
}

/// The band of `comparisons` left out of none but `skip`: per metric, the 10th and 90th
/// percentiles of measured ÷ predicted over the scored runs, widened outwards to 3
/// decimals; `None` with fewer than two runs.
fn band_without(comparisons: &[Comparison], skip: Option<usize>) -> Option<ErrorBand> {
    let scored: Vec<&Comparison> = (comparisons.iter().enumerate())
        .filter(|(i, c)| c.run.is_scored() && Some(*i) != skip)
        .map(|(_, c)| c)
        .collect();
    if scored.len() < 2 {
        return None;
    }
    let factors = |k: usize| {
        let mut ratios: Vec<f64> = scored
            .iter()
            .map(|c| {
                let (m, p) = c.pairs()[k];
                m / p
            })
            .collect();
        ratios.sort_by(f64::total_cmp);
        [
            (quantile(&ratios, 0.1) * 1e3).floor() / 1e3,
            (quantile(&ratios, 0.9) * 1e3).ceil() / 1e3,
        ]
    };
    let [ttft_mean, ttft_p99, e2e_mean, e2e_p99, itl_mean] = BAND_METRICS.map(factors);
    Some(ErrorBand {
        runs: scored.len() as u32,
        held_out: 0.0,
        ttft_mean,
        ttft_p99,
        e2e_mean,
        e2e_p99,
        itl_mean,
    })
}

/// The calibration's error band, measured on every scored run of `comparisons`, with the
/// share of runs it held when each was left out (the least over the metrics, to 2 decimals
/// rounded down).
pub fn error_band(comparisons: &[Comparison]) -> Option<ErrorBand> {
    let held = band_coverage(comparisons).into_iter().fold(1.0, f64::min);
    band_without(comparisons, None).map(|band| ErrorBand {
        held_out: (held * 100.0).floor() / 100.0,
        ..band
    })
}

/// How often the band holds a run it was not measured on: for each scored run, the band of
/// the others, and whether the run's measured value lies in its prediction times that band.
/// The fraction of runs held, per metric of [`ErrorBand`].
pub fn band_coverage(comparisons: &[Comparison]) -> [f64; 5] {
    let mut held = [0u32; 5];
    let mut runs = 0u32;
    for (i, c) in comparisons.iter().enumerate() {
        let Some(band) = c
            .run
            .is_scored()
            .then(|| band_without(comparisons, Some(i)))
            .flatten()
        else {
            continue;
        };
        runs += 1;
        for (slot, (k, (_, [lo, hi]))) in BAND_METRICS.iter().zip(band.factors()).enumerate() {
            let (m, p) = c.pairs()[*k];
            held[slot] += u32::from(m >= p * lo && m <= p * hi);
        }
    }
    held.map(|h| f64::from(h) / f64::from(runs.max(1)))
}

/// The band and its coverage as text, a line per metric.
pub fn render_band(band: &ErrorBand, coverage: [f64; 5]) -> String {
    let mut out = format!(
        "error band: measured ÷ predicted, 10th–90th percentile over {} scored runs; \
         held-out coverage (each run against the band of the others)\n",
        band.runs
    );
    for ((name, [lo, hi]), held) in band.factors().into_iter().zip(coverage) {
        let _ = writeln!(
            out,
            "  {name:<10} {lo:.3}–{hi:.3}   holds {:.0}% of runs left out",
            held * 100.0
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate_between_ranks() {
        // Ten values 1..=10: h = 9 × 0.1 = 0.9 → 1.9; h = 9 × 0.9 = 8.1 → 9.1.
        let xs: Vec<f64> = (1..=10).map(f64::from).collect();
        assert!((quantile(&xs, 0.1) - 1.9).abs() < 1e-12);
        assert!((quantile(&xs, 0.9) - 9.1).abs() < 1e-12);
        assert_eq!(quantile(&[2.0, 4.0], 0.5), 3.0);
    }
}
