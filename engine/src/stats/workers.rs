//! The per-worker table: how the router spread the load and what each worker made of it.

use super::record::RequestRecord;
use super::series::SeriesColumns;
use serde::Serialize;
use std::fmt::Write;

/// One worker's share of the run (completed requests only, like the stage tables).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkerSummary {
    /// Worker id.
    pub worker: u32,
    /// Requests it completed.
    pub requests: u64,
    /// Their prompt tokens.
    pub prompt_tokens: u64,
    /// Their output tokens.
    pub output_tokens: u64,
    /// Share of their prompt tokens found in its GPU cache in blocks other requests
    /// computed (re-hits of a preempted request's own blocks excluded).
    pub gpu_hit_rate: f64,
    /// Share of their prompt tokens a preempted request found again in its own blocks.
    pub gpu_rehit_rate: f64,
    /// Prefill tokens it computed (prompt chunks plus recomputation after preemption), as
    /// its scheduler counted them; once every request completed this is the sum of
    /// `sources.computed + recomputed` over the requests it ran.
    pub prefill_tokens: u64,
    /// Preemptions of its requests.
    pub preemptions: u64,
    /// Share of the run it was running a step, 0..=1.
    pub busy: f64,
    /// Achieved FLOP/s over the run as a share of its GPU's peak, 0..=1.
    pub compute_utilization: f64,
    /// Achieved HBM bandwidth over the run as a share of its GPU's peak, 0..=1.
    pub memory_utilization: f64,
    /// Its share of all completed requests, 0..=1.
    pub load_share: f64,
}

/// Every worker's row (by id, each worker that existed) and the load imbalance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkerTable {
    /// One row per worker.
    pub workers: Vec<WorkerSummary>,
    /// Most requests any worker completed over the mean per worker (1 = perfectly even;
    /// NaN without completed requests).
    pub load_imbalance: f64,
}

/// Time average over [0, end) of a column of `width`-second points.
fn over_run(column: &[f64], width: u64, end: f64) -> f64 {
    if end <= 0.0 {
        return 0.0;
    }
    let w = width as f64;
    let total: f64 = column
        .iter()
        .enumerate()
        .map(|(k, x)| x * (end - k as f64 * w).clamp(0.0, w))
        .sum();
    total / end
}

