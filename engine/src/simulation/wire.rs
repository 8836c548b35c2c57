//! A compact binary form of [`SimulationResults`], for handing a run's results from one
//! WebAssembly instance to another (a Web Worker to the page) without a JSON round trip.
//!
//! Little-endian, fields in declaration order, floats as their exact bits, so decoding
//! gives back the identical results. Each struct is listed field by field with a
//! destructuring pattern: a field added to a results type fails to compile here until it
//! is encoded too. Not a storage format: both ends must be the same build (checked).

use super::deployment_report::{DeploymentReport, PoolSummary};
use super::{RoutingRecord, SimulationResults, Stop};
use crate::measure::{MeasuredWindow, Overload};
use crate::request::FailReason;
use crate::router::{Basis, Candidates, RoutingDecision, ScalingRecord};
use crate::slo::{GroupSlo, Metric, PercentileCheck, SloConfig, SloReport, SloSummary, Target};
use crate::stats::record::{SessionSlot, TierHit};
use crate::stats::{Chunked, TransferRecord};
use crate::stats::{
    LatencySummary, PrefixHitRates, PromptSources, RequestRecord, SeriesColumns, StageSummary,
    WorkerColumns, WorkerSummary, WorkerTable,
};
use crate::workload::generator::SessionTurn;
use std::collections::BTreeMap;

/// Why bytes could not be decoded as results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError(pub String);

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot decode results: {}", self.0)
    }
}

/// Identifies the format and the engine build that wrote it.
const MAGIC: &[u8; 4] = b"OPR1";

impl SimulationResults {
    /// The results as compact bytes (see the module docs); [`SimulationResults::from_bytes`]
    /// reads them back identically.
    pub fn to_bytes(&self) -> Vec<u8> {
        // Requests dominate: ~230 bytes each with their routing decisions and packed
        // candidate scores (Opal's reference run: 2.35 MB for 10,000), so one allocation
        // usually holds it.
        let capacity = 4096 + self.requests.len() * 256;
        let mut bytes = Vec::new();
        self.write(usize::MAX, capacity, |part| bytes = part);
        bytes
    }

    /// The bytes of [`SimulationResults::to_bytes`] in parts of about `part` bytes, each
    /// handed to `sink` as soon as it is full: a large run's results leave in pieces, never
    /// as one allocation of their whole size (parts may split a value anywhere).
    pub fn write_parts(&self, part: usize, sink: impl FnMut(Vec<u8>)) {
        self.write(part, part.saturating_add(64 << 10), sink);
    }

    fn write(&self, part: usize, capacity: usize, sink: impl FnMut(Vec<u8>)) {
        let mut out = Out {
            buf: Vec::new(),
            part,
            capacity,
            sink: Box::new(sink),
        };
        out.extend_from_slice(MAGIC);
        self.put(&mut out);
        out.cut();
    }

    /// Reads results written by [`SimulationResults::to_bytes`] of this engine build.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, WireError> {
        Self::from_parts(bytes.len(), Some(bytes.to_vec()).into_iter())
    }

    /// Reads results from the parts [`SimulationResults::write_parts`] wrote, in order,
    /// `total` bytes in all; each part is read when the one before is used up.
    pub fn from_parts(
        total: usize,
        parts: impl Iterator<Item = Vec<u8>>,
    ) -> Result<Self, WireError> {
        ResultsReader::new(total, parts)?.finish()
    }
}

/// Reads a run's results from their parts a slice at a time: what a page does to stay
/// responsive while millions of records arrive. [`ResultsReader::step`] reads the next
/// records until all are in; [`ResultsReader::finish`] gives the results.
pub struct ResultsReader<'a> {
    reader: Reader<'a>,
    results: ResultsProgress,
}

/// The results read so far, and how many items each list has and has yet to read.
struct ResultsProgress {
    results: SimulationResults,
    /// Items of the requests, decisions and decode decisions lists, in that order.
    lengths: [usize; 3],
    /// Items read so far, of all three lists.
    read: usize,
}

