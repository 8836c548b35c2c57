//! Numbers with units for axes, read-outs and tooltips: `250 ms`, `1.2 s`, `12k tok/s`, `45%`.

use super::ticks::decade;

/// The unit a column's values are stored in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Unit {
    /// A plain number, shortened with SI suffixes (k, M, G, T).
    #[default]
    Count,
    /// Seconds; small values switch to ms and µs.
    Seconds,
    /// Milliseconds; large values switch to s.
    Millis,
    /// Tokens per second, with SI suffixes.
    TokPerSec,
    /// A fraction, shown ×100 with `%` (0.25 → 25%).
    Percent,
    /// Gibibytes; 1024 GiB and more switch to TiB.
    GiB,
}

impl Unit {
    /// The unit's symbol as written after a number.
    pub fn symbol(self) -> &'static str {
        match self {
            Unit::Count => "",
            Unit::Seconds => "s",
            Unit::Millis => "ms",
            Unit::TokPerSec => "tok/s",
            Unit::Percent => "%",
            Unit::GiB => "GiB",
        }
    }

    /// How to show values around `magnitude` (the largest absolute value in view):
    /// the factor to multiply by and the suffix to append.
    fn prefix(self, magnitude: f64) -> (f64, String) {
        let m = magnitude.abs();
        let (factor, suffix): (f64, &str) = match self {
            Unit::Count | Unit::TokPerSec => {
                let (factor, si) = if m >= 1e12 {
                    (1e-12, "T")
                } else if m >= 1e9 {
                    (1e-9, "G")
                } else if m >= 1e6 {
                    (1e-6, "M")
                } else if m >= 1e3 {
                    (1e-3, "k")
                } else {
                    (1.0, "")
                };
                let unit = if self == Unit::Count { "" } else { " tok/s" };
                return (factor, format!("{si}{unit}"));
            }
            Unit::Seconds if m > 0.0 && m < 1e-3 => (1e6, " µs"),
            Unit::Seconds if m > 0.0 && m < 1.0 => (1e3, " ms"),
            Unit::Seconds => (1.0, " s"),
            Unit::Millis if m >= 1e3 => (1e-3, " s"),
            Unit::Millis if m > 0.0 && m < 1.0 => (1e3, " µs"),
            Unit::Millis => (1.0, " ms"),
            Unit::Percent => (100.0, "%"),
            Unit::GiB if m >= 1024.0 => (1.0 / 1024.0, " TiB"),
            Unit::GiB => (1.0, " GiB"),
        };
        (factor, suffix.to_string())
    }
}

/// Decimals needed to tell apart values `step` apart (after scaling), at most 6.
fn decimals_for(step: f64) -> usize {
    if !(step.is_finite() && step > 0.0) {
        return 0;
    }
    // Steps are 1, 2 or 5 × 10^k, so k < 0 needs exactly -k decimals.
    (-decade(step)).clamp(0, 6) as usize
}

/// A tick label: all ticks of one axis share the prefix chosen by `magnitude` (the largest
/// absolute tick) and as many decimals as the `step` between ticks needs.
pub fn format_tick(v: f64, step: f64, magnitude: f64, unit: Unit) -> String {
    // Axes keep four digits before shortening (1600, not 1.6k), so steps like 200 stay whole.
    let magnitude = match unit {
        Unit::Count | Unit::TokPerSec => magnitude / 10.0,
        _ => magnitude,
    };
    let (factor, suffix) = unit.prefix(magnitude);
    let decimals = decimals_for(step * factor);
    let x = v * factor;
    // -0.0 would print as "-0".
    let x = if x == 0.0 { 0.0 } else { x };
    format!("{x:.decimals$}{suffix}")
}

/// A single value for read-outs: three significant digits with the best prefix (`1.23 s`).
pub fn format_value(v: f64, unit: Unit) -> String {
    if !v.is_finite() {
        return "–".to_string();
    }
    let (factor, suffix) = unit.prefix(v);
    let x = v * factor;
    if x == 0.0 {
        return format!("0{suffix}");
    }
    let digits = decade(x.abs()) + 1;
    let decimals = (3 - digits).clamp(0, 6) as usize;
    format!("{x:.decimals$}{suffix}")
}

/// Labels for a whole axis of ticks.
pub fn tick_labels(values: &[f64], step: f64, unit: Unit) -> Vec<String> {
    let magnitude = values.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    values
        .iter()
        .map(|&v| format_tick(v, step, magnitude, unit))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_switch_to_milliseconds_and_micro() {
        assert_eq!(format_value(1.234, Unit::Seconds), "1.23 s");
        assert_eq!(format_value(0.25, Unit::Seconds), "250 ms");
        assert_eq!(format_value(0.000_042, Unit::Seconds), "42.0 µs");
        assert_eq!(format_value(1500.0, Unit::Millis), "1.50 s");
        assert_eq!(format_value(12.5, Unit::Millis), "12.5 ms");
    }

    #[test]
    fn si_suffixes_for_counts_and_rates() {
        assert_eq!(format_value(12_345.0, Unit::TokPerSec), "12.3k tok/s");
        assert_eq!(format_value(950.0, Unit::TokPerSec), "950 tok/s");
        assert_eq!(format_value(2_500_000.0, Unit::Count), "2.50M");
        assert_eq!(format_value(7.0, Unit::Count), "7.00");
    }

    #[test]
    fn percent_and_gibibytes() {
        assert_eq!(format_value(0.456, Unit::Percent), "45.6%");
        assert_eq!(format_value(80.0, Unit::GiB), "80.0 GiB");
        // 2048 GiB = 2 TiB.
        assert_eq!(format_value(2048.0, Unit::GiB), "2.00 TiB");
    }

    #[test]
    fn non_finite_prints_a_dash() {
        assert_eq!(format_value(f64::NAN, Unit::Seconds), "–");
    }

    #[test]
    fn tick_labels_share_prefix_and_decimals() {
        // Ticks 0, 0.5, ..., 2 s: largest 2 → seconds, step 0.5 → one decimal.
        let labels = tick_labels(&[0.0, 0.5, 1.0, 1.5, 2.0], 0.5, Unit::Seconds);
        assert_eq!(labels, ["0.0 s", "0.5 s", "1.0 s", "1.5 s", "2.0 s"]);
        // Ticks 0..0.3 s step 0.1: largest 0.3 → ms, 0.1 s = 100 ms → no decimals.
        let labels = tick_labels(&[0.0, 0.1, 0.2, 0.3], 0.1, Unit::Seconds);
        assert_eq!(labels, ["0 ms", "100 ms", "200 ms", "300 ms"]);
        // 0..20k tok/s step 5000 → k prefix, 5 → no decimals.
        let labels = tick_labels(&[0.0, 5e3, 1e4, 1.5e4, 2e4], 5e3, Unit::TokPerSec);
        assert_eq!(labels[3], "15k tok/s");
        // Counts up to 1600 stay whole: "1600", not "1.6k".
        assert_eq!(
            tick_labels(&[0.0, 800.0, 1600.0], 800.0, Unit::Count),
            ["0", "800", "1600"]
        );
        // Percent step 0.25 → 25 → no decimals.
        assert_eq!(
            tick_labels(&[0.0, 0.25], 0.25, Unit::Percent),
            ["0%", "25%"]
        );
    }
}
