//! What the results view draws, derived once per finished run from the engine's results:
//! latency columns for CDFs and histograms, per-request phases for the timeline, series for
//! the line charts and the measurement windows they shade, the routing decision behind each
//! request, and which way is "better".
//!
//! Pure (no browser calls), tested natively.

use crate::charts::requests::NO_PARTNER;
use crate::charts::{Band, LineRun, RequestPhases, Series};
use opal::deployment::TransferRecord;
use opal::measure::MeasuredWindow;
use opal::router::{PolicyConfig, ScoreTerm};
use opal::simulation::{RoutingRecord, SimulationResults};
use opal::stats::{Chunked, RequestRecord};
use opal::timing::ErrorBand;
use std::rc::Rc;

/// Completed requests' latencies, ascending, in seconds (one value per request).
#[derive(Debug, Clone, PartialEq)]
pub struct Latencies {
    /// Time to first token.
    pub ttft: Rc<[f64]>,
    /// Time per output token after the first (requests with ≥ 2 output tokens).
    pub tpot: Rc<[f64]>,
    /// End-to-end latency.
    pub e2e: Rc<[f64]>,
    /// Waiting in the worker's queue (first scheduled − worker in).
    pub queueing: Rc<[f64]>,
    /// Inter-token gaps pooled over every request of every stage: (gap, how many).
    pub itl: Rc<[(f64, f64)]>,
    /// One request in this many is drawn (1: every one).
    pub stride: usize,
    /// Requests in the run.
    pub requests: usize,
}

/// Most requests the latency charts are drawn from: past this they take an even sample
/// (sorting every latency of a huge run holds the page's thread for seconds, see
/// docs/robustness.md, and a CDF drawn 480 pixels wide cannot show the difference).
pub const LATENCY_SAMPLE_MAX: usize = 1_000_000;

impl Latencies {
    /// The latency columns of a run's `records` (every one of them up to
    /// [`LATENCY_SAMPLE_MAX`], an even sample past it), with its pooled inter-token gaps
    /// `itl` (one list per stage, as the engine reports them; exact and small).
    pub fn of(records: &Chunked<RequestRecord>, itl: &[Vec<(f64, u64)>]) -> Self {
        let stride = records.len().div_ceil(LATENCY_SAMPLE_MAX).max(1);
        let mut columns: [Vec<f64>; 4] = Default::default();
        let fields: [fn(&RequestRecord) -> f64; 4] = [
            RequestRecord::ttft,
            RequestRecord::tpot,
            RequestRecord::e2e,
            RequestRecord::queueing,
        ];
        for r in records.iter().step_by(stride).filter(|r| r.is_completed()) {
            for (column, field) in columns.iter_mut().zip(fields) {
                let x = field(r);
                if x.is_finite() {
                    column.push(x);
                }
            }
        }
        let [ttft, tpot, e2e, queueing] = columns.map(|mut v| {
            opal::stats::sort_total(&mut v);
            Rc::from(v)
        });
        Self {
            ttft,
            tpot,
            e2e,
            queueing,
            itl: itl
                .iter()
                .flatten()
                .map(|&(gap, n)| (gap, n as f64))
                .collect(),
            stride,
            requests: records.len(),
        }
    }

    /// What the charts are drawn from when it is a sample, in a sentence.
    pub fn sample_note(&self) -> Option<String> {
        (self.stride > 1).then(|| {
            format!(
                "Drawn from 1 in {} requests ({} of {}); the summary table's percentiles count \
                 every request.",
                self.stride,
                opal::count(self.requests.div_ceil(self.stride) as f64),
                opal::count(self.requests as f64)
            )
        })
    }
}

/// Most requests the timeline draws.
pub const TIMELINE_MAX: usize = 1_000_000;

/// Which requests the timeline draws of a run with more than [`TIMELINE_MAX`]: every one of
/// the first and last `edge` (the run's start and end, where its warm-up and drain are),
/// and one in `stride` of those between. Its bars take ten numbers a request and a
/// frame's drawing passes over all of them; past a million a lane is denser than its
/// pixels anyway.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimelineSample {
    /// Requests drawn.
    pub shown: usize,
    /// Requests in the run.
    pub of: usize,
    /// Requests drawn at each end.
    pub edge: usize,
    /// One in this many drawn between.
    pub stride: usize,
}

