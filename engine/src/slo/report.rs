//! Judging a run's requests against the SLO: attainment, goodput, percentile checks.

use super::config::{Metric, SloConfig, Target};
use super::part::Part;
use crate::measure::{window_of, MeasuredWindow};
use crate::stats::percentile::percentile_sorted;
use crate::stats::{RequestRecord, TransferRecord};
use serde::Serialize;
use std::fmt::Write;

/// One percentile target checked over a group of requests.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PercentileCheck {
    /// The latency bounded.
    pub metric: Metric,
    /// The percentile.
    pub p: f64,
    /// The bound, ms.
    pub max_ms: f64,
    /// The percentile over the group, ms: failed and unfinished requests count as infinitely
    /// late (`null` in JSON when the percentile falls on one, or without requests; and in a
    /// worker's row that answers for none of its requests' values of this latency, when
    /// `met` is then true).
    pub value_ms: f64,
    /// `value_ms <= max_ms`.
    pub met: bool,
}

/// How one group of requests (a stage, a worker, the run) fared against the SLO.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SloSummary {
    /// Requests in the group (issued: completed, failed or unfinished).
    pub requests: u64,
    /// Requests that completed and met every per-request target.
    pub attained: u64,
    /// `attained / requests`, 0..=1 (NaN without requests).
    pub attainment: f64,
    /// Attained requests per second of the group's duration.
    pub goodput_rps: f64,
    /// Output tokens of attained requests per second.
    pub goodput_output_tps: f64,
    /// Each percentile target, checked.
    pub percentiles: Vec<PercentileCheck>,
    /// The group's load outran what served it (see `measure`): its SLO is missed
    /// whatever its percentiles say.
    pub overloaded: bool,
    /// Not overloaded, every percentile target holds, and attainment reaches
    /// `min_attainment` if given.
    pub met: bool,
    /// The verdict is the same on each half of the measurement window (by arrival), or the
    /// group is overloaded: long enough to judge.
    pub settled: bool,
}

/// A stage's or a worker's [`SloSummary`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupSlo {
    /// Stage index or worker id.
    pub id: u32,
    /// How it fared.
    #[serde(flatten)]
    pub summary: SloSummary,
}

/// The SLO section of a run's results: every group is judged on the requests arriving in
/// its stages' measurement windows, and its rates are per second of those windows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SloReport {
    /// The targets judged against.
    pub config: SloConfig,
    /// Every stage's measured requests, over the windows' spans added up.
    pub overall: SloSummary,
    /// Per stage, over its window.
    pub stages: Vec<GroupSlo>,
    /// Per worker, over the windows' spans: the measured requests routed to it, and in a disaggregated
    /// deployment the requests it decoded too. A handed-off request counts on both of its
    /// workers, each judged on its part: its prefill worker on its TTFT (met once its first
    /// token came in time), its decode worker on completing it, its TPOT and its E2E.
    pub workers: Vec<GroupSlo>,
}

impl SloConfig {
    /// Whether `r` completed and met every per-request target.
    pub fn attains(&self, r: &RequestRecord) -> bool {
        self.attains_part(r, Part::Whole)
    }

    /// Whether `part` of `r` was done and met the per-request targets it answers for.
    fn attains_part(&self, r: &RequestRecord, part: Part) -> bool {
        part.done(r)
            && self
                .targets()
                .filter(|(m, t)| t.p.is_none() && part.covers(*m))
                .all(|(m, t)| {
                    let v = part.value(r, m);
                    v.is_nan() || v * 1000.0 <= t.max
                })
    }

    /// How `records` fared over `duration` seconds; `overloaded` when their window was;
    /// `later` tells which of them arrived in the later half of their window.
    pub fn summarize<'a>(
        &self,
        records: impl IntoIterator<Item = &'a RequestRecord>,
        duration: f64,
        overloaded: bool,
        later: impl Fn(&RequestRecord) -> bool,
    ) -> SloSummary {
        let charged: Vec<(&RequestRecord, Part)> =
            records.into_iter().map(|r| (r, Part::Whole)).collect();
        self.summarize_charged(&charged, duration, overloaded, later)
    }

    /// How the `charged` parts of requests fared over `duration` seconds.
    pub(super) fn summarize_charged(
        &self,
        charged: &[(&RequestRecord, Part)],
        duration: f64,
        overloaded: bool,
        later: impl Fn(&RequestRecord) -> bool,
    ) -> SloSummary {
        let n = charged.len() as u64;
        let (mut attained, mut tokens) = (0u64, 0u64);
        for (r, _) in charged.iter().filter(|(r, p)| self.attains_part(r, *p)) {
            attained += 1;
            tokens += r.output_tokens as u64;
        }
        let per_s = |x: u64| {
            if duration > 0.0 {
                x as f64 / duration
            } else {
                f64::NAN
            }
        };
        let percentiles = self.checks(charged);
        let attainment = ratio(attained, n);
        let met = !overloaded && self.verdict(&percentiles, attainment, n);
        let settled = overloaded || {
            let (early, late): (Vec<_>, Vec<_>) = charged.iter().partition(|(r, _)| !later(r));
            [early, late].iter().all(|half| {
                let won = half
                    .iter()
                    .filter(|(r, p)| self.attains_part(r, *p))
                    .count();
                let n = half.len() as u64;
                self.verdict(&self.checks(half), ratio(won as u64, n), n) == met
            })
        };
        SloSummary {
            requests: n,
            attained,
            attainment,
            goodput_rps: per_s(attained),
            goodput_output_tps: per_s(tokens),
            percentiles,
            overloaded,
            met,
            settled,
        }
    }

    /// Each percentile target checked over the `charged` parts.
    fn checks(&self, charged: &[(&RequestRecord, Part)]) -> Vec<PercentileCheck> {
        self.targets()
            .filter_map(|(m, t)| t.p.map(|p| check(charged, m, p, t)))
            .collect()
    }

    /// Whether checks and attainment meet the SLO, for a group of `n` requests.
    fn verdict(&self, checks: &[PercentileCheck], attainment: f64, n: u64) -> bool {
        n > 0 && checks.iter().all(|c| c.met) && self.min_attainment.is_none_or(|a| attainment >= a)
    }

    /// The report of a run: its request records, each stage's measurement window, and its
    /// KV transfers (which name each handed-off request's decode worker; none without
    /// disaggregation).
    pub fn report<'a>(
        &self,
        records: impl IntoIterator<Item = &'a RequestRecord>,
        windows: &[MeasuredWindow],
        transfers: &[TransferRecord],
    ) -> SloReport {
        let window = |r: &RequestRecord| window_of(windows, r);
        let measured: Vec<&RequestRecord> = records
            .into_iter()
            .filter(|r| window(r).is_some())
            .collect();
        let later = |r: &RequestRecord| window(r).is_some_and(|w| w.in_later_half(r));
        let run: f64 = windows
            .iter()
            .map(MeasuredWindow::duration)
            .filter(|d| *d > 0.0)
            .sum();
        let stages = windows
            .iter()
            .map(|w| GroupSlo {
                id: w.stage,
                summary: self.summarize(
                    measured.iter().copied().filter(|r| r.stage == w.stage),
                    w.duration(),
                    w.overload.is_some(),
                    later,
                ),
            })
            .collect();
        let workers = self.worker_rows(&measured, transfers, run, later);
        SloReport {
            config: self.clone(),
            overall: self.summarize(
                measured.iter().copied(),
                run,
                windows.iter().any(|w| w.overload.is_some()),
                later,
            ),
            stages,
            workers,
        }
    }
}

