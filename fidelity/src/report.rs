//! Predicted against measured, per run and as medians across runs: the shape of a
//! published simulator comparison (median absolute percentage error of each metric).

use crate::replay::Prediction;
use crate::run::Run;
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