impl TimelineSample {
    /// The sample of a run of `requests`; `None` when the timeline draws them all.
    pub fn of(requests: usize) -> Option<Self> {
        if requests <= TIMELINE_MAX {
            return None;
        }
        let edge = TIMELINE_MAX / 4;
        let between = requests - 2 * edge;
        let stride = between.div_ceil(TIMELINE_MAX - 2 * edge);
        Some(Self {
            shown: 2 * edge + between.div_ceil(stride),
            of: requests,
            edge,
            stride,
        })
    }

    /// Whether the request at `index` (in id order) is drawn.
    pub fn keeps(&self, index: usize) -> bool {
        index < self.edge || index >= self.of - self.edge || (index - self.edge) % self.stride == 0
    }

    /// What the timeline shows, in a sentence.
    pub fn caption(&self) -> String {
        format!(
            "Drawing {} of {} requests: every request of the first and last {}, and 1 in {} \
             of those between.",
            opal::count(self.shown as f64),
            opal::count(self.of as f64),
            opal::count(self.edge as f64),
            self.stride
        )
    }
}

/// Timeline bars of every request that reached a worker (of a [`TimelineSample`] of them
/// in a run of more than [`TIMELINE_MAX`]).
///
/// Queued from arrival, a KV fetch (`kv_lookup_start → ready`) where there was one, queued
/// again until first scheduled, then prefill and decode: each at its true time. A request
/// with a KV transfer (`transfers`, disaggregated runs) ends its first bar at hand-off on its
/// prefill worker; a second bar on its decode worker, listed after every first bar, shows the
/// wait for room (hand-off → start), the transfer (start → end) and decode.
pub fn request_phases(
    records: &Chunked<RequestRecord>,
    transfers: &[TransferRecord],
) -> RequestPhases {
    let by_request = crate::deployment_view::transfer_index(transfers, records.len());
    let moved = |r: &RequestRecord| {
        by_request
            .get(r.id as usize)
            .copied()
            .flatten()
            .map(|t| &transfers[t as usize])
            .filter(|t| t.decode_worker.is_some())
    };
    let sample = TimelineSample::of(records.len());
    let drawn = |i: usize| !matches!(sample, Some(s) if !s.keeps(i));
    let on_worker: Vec<&RequestRecord> = (records.iter().enumerate())
        .filter(|&(i, r)| r.worker.is_some() && drawn(i))
        .map(|(_, r)| r)
        .collect();
    let firsts = on_worker.len();
    let seconds: Vec<(usize, &TransferRecord)> = on_worker
        .iter()
        .enumerate()
        .filter_map(|(i, r)| moved(r).map(|t| (i, t)))
        .collect();
    let n = firsts + seconds.len();
    let mut p = Phases::with_capacity(n);
    let mut partner = vec![NO_PARTNER; n];
    for (k, &(i, _)) in seconds.iter().enumerate() {
        partner[i] = (firsts + k) as u32;
        partner[firsts + k] = i as u32;
    }
    for r in &on_worker {
        let fetch = kv_fetch(r) > 0.0;
        let finish = if r.is_completed() {
            r.completion
        } else {
            f64::NAN
        };
        let handed = moved(r).is_some();
        let end = |t: f64| if handed { r.first_token } else { t };
        p.push(
            r.id,
            r.worker.unwrap_or(0),
            [
                r.created,
                if fetch {
                    r.kv_lookup_start
                } else {
                    r.first_scheduled
                },
                if fetch { r.ready } else { r.first_scheduled },
                r.first_scheduled,
                r.first_token,
                r.first_token,
                r.first_token,
                end(finish),
            ],
        );
    }
    for &(i, t) in &seconds {
        let r = on_worker[i];
        let finish = if r.is_completed() {
            r.completion
        } else {
            f64::NAN
        };
        let h = t.handoff;
        p.push(
            r.id,
            t.decode_worker.unwrap_or(0),
            [h, h, h, h, h, t.start, t.end, finish],
        );
    }
    // No partner column when nothing was handed off: the timeline then shows no transfers.
    p.finish(if seconds.is_empty() {
        Vec::new()
    } else {
        partner
    })
}

/// Column builders for [`request_phases`].
struct Phases {
    id: Vec<u64>,
    worker: Vec<u32>,
    bounds: [Vec<f64>; 8],
}

