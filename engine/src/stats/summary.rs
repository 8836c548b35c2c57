//! The per-stage results table, as `vllm bench serve` prints it, plus queueing, prefix-cache
//! hits by source and preemptions.

use super::itl::ItlHistogram;
use super::percentile::LatencySummary;
use super::record::{RequestRecord, MAX_TIERS};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// What a stage's loops accumulate while it runs (the rest comes from its request records).
///
/// The benchmark clock starts at the stage's first arrival, as `vllm bench serve`'s does
/// when it sends its first request: a stage that waits before its first request (a trace
/// slice starting late, a slow first gap) does not count the wait as serving time.
#[derive(Debug, Clone)]
pub struct StageStats {
    stage: u32,
    start: f64,
    first_arrival: Option<f64>,
    itl: ItlHistogram,
    /// The 1-second window `[first arrival + k, … + k + 1)` being counted: (k, tokens).
    window: (u64, u64),
    /// Most tokens in any earlier window.
    peak_window: u64,
}

impl StageStats {
    /// Statistics of stage `stage`, which started at `start` (simulated seconds).
    pub fn new(stage: u32, start: f64) -> Self {
        Self {
            stage,
            start,
            first_arrival: None,
            itl: ItlHistogram::new(),
            window: (0, 0),
            peak_window: 0,
        }
    }

    /// One of the stage's requests arrived at `t`.
    pub fn on_arrival(&mut self, t: f64) {
        self.first_arrival.get_or_insert(t);
    }

    /// When the benchmark clock started: the first arrival, or the stage start without one.
    pub fn origin(&self) -> f64 {
        self.first_arrival.unwrap_or(self.start)
    }

    /// `n` output tokens of this stage's requests were emitted at time `t` (in time order).
    pub fn on_tokens(&mut self, t: f64, n: u64) {
        let k = super::whole_seconds(t - self.origin());
        if k != self.window.0 {
            self.peak_window = self.peak_window.max(self.window.1);
            self.window = (k, 0);
        }
        self.window.1 += n;
    }

    /// `count` requests each had an inter-token gap of `gap` seconds.
    pub fn on_itl(&mut self, gap: f64, count: u64) {
        self.itl.add(gap, count);
    }

    /// The pooled inter-token gaps so far.
    pub fn itl(&self) -> &ItlHistogram {
        &self.itl
    }

    /// Merges the ITL histogram's buffered gaps, so reading it needs no copy, and frees
    /// its spare room (see [`ItlHistogram::flush_and_trim`]).
    pub(crate) fn flush_itl(&mut self) {
        self.itl.flush_and_trim();
    }

    /// Takes the ITL histogram out (the run's last read).
    pub(crate) fn take_itl(&mut self) -> ItlHistogram {
        std::mem::take(&mut self.itl)
    }

    /// The stage's table, given its end time, the number of offload tiers configured, and
    /// the records of every request it issued.
    pub fn summarize<'a>(
        &self,
        end: f64,
        num_tiers: usize,
        records: impl IntoIterator<Item = &'a RequestRecord, IntoIter: Clone>,
    ) -> StageSummary {
        // Walked several times rather than collected: collecting would hold two lists of
        // references, one per record, while the percentiles are sorted. The counts and sums
        // take one walk together, as each walk reads every record.
        let records = records.into_iter();
        let done = || records.clone().filter(|r| r.is_completed());
        let t = Tally::of(records.clone(), num_tiers);
        let (total, completed, failed) = (t.total, t.completed, t.failed);
        let duration = end - self.origin();
        let (input, output) = (t.input, t.output);
        let per_s = |x: f64| {
            if duration > 0.0 {
                x / duration
            } else {
                f64::NAN
            }
        };
        let lat =
            |f: fn(&RequestRecord) -> f64| LatencySummary::from_seconds(done().map(f).collect());
        StageSummary {
            stage: self.stage,
            successful_requests: completed,
            failed_requests: failed,
            failed_by_reason: t.failed_by_reason,
            unfinished_requests: total - completed - failed,
            duration_s: duration,
            total_input_tokens: input,
            total_generated_tokens: output,
            request_throughput: per_s(completed as f64),
            output_throughput: per_s(output as f64),
            total_token_throughput: per_s((input + output) as f64),
            peak_output_throughput: self.peak_window.max(self.window.1) as f64,
            peak_concurrent_requests: peak_concurrency(records.clone()),
            ttft: lat(RequestRecord::ttft),
            tpot: lat(RequestRecord::tpot),
            itl: self.itl.summary(),
            e2e: lat(RequestRecord::e2e),
            queueing: lat(RequestRecord::queueing),
            prefix_hit_rate: t.hit_rates,
            preemptions: t.preemptions,
            preempted_requests: t.preempted,
        }
    }
}

