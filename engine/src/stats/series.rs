//! Per-second time series for charts: arrivals, completions, tokens, workers.
//!
//! Second k covers simulated time [k, k + 1) (aligned to time 0, not to a stage start, so
//! series of different stages line up on one chart).
//!
//! The accumulators are sparse, so a run's cost follows its events, not its simulated
//! seconds: counts are kept only for seconds in which something happened, busy time (and
//! the utilisation it achieved) per second a step touched, a long step's whole seconds as
//! one span, and sampled values (queue depths, KV blocks, active workers) only where they
//! change, each holding until the next change. A run of two requests a billion
//! seconds apart keeps a handful of entries. [`SecondSeries::finish`] turns them into
//! columns of at most [`MAX_POINTS`] points: one per second, or per `bucket_seconds`
//! (a 1-2-5 step) for runs longer than that.

use serde::Serialize;

/// Most points a column has; longer runs are shown in coarser buckets.
pub const MAX_POINTS: u64 = 10_000;

/// What happened within one second.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Counts {
    arrivals: u32,
    completions: u32,
    output_tokens: u64,
}

/// Waiting, running and KV blocks in use, as sampled.
type Load = [u32; 3];

/// Seconds `[from, to)` each of which holds `per_second` busy time and utilisation.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Span {
    from: u64,
    to: u64,
    per_second: Busy,
}

/// Busy seconds, and the same weighted by the share of peak FLOP/s (compute) and of peak
/// bandwidth (memory) the steps achieved.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Busy {
    busy: f64,
    compute: f64,
    memory: f64,
}

impl Busy {
    fn scaled(self, by: f64) -> Self {
        Self {
            busy: self.busy * by,
            compute: self.compute * by,
            memory: self.memory * by,
        }
    }

    fn add(&mut self, other: Busy) {
        self.busy += other.busy;
        self.compute += other.compute;
        self.memory += other.memory;
    }
}

impl Span {
    /// No span (a real one ends after it starts).
    const NONE: Span = Span {
        from: 0,
        to: 0,
        per_second: Busy {
            busy: 0.0,
            compute: 0.0,
            memory: 0.0,
        },
    };

    fn is_some(&self) -> bool {
        self.to > self.from
    }
}

/// Per-worker accumulators.
#[derive(Debug, Clone, Default, PartialEq)]
struct WorkerAcc {
    /// Closed spans in time order (the open one is in [`SecondSeries::open`]).
    busy: Vec<Span>,
    /// (second, load) where the sampled load changed; it holds until the next entry.
    load: Vec<(u64, Load)>,
}

/// Adds `per_second` to each second of `[from, to)`: to the open span when it covers the
/// same seconds (steps within one second add up in one span), else closing it.
fn add_busy(open: &mut Span, closed: &mut Vec<Span>, from: u64, to: u64, per_second: Busy) {
    if open.from == from && open.to == to {
        open.per_second.add(per_second);
        return;
    }
    let done = std::mem::replace(
        open,
        Span {
            from,
            to,
            per_second,
        },
    );
    if done.is_some() {
        closed.push(done);
    }
}

/// Accumulates per-second figures as the simulation runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SecondSeries {
    /// (second, counts) for seconds with any arrival, completion or token, ascending.
    counts: Vec<(u64, Counts)>,
    /// (second, workers) where the number of active workers changed.
    active_workers: Vec<(u64, u32)>,
    workers: Vec<WorkerAcc>,
    /// Each worker's open busy span, by worker index: side by side, so a step's update
    /// stays in cache (at the end of each worker's list it missed once per step).
    open: Vec<Span>,
}

/// The second holding time `t` (negative and NaN times count in second 0).
fn second(t: f64) -> u64 {
    super::whole_seconds(t)
}

/// Records `value` at `second` in a change list, unless it is what already holds there.
fn change<T: PartialEq + Copy>(list: &mut Vec<(u64, T)>, second: u64, value: T, zero: T) {
    match list.last_mut() {
        Some((s, v)) if *s == second => *v = value,
        Some((_, v)) if *v == value => {}
        None if value == zero => {}
        _ => list.push((second, value)),
    }
}

impl SecondSeries {
    /// An empty series.
    pub fn new() -> Self {
        Self::default()
    }

    fn worker(&mut self, w: usize) -> &mut WorkerAcc {
        if self.workers.len() <= w {
            self.workers.resize(w + 1, WorkerAcc::default());
        }
        &mut self.workers[w]
    }

