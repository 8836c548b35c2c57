//! Each stage's measurement window: which of its requests count, and what they show.

use super::config::{MeasurementConfig, Span};
use super::overload::{self, Overload};
use crate::stats::percentile::percentile_sorted;
use crate::stats::summary::{header, num, row};
use crate::stats::{LatencySummary, RequestRecord};
use serde::Serialize;
use std::fmt::Write;

/// The part of one stage a run is judged on: the requests arriving from `start` to `end`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeasuredWindow {
    /// Stage index.
    pub stage: u32,
    /// First arrival counted, simulated seconds (NaN for a stage without requests).
    pub start: f64,
    /// Last arrival counted.
    pub end: f64,
    /// The arrival that splits the window's requests into two halves (the later half
    /// starts at it), for judging whether a verdict holds on each.
    pub midpoint: f64,
    /// The stage's requests left out before the window (warm-up).
    pub warmup_requests: u64,
    /// The stage's requests left out after it (cool-down).
    pub cooldown_requests: u64,
    /// Requests arriving in the window.
    pub requests: u64,
    /// Of those, completed.
    pub completed: u64,
    /// The stage's requests completed over the window moved by their median end-to-end
    /// latency: what the window's arrivals complete, in steady state.
    pub served: u64,
    /// Their output tokens.
    pub served_output_tokens: u64,
    /// Arrivals per second: (requests − 1) / (end − start).
    pub offered_rps: f64,
    /// Share of the window's arrivals (those whose completion the run could see) not
    /// matched by a request finishing over the moved window: about 0 in steady state, the
    /// excess load's share in overload. Above the tolerance but within the arrivals' noise,
    /// the run is too short to tell.
    pub shortfall: f64,
    /// `served` per second of the window.
    pub achieved_rps: f64,
    /// `served_output_tokens` per second.
    pub output_tps: f64,
    /// TTFT of the window's completed requests.
    pub ttft: LatencySummary,
    /// TPOT of the window's completed requests.
    pub tpot: LatencySummary,
    /// End-to-end latency of the window's completed requests.
    pub e2e: LatencySummary,
    /// Why the window is overloaded (`None`: it keeps up).
    pub overload: Option<Overload>,
}

impl MeasuredWindow {
    /// A window of stage `stage` from `start` to `end` whose later half begins at
    /// `midpoint`, with no figures (for tests of what judges windows).
    #[cfg(test)]
    pub(crate) fn spanning(stage: u32, start: f64, end: f64, midpoint: f64) -> Self {
        let none = LatencySummary::empty();
        Self {
            stage,
            start,
            end,
            midpoint,
            warmup_requests: 0,
            cooldown_requests: 0,
            requests: 0,
            completed: 0,
            served: 0,
            served_output_tokens: 0,
            shortfall: 0.0,
            offered_rps: f64::NAN,
            achieved_rps: f64::NAN,
            output_tps: f64::NAN,
            ttft: none,
            tpot: none,
            e2e: none,
            overload: None,
        }
    }

    /// Seconds the window spans.
    pub fn duration(&self) -> f64 {
        self.end - self.start
    }

    /// Whether request `r` (of any stage) is one this window counts.
    pub fn holds(&self, r: &RequestRecord) -> bool {
        r.stage == self.stage && r.created >= self.start && r.created <= self.end
    }

    /// Whether `r` is in the window's later half (of its requests by arrival).
    pub fn in_later_half(&self, r: &RequestRecord) -> bool {
        r.created >= self.midpoint
    }

    /// The window as plain text, after the stage's table.
    pub fn render_text(&self) -> String {
        let mut o = String::new();
        header(&mut o, " Measurement window ", '-');
        row(
            &mut o,
            "Window, by arrival (s):",
            format!("{} - {}", num(self.start), num(self.end)),
        );
        row(
            &mut o,
            "Requests measured:",
            format!(
                "{} (left out: {} warm-up, {} cool-down)",
                self.requests, self.warmup_requests, self.cooldown_requests
            ),
        );
        row(
            &mut o,
            "Measured offered load (req/s):",
            num(self.offered_rps),
        );
        row(
            &mut o,
            "Measured throughput (req/s):",
            num(self.achieved_rps),
        );
        row(
            &mut o,
            "Measured output throughput (tok/s):",
            num(self.output_tps),
        );
        row(
            &mut o,
            "Measured median TTFT (ms):",
            num(self.ttft.median_ms),
        );
        row(&mut o, "Measured P99 TTFT (ms):", num(self.ttft.p99_ms));
        row(&mut o, "Measured P99 TPOT (ms):", num(self.tpot.p99_ms));
        row(&mut o, "Measured P99 E2EL (ms):", num(self.e2e.p99_ms));
        let verdict = match &self.overload {
            None => "keeps up".to_string(),
            Some(o) => format!("OVERLOADED: {}", o.describe()),
        };
        let _ = writeln!(o, "Load: {verdict}");
        o
    }
}

/// The window among a run's `windows` (one per stage) that counts `r`, if any.
pub fn window_of<'a>(
    windows: &'a [MeasuredWindow],
    r: &RequestRecord,
) -> Option<&'a MeasuredWindow> {
    windows.get(r.stage as usize).filter(|w| w.holds(r))
}

/// Every stage's window, from the run's request records (any order) and the time the run
/// ended.
pub fn measure<'a>(
    config: &MeasurementConfig,
    records: impl IntoIterator<Item = &'a RequestRecord>,
    stages: usize,
    end_time: f64,
) -> Vec<MeasuredWindow> {
    let mut by_stage: Vec<Vec<&RequestRecord>> = vec![Vec::new(); stages];
    for r in records {
        if let Some(s) = by_stage.get_mut(r.stage as usize) {
            s.push(r);
        }
    }
    by_stage
        .iter_mut()
        .enumerate()
        .map(|(i, rs)| {
            // By arrival; ids break ties so the order never depends on the input's.
            rs.sort_by(|a, b| a.created.total_cmp(&b.created).then(a.id.cmp(&b.id)));
            stage_window(config, i as u32, rs, end_time)
        })
        .collect()
}