impl Phases {
    fn with_capacity(n: usize) -> Self {
        Self {
            id: Vec::with_capacity(n),
            worker: Vec::with_capacity(n),
            bounds: std::array::from_fn(|_| Vec::with_capacity(n)),
        }
    }

    fn push(&mut self, id: u64, worker: u32, b: [f64; 8]) {
        self.id.push(id);
        self.worker.push(worker);
        for (col, v) in self.bounds.iter_mut().zip(b) {
            col.push(v);
        }
    }

    fn finish(self, partner: Vec<u32>) -> RequestPhases {
        let [arrival, kv_fetch_start, kv_fetch_end, prefill_start, handoff, transfer_start, decode_start, finish] =
            self.bounds.map(Rc::from);
        RequestPhases {
            request_id: Rc::from(self.id),
            worker: Rc::from(self.worker),
            partner: Rc::from(partner),
            arrival,
            kv_fetch_start,
            kv_fetch_end,
            prefill_start,
            handoff,
            transfer_start,
            decode_start,
            finish,
        }
    }
}

/// Seconds spent fetching KV from an offload tier (0 when there was no fetch).
pub fn kv_fetch(r: &RequestRecord) -> f64 {
    let d = r.ready - r.kv_lookup_start;
    if d.is_finite() && d > 0.0 {
        d
    } else {
        0.0
    }
}

/// For each request id, the index of its routing decision in `decisions`.
pub fn decision_index(decisions: &Chunked<RoutingRecord>, requests: usize) -> Rc<[Option<u32>]> {
    let mut index = vec![None; requests];
    for (i, d) in decisions.iter().enumerate() {
        if let Some(slot) = index.get_mut(d.request as usize) {
            *slot = Some(i as u32);
        }
    }
    Rc::from(index)
}

/// What splitting a run's routing scores into their terms needs from its scenario: the
/// routing policy and the KV block size (see `PolicyConfig::score_terms`).
#[derive(Debug, Clone, PartialEq)]
pub struct ScoreSplit {
    policy: PolicyConfig,
    block_size: u32,
}

/// What a finished run's views read from the scenario it ran, read once per run: how its
/// routing scores split into terms, and where a real vLLM's latencies would likely fall
/// (the GPU calibration's error band, and the GPU's name).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunFacts {
    /// The split of its routing scores.
    pub split: Option<ScoreSplit>,
    /// Its error band and GPU.
    pub band: Option<(ErrorBand, Rc<str>)>,
}

impl RunFacts {
    /// The facts of a run of the scenario document `scenario` (none when it does not read).
    pub fn of(scenario: &str) -> Self {
        let Ok(s) = opal::parse_scenario(scenario) else {
            return Self::default();
        };
        Self {
            band: s
                .error_band()
                .map(|b| (b, Rc::from(s.hardware.gpu.as_str()))),
            split: Some(ScoreSplit {
                policy: s.router.policy,
                block_size: s.worker.block_size,
            }),
        }
    }
}

impl ScoreSplit {
    /// Each candidate's terms in decision `d` (made for one of `requests`); `None` when its
    /// policy's score is one figure or the decision kept no candidates.
    pub fn terms(
        &self,
        d: &RoutingRecord,
        requests: &Chunked<RequestRecord>,
    ) -> Option<Vec<Vec<ScoreTerm>>> {
        let request = requests
            .get(d.request as usize)
            .filter(|q| q.id == d.request)?;
        (self.policy).score_terms(&d.decision, request.prompt_tokens, self.block_size)
    }
}

/// A score's terms as its router adds them: `3 × queue-scorer 0.5 + …`, or without the
/// names (`3×0.5 + …`) where a header names them.
pub fn describe_terms(terms: &[ScoreTerm], named: bool) -> String {
    let parts: Vec<String> = terms
        .iter()
        .map(|t| match named {
            true => format!("{} × {} {}", short(t.weight), t.name, short(t.value)),
            false => format!("{}×{}", short(t.weight), short(t.value)),
        })
        .collect();
    parts.join(" + ")
}