impl WorkerTable {
    /// The table from the run's request records, per-second series and the prefill each
    /// worker computed (by worker id), for a run that ended at `end` seconds.
    pub fn new<'a>(
        records: impl IntoIterator<Item = &'a RequestRecord, IntoIter: Clone>,
        series: &SeriesColumns,
        prefill: &[u64],
        end: f64,
    ) -> Self {
        let records = records.into_iter();
        let n = records
            .clone()
            .filter_map(|r| r.worker)
            .map(|w| w as usize + 1)
            .max()
            .unwrap_or(0)
            .max(series.workers.len())
            .max(prefill.len());
        let mut rows: Vec<WorkerSummary> = (0..n)
            .map(|w| {
                let cols = series.workers.get(w);
                let util = |f: fn(&super::WorkerColumns) -> &Vec<f64>| {
                    cols.map_or(0.0, |c| over_run(f(c), series.bucket_seconds, end))
                };
                WorkerSummary {
                    worker: w as u32,
                    requests: 0,
                    prompt_tokens: 0,
                    output_tokens: 0,
                    gpu_hit_rate: 0.0,
                    gpu_rehit_rate: 0.0,
                    prefill_tokens: prefill.get(w).copied().unwrap_or(0),
                    preemptions: 0,
                    busy: util(|c| &c.busy_fraction),
                    compute_utilization: util(|c| &c.compute_utilization),
                    memory_utilization: util(|c| &c.memory_utilization),
                    load_share: 0.0,
                }
            })
            .collect();
        let mut hits = vec![(0u64, 0u64); n];
        for r in records {
            let Some(w) = r.worker else { continue };
            let row = &mut rows[w as usize];
            row.preemptions += r.preemptions as u64;
            if !r.is_completed() {
                continue;
            }
            row.requests += 1;
            row.prompt_tokens += r.prompt_tokens as u64;
            row.output_tokens += r.output_tokens as u64;
            hits[w as usize].0 += r.sources.gpu_cache as u64;
            hits[w as usize].1 += r.sources.gpu_rehit as u64;
        }
        let total: u64 = rows.iter().map(|r| r.requests).sum();
        let frac = |x: u64, of: u64| if of > 0 { x as f64 / of as f64 } else { 0.0 };
        for (row, (hit, rehit)) in rows.iter_mut().zip(hits) {
            row.gpu_hit_rate = frac(hit, row.prompt_tokens);
            row.gpu_rehit_rate = frac(rehit, row.prompt_tokens);
            row.load_share = frac(row.requests, total);
        }
        let load_imbalance = match (rows.iter().map(|r| r.requests).max(), total) {
            (Some(max), t) if t > 0 => max as f64 / (t as f64 / n as f64),
            _ => f64::NAN,
        };
        Self {
            workers: rows,
            load_imbalance,
        }
    }

    /// The table as plain text, one line per worker.
    pub fn render_text(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "{:>6} {:>8} {:>12} {:>12} {:>7} {:>7} {:>6} {:>7} {:>7} {:>7} {:>6}",
            "worker",
            "requests",
            "prompt tok",
            "output tok",
            "hit %",
            "rehit %",
            "busy %",
            "FLOP %",
            "BW %",
            "preempt",
            "load %"
        );
        for w in &self.workers {
            let _ = writeln!(
                o,
                "{:>6} {:>8} {:>12} {:>12} {:>7.2} {:>7.2} {:>6.1} {:>7.1} {:>7.1} {:>7} {:>6.1}",
                w.worker,
                w.requests,
                w.prompt_tokens,
                w.output_tokens,
                w.gpu_hit_rate * 100.0,
                w.gpu_rehit_rate * 100.0,
                w.busy * 100.0,
                w.compute_utilization * 100.0,
                w.memory_utilization * 100.0,
                w.preemptions,
                w.load_share * 100.0
            );
        }
        let imbalance = if self.load_imbalance.is_nan() {
            "n/a".to_string()
        } else {
            format!("{:.2}", self.load_imbalance)
        };
        let _ = writeln!(o, "Load imbalance (max/mean requests): {imbalance}");
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::WorkerColumns;

    fn done(id: u64, worker: u32, prompt: u32, hit: u32, rehit: u32) -> RequestRecord {
        let mut r = RequestRecord::new(id, 0, 0.0, prompt);
        r.worker = Some(worker);
        r.output_tokens = 10;
        r.completion = 1.0;
        r.sources.gpu_cache = hit;
        r.sources.gpu_rehit = rehit;
        r.sources.computed = prompt - hit - rehit;
        r
    }

    #[test]
    fn rows_count_completed_requests_and_imbalance_is_max_over_mean() {
        // Worker 0: 3 requests (300 prompt tokens, 150 hits, 30 re-hits); worker 1: 1
        // request; worker 2: none. Mean = 4 / 3, max = 3 → imbalance 2.25.
        let mut recs = vec![
            done(0, 0, 100, 100, 0),
            done(1, 0, 100, 50, 30),
            done(2, 0, 100, 0, 0),
            done(3, 1, 40, 0, 0),
        ];
        recs[1].preemptions = 2;
        let mut failed = RequestRecord::new(4, 0, 0.0, 10);
        failed.worker = Some(2);
        failed.preemptions = 1;
        recs.push(failed);
        let col = |x: f64| vec![x, x];
        let series = SeriesColumns {
            points: 2,
            bucket_seconds: 1,
            arrivals: vec![0; 2],
            completions: vec![0; 2],
            output_tokens: vec![0; 2],
            active_workers: vec![3; 2],
            workers: vec![
                WorkerColumns {
                    busy_fraction: vec![1.0, 0.5],
                    compute_utilization: col(0.1),
                    memory_utilization: col(0.6),
                    waiting: vec![0; 2],
                    running: vec![0; 2],
                    kv_blocks: vec![0; 2],
                };
                3
            ],
        };
        let t = WorkerTable::new(&recs, &series, &[190, 40], 1.5);
        assert_eq!(t.workers.len(), 3);
        let w0 = &t.workers[0];
        assert_eq!(
            (w0.requests, w0.prompt_tokens, w0.output_tokens),
            (3, 300, 30)
        );
        assert_eq!((w0.gpu_hit_rate, w0.gpu_rehit_rate), (0.5, 0.1));
        assert_eq!((w0.prefill_tokens, w0.preemptions), (190, 2));
        assert_eq!(w0.load_share, 0.75);
        // Busy over [0, 1.5): 1·1 + 0.5·0.5 = 1.25 s of 1.5.
        assert!((w0.busy - 1.25 / 1.5).abs() < 1e-12);
        assert!((w0.compute_utilization - 0.1).abs() < 1e-12);
        assert_eq!((t.workers[2].requests, t.workers[2].preemptions), (0, 1));
        assert_eq!(t.load_imbalance, 2.25);
        assert!(t
            .render_text()
            .contains("Load imbalance (max/mean requests): 2.25"));
    }
}