/// Most requests in the platform at once: each counts over [created, completion); a request
/// that never finished counts until the end. At equal times departures go first, so a
/// request leaving as another arrives is not counted twice.
fn peak_concurrency<'a>(records: impl Iterator<Item = &'a RequestRecord> + Clone) -> u64 {
    // Departures sorted as plain f64s (8 bytes per request, as much again while sorting);
    // arrivals are usually in id order already and only copied when they are not. Then both
    // are swept together, departures first at equal times.
    let mut departures: Vec<f64> = records
        .clone()
        .map(|r| r.completion)
        .filter(|t| !t.is_nan())
        .collect();
    super::radix::sort_total(&mut departures);
    let created = records.map(|r| r.created);
    if created.clone().is_sorted_by(|a, b| a.total_cmp(b).is_le()) {
        sweep(created, &departures)
    } else {
        let mut arrivals: Vec<f64> = created.collect();
        super::radix::sort_total(&mut arrivals);
        sweep(arrivals.into_iter(), &departures)
    }
}

/// Most in the platform at once, given ascending arrival and departure times.
fn sweep(arrivals: impl Iterator<Item = f64>, departures: &[f64]) -> u64 {
    let (mut now, mut peak, mut left) = (0i64, 0i64, departures.iter().peekable());
    for a in arrivals {
        while left.next_if(|d| d.total_cmp(&a).is_le()).is_some() {
            now -= 1;
        }
        now += 1;
        peak = peak.max(now);
    }
    peak as u64
}

/// A stage's counts and sums, from one walk over its records.
struct Tally {
    total: u64,
    completed: u64,
    failed: u64,
    failed_by_reason: BTreeMap<String, u64>,
    /// Prompt and output tokens of completed requests.
    input: u64,
    output: u64,
    hit_rates: PrefixHitRates,
    preemptions: u64,
    preempted: u64,
}

impl Tally {
    fn of<'a>(records: impl Iterator<Item = &'a RequestRecord>, num_tiers: usize) -> Self {
        let (mut total, mut completed, mut input, mut output) = (0, 0, 0, 0);
        let (mut preemptions, mut preempted) = (0, 0);
        let mut failed_by_reason = BTreeMap::new();
        // Prompt tokens of completed requests (a float sum, added in record order) and
        // by source: GPU cache, GPU re-hits, each tier, computed; and recomputed tokens.
        let mut prompt = 0.0;
        let (mut gpu_cache, mut gpu_rehit, mut computed, mut recomputed) = (0, 0, 0, 0);
        let mut tiers = [0u64; MAX_TIERS];
        for r in records {
            total += 1;
            preemptions += r.preemptions as u64;
            preempted += (r.preemptions > 0) as u64;
            if let Some(f) = r.failed {
                *failed_by_reason.entry(f.kind().to_string()).or_insert(0u64) += 1;
            }
            if !r.is_completed() {
                continue;
            }
            completed += 1;
            input += r.prompt_tokens as u64;
            output += r.output_tokens as u64;
            let s = &r.sources;
            prompt += s.prompt_total() as f64;
            gpu_cache += s.gpu_cache as u64;
            gpu_rehit += s.gpu_rehit as u64;
            let (tier, tokens) = s.tier_hit();
            tiers[tier] += tokens as u64;
            computed += s.computed as u64;
            recomputed += r.recomputed as u64;
        }
        let frac = |x: u64| {
            if prompt > 0.0 {
                x as f64 / prompt
            } else {
                f64::NAN
            }
        };
        Self {
            total,
            completed,
            failed: failed_by_reason.values().sum(),
            failed_by_reason,
            input,
            output,
            hit_rates: PrefixHitRates {
                gpu_cache: frac(gpu_cache),
                gpu_rehit: frac(gpu_rehit),
                tiers: tiers[..num_tiers.min(MAX_TIERS)]
                    .iter()
                    .map(|&t| frac(t))
                    .collect(),
                computed: frac(computed),
                recomputed_tokens: recomputed,
            },
            preemptions,
            preempted,
        }
    }
}

