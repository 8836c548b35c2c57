//! What a disaggregated run reports: each KV transfer, each pool's load, and where
//! the time to the first two tokens went.

use crate::deployment::PoolRole;
use crate::stats::{Chunked, LatencySummary, RequestRecord, TransferRecord, WorkerTable};
use serde::Serialize;
use std::fmt::Write;

/// One pool's share of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PoolSummary {
    /// The pool's name.
    pub name: String,
    /// `mixed`, `prefill` or `decode`.
    pub role: &'static str,
    /// Workers it ever had (count).
    pub workers: u32,
    /// Requests it served: routed to it (mixed, prefill) or decoded on it (decode).
    pub requests: u64,
    /// Mean over its workers of the share of the run each spent running steps, 0..=1.
    pub busy: f64,
    /// Mean achieved FLOP/s share of peak over its workers, 0..=1.
    pub compute_utilization: f64,
    /// Mean achieved HBM bandwidth share of peak over its workers, 0..=1.
    pub memory_utilization: f64,
}

/// Pools, transfers and the time to the first tokens split by where it went.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeploymentReport {
    /// One row per pool, in the deployment's order.
    pub pools: Vec<PoolSummary>,
    /// The busiest pool's `busy` over the idlest's (1 = balanced; NaN when a pool never ran).
    pub pool_balance: f64,
    /// Completed requests' TTFT part spent queued: first scheduled − worker in.
    pub ttft_queueing: LatencySummary,
    /// Completed requests' TTFT part spent prefilling: first token − first scheduled.
    pub ttft_prefill: LatencySummary,
    /// Completed transfers' delay before the second token: last byte − hand-off (waiting
    /// for blocks on the decode worker, for a link slot, the latency and the bytes).
    pub transfer: LatencySummary,
    /// Transfers that completed (count).
    pub transfers: u64,
    /// Bytes they moved.
    pub transfer_bytes: u64,
    /// Prompt tokens the decode workers' prefix caches already held (not transferred).
    pub transfer_cached_tokens: u64,
}

impl DeploymentReport {
    /// The report from the pools' names and roles, each worker's pool (by worker id), and
    /// the run's records, transfers and per-worker table. One pass over each.
    pub fn new(
        pools: &[(String, &'static str)],
        worker_pool: &[usize],
        records: &Chunked<RequestRecord>,
        transfers: &[TransferRecord],
        workers: &WorkerTable,
    ) -> Self {
        let pool_of = |w: u32| worker_pool.get(w as usize).copied();
        let mut rows: Vec<PoolSummary> = pools
            .iter()
            .map(|(name, role)| PoolSummary {
                name: name.clone(),
                role,
                workers: 0,
                requests: 0,
                busy: 0.0,
                compute_utilization: 0.0,
                memory_utilization: 0.0,
            })
            .collect();
        for w in &workers.workers {
            if let Some(row) = pool_of(w.worker).and_then(|k| rows.get_mut(k)) {
                row.workers += 1;
                row.busy += w.busy;
                row.compute_utilization += w.compute_utilization;
                row.memory_utilization += w.memory_utilization;
            }
        }
        for row in &mut rows {
            if row.workers > 0 {
                let n = row.workers as f64;
                row.busy /= n;
                row.compute_utilization /= n;
                row.memory_utilization /= n;
            }
        }
        // Requests routed to a mixed or prefill pool; decoded on a decode pool.
        for r in records {
            if let Some(row) = r.worker.and_then(pool_of).and_then(|k| rows.get_mut(k)) {
                row.requests += 1;
            }
        }
        for t in transfers.iter().filter(|t| !t.end.is_nan()) {
            if let Some(row) = t
                .decode_worker
                .and_then(pool_of)
                .and_then(|k| rows.get_mut(k))
            {
                row.requests += 1;
            }
        }
        let busiest = rows.iter().map(|p| p.busy).fold(0.0, f64::max);
        let idlest = rows.iter().map(|p| p.busy).fold(f64::INFINITY, f64::min);
        let pool_balance = if idlest > 0.0 && idlest.is_finite() {
            busiest / idlest
        } else {
            f64::NAN
        };
        let done: Vec<_> = records.iter().filter(|r| r.is_completed()).collect();
        let moved: Vec<_> = transfers.iter().filter(|t| !t.end.is_nan()).collect();
        Self {
            pools: rows,
            pool_balance,
            ttft_queueing: LatencySummary::from_seconds(
                done.iter()
                    .map(|r| r.first_scheduled - r.worker_in)
                    .collect(),
            ),
            ttft_prefill: LatencySummary::from_seconds(
                done.iter()
                    .map(|r| r.first_token - r.first_scheduled)
                    .collect(),
            ),
            transfer: LatencySummary::from_seconds(moved.iter().map(|t| t.delay()).collect()),
            transfers: moved.len() as u64,
            transfer_bytes: moved.iter().map(|t| t.bytes).sum(),
            transfer_cached_tokens: moved.iter().map(|t| t.cached_tokens as u64).sum(),
        }
    }

    /// The pools table and the TTFT split, for the terminal.
    pub fn render_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "{:=^60}", " Deployment ");
        let _ = writeln!(
            s,
            "{:<14}{:<9}{:>8}{:>10}{:>7}{:>7}{:>7}",
            "pool", "role", "workers", "requests", "busy", "comp", "mem"
        );
        for p in &self.pools {
            let _ = writeln!(
                s,
                "{:<14}{:<9}{:>8}{:>10}{:>6.0}%{:>6.0}%{:>6.0}%",
                crate::validate::shorten(&p.name, 13),
                p.role,
                p.workers,
                p.requests,
                p.busy * 100.0,
                p.compute_utilization * 100.0,
                p.memory_utilization * 100.0
            );
        }
        let _ = writeln!(
            s,
            "{:<40}{:>20.2}",
            "Pool balance (busiest/idlest):", self.pool_balance
        );
        let row = |s: &mut String, name: &str, l: &LatencySummary| {
            let _ = writeln!(
                s,
                "{:<28}{:>10.2}{:>11.2}{:>11.2}",
                name, l.mean_ms, l.median_ms, l.p99_ms
            );
        };
        let _ = writeln!(
            s,
            "{:<28}{:>10}{:>11}{:>11}",
            "(ms)", "mean", "median", "p99"
        );
        row(&mut s, "TTFT: queueing", &self.ttft_queueing);
        row(&mut s, "TTFT: prefill", &self.ttft_prefill);
        row(&mut s, "KV transfer (to 2nd token)", &self.transfer);
        let _ = writeln!(s, "{:<40}{:>20}", "KV transfers:", self.transfers);
        let _ = writeln!(
            s,
            "{:<40}{:>20.2}",
            "KV transferred (GB):",
            self.transfer_bytes as f64 / 1e9
        );
        let _ = writeln!(
            s,
            "{:<40}{:>20}",
            "Tokens found in decode caches:", self.transfer_cached_tokens
        );
        let _ = write!(s, "{:=<60}", "");
        s
    }
}