/// A routing decision in words, for the timeline tooltip and the routing table:
/// `routed to worker 1 by outstanding requests (lowest wins)` and one line per candidate,
/// with its score's terms under it when the policy adds several (`terms`, per candidate).
pub fn describe_decision(d: &RoutingRecord, terms: Option<&[Vec<ScoreTerm>]>) -> String {
    let mut out = format!(
        "routed to worker {} at {:.3} s by {}",
        d.decision.worker, d.time, d.decision.basis
    );
    for (k, c) in d.decision.candidates.iter().enumerate() {
        let chosen = if c.worker == d.decision.worker {
            " ←"
        } else {
            ""
        };
        let prefix = c
            .prefix
            .map(|p| format!(", prefix {} tok", p.tokens()))
            .unwrap_or_default();
        out.push_str(&format!(
            "\n  worker {}: score {}, {} outstanding{prefix}{chosen}",
            c.worker,
            short(c.score),
            c.outstanding
        ));
        if let Some(mine) = terms.and_then(|t| t.get(k)) {
            out.push_str(&format!("\n    = {}", describe_terms(mine, true)));
        }
    }
    out
}

/// A score as people read it: integers plainly, others to 3 significant decimals.
pub fn short(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x:.3}")
    }
}

/// The x column of the series: the start of each point's bucket, in seconds.
fn seconds(points: usize, bucket_seconds: u64) -> Rc<[f64]> {
    (0..points)
        .map(|k| (k as u64 * bucket_seconds) as f64)
        .collect()
}

fn series(name: impl Into<String>, values: impl Iterator<Item = f64>) -> Series {
    Series {
        name: name.into().into(),
        values: values.collect(),
    }
}

/// The line charts of one run, each a [`LineRun`] over simulated seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSeries {
    /// Output tokens per second.
    pub output_throughput: LineRun,
    /// Arrivals and completions per second.
    pub requests: LineRun,
    /// Per worker: share of each second the GPU was running a step.
    pub busy: LineRun,
    /// Per worker: achieved FLOP/s as a share of peak.
    pub compute: LineRun,
    /// Per worker: achieved HBM bandwidth as a share of peak.
    pub memory: LineRun,
    /// Per worker: waiting requests.
    pub waiting: LineRun,
    /// Per worker: running requests.
    pub running: LineRun,
    /// Per worker: KV blocks in use.
    pub kv_blocks: LineRun,
    /// Workers active.
    pub active_workers: LineRun,
}

impl RunSeries {
    /// The series of `results`, labelled `label` in legends.
    pub fn of(results: &SimulationResults, label: &str) -> Self {
        let s = &results.series;
        let x = seconds(s.points, s.bucket_seconds);
        // Counts are per bucket; the charts show them per second.
        let per_second = |v: f64| v / s.bucket_seconds as f64;
        let run = |series: Vec<Series>| LineRun {
            label: label.to_string().into(),
            x: x.clone(),
            series: Rc::from(series),
        };
        // Legends fit one line, even with a pinned run's entries: "worker 1" for one or two
        // workers, "w3" for more.
        let name = |w: usize| {
            if s.workers.len() > 2 {
                format!("w{w}")
            } else {
                format!("worker {w}")
            }
        };
        let per_worker = |f: &dyn Fn(&opal::stats::WorkerColumns) -> Vec<f64>| {
            run(s
                .workers
                .iter()
                .enumerate()
                .map(|(w, c)| series(name(w), f(c).into_iter()))
                .collect())
        };
        Self {
            output_throughput: run(vec![series(
                "output tok/s",
                s.output_tokens.iter().map(|&v| per_second(v as f64)),
            )]),
            requests: run(vec![
                series(
                    "arrivals/s",
                    s.arrivals.iter().map(|&v| per_second(f64::from(v))),
                ),
                series(
                    "completions/s",
                    s.completions.iter().map(|&v| per_second(f64::from(v))),
                ),
            ]),
            busy: per_worker(&|c| c.busy_fraction.clone()),
            compute: per_worker(&|c| c.compute_utilization.clone()),
            memory: per_worker(&|c| c.memory_utilization.clone()),
            waiting: per_worker(&|c| c.waiting.iter().map(|&v| f64::from(v)).collect()),
            running: per_worker(&|c| c.running.iter().map(|&v| f64::from(v)).collect()),
            kv_blocks: per_worker(&|c| c.kv_blocks.iter().map(|&v| f64::from(v)).collect()),
            active_workers: run(vec![series(
                "active workers",
                s.active_workers.iter().map(|&v| f64::from(v)),
            )]),
        }
    }
}

/// Most measurement windows the charts shade: a run of thousands of stages would draw
/// thousands of bands on every chart (seconds of the page's thread), none readable.
pub const MAX_BANDS: usize = 50;