/// How many of `n` arrivals (in order, `times`) a span leaves out, from the start
/// (`from_end` false) or the end.
fn left_out(span: Span, times: &[f64], from_end: bool) -> usize {
    let n = times.len();
    match span {
        Span::Fraction(f) => (n as f64 * f).floor() as usize,
        Span::Requests(k) => usize::try_from(k).unwrap_or(usize::MAX),
        Span::Seconds(_) if n == 0 => 0,
        Span::Seconds(s) => {
            if from_end {
                let last = times[n - 1];
                times.iter().rev().take_while(|&&t| t > last - s).count()
            } else {
                let first = times[0];
                times.iter().take_while(|&&t| t < first + s).count()
            }
        }
    }
}

fn stage_window(
    config: &MeasurementConfig,
    stage: u32,
    rs: &[&RequestRecord],
    end_time: f64,
) -> MeasuredWindow {
    let times: Vec<f64> = rs.iter().map(|r| r.created).collect();
    let n = rs.len();
    // At least one request is always measured.
    let warm = left_out(config.warmup, &times, false).min(n.saturating_sub(1));
    let cool = left_out(config.cooldown, &times, true).min(n.saturating_sub(1 + warm));
    let inside = &rs[warm..n - cool];
    let (start, end) = match (inside.first(), inside.last()) {
        (Some(a), Some(b)) => (a.created, b.created),
        _ => (f64::NAN, f64::NAN),
    };
    let midpoint = inside.get(inside.len() / 2).map_or(f64::NAN, |r| r.created);
    let done: Vec<&&RequestRecord> = inside.iter().filter(|r| r.is_completed()).collect();
    let lat = |f: fn(&RequestRecord) -> f64| {
        LatencySummary::from_seconds(done.iter().map(|r| f(r)).collect())
    };
    let duration = end - start;
    let per_s = |x: f64| {
        if duration > 0.0 {
            x / duration
        } else {
            f64::NAN
        }
    };
    // The window's arrivals complete about one latency later: count the stage's
    // completions over the window moved by the median latency.
    let mut e2e: Vec<f64> = done.iter().map(|r| r.e2e()).collect();
    e2e.sort_by(f64::total_cmp);
    let shift = if e2e.is_empty() {
        0.0
    } else {
        percentile_sorted(&e2e, 50.0)
    };
    let (lo, hi) = (start + shift, end + shift);
    let (mut served, mut finished, mut tokens) = (0u64, 0u64, 0u64);
    for r in rs {
        let t = r.completion;
        if t >= lo && t <= hi {
            finished += 1;
            if r.is_completed() {
                served += 1;
                tokens += u64::from(r.output_tokens);
            }
        }
    }
    let requests = inside.len() as u64;
    let offered_rps = if requests >= 2 {
        per_s((requests - 1) as f64)
    } else {
        f64::NAN
    };
    // A run cut off before the moved window's end (a time bound) is judged on the arrivals
    // whose completions it could have seen.
    let expected = if hi > end_time {
        inside
            .iter()
            .filter(|r| r.created + shift <= end_time)
            .count() as u64
    } else {
        requests
    };
    let overload = overload::detect(
        config,
        inside,
        expected,
        finished,
        offered_rps,
        per_s(finished as f64),
    );
    MeasuredWindow {
        stage,
        start,
        end,
        midpoint,
        warmup_requests: warm as u64,
        cooldown_requests: cool as u64,
        requests,
        completed: done.len() as u64,
        served,
        served_output_tokens: tokens,
        shortfall: if expected > 0 {
            expected.saturating_sub(finished) as f64 / expected as f64
        } else {
            0.0
        },
        offered_rps,
        achieved_rps: per_s(served as f64),
        output_tps: per_s(tokens as f64),
        ttft: lat(RequestRecord::ttft),
        tpot: lat(RequestRecord::tpot),
        e2e: lat(RequestRecord::e2e),
        overload,
    }
}

/// Several windows as one (a run's stages, pooled): rates over their summed spans.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pooled {
    /// Requests measured.
    pub requests: u64,
    /// Seconds measured (the windows' spans added up).
    pub seconds: f64,
    /// Arrivals per second, time-weighted over the stages.
    pub offered_rps: f64,
    /// Completions per second.
    pub achieved_rps: f64,
    /// Output tokens per second.
    pub output_tps: f64,
    /// Whether any window is overloaded.
    pub overloaded: bool,
}

impl Pooled {
    /// `windows` pooled.
    pub fn of(windows: &[MeasuredWindow]) -> Self {
        let mut seconds = 0.0;
        let (mut gaps, mut served, mut tokens, mut requests) = (0u64, 0u64, 0u64, 0u64);
        for w in windows.iter().filter(|w| w.duration() > 0.0) {
            seconds += w.duration();
            gaps += w.requests - 1;
            served += w.served;
            tokens += w.served_output_tokens;
        }
        for w in windows {
            requests += w.requests;
        }
        let per_s = |x: u64| {
            if seconds > 0.0 {
                x as f64 / seconds
            } else {
                f64::NAN
            }
        };
        Self {
            requests,
            seconds,
            offered_rps: per_s(gaps),
            achieved_rps: per_s(served),
            output_tps: per_s(tokens),
            overloaded: windows.iter().any(|w| w.overload.is_some()),
        }
    }
}