    /// The counts of the second holding `t`; events arrive in time order, so this is
    /// almost always the last entry.
    fn counts(&mut self, t: f64) -> &mut Counts {
        let k = second(t);
        let i = match self.counts.last() {
            Some(&(last, _)) if last == k => self.counts.len() - 1,
            Some(&(last, _)) if last > k => match self.counts.binary_search_by_key(&k, |e| e.0) {
                Ok(i) => i,
                Err(i) => {
                    self.counts.insert(i, (k, Counts::default()));
                    i
                }
            },
            _ => {
                self.counts.push((k, Counts::default()));
                self.counts.len() - 1
            }
        };
        &mut self.counts[i].1
    }

    /// A request arrived at `t`.
    pub fn on_arrival(&mut self, t: f64) {
        self.counts(t).arrivals += 1;
    }

    /// A request completed at `t`.
    pub fn on_completion(&mut self, t: f64) {
        self.counts(t).completions += 1;
    }

    /// `n` output tokens were emitted at `t`.
    pub fn on_tokens(&mut self, t: f64, n: u64) {
        self.counts(t).output_tokens += n;
    }

    /// Worker `worker` computed from `start` to `end` (its steps come in time order),
    /// achieving `compute` of its peak FLOP/s and `memory` of its peak HBM bandwidth on
    /// average over the step. A step adds to each second only the part that falls in it;
    /// the whole seconds of a long step are one entry, however many there are.
    pub fn on_busy(&mut self, worker: usize, start: f64, end: f64, compute: f64, memory: f64) {
        if end.is_nan() || end <= start {
            return;
        }
        let start = start.max(0.0);
        let rate = Busy {
            busy: 1.0,
            compute,
            memory,
        };
        if self.open.len() <= worker {
            self.worker(worker);
            self.open.resize(worker + 1, Span::NONE);
        }
        let (open, closed) = (&mut self.open[worker], &mut self.workers[worker].busy);
        let mut add = |from, to, per_second| add_busy(open, closed, from, to, per_second);
        let (first, last) = (second(start), second(end));
        if first == last {
            add(first, first + 1, rate.scaled(end - start));
            return;
        }
        add(first, first + 1, rate.scaled((first + 1) as f64 - start));
        if last > first + 1 {
            add(first + 1, last, rate);
        }
        let tail = end - last as f64;
        if tail > 0.0 {
            add(last, last + 1, rate.scaled(tail));
        }
    }

    /// The workers' queue depths and KV usage sampled at second `second`, as
    /// `(worker, waiting, running, kv_blocks)`; a worker sampled before but missing now has
    /// left the cluster and counts as empty from here on.
    pub fn sample_workers(
        &mut self,
        second: usize,
        loads: impl IntoIterator<Item = (usize, u32, u32, u32)>,
    ) {
        let k = second as u64;
        let mut seen = vec![false; self.workers.len()];
        for (w, waiting, running, kv_blocks) in loads {
            change(
                &mut self.worker(w).load,
                k,
                [waiting, running, kv_blocks],
                [0; 3],
            );
            if w >= seen.len() {
                seen.resize(w + 1, false);
            }
            seen[w] = true;
        }
        for (w, acc) in self.workers.iter_mut().enumerate() {
            if !seen.get(w).copied().unwrap_or(false) {
                change(&mut acc.load, k, [0; 3], [0; 3]);
            }
        }
    }

    /// Workers active at second `second`.
    pub fn sample_active_workers(&mut self, second: usize, n: u32) {
        change(&mut self.active_workers, second as u64, n, 0);
    }

    /// Columns of equal length covering [0, end) (and any later second with counts), one
    /// point per `bucket_seconds`: counts are summed over a bucket, busy time becomes a
    /// fraction of the bucket (of its covered part, for a last partial bucket), and a
    /// sampled value is the one holding at the bucket's first second (0 before any sample).
    pub fn finish(&self, end: f64) -> SeriesColumns {
        let end = end.max(0.0);
        let last_count = self.counts.last().map_or(0, |&(k, _)| k + 1);
        let seconds = (end.ceil() as u64).max(last_count);
        let width = bucket_width(seconds);
        let points = seconds.div_ceil(width) as usize;
        let bucket = |k: u64| (k / width) as usize;

        let mut arrivals = vec![0u32; points];
        let mut completions = vec![0u32; points];
        let mut output_tokens = vec![0u64; points];
        for &(k, c) in &self.counts {
            let b = bucket(k);
            arrivals[b] = arrivals[b].saturating_add(c.arrivals);
            completions[b] = completions[b].saturating_add(c.completions);
            output_tokens[b] += c.output_tokens;
        }
        let held = |changes: &[(u64, u32)]| held_values(changes, points, width);
        let workers = self
            .workers
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let column = |i: usize| {
                    let changes: Vec<(u64, u32)> = w.load.iter().map(|&(k, l)| (k, l[i])).collect();
                    held(&changes)
                };
                let open = self.open.get(i).filter(|s| s.is_some());
                let busy = busy_per_bucket(w.busy.iter().chain(open), points, width);
                let share = |f: fn(&Busy) -> f64| shares(&busy, f, width, end);
                WorkerColumns {
                    busy_fraction: share(|b| b.busy),
                    compute_utilization: share(|b| b.compute),
                    memory_utilization: share(|b| b.memory),
                    waiting: column(0),
                    running: column(1),
                    kv_blocks: column(2),
                }
            })
            .collect();
        SeriesColumns {
            points,
            bucket_seconds: width,
            arrivals,
            completions,
            output_tokens,
            active_workers: held(&self.active_workers),
            workers,
        }
    }
}

