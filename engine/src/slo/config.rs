//! The `slo` section: latency targets a run is judged against.

use crate::validate::{join, Problems};
use serde::{Deserialize, Serialize};

/// One latency target, in milliseconds: every request (`p` absent) or the `p`-th percentile
/// of the stage's requests (`p` given) must be at most `max`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Target {
    /// The bound, milliseconds.
    pub max: f64,
    /// Percentile (0 < p ≤ 100) the bound applies to; absent: a per-request target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p: Option<f64>,
}

/// Service-level objectives: targets on TTFT, TPOT and end-to-end latency.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SloConfig {
    /// Time to first token, ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<Target>,
    /// Time per output token after the first, ms (requests with one output token have none
    /// and meet it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tpot_ms: Option<Target>,
    /// End-to-end latency, ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub e2e_ms: Option<Target>,
    /// Least attainment (share of requests meeting every per-request target, 0..=1) for the
    /// SLO to count as met. Absent: attainment does not decide it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_attainment: Option<f64>,
}

/// The latencies a target can bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Time to first token.
    Ttft,
    /// Time per output token.
    Tpot,
    /// End-to-end latency.
    E2e,
}

impl SloConfig {
    /// The targets given, with the latency each bounds.
    pub fn targets(&self) -> impl Iterator<Item = (Metric, Target)> + '_ {
        [
            (Metric::Ttft, self.ttft_ms),
            (Metric::Tpot, self.tpot_ms),
            (Metric::E2e, self.e2e_ms),
        ]
        .into_iter()
        .filter_map(|(m, t)| t.map(|t| (m, t)))
    }

    /// Reports every problem in this section under `path`.
    pub fn validate(&self, path: &str, p: &mut Problems) {
        for (name, target) in [
            ("ttft_ms", self.ttft_ms),
            ("tpot_ms", self.tpot_ms),
            ("e2e_ms", self.e2e_ms),
        ] {
            let Some(t) = target else { continue };
            let at = join(path, name);
            p.positive(&at, "max", t.max);
            if let Some(pct) = t.p {
                if pct.is_nan() || pct <= 0.0 || pct > 100.0 {
                    p.push(join(&at, "p"), "must be a percentile in (0, 100]");
                }
            }
        }
        if let Some(a) = self.min_attainment {
            p.in_range(path, "min_attainment", a, 0.0, 1.0);
        }
        if self.targets().next().is_none() {
            p.push(path, "give at least one target: ttft_ms, tpot_ms or e2e_ms");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_name_the_target_field() {
        let c: SloConfig = serde_json::from_str(
            r#"{"ttft_ms": {"p": 0, "max": 500}, "tpot_ms": {"max": -1}, "min_attainment": 2}"#,
        )
        .unwrap();
        let mut p = Problems::new();
        c.validate("slo", &mut p);
        let paths: Vec<&str> = p.as_slice().iter().map(|p| p.path.as_str()).collect();
        assert_eq!(
            paths,
            ["slo.ttft_ms.p", "slo.tpot_ms.max", "slo.min_attainment"]
        );
        let mut p = Problems::new();
        SloConfig::default().validate("slo", &mut p);
        assert_eq!(p.as_slice()[0].path, "slo");
    }
}