impl<'a> ResultsReader<'a> {
    /// Starts reading the parts [`SimulationResults::write_parts`] wrote (`total` bytes in
    /// all): everything but the per-request lists is read now.
    pub fn new(total: usize, parts: impl Iterator<Item = Vec<u8>> + 'a) -> Result<Self, WireError> {
        let mut reader = Reader {
            bytes: Vec::new(),
            at: 0,
            read: 0,
            left: total,
            parts: Box::new(parts),
        };
        if reader.take(4)? != MAGIC {
            return Err(WireError("not an Opal results buffer".into()));
        }
        let results = ResultsProgress::head(&mut reader)?;
        Ok(Self { reader, results })
    }

    /// Reads up to `items` more records and decisions; true once all are read.
    pub fn step(&mut self, items: usize) -> Result<bool, WireError> {
        self.results.step(&mut self.reader, items)
    }

    /// The share of the records and decisions read, 0 to 1.
    pub fn fraction(&self) -> f64 {
        let items: usize = self.results.lengths.iter().sum();
        if items == 0 {
            1.0
        } else {
            self.results.read as f64 / items as f64
        }
    }

    /// The results, once every part is read (reading what is left first).
    pub fn finish(mut self) -> Result<SimulationResults, WireError> {
        while !self.step(usize::MAX)? {}
        let r = self.reader;
        let over = r.bytes.len() - r.at + r.parts.map(|p| p.len()).sum::<usize>();
        if over > 0 {
            return Err(WireError(format!("{over} bytes left over")));
        }
        if r.left > 0 {
            return Err(WireError(format!("{} bytes missing", r.left)));
        }
        Ok(self.results.results)
    }
}

impl ResultsProgress {
    /// Reads everything before the lists, and the lists' lengths.
    fn head(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let results = SimulationResults {
            engine_version: Wire::get(r)?,
            timing: Wire::get(r)?,
            end_time: Wire::get(r)?,
            truncated: Wire::get(r)?,
            stop: Wire::get(r)?,
            events: Wire::get(r)?,
            stages: Wire::get(r)?,
            windows: Wire::get(r)?,
            workers: Wire::get(r)?,
            series: Wire::get(r)?,
            itl: Wire::get(r)?,
            slo: Wire::get(r)?,
            deployment: Wire::get(r)?,
            transfers: Wire::get(r)?,
            scaling: Wire::get(r)?,
            requests: Chunked::new(),
            decisions: Chunked::new(),
            decode_decisions: Chunked::new(),
        };
        // Each length is bounded by the bytes left (every item takes one at least).
        let lengths = [r.len()?, r.len()?, r.len()?];
        Ok(Self {
            results,
            lengths,
            read: 0,
        })
    }

    /// Reads up to `items` more list items, in order; true once every list is read.
    fn step(&mut self, r: &mut Reader<'_>, items: usize) -> Result<bool, WireError> {
        let [requests, decisions, _] = self.lengths;
        let total: usize = self.lengths.iter().sum();
        let end = self.read.saturating_add(items).min(total);
        for i in self.read..end {
            if i < requests {
                self.results.requests.push(Wire::get(r)?);
            } else if i < requests + decisions {
                self.results.decisions.push(Wire::get(r)?);
            } else {
                self.results.decode_decisions.push(Wire::get(r)?);
            }
            self.read = i + 1;
        }
        Ok(self.read == total)
    }
}

/// Where values are written: a buffer handed on whenever it holds a part.
struct Out<'a> {
    buf: Vec<u8>,
    part: usize,
    /// Room a buffer starts with.
    capacity: usize,
    sink: Box<dyn FnMut(Vec<u8>) + 'a>,
}

impl Out<'_> {
    fn extend_from_slice(&mut self, bytes: &[u8]) {
        if self.buf.capacity() == 0 {
            self.buf.reserve_exact(self.capacity);
        }
        self.buf.extend_from_slice(bytes);
        if self.buf.len() >= self.part {
            self.cut();
        }
    }

    fn push(&mut self, byte: u8) {
        self.extend_from_slice(&[byte]);
    }

    /// Hands on what the buffer holds (the next one is allocated when first written).
    fn cut(&mut self) {
        if !self.buf.is_empty() {
            let part = std::mem::take(&mut self.buf);
            (self.sink)(part);
        }
    }
}