/// The span each stage's measurement window covers, for the series charts to shade: labelled
/// "measured" (with the stage's number when there are several). Windows that span nothing (a
/// stage of one request, or none) are left out.
pub fn window_bands(windows: &[MeasuredWindow]) -> Rc<[Band]> {
    if windows.len() > MAX_BANDS {
        return Rc::from(Vec::new());
    }
    windows
        .iter()
        .filter(|w| w.duration() > 0.0)
        .map(|w| Band {
            from: w.start,
            to: w.end,
            label: if windows.len() > 1 {
                format!("stage {} measured", w.stage).into()
            } else {
                "measured".into()
            },
        })
        .collect()
}

/// Which way a figure improves, for colouring a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// Latencies, failures, preemptions.
    Lower,
    /// Throughputs, successes, cache hits.
    Higher,
    /// Neither is obviously better (token totals, duration, concurrency).
    Neither,
}

/// How `now` compares with `pinned`: `Some(true)` better, `Some(false)` worse, `None` equal,
/// not comparable, or no direction.
pub fn verdict(better: Better, now: f64, pinned: f64) -> Option<bool> {
    if !now.is_finite() || !pinned.is_finite() || now == pinned {
        return None;
    }
    match better {
        Better::Lower => Some(now < pinned),
        Better::Higher => Some(now > pinned),
        Better::Neither => None,
    }
}

