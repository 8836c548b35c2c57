//! What a finished (or stopped) run reports.

use super::deployment_report::{write_csv, DeploymentReport};
use crate::measure::MeasuredWindow;
use crate::platform::recorder::RoutingRecord;
use crate::router::ScalingRecord;
use crate::slo::SloReport;
use crate::stats::TransferRecord;
use crate::stats::{Chunked, RequestRecord, SeriesColumns, StageSummary, WorkerTable};
use serde::Serialize;

mod json;

/// Everything a run produced: the per-stage tables, per-second series, every request's
/// record, and every routing decision. Serialises to the results JSON the app and the CLI
/// export; the same scenario gives byte-identical JSON natively and in WebAssembly.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimulationResults {
    /// Engine version that produced it.
    pub engine_version: &'static str,
    /// The timing model that priced the steps, and where its figures come from.
    pub timing: String,
    /// Simulated time the run ended, seconds.
    pub end_time: f64,
    /// True when the run ended before its workload did (see `stop`).
    pub truncated: bool,
    /// Why a truncated run ended; `None` when the workload ran to its end.
    pub stop: Option<Stop>,
    /// Kernel events processed.
    pub events: u64,
    /// The `vllm bench serve`-style table of each stage (every request it issued).
    pub stages: Vec<StageSummary>,
    /// Each stage's measurement window (warm-up and drain left out) and whether it kept up
    /// with its load: what the SLO and sweeps judge.
    pub windows: Vec<MeasuredWindow>,
    /// Per worker: load, cache hits, busy time and utilisation; and the load imbalance.
    pub workers: WorkerTable,
    /// Per-second series for the charts.
    pub series: SeriesColumns,
    /// Each stage's pooled inter-token gaps: (gap in seconds, how many), ascending. Exact
    /// and small: tokens decoded in the same step share one gap.
    pub itl: Vec<Vec<(f64, u64)>>,
    /// Every request, in id order.
    pub requests: Chunked<RequestRecord>,
    /// Every routing decision, in the order they were made.
    pub decisions: Chunked<RoutingRecord>,
    /// Attainment and goodput against the scenario's `slo` (absent without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slo: Option<SloReport>,
    /// Pools, their balance and the TTFT split (absent without a `deployment` section).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deployment: Option<DeploymentReport>,
    /// Every prefill→decode KV transfer, in hand-off order (empty without disaggregation).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub transfers: Vec<TransferRecord>,
    /// Every decode-worker choice and its evidence, in order (empty without disaggregation).
    #[serde(skip_serializing_if = "Chunked::is_empty")]
    pub decode_decisions: Chunked<RoutingRecord>,
    /// Each worker an autoscaler asked for or released, in the order it asked (empty
    /// without an autoscaler, or when it never acted).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scaling: Vec<ScalingRecord>,
}

/// Why a run ended before its workload did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "reason", content = "message", rename_all = "snake_case")]
pub enum Stop {
    /// `simulation.simulation_time` was reached.
    SimulationTime,
    /// The clock reached `simulation.max_simulated_seconds`.
    MaxSimulatedSeconds,
    /// `simulation.max_events` kernel events were processed.
    MaxEvents,
    /// A stage wanted to issue more than `simulation.max_requests` requests.
    MaxRequests,
    /// The results were taken before the run was over (stopped by the user or a wall-clock
    /// limit).
    Interrupted,
    /// The run cannot go on: a delay no clock can wait for, or nothing left to happen while
    /// requests are still in flight. The message says what and where.
    Error(String),
}

impl Stop {
    /// One line for a person: "cut short by simulation_time", …
    pub fn describe(&self) -> String {
        match self {
            Stop::SimulationTime => "cut short by simulation_time".into(),
            Stop::MaxSimulatedSeconds => {
                "stopped at simulation.max_simulated_seconds (raise it to go on)".into()
            }
            Stop::MaxEvents => "stopped at simulation.max_events (raise it to go on)".into(),
            Stop::MaxRequests => "stopped at simulation.max_requests (raise it to go on)".into(),
            Stop::Interrupted => "stopped before the end".into(),
            Stop::Error(message) => format!("stopped by an error: {message}"),
        }
    }
}

impl SimulationResults {
    /// The results JSON (compact).
    pub fn to_json(&self) -> String {
        let mut out = Vec::new();
        self.write_json(&mut out)
            .expect("writing to memory cannot fail");
        String::from_utf8(out).expect("JSON is UTF-8")
    }

    /// Streams the results JSON (compact, the same bytes as [`Self::to_json`]) to `out`, in
    /// 64 KiB writes.
    pub fn write_json(&self, out: impl std::io::Write) -> std::io::Result<()> {
        json::write(self, out)
    }

    /// The per-request CSV (with each request's KV transfer when the run had any).
    pub fn requests_csv(&self) -> String {
        let mut out = Vec::new();
        self.write_csv(&mut out)
            .expect("writing to memory cannot fail");
        String::from_utf8(out).expect("CSV is UTF-8")
    }

    /// Streams the per-request CSV (the same bytes as [`Self::requests_csv`]) to `out`.
    pub fn write_csv(&self, mut out: impl std::io::Write) -> std::io::Result<()> {
        if self.transfers.is_empty() {
            crate::stats::csv::write_csv(&mut out, &self.requests)
        } else {
            write_csv(&mut out, &self.requests, &self.transfers)
        }
    }

    /// Every stage's table as `vllm bench serve` prints it, then the per-worker table.
    pub fn render_text(&self) -> String {
        let mut parts: Vec<String> = self
            .stages
            .iter()
            .zip(&self.windows)
            .map(|(s, w)| format!("{}{}", s.render_text(), w.render_text()))
            .collect();
        parts.push(self.workers.render_text());
        if let Some(d) = &self.deployment {
            parts.push(d.render_text());
        }
        if let Some(slo) = &self.slo {
            parts.push(slo.render_text());
        }
        parts.join("\n")
    }
}