/// Share of completed requests' prompt tokens served by each source (sums to 1), in the
/// admission that ran to completion.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PrefixHitRates {
    /// GPU prefix cache: hits on blocks other requests computed.
    pub gpu_cache: f64,
    /// GPU blocks a preempted request computed itself and found again (not counted as hits).
    pub gpu_rehit: f64,
    /// Each offload tier, in the configured order.
    pub tiers: Vec<f64>,
    /// Computed (cache misses).
    pub computed: f64,
    /// Extra prefill tokens preemptions cost (see [`RequestRecord::recomputed`]).
    pub recomputed_tokens: u64,
}

/// One stage's results, as `vllm bench serve` reports them, plus what the simulator knows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StageSummary {
    /// Stage index.
    pub stage: u32,
    /// Requests completed.
    pub successful_requests: u64,
    /// Requests rejected.
    pub failed_requests: u64,
    /// Rejected requests by reason kind (e.g. `prompt_too_long`).
    pub failed_by_reason: BTreeMap<String, u64>,
    /// Issued but neither completed nor failed when the run ended (e.g. `simulation_time`).
    pub unfinished_requests: u64,
    /// First arrival to stage end, seconds (stage start to end if nothing arrived).
    pub duration_s: f64,
    /// Prompt tokens of completed requests.
    pub total_input_tokens: u64,
    /// Output tokens of completed requests.
    pub total_generated_tokens: u64,
    /// Completed requests / duration, req/s.
    pub request_throughput: f64,
    /// Generated tokens / duration, tok/s.
    pub output_throughput: f64,
    /// (Input + generated tokens) / duration, tok/s.
    pub total_token_throughput: f64,
    /// Most output tokens in one 1-second window `[first arrival + k, … + k + 1)`, tok/s.
    pub peak_output_throughput: f64,
    /// Most requests in the platform at once.
    pub peak_concurrent_requests: u64,
    /// Time to first token (first token − created).
    pub ttft: LatencySummary,
    /// Time per output token after the first ((E2E − TTFT) / (output − 1); ≥ 2 outputs).
    pub tpot: LatencySummary,
    /// Inter-token latency, pooled over every gap of every request.
    pub itl: LatencySummary,
    /// End-to-end latency (completion − created).
    pub e2e: LatencySummary,
    /// First scheduled − worker in.
    pub queueing: LatencySummary,
    /// Prompt tokens by KV source.
    pub prefix_hit_rate: PrefixHitRates,
    /// Preemptions, total.
    pub preemptions: u64,
    /// Requests preempted at least once.
    pub preempted_requests: u64,
}

const WIDTH: usize = 50;

/// A title centred in a 50-character rule, as Python's `"{s:{c}^{n}}"` (extra fill on the right).
pub(crate) fn header(out: &mut String, title: &str, fill: char) {
    let pad = WIDTH.saturating_sub(title.chars().count());
    let left = pad / 2;
    let f = |n: usize| fill.to_string().repeat(n);
    let _ = writeln!(out, "{}{}{}", f(left), title, f(pad - left));
}

pub(crate) fn row(out: &mut String, label: &str, value: impl std::fmt::Display) {
    let line = format!("{label:<40} {value:<10}");
    let _ = writeln!(out, "{}", line.trim_end());
}

pub(crate) fn num(x: f64) -> String {
    if x.is_nan() {
        "n/a".into()
    } else {
        format!("{x:.2}")
    }
}