/// The relative change from `pinned` to `now`, as "+12.5%" (or "±0", or "" when undefined).
pub fn relative_change(now: f64, pinned: f64) -> String {
    if !now.is_finite() || !pinned.is_finite() {
        return String::new();
    }
    if now == pinned {
        return "±0".into();
    }
    if pinned == 0.0 {
        return if now > 0.0 { "+∞" } else { "−∞" }.into();
    }
    let pct = (now - pinned) / pinned.abs() * 100.0;
    if pct >= 0.0 {
        format!("+{pct:.1}%")
    } else {
        format!("−{:.1}%", -pct)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeline_past_a_million_requests_draws_both_ends_whole_and_a_sample_between() {
        assert_eq!(TimelineSample::of(TIMELINE_MAX), None);
        // 10,000,000: 250,000 at each end, and of the 9,500,000 between one in
        // ceil(9,500,000 / 500,000) = 19, which is 500,000.
        let s = TimelineSample::of(10_000_000).unwrap();
        assert_eq!((s.edge, s.stride, s.shown), (250_000, 19, 1_000_000));
        assert_eq!((0..s.of).filter(|&i| s.keeps(i)).count(), s.shown);
        assert!(s.keeps(0) && s.keeps(249_999) && s.keeps(250_000) && !s.keeps(250_001));
        assert!(s.keeps(250_019) && s.keeps(9_750_000) && s.keeps(9_999_999));
        assert_eq!(
            s.caption(),
            "Drawing 1,000,000 of 10,000,000 requests: every request of the first and last \
             250,000, and 1 in 19 of those between."
        );
        // Just past the limit: one in two between.
        let s = TimelineSample::of(TIMELINE_MAX + 1).unwrap();
        assert_eq!((s.stride, s.shown), (2, 750_001));
        assert_eq!((0..s.of).filter(|&i| s.keeps(i)).count(), s.shown);
    }

    use opal::simulation::Simulation;

    fn record(id: u64) -> RequestRecord {
        let mut r = RequestRecord::new(id, 0, 1.0, 100);
        r.worker = Some(2);
        r.worker_in = 1.0;
        r.kv_lookup_start = 1.1;
        r.ready = 1.3;
        r.first_scheduled = 1.5;
        r.first_token = 1.6;
        r.completion = 2.6;
        r.output_tokens = 11;
        r
    }

    #[test]
    fn a_disaggregated_request_is_two_bars_one_per_worker() {
        // Request 0 prefilled on worker 2 (first token 1.6), handed off at 1.6, its blocks
        // placed on worker 5 at 1.65, the last byte landed at 1.7, done at 2.6.
        let mut t = TransferRecord::new(0, 2, 1.6);
        (t.decode_worker, t.start, t.end) = (Some(5), 1.65, 1.7);
        let p = request_phases(&vec![record(0), record(1)].into(), &[t]);
        assert_eq!(p.len(), 3);
        assert_eq!(&*p.worker, &[2, 2, 5]);
        assert_eq!(&*p.partner, &[2, NO_PARTNER, 0]);
        // The prefill side ends at hand-off; the colocated request 1 decodes in place.
        assert_eq!(p.span(0), (1.0, 1.6));
        assert_eq!(p.span(1), (1.0, 2.6));
        let b = p.boundaries();
        let decode_side: Vec<f64> = b.iter().map(|c| c[2]).collect();
        assert_eq!(decode_side, [1.6, 1.6, 1.6, 1.6, 1.6, 1.65, 1.7, 2.6]);
    }

    #[test]
    fn kv_fetch_is_drawn_where_it_happened_between_two_waits() {
        let mut unrouted = RequestRecord::new(1, 0, 0.5, 10);
        unrouted.failed = Some(opal::stats::FailReason::NoWorker);
        let p = request_phases(&vec![record(0), unrouted].into(), &[]);
        assert_eq!(
            p.len(),
            1,
            "a request that never reached a worker has no lane"
        );
        assert_eq!(&*p.worker, &[2]);
        // Queued 1.0 → 1.1, fetch 1.1 → 1.3, queued again 1.3 → 1.5, then prefill.
        assert_eq!((p.kv_fetch_start[0], p.kv_fetch_end[0]), (1.1, 1.3));
        assert_eq!(p.prefill_start[0], 1.5);
        assert_eq!(p.decode_start[0], 1.6);
        assert_eq!(p.finish[0], 2.6);
        // Without a fetch the KV segment is empty and queueing runs up to prefill.
        let mut plain = record(3);
        plain.ready = plain.kv_lookup_start;
        let q = request_phases(&vec![plain].into(), &[]);
        assert_eq!((q.kv_fetch_start[0], q.kv_fetch_end[0]), (1.5, 1.5));
    }

    #[test]
    fn latency_columns_hold_completed_requests_sorted() {
        let mut slow = record(1);
        slow.created = 0.5; // TTFT 1.6 − 0.5 = 1.1 s
        let mut failed = record(2);
        failed.failed = Some(opal::stats::FailReason::NoWorker);
        let l = Latencies::of(&vec![record(0), slow, failed].into(), &[vec![(0.1, 9)]]);
        assert_eq!(&*l.itl, &[(0.1, 9.0)]);
        // TTFT 1.6 − 1.0 = 0.6 s and 1.1 s; TPOT (2.1 − 1.1)/10 = 0.1 s... both 0.1 s.
        assert_eq!(l.ttft.len(), 2);
        assert!((l.ttft[0] - 0.6).abs() < 1e-12 && (l.ttft[1] - 1.1).abs() < 1e-12);
        assert!((l.tpot[0] - 0.1).abs() < 1e-12);
        // Queueing: first scheduled 1.5 − worker in 1.0 = 0.5 s.
        assert!((l.queueing[1] - 0.5).abs() < 1e-12);
        assert_eq!(l.sample_note(), None);
    }

    #[test]
    fn latency_charts_past_a_million_requests_are_drawn_from_an_even_sample() {
        // 1,000,001 requests: every second one, 500,001 of them; request i has TTFT i µs.
        let records: Chunked<RequestRecord> = (0..=LATENCY_SAMPLE_MAX as u64)
            .map(|i| {
                let mut r = record(i);
                r.first_token = r.created + i as f64 * 1e-6;
                r
            })
            .collect();
        let l = Latencies::of(&records, &[]);
        assert_eq!((l.stride, l.ttft.len()), (2, 500_001));
        assert!((l.ttft[1] - 2e-6).abs() < 1e-9 && (l.ttft[500_000] - 1.0).abs() < 1e-9);
        assert_eq!(
            l.sample_note().as_deref(),
            Some(
                "Drawn from 1 in 2 requests (500,001 of 1,000,001); the summary table's \
                 percentiles count every request."
            )
        );
    }

    #[test]
    fn comparisons_colour_only_where_the_direction_is_obvious() {
        assert_eq!(verdict(Better::Lower, 20.0, 25.0), Some(true));
        assert_eq!(verdict(Better::Higher, 20.0, 25.0), Some(false));
        assert_eq!(verdict(Better::Neither, 20.0, 25.0), None);
        assert_eq!(verdict(Better::Lower, f64::NAN, 25.0), None);
        // (20 − 25) / 25 = −20%; (30 − 25) / 25 = +20%.
        assert_eq!(relative_change(20.0, 25.0), "−20.0%");
        assert_eq!(relative_change(30.0, 25.0), "+20.0%");
        assert_eq!(relative_change(3.0, 3.0), "±0");
        assert_eq!(relative_change(3.0, 0.0), "+∞");
    }

    #[test]
    fn series_and_decisions_follow_the_run() {
        // 4 requests at 2/s on 2 round-robin workers: the first gap is 1/2 s too, so arrivals
        // at 0.5, 1.0, 1.5, 2.0 s: 1 in second 0, 2 in second 1, 1 in second 2.
        let scenario = opal::parse_scenario(
            r#"{"simulation": {"num_workers": 2},
                "router": {"policy": {"policy": "round_robin"}},
                "workload": {"stages": [{"type": "UniformReqRate", "request_rate": 2, "total_requests": 4}]}}"#,
        )
        .unwrap();
        let mut sim = Simulation::new(&scenario, &Default::default()).unwrap();
        sim.run();
        let r = sim.results();
        let s = RunSeries::of(&r, "run 1");
        // The warm-up leaves out 10 % of 4 arrivals, rounded down: none. The window is
        // every arrival, 0.5 s to 2.0 s.
        let bands = window_bands(&r.windows);
        assert_eq!(bands.len(), 1);
        assert_eq!((bands[0].from, bands[0].to), (0.5, 2.0));
        assert_eq!(bands[0].label.as_str(), "measured");
        assert_eq!(s.busy.series.len(), 2, "one busy line per worker");
        assert_eq!(s.compute.series.len(), 2);
        // A step's achieved FLOP/s and bandwidth never exceed what its busy time allows.
        for (b, (c, m)) in s.busy.series[0].values.iter().zip(
            s.compute.series[0]
                .values
                .iter()
                .zip(s.memory.series[0].values.iter()),
        ) {
            assert!(*c <= *b + 1e-12 && *m <= *b + 1e-12, "{b} {c} {m}");
        }
        assert!(s.memory.series[0].values.iter().any(|&m| m > 0.0));
        assert_eq!(&s.requests.series[0].values[..3], &[1.0, 2.0, 1.0]);
        let index = decision_index(&r.decisions, r.requests.len());
        let workers: Vec<u32> = (0..4)
            .map(|i| r.decisions[index[i].unwrap() as usize].decision.worker)
            .collect();
        assert_eq!(workers, [0, 1, 0, 1], "round robin alternates");
        let text = describe_decision(&r.decisions[index[1].unwrap() as usize], None);
        assert!(
            text.starts_with("routed to worker 1 at 1.000 s by "),
            "{text}"
        );
        assert_eq!(text.lines().count(), 3, "one line per candidate: {text}");
    }

    #[test]
    fn an_llm_d_decision_is_explained_scorer_by_scorer() {
        // Two llm-d pods; the second request sees the first still on its pod: that pod's
        // queue scorer is 0 and the other's 1 (queues 1 and 0), and each score is the sum
        // of its three weighted scorers.
        let text = r#"{"simulation": {"num_workers": 2},
            "router": {"policy": {"policy": "llm_d"}},
            "workload": {"stages": [{"type": "UniformReqRate", "request_rate": 100, "total_requests": 2}]}}"#;
        let mut sim =
            Simulation::new(&opal::parse_scenario(text).unwrap(), &Default::default()).unwrap();
        sim.run();
        let r = sim.results();
        let facts = RunFacts::of(text);
        assert!(facts.band.is_some(), "the default H100 has an error band");
        let split = facts.split.expect("the scenario reads");
        let d = &r.decisions[1];
        let terms = split
            .terms(d, &r.requests)
            .expect("llm_d adds three scorers");
        for (c, t) in d.decision.candidates.iter().zip(&terms) {
            let sum: f64 = t.iter().map(|t| t.weight * t.value).sum();
            assert!((sum - c.score).abs() < 1e-9, "{sum} vs {}", c.score);
        }
        let queues: Vec<f64> = terms.iter().map(|t| t[1].value).collect();
        let first = r.decisions[0].decision.worker as usize;
        assert_eq!(queues[first], 0.0);
        assert_eq!(queues[1 - first], 1.0);
        let described = describe_decision(d, Some(&terms));
        assert!(
            described.contains("\n    = 3 × precise-prefix-cache-scorer "),
            "{described}"
        );
        assert!(
            described.contains(" + 2 × queue-scorer 1 + "),
            "{described}"
        );
    }
}