/// Reads values from a sequence of parts, one part in memory at a time (plus the few bytes
/// of a value split between two).
struct Reader<'a> {
    bytes: Vec<u8>,
    at: usize,
    /// Bytes read before `bytes` began.
    read: usize,
    /// Bytes not read yet, in `bytes` and the parts to come.
    left: usize,
    parts: Box<dyn Iterator<Item = Vec<u8>> + 'a>,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], WireError> {
        if n > self.left {
            return Err(WireError(format!(
                "truncated at byte {}",
                self.read + self.at
            )));
        }
        if self.bytes.len() - self.at < n {
            // The value runs into the next parts: join its bytes.
            let mut joined = self.bytes.split_off(self.at);
            self.read += self.at;
            while joined.len() < n {
                let next = self.parts.next().ok_or_else(|| {
                    WireError(format!("truncated at byte {}", self.read + joined.len()))
                })?;
                if joined.is_empty() {
                    joined = next;
                } else {
                    joined.extend_from_slice(&next);
                }
            }
            self.bytes = joined;
            self.at = 0;
        }
        let s = &self.bytes[self.at..self.at + n];
        self.at += n;
        self.left -= n;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], WireError> {
        Ok(self.take(N)?.try_into().expect("took N bytes"))
    }

    /// A length, bounded by the bytes left (every element takes at least one byte), so a
    /// damaged buffer cannot ask for a huge allocation.
    fn len(&mut self) -> Result<usize, WireError> {
        let n = u64::get(self)?;
        usize::try_from(n)
            .ok()
            .filter(|&n| n <= self.left)
            .ok_or_else(|| {
                WireError(format!(
                    "length {n} at byte {} is too long",
                    self.read + self.at
                ))
            })
    }
}