/// The narrowest 1-2-5 step (1, 2, 5, 10, 20, … seconds) that shows `seconds` in at most
/// [`MAX_POINTS`] points.
fn bucket_width(seconds: u64) -> u64 {
    let mut decade = 1u64;
    loop {
        for step in [1, 2, 5] {
            let w = decade.saturating_mul(step);
            if seconds.div_ceil(w) <= MAX_POINTS || w == u64::MAX {
                return w;
            }
        }
        decade = decade.saturating_mul(10);
    }
}

/// The value holding at the first second of each bucket, from a change list.
fn held_values(changes: &[(u64, u32)], points: usize, width: u64) -> Vec<u32> {
    let mut out = Vec::with_capacity(points);
    let mut next = 0;
    let mut value = 0;
    for b in 0..points as u64 {
        let at = b * width;
        while next < changes.len() && changes[next].0 <= at {
            value = changes[next].1;
            next += 1;
        }
        out.push(value);
    }
    out
}

/// The busy seconds (and weighted ones) of each bucket.
fn busy_per_bucket<'a>(
    spans: impl Iterator<Item = &'a Span>,
    points: usize,
    width: u64,
) -> Vec<Busy> {
    let mut out = vec![Busy::default(); points];
    for s in spans {
        let mut k = s.from;
        while k < s.to && ((k / width) as usize) < points {
            let b = k / width;
            let upto = s.to.min((b + 1) * width);
            out[b as usize].add(s.per_second.scaled((upto - k) as f64));
            k = upto;
        }
    }
    out
}

/// Each bucket's `f` as a share of the bucket's length (of its covered part, for a last
/// partial bucket), at most 1.
fn shares(busy: &[Busy], f: fn(&Busy) -> f64, width: u64, end: f64) -> Vec<f64> {
    let w = width as f64;
    busy.iter()
        .enumerate()
        .map(|(b, x)| {
            let span = (end - b as f64 * w).clamp(0.0, w);
            if span > 0.0 {
                (f(x) / span).min(1.0)
            } else {
                0.0
            }
        })
        .collect()
}

/// Per-bucket columns, index k = time [k·bucket_seconds, (k + 1)·bucket_seconds).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeriesColumns {
    /// Length of every column.
    pub points: usize,
    /// Seconds per point: 1 for runs up to [`MAX_POINTS`] seconds, then a 1-2-5 step.
    pub bucket_seconds: u64,
    /// Requests that arrived.
    pub arrivals: Vec<u32>,
    /// Requests that completed.
    pub completions: Vec<u32>,
    /// Output tokens emitted (divided by `bucket_seconds`: output token throughput, tok/s).
    pub output_tokens: Vec<u64>,
    /// Workers active.
    pub active_workers: Vec<u32>,
    /// Per worker, by worker index.
    pub workers: Vec<WorkerColumns>,
}