fn ratio(a: u64, n: u64) -> f64 {
    if n > 0 {
        a as f64 / n as f64
    } else {
        f64::NAN
    }
}

/// `metric`'s percentile over the requests `charged` with it; vacuously met when the group
/// has requests but answers for none of their values of `metric` (a decode worker's TTFT).
fn check(charged: &[(&RequestRecord, Part)], metric: Metric, p: f64, t: Target) -> PercentileCheck {
    if !charged.is_empty() && !charged.iter().any(|(_, part)| part.covers(metric)) {
        return PercentileCheck {
            metric,
            p,
            max_ms: t.max,
            value_ms: f64::NAN,
            met: true,
        };
    }
    let mut values: Vec<f64> = charged
        .iter()
        .filter(|(_, part)| part.covers(metric))
        .map(|(r, part)| part.value(r, metric))
        .filter(|v| !v.is_nan())
        .collect();
    crate::stats::radix::sort_total(&mut values);
    let value_ms = percentile_sorted(&values, p) * 1000.0;
    PercentileCheck {
        metric,
        p,
        max_ms: t.max,
        value_ms,
        met: value_ms <= t.max,
    }
}

fn metric_name(m: Metric) -> &'static str {
    match m {
        Metric::Ttft => "TTFT",
        Metric::Tpot => "TPOT",
        Metric::E2e => "E2E",
    }
}

impl SloReport {
    /// The targets in words: `TTFT p99 <= 500 ms, TPOT <= 50 ms`.
    pub fn describe_targets(&self) -> String {
        let mut parts: Vec<String> = self
            .config
            .targets()
            .map(|(m, t)| match t.p {
                Some(p) => format!("{} p{p} <= {} ms", metric_name(m), t.max),
                None => format!("{} <= {} ms", metric_name(m), t.max),
            })
            .collect();
        if let Some(a) = self.config.min_attainment {
            parts.push(format!("attainment >= {}%", a * 100.0));
        }
        parts.join(", ")
    }

    /// The table: one row for the run, each stage and each worker.
    pub fn render_text(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "SLO: {} (judged on each stage's measurement window)",
            self.describe_targets()
        );
        let mut head = format!(
            "{:<9} {:>8} {:>8} {:>8} {:>9} {:>10}",
            "scope", "requests", "attained", "attain %", "good r/s", "good tok/s"
        );
        for c in &self.overall.percentiles {
            head.push_str(&format!(
                " {:>12}",
                format!("P{} {} ms", c.p, metric_name(c.metric))
            ));
        }
        head.push_str("  met");
        let _ = writeln!(o, "{head}");
        let rows = std::iter::once(("run".to_string(), &self.overall))
            .chain(
                self.stages
                    .iter()
                    .map(|s| (format!("stage {}", s.id), &s.summary)),
            )
            .chain(
                self.workers
                    .iter()
                    .map(|w| (format!("worker {}", w.id), &w.summary)),
            );
        for (scope, s) in rows {
            let mut line = format!(
                "{scope:<9} {:>8} {:>8} {:>8.2} {:>9.2} {:>10.1}",
                s.requests,
                s.attained,
                s.attainment * 100.0,
                s.goodput_rps,
                s.goodput_output_tps
            );
            for c in &s.percentiles {
                if c.value_ms.is_nan() {
                    line.push_str(&format!(" {:>12}", "-"));
                } else {
                    line.push_str(&format!(" {:>12.2}", c.value_ms));
                }
            }
            line.push_str(match (s.met, s.overloaded) {
                (true, _) => "  yes",
                (false, true) => "  no (overloaded)",
                (false, false) => "  no",
            });
            let _ = writeln!(o, "{line}");
        }
        o
    }
}