/// A value with a binary form.
trait Wire: Sized {
    fn put(&self, out: &mut Out<'_>);
    fn get(r: &mut Reader<'_>) -> Result<Self, WireError>;
}

macro_rules! wire_number {
    ($($t:ty),*) => {$(
        impl Wire for $t {
            fn put(&self, out: &mut Out<'_>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn get(r: &mut Reader<'_>) -> Result<Self, WireError> {
                Ok(<$t>::from_le_bytes(r.array()?))
            }
        }
    )*};
}
wire_number!(u8, u32, u64, i32, f64);

/// Structs, field by field; the pattern has no `..`, so every field must be listed.
macro_rules! wire_struct {
    ($($t:ident { $($f:ident),* $(,)? })*) => {$(
        impl Wire for $t {
            fn put(&self, out: &mut Out<'_>) {
                let $t { $($f),* } = self;
                $( $f.put(out); )*
            }
            fn get(r: &mut Reader<'_>) -> Result<Self, WireError> {
                Ok($t { $($f: Wire::get(r)?),* })
            }
        }
    )*};
}

impl Wire for bool {
    fn put(&self, out: &mut Out<'_>) {
        out.push(u8::from(*self));
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, WireError> {
        match u8::get(r)? {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(WireError(format!("bad bool {b}"))),
        }
    }
}

impl Wire for usize {
    fn put(&self, out: &mut Out<'_>) {
        (*self as u64).put(out);
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let n = u64::get(r)?;
        usize::try_from(n).map_err(|_| WireError(format!("{n} does not fit usize")))
    }
}

impl Wire for String {
    fn put(&self, out: &mut Out<'_>) {
        self.len().put(out);
        out.extend_from_slice(self.as_bytes());
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let n = r.len()?;
        String::from_utf8(r.take(n)?.to_vec()).map_err(|e| WireError(e.to_string()))
    }
}

/// The engine's `&'static str` fields hold a few fixed names (policy bases, the version);
/// decoded ones are interned so each distinct name is allocated once per instance.
impl Wire for &'static str {
    fn put(&self, out: &mut Out<'_>) {
        self.len().put(out);
        out.extend_from_slice(self.as_bytes());
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, WireError> {
        thread_local! {
            static NAMES: std::cell::RefCell<std::collections::BTreeSet<&'static str>> =
                const { std::cell::RefCell::new(std::collections::BTreeSet::new()) };
        }
        let s = String::get(r)?;
        Ok(NAMES.with_borrow_mut(|names| match names.get(s.as_str()) {
            Some(&known) => known,
            None => {
                let leaked: &'static str = Box::leak(s.into_boxed_str());
                names.insert(leaked);
                leaked
            }
        }))
    }
}

impl Wire for Basis {
    fn put(&self, out: &mut Out<'_>) {
        let i = Basis::ALL
            .iter()
            .position(|b| b == self)
            .expect("every basis is listed");
        (i as u8).put(out);
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let i = u8::get(r)?;
        Basis::ALL
            .get(i as usize)
            .copied()
            .ok_or_else(|| WireError(format!("unknown routing basis {i}")))
    }
}

/// As their packed words: no unpacking here and repacking (a denominator search) there.
impl Wire for Candidates {
    fn put(&self, out: &mut Out<'_>) {
        let w = self.words();
        w.len().put(out);
        w.iter().for_each(|x| x.put(out));
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Candidates::from_words(Vec::get(r)?).map_err(WireError)
    }
}

impl Wire for SessionSlot {
    fn put(&self, out: &mut Out<'_>) {
        self.0.put(out);
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(SessionSlot(SessionTurn::get(r)?))
    }
}

impl Wire for TierHit {
    fn put(&self, out: &mut Out<'_>) {
        self.0.put(out);
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(TierHit(u32::get(r)?))
    }
}

impl<T: Wire> Wire for Option<T> {
    fn put(&self, out: &mut Out<'_>) {
        self.is_some().put(out);
        if let Some(v) = self {
            v.put(out);
        }
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(if bool::get(r)? {
            Some(T::get(r)?)
        } else {
            None
        })
    }
}

impl<T: Wire> Wire for Vec<T> {
    fn put(&self, out: &mut Out<'_>) {
        self.len().put(out);
        self.iter().for_each(|v| v.put(out));
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let n = r.len()?;
        (0..n).map(|_| T::get(r)).collect()
    }
}

impl<T: Wire, const N: usize> Wire for [T; N] {
    fn put(&self, out: &mut Out<'_>) {
        self.iter().for_each(|v| v.put(out));
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let v: Vec<T> = (0..N).map(|_| T::get(r)).collect::<Result<_, _>>()?;
        Ok(v.try_into()
            .unwrap_or_else(|_| unreachable!("collected N items")))
    }
}

impl<A: Wire, B: Wire> Wire for (A, B) {
    fn put(&self, out: &mut Out<'_>) {
        self.0.put(out);
        self.1.put(out);
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok((A::get(r)?, B::get(r)?))
    }
}

impl<K: Wire + Ord, V: Wire> Wire for BTreeMap<K, V> {
    fn put(&self, out: &mut Out<'_>) {
        self.len().put(out);
        self.iter().for_each(|(k, v)| {
            k.put(out);
            v.put(out);
        });
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let n = r.len()?;
        (0..n).map(|_| <(K, V)>::get(r)).collect()
    }
}

impl Wire for Stop {
    fn put(&self, out: &mut Out<'_>) {
        let tag: u8 = match self {
            Stop::SimulationTime => 0,
            Stop::MaxSimulatedSeconds => 1,
            Stop::MaxEvents => 2,
            Stop::MaxRequests => 3,
            Stop::Interrupted => 4,
            Stop::Error(_) => 5,
        };
        tag.put(out);
        if let Stop::Error(message) = self {
            message.put(out);
        }
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(match u8::get(r)? {
            0 => Stop::SimulationTime,
            1 => Stop::MaxSimulatedSeconds,
            2 => Stop::MaxEvents,
            3 => Stop::MaxRequests,
            4 => Stop::Interrupted,
            5 => Stop::Error(String::get(r)?),
            t => return Err(WireError(format!("bad stop reason {t}"))),
        })
    }
}

impl Wire for FailReason {
    fn put(&self, out: &mut Out<'_>) {
        match *self {
            FailReason::EmptyPrompt => 0u8.put(out),
            FailReason::NoOutputTokens => 1u8.put(out),
            FailReason::ExceedsMaxModelLen {
                tokens,
                max_model_len,
            } => (2u8, (tokens, max_model_len)).put(out),
            FailReason::ExceedsKvCapacity {
                blocks_needed,
                gpu_blocks,
            } => (3u8, (blocks_needed, gpu_blocks)).put(out),
            FailReason::PromptExceedsBatch {
                prompt,
                max_num_batched_tokens,
            } => (4u8, (prompt, max_num_batched_tokens)).put(out),
            FailReason::NoWorker => 5u8.put(out),
        }
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(match u8::get(r)? {
            0 => FailReason::EmptyPrompt,
            1 => FailReason::NoOutputTokens,
            2 => {
                let (tokens, max_model_len) = Wire::get(r)?;
                FailReason::ExceedsMaxModelLen {
                    tokens,
                    max_model_len,
                }
            }
            3 => {
                let (blocks_needed, gpu_blocks) = Wire::get(r)?;
                FailReason::ExceedsKvCapacity {
                    blocks_needed,
                    gpu_blocks,
                }
            }
            4 => {
                let (prompt, max_num_batched_tokens) = Wire::get(r)?;
                FailReason::PromptExceedsBatch {
                    prompt,
                    max_num_batched_tokens,
                }
            }
            5 => FailReason::NoWorker,
            t => return Err(WireError(format!("bad failure reason {t}"))),
        })
    }
}

impl Wire for Overload {
    fn put(&self, out: &mut Out<'_>) {
        let (tag, a, b) = match *self {
            Overload::Throughput {
                offered_rps,
                served_rps,
            } => (0u8, offered_rps, served_rps),
            Overload::GrowingTtft { first_ms, last_ms } => (1, first_ms, last_ms),
        };
        out.push(tag);
        a.put(out);
        b.put(out);
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let tag = u8::get(r)?;
        let (a, b) = (f64::get(r)?, f64::get(r)?);
        Ok(match tag {
            0 => Overload::Throughput {
                offered_rps: a,
                served_rps: b,
            },
            1 => Overload::GrowingTtft {
                first_ms: a,
                last_ms: b,
            },
            t => return Err(WireError(format!("bad overload kind {t}"))),
        })
    }
}

impl Wire for Metric {
    fn put(&self, out: &mut Out<'_>) {
        out.push(match self {
            Metric::Ttft => 0,
            Metric::Tpot => 1,
            Metric::E2e => 2,
        });
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(match u8::get(r)? {
            0 => Metric::Ttft,
            1 => Metric::Tpot,
            2 => Metric::E2e,
            t => return Err(WireError(format!("bad SLO metric {t}"))),
        })
    }
}

impl SimulationResults {
    /// The results with their long lists last, so a reader can take those a slice at a
    /// time ([`ResultsReader`], which reads them back).
    fn put(&self, out: &mut Out<'_>) {
        let SimulationResults {
            engine_version,
            timing,
            end_time,
            truncated,
            stop,
            events,
            stages,
            windows,
            workers,
            series,
            itl,
            requests,
            decisions,
            slo,
            deployment,
            transfers,
            decode_decisions,
            scaling,
        } = self;
        engine_version.put(out);
        timing.put(out);
        end_time.put(out);
        truncated.put(out);
        stop.put(out);
        events.put(out);
        stages.put(out);
        windows.put(out);
        workers.put(out);
        series.put(out);
        itl.put(out);
        slo.put(out);
        deployment.put(out);
        transfers.put(out);
        scaling.put(out);
        // The lists' lengths first, so a reader knows how far along it is.
        requests.len().put(out);
        decisions.len().put(out);
        decode_decisions.len().put(out);
        requests.iter().for_each(|v| v.put(out));
        decisions.iter().for_each(|v| v.put(out));
        decode_decisions.iter().for_each(|v| v.put(out));
    }
}

wire_struct! {
    MeasuredWindow {
        stage, start, end, midpoint, warmup_requests, cooldown_requests, requests, completed,
        served, served_output_tokens, shortfall, offered_rps, achieved_rps, output_tps, ttft,
        tpot, e2e, overload,
    }
    ScalingRecord { pool, worker, requested, started, released }
    DeploymentReport {
        pools, pool_balance, ttft_queueing, ttft_prefill, transfer, transfers, transfer_bytes,
        transfer_cached_tokens,
    }
    PoolSummary { name, role, workers, requests, busy, compute_utilization, memory_utilization }
    TransferRecord {
        request, prefill_worker, decode_worker, handoff, start, end, tokens, cached_tokens, bytes,
        decode_prefill,
    }
    SloReport { config, overall, stages, workers }
    SloConfig { ttft_ms, tpot_ms, e2e_ms, min_attainment }
    Target { max, p }
    SloSummary {
        requests, attained, attainment, goodput_rps, goodput_output_tps, percentiles, overloaded,
        met, settled,
    }
    GroupSlo { id, summary }
    PercentileCheck { metric, p, max_ms, value_ms, met }
    StageSummary {
        stage, successful_requests, failed_requests, failed_by_reason, unfinished_requests,
        duration_s, total_input_tokens, total_generated_tokens, request_throughput,
        output_throughput, total_token_throughput, peak_output_throughput,
        peak_concurrent_requests, ttft, tpot, itl, e2e, queueing, prefix_hit_rate,
        preemptions, preempted_requests,
    }
    LatencySummary { count, mean_ms, median_ms, p90_ms, p99_ms }
    PrefixHitRates { gpu_cache, gpu_rehit, tiers, computed, recomputed_tokens }
    WorkerTable { workers, load_imbalance }
    WorkerSummary {
        worker, requests, prompt_tokens, output_tokens, gpu_hit_rate, gpu_rehit_rate,
        prefill_tokens, preemptions, busy, compute_utilization, memory_utilization, load_share,
    }
    SeriesColumns {
        points, bucket_seconds, arrivals, completions, output_tokens, active_workers, workers,
    }
    WorkerColumns {
        busy_fraction, compute_utilization, memory_utilization, waiting, running, kv_blocks,
    }
    RequestRecord {
        id, stage, session, worker, prompt_tokens, output_tokens, created, router_in,
        worker_in, kv_lookup_start, ready, first_scheduled, first_token, completion,
        preemptions, priority, sources, recomputed, failed,
    }
    SessionTurn { session, turn }
    PromptSources { gpu_cache, gpu_rehit, tiers, computed }
    RoutingRecord { request, time, decision }
    RoutingDecision { worker, basis, candidates }
}

#[cfg(test)]
mod tests {
    use crate::scenario::{Scenario, ScenarioData};
    use crate::simulation::{ResultsReader, Simulation, SimulationResults};

    fn run(doc: &str) -> SimulationResults {
        let scenario = Scenario::from_test_json(doc).expect("valid scenario");
        let mut sim = Simulation::new(&scenario, &ScenarioData::default()).expect("builds");
        while !sim.advance(10_000).finished {}
        sim.results()
    }

    #[test]
    fn results_come_back_identical_to_the_bit() {
        // Routing evidence with prefix matches, sessions and failures (a prompt over the
        // model's length) all go through the codec.
        let results = run(r#"{
            "simulation": {"seed": 3, "num_workers": 3},
            "router": {"policy": {"policy": "max_prefix"}},
            "slo": {"ttft_ms": {"max": 500, "p": 99}, "tpot_ms": {"max": 50}},
            "workload": {"stages": [{"type": "UniformReqRate", "request_rate": 20, "total_requests": 200}]}
        }"#);
        assert!(results.requests.len() == 200 && !results.decisions.is_empty());
        assert!(results.slo.is_some());
        let bytes = results.to_bytes();
        let back = SimulationResults::from_bytes(&bytes).expect("decodes");
        // JSON shows every field; NaN summaries make `==` unusable, so compare the JSON.
        assert_eq!(back.to_json(), results.to_json());
        assert_eq!(back.requests_csv(), results.requests_csv());
        assert_eq!(back.to_bytes(), bytes);
        // Compact: under half the JSON, and no text to parse.
        let json = results.to_json().len();
        assert!(bytes.len() * 2 < json, "{} bytes, JSON {json}", bytes.len());
    }

    #[test]
    fn results_in_parts_of_any_size_come_back_identical() {
        let results = run(r#"{
            "simulation": {"seed": 5, "num_workers": 2},
            "router": {"policy": {"policy": "max_prefix"}},
            "workload": {"stages": [{"type": "UniformReqRate", "request_rate": 10, "total_requests": 60}]}
        }"#);
        let whole = results.to_bytes();
        for size in [1, 3, 8, 1000, whole.len() - 1, whole.len(), whole.len() + 1] {
            let mut parts = Vec::new();
            results.write_parts(size, |p| parts.push(p));
            // Each part is full but the last; together they are the one buffer.
            assert!(
                parts.iter().rev().skip(1).all(|p| p.len() >= size),
                "size {size}"
            );
            assert_eq!(parts.concat(), whole, "size {size}");
            let back = SimulationResults::from_parts(whole.len(), parts.clone().into_iter())
                .expect("decodes");
            assert_eq!(back.to_bytes(), whole, "size {size}");
            // A part short is an error, as is a total that does not match.
            let short = parts.len() - 1;
            let missing =
                SimulationResults::from_parts(whole.len(), parts.clone().into_iter().take(short));
            assert!(missing.is_err(), "size {size}");
            assert!(SimulationResults::from_parts(whole.len() + 1, parts.into_iter()).is_err());
        }
    }

    #[test]
    fn a_reader_takes_the_records_a_slice_at_a_time() {
        let results = run(r#"{
            "simulation": {"seed": 5, "num_workers": 2},
            "workload": {"stages": [{"type": "UniformReqRate", "request_rate": 10, "total_requests": 60}]}
        }"#);
        let mut parts = Vec::new();
        results.write_parts(100, |p| parts.push(p));
        let total = parts.iter().map(Vec::len).sum();
        let mut reader = ResultsReader::new(total, parts.into_iter()).expect("reads the head");
        // 60 records and 60 decisions, 7 at a time: 18 steps, the last one finishing.
        let mut steps = 0;
        let mut last = reader.fraction();
        assert_eq!(last, 0.0);
        while !reader.step(7).expect("reads") {
            steps += 1;
            assert!(reader.fraction() > last && reader.fraction() < 1.0);
            last = reader.fraction();
        }
        assert_eq!((steps, reader.fraction()), (17, 1.0));
        assert_eq!(
            reader.finish().expect("done").to_bytes(),
            results.to_bytes()
        );
    }

    #[test]
    fn a_disaggregated_run_comes_back_identical() {
        let results = run(r#"{
            "deployment": {"pools": [{"role": "prefill"}, {"role": "decode", "num_workers": 2}]},
            "workload": {"stages": [{"type": "UniformReqRate", "request_rate": 20, "total_requests": 50}]}
        }"#);
        assert!(results.deployment.is_some() && !results.transfers.is_empty());
        let back = SimulationResults::from_bytes(&results.to_bytes()).expect("decodes");
        assert_eq!(back.to_json(), results.to_json());
    }

    #[test]
    fn damaged_bytes_are_an_error_not_a_panic() {
        let bytes = run(r#"{"workload": {"stages": [{"type": "UniformReqRate", "request_rate": 5, "total_requests": 20}]}}"#)
            .to_bytes();
        assert!(SimulationResults::from_bytes(&bytes[..bytes.len() - 1]).is_err());
        assert!(SimulationResults::from_bytes(b"JSON{}").is_err());
        let mut long = bytes.clone();
        long.push(0);
        assert!(SimulationResults::from_bytes(&long).is_err());
    }
}