/// One worker's per-bucket columns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkerColumns {
    /// Share of the bucket the GPU was running a step, 0..=1 (a one-token decode batch
    /// counts as busy: see the utilisations for how hard it worked).
    pub busy_fraction: Vec<f64>,
    /// Achieved FLOP/s over the bucket as a share of the GPU's peak, 0..=1.
    pub compute_utilization: Vec<f64>,
    /// Achieved HBM bandwidth over the bucket as a share of the GPU's peak, 0..=1.
    pub memory_utilization: Vec<f64>,
    /// Waiting requests (sampled).
    pub waiting: Vec<u32>,
    /// Running requests (sampled).
    pub running: Vec<u32>,
    /// KV blocks in use (sampled).
    pub kv_blocks: Vec<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_runs_keep_one_point_per_second() {
        let mut s = SecondSeries::new();
        s.on_arrival(0.2);
        s.on_arrival(0.7);
        s.on_arrival(2.5);
        s.on_tokens(1.0, 5);
        s.on_completion(2.9);
        // Busy 0.5..2.25: 0.5 s of second 0, all of second 1, 0.25 s of second 2; the first
        // step at 40 % of peak FLOP/s, the second at 80 %.
        s.on_busy(0, 0.5, 1.0, 0.4, 0.1);
        s.on_busy(0, 1.0, 2.25, 0.8, 0.1);
        s.sample_workers(0, [(0, 3, 1, 10)]);
        s.sample_workers(1, [(0, 3, 1, 10)]);
        s.sample_workers(2, [(0, 0, 2, 12)]);
        s.sample_active_workers(0, 1);
        let c = s.finish(2.5);
        assert_eq!((c.points, c.bucket_seconds), (3, 1));
        assert_eq!(c.arrivals, [2, 0, 1]);
        assert_eq!(c.output_tokens, [0, 5, 0]);
        assert_eq!(c.completions, [0, 0, 1]);
        // The last second is half covered (2.0..2.5) and busy for 0.25 s of it.
        assert_eq!(c.workers[0].busy_fraction, [0.5, 1.0, 0.5]);
        // Second 0: 0.5 s at 0.4 = 0.2; second 1: 0.8; second 2: 0.25 s at 0.8 of 0.5 s.
        assert_eq!(c.workers[0].compute_utilization, [0.2, 0.8, 0.4]);
        assert_eq!(c.workers[0].waiting, [3, 3, 0]);
        assert_eq!(c.workers[0].kv_blocks, [10, 10, 12]);
        assert_eq!(
            c.active_workers,
            [1, 1, 1],
            "a sample holds until it changes"
        );
        // One entry per second touched, the whole second 1 included (the last still open).
        assert_eq!(s.workers[0].busy.len(), 2);
        assert!(s.open[0].is_some());
        assert_eq!(s.workers[0].load.len(), 2);
    }

    #[test]
    fn idle_seconds_cost_nothing_and_long_runs_are_bucketed() {
        let mut s = SecondSeries::new();
        // Two requests a billion seconds apart, and one step as long as the whole run.
        s.on_arrival(0.0);
        s.on_arrival(1e9);
        s.on_busy(0, 0.0, 1e9, 0.5, 0.5);
        s.sample_workers(0, [(0, 1, 0, 0)]);
        s.sample_workers(1_000_000_000, [(0, 0, 0, 0)]);
        assert_eq!(s.counts.len(), 2);
        let c = s.finish(1e9);
        // 1e9 + 1 seconds (the arrival at 1e9 opens one more) in at most 10,000 points:
        // 1e5 s buckets would give 10,001, so the step is 2e5 s → 5,001 points.
        assert_eq!(c.bucket_seconds, 200_000);
        assert_eq!(c.points, 5_001);
        assert_eq!(c.arrivals[0], 1);
        assert_eq!(c.arrivals[5_000], 1);
        assert_eq!(c.arrivals.iter().sum::<u32>(), 2);
        assert!(c.workers[0].busy_fraction[..5_000]
            .iter()
            .all(|&f| f == 1.0));
        assert!(
            s.workers[0].busy.len() <= 2,
            "one span for the whole seconds"
        );
        assert_eq!(c.workers[0].waiting[0], 1);
        assert_eq!(c.workers[0].waiting[4_999], 1);
        assert_eq!(c.workers[0].waiting[5_000], 0);
    }

    #[test]
    fn a_worker_that_left_counts_as_empty() {
        let mut s = SecondSeries::new();
        s.sample_workers(0, [(0, 1, 1, 4), (1, 2, 2, 8)]);
        s.sample_workers(1, [(0, 1, 1, 4)]);
        let c = s.finish(2.0);
        assert_eq!(c.workers[1].kv_blocks, [8, 0]);
        assert_eq!(c.workers[0].kv_blocks, [4, 4]);
    }

    #[test]
    fn widths_step_one_two_five() {
        assert_eq!(bucket_width(0), 1);
        assert_eq!(bucket_width(10_000), 1);
        assert_eq!(bucket_width(10_001), 2);
        assert_eq!(bucket_width(20_001), 5);
        assert_eq!(bucket_width(50_001), 10);
        // u64::MAX ≈ 1.84e19 s: 1e15 s buckets give 18,447 points, 2e15 s give 9,224.
        assert_eq!(bucket_width(u64::MAX), 2_000_000_000_000_000);
    }
}
