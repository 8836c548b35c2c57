//! Per-second time series for charts: arrivals, completions, tokens, workers.
//!
//! Second k covers simulated time [k, k + 1) (aligned to time 0, not to a stage start, so
//! series of different stages line up on one chart).

use serde::Serialize;

/// Per-worker accumulators.
#[derive(Debug, Clone, Default, PartialEq)]
struct WorkerAcc {
    busy_s: Vec<f64>,
    /// Seconds of busy time weighted by the step's share of peak FLOP/s (and of peak bandwidth).
    compute_s: Vec<f64>,
    memory_s: Vec<f64>,
    waiting: Vec<u32>,
    running: Vec<u32>,
    kv_blocks: Vec<u32>,
}

/// Accumulates per-second figures as the simulation runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SecondSeries {
    arrivals: Vec<u32>,
    completions: Vec<u32>,
    output_tokens: Vec<u64>,
    active_workers: Vec<u32>,
    workers: Vec<WorkerAcc>,
}

fn second(t: f64) -> usize {
    t.max(0.0).floor() as usize
}

fn at<T: Default + Clone>(v: &mut Vec<T>, k: usize) -> &mut T {
    if v.len() <= k {
        v.resize(k + 1, T::default());
    }
    &mut v[k]
}

impl SecondSeries {
    /// An empty series.
    pub fn new() -> Self {
        Self::default()
    }

    fn worker(&mut self, w: usize) -> &mut WorkerAcc {
        at(&mut self.workers, w)
    }

    /// A request arrived at `t`.
    pub fn on_arrival(&mut self, t: f64) {
        *at(&mut self.arrivals, second(t)) += 1;
    }

    /// A request completed at `t`.
    pub fn on_completion(&mut self, t: f64) {
        *at(&mut self.completions, second(t)) += 1;
    }

    /// `n` output tokens were emitted at `t`.
    pub fn on_tokens(&mut self, t: f64, n: u64) {
        *at(&mut self.output_tokens, second(t)) += n;
    }

    /// Worker `worker` computed from `start` to `end`, achieving `compute` of its peak
    /// FLOP/s and `memory` of its peak HBM bandwidth on average over the step; a step that
    /// crosses a second boundary adds to each second only the part that falls in it.
    pub fn on_busy(&mut self, worker: usize, start: f64, end: f64, compute: f64, memory: f64) {
        if end.is_nan() || end <= start {
            return;
        }
        let start = start.max(0.0);
        let w = self.worker(worker);
        let mut k = second(start);
        while (k as f64) < end {
            let lo = start.max(k as f64);
            let hi = end.min((k + 1) as f64);
            if hi > lo {
                *at(&mut w.busy_s, k) += hi - lo;
                *at(&mut w.compute_s, k) += (hi - lo) * compute;
                *at(&mut w.memory_s, k) += (hi - lo) * memory;
            }
            k += 1;
        }
    }

    /// Worker `worker`'s queue depths and KV usage, sampled at second `second`.
    pub fn sample_worker(
        &mut self,
        second: usize,
        worker: usize,
        waiting: u32,
        running: u32,
        kv_blocks: u32,
    ) {
        let w = self.worker(worker);
        *at(&mut w.waiting, second) = waiting;
        *at(&mut w.running, second) = running;
        *at(&mut w.kv_blocks, second) = kv_blocks;
    }

    /// Workers active at second `second`.
    pub fn sample_active_workers(&mut self, second: usize, n: u32) {
        *at(&mut self.active_workers, second) = n;
    }

    /// Columns of equal length covering [0, end): busy time becomes a fraction of each
    /// second (of the covered part, for a last partial second); unsampled values are 0.
    pub fn finish(&self, end: f64) -> SeriesColumns {
        let n = (end.max(0.0).ceil() as usize)
            .max(self.arrivals.len())
            .max(self.completions.len())
            .max(self.output_tokens.len())
            .max(self.active_workers.len());
        fn pad<T: Default + Clone>(v: &[T], n: usize) -> Vec<T> {
            let mut out = v.to_vec();
            out.resize(n, T::default());
            out
        }
        let workers = self
            .workers
            .iter()
            .map(|w| {
                // Share of each second (of its covered part, for a last partial second).
                let per_second = |acc: &[f64]| -> Vec<f64> {
                    (0..n)
                        .map(|k| {
                            let span = (end - k as f64).clamp(0.0, 1.0);
                            let x = acc.get(k).copied().unwrap_or(0.0);
                            if span > 0.0 {
                                (x / span).min(1.0)
                            } else {
                                0.0
                            }
                        })
                        .collect()
                };
                WorkerColumns {
                    busy_fraction: per_second(&w.busy_s),
                    compute_utilization: per_second(&w.compute_s),
                    memory_utilization: per_second(&w.memory_s),
                    waiting: pad(&w.waiting, n),
                    running: pad(&w.running, n),
                    kv_blocks: pad(&w.kv_blocks, n),
                }
            })
            .collect();
        SeriesColumns {
            seconds: n,
            arrivals: pad(&self.arrivals, n),
            completions: pad(&self.completions, n),
            output_tokens: pad(&self.output_tokens, n),
            active_workers: pad(&self.active_workers, n),
            workers,
        }
    }
}

/// Per-second columns, index k = second [k, k + 1).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeriesColumns {
    /// Length of every column.
    pub seconds: usize,
    /// Requests that arrived.
    pub arrivals: Vec<u32>,
    /// Requests that completed.
    pub completions: Vec<u32>,
    /// Output tokens emitted (= output token throughput, tok/s).
    pub output_tokens: Vec<u64>,
    /// Workers active.
    pub active_workers: Vec<u32>,
    /// Per worker, by worker index.
    pub workers: Vec<WorkerColumns>,
}

/// One worker's per-second columns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkerColumns {
    /// Share of the second the GPU was running a step, 0..=1 (a one-token decode batch
    /// counts as busy: see the utilisations for how hard it worked).
    pub busy_fraction: Vec<f64>,
    /// Achieved FLOP/s over the second as a share of the GPU's peak, 0..=1.
    pub compute_utilization: Vec<f64>,
    /// Achieved HBM bandwidth over the second as a share of the GPU's peak, 0..=1.
    pub memory_utilization: Vec<f64>,
    /// Waiting requests (sampled).
    pub waiting: Vec<u32>,
    /// Running requests (sampled).
    pub running: Vec<u32>,
    /// KV blocks in use (sampled).
    pub kv_blocks: Vec<u32>,
}