impl StageSummary {
    /// The table as plain text, in `vllm bench serve`'s layout (labels padded to 40
    /// characters, values with 2 decimals, 50-character section rules).
    pub fn render_text(&self) -> String {
        let mut o = String::new();
        header(&mut o, " Serving Benchmark Result ", '=');
        row(&mut o, "Stage:", self.stage);
        row(&mut o, "Successful requests:", self.successful_requests);
        row(&mut o, "Failed requests:", self.failed_requests);
        for (reason, n) in &self.failed_by_reason {
            row(&mut o, &format!("  {reason}:"), n);
        }
        if self.unfinished_requests > 0 {
            row(&mut o, "Unfinished requests:", self.unfinished_requests);
        }
        row(&mut o, "Benchmark duration (s):", num(self.duration_s));
        row(&mut o, "Total input tokens:", self.total_input_tokens);
        row(
            &mut o,
            "Total generated tokens:",
            self.total_generated_tokens,
        );
        row(
            &mut o,
            "Request throughput (req/s):",
            num(self.request_throughput),
        );
        row(
            &mut o,
            "Output token throughput (tok/s):",
            num(self.output_throughput),
        );
        row(
            &mut o,
            "Peak output token throughput (tok/s):",
            num(self.peak_output_throughput),
        );
        row(
            &mut o,
            "Peak concurrent requests:",
            self.peak_concurrent_requests,
        );
        row(
            &mut o,
            "Total Token throughput (tok/s):",
            num(self.total_token_throughput),
        );
        for (title, name, s) in [
            ("Time to First Token", "TTFT", &self.ttft),
            (
                "Time per Output Token (excl. 1st token)",
                "TPOT",
                &self.tpot,
            ),
            ("Inter-token Latency", "ITL", &self.itl),
            ("End-to-end Latency", "E2EL", &self.e2e),
            ("Queueing Time", "Queueing", &self.queueing),
        ] {
            header(&mut o, title, '-');
            row(&mut o, &format!("Mean {name} (ms):"), num(s.mean_ms));
            row(&mut o, &format!("Median {name} (ms):"), num(s.median_ms));
            row(&mut o, &format!("P90 {name} (ms):"), num(s.p90_ms));
            row(&mut o, &format!("P99 {name} (ms):"), num(s.p99_ms));
        }
        header(&mut o, "Prefix Cache", '-');
        let pct = |x: f64| num(x * 100.0);
        row(
            &mut o,
            "GPU prefix cache hits (%):",
            pct(self.prefix_hit_rate.gpu_cache),
        );
        for (i, t) in self.prefix_hit_rate.tiers.iter().enumerate() {
            row(&mut o, &format!("Offload tier {i} hits (%):"), pct(*t));
        }
        if self.prefix_hit_rate.gpu_rehit > 0.0 {
            row(
                &mut o,
                "GPU re-hits after preemption (%):",
                pct(self.prefix_hit_rate.gpu_rehit),
            );
        }
        row(&mut o, "Computed (%):", pct(self.prefix_hit_rate.computed));
        if self.prefix_hit_rate.recomputed_tokens > 0 {
            row(
                &mut o,
                "Extra prefill from preemptions (tokens):",
                self.prefix_hit_rate.recomputed_tokens,
            );
        }
        row(&mut o, "Preemptions:", self.preemptions);
        row(&mut o, "Preempted requests:", self.preempted_requests);
        let _ = writeln!(o, "{}", "=".repeat(WIDTH));
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stay(created: f64, completion: f64) -> RequestRecord {
        let mut r = RequestRecord::new(0, 0, created, 10);
        r.completion = completion;
        r
    }

    #[test]
    fn peak_concurrency_in_any_arrival_order() {
        // [0, 4) [1, 2) [2, 3) [3, ∞): at most two at once — [1, 2) leaves as [2, 3)
        // arrives, and [2, 3) as [3, ∞) does.
        let rs = [
            stay(0.0, 4.0),
            stay(1.0, 2.0),
            stay(2.0, 3.0),
            stay(3.0, f64::NAN),
        ];
        assert_eq!(peak_concurrency(rs.iter()), 2);
        let shuffled = [&rs[2], &rs[0], &rs[3], &rs[1]];
        assert_eq!(peak_concurrency(shuffled.into_iter()), 2);
        // A fifth arriving at 3.5 meets [0, 4) and [3, ∞).
        let more = [&rs[3], &rs[1], &rs[0], &rs[2]];
        let fifth = stay(3.5, 5.0);
        assert_eq!(peak_concurrency(more.into_iter().chain([&fifth])), 3);
    }
}