/// The per-request CSV of a disaggregated run: the usual columns, then each request's
/// transfer (empty cells for a request never handed off).
pub(crate) fn write_csv(
    out: &mut impl std::io::Write,
    records: &Chunked<RequestRecord>,
    transfers: &[TransferRecord],
) -> std::io::Result<()> {
    writeln!(
        out,
        "{},decode_worker,transfer_handoff,transfer_start,transfer_end,transfer_tokens,\
         transfer_cached_tokens,transfer_bytes",
        crate::stats::csv::header()
    )?;
    let mut by_request: Vec<Option<&TransferRecord>> = vec![None; records.len()];
    for t in transfers {
        if let Some(slot) = by_request.get_mut(t.request as usize) {
            *slot = Some(t);
        }
    }
    let time = |t: f64| {
        if t.is_nan() {
            String::new()
        } else {
            t.to_string()
        }
    };
    for (r, t) in records.iter().zip(by_request) {
        let mut line = crate::stats::csv::row(r);
        match t {
            Some(t) => {
                let _ = write!(
                    line,
                    ",{},{},{},{},{},{},{}",
                    t.decode_worker.map_or(String::new(), |w| w.to_string()),
                    time(t.handoff),
                    time(t.start),
                    time(t.end),
                    t.tokens,
                    t.cached_tokens,
                    t.bytes
                );
            }
            None => line.push_str(",,,,,,,"),
        }
        line.push('\n');
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

/// The per-worker table's load imbalance over the workers new requests are routed to (a
/// decode worker's record count is always 0: records name the prefill worker).
pub(crate) fn routed_imbalance(
    pools: &[(String, &'static str)],
    worker_pool: &[usize],
    workers: &WorkerTable,
) -> f64 {
    let routed: Vec<u64> = workers
        .workers
        .iter()
        .filter(|w| {
            worker_pool
                .get(w.worker as usize)
                .and_then(|&k| pools.get(k))
                .is_some_and(|(_, role)| *role != PoolRole::Decode.name())
        })
        .map(|w| w.requests)
        .collect();
    let total: u64 = routed.iter().sum();
    match routed.iter().max() {
        Some(&max) if total > 0 => max as f64 / (total as f64 / routed.len() as f64),
        _ => f64::NAN,
    }
}
