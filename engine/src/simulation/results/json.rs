//! The results JSON with its long lists (requests, routing decisions, inter-token gaps)
//! written by hand: the bytes serde's derived serialisation gives (a test holds them equal),
//! at a fraction of its cost. Keys are constant bytes rather than strings escaped one by
//! one, and a record's equal timestamps (often six of its eight) are formatted once. Each
//! struct is taken apart with a pattern without `..`, so a field added to it fails to
//! compile here until it is written too. The small parts go through serde.

use super::{RoutingRecord, SimulationResults};
use crate::router::{CandidateScore, PrefixMatch};
use crate::stats::RequestRecord;
use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter};
use std::io::Write;

/// Bytes gathered before they go to the writer.
const CHUNK: usize = 1 << 16;

/// The formatted-f64 cache has 2^FLOAT_BITS slots (160 KB): fewer missed many of the routing
/// candidates' KV usages (thousands of distinct fractions of a worker's blocks), more saved
/// little (docs/performance.md).
const FLOAT_BITS: u32 = 12;

/// A buffer in front of the writer; numbers are formatted as serde_json formats them.
struct Out<W: Write> {
    buf: Vec<u8>,
    out: W,
    /// Finite f64s formatted lately, direct-mapped by their bits: (bits, text length,
    /// text). The lists repeat many values (a candidate's score is 0 or 1, a worker's KV
    /// usage holds across decisions, a record's stages often share a timestamp), and a hit
    /// costs a tenth of formatting one.
    floats: Box<[(u64, u8, [u8; 24])]>,
}

impl<W: Write> Out<W> {
    /// An empty buffer in front of `out`, with an empty float cache.
    fn new(out: W) -> Self {
        Out {
            buf: Vec::with_capacity(CHUNK + 4096),
            out,
            floats: vec![(0, 0, [0; 24]); 1 << FLOAT_BITS].into_boxed_slice(),
        }
    }

    fn raw(&mut self, s: &[u8]) {
        self.buf.extend_from_slice(s);
    }

    fn u64(&mut self, x: u64) {
        // Most of a record's counts are single digits (zero preemptions, tier hits, …);
        // many others two (worker ids, a gap's count).
        if x < 10 {
            return self.buf.push(b'0' + x as u8);
        }
        if x < 100 {
            return self
                .buf
                .extend_from_slice(&[b'0' + (x / 10) as u8, b'0' + (x % 10) as u8]);
        }
        CompactFormatter
            .write_u64(&mut self.buf, x)
            .expect("a Vec takes any bytes");
    }

    fn u32(&mut self, x: u32) {
        self.u64(x.into());
    }

    fn opt_u32(&mut self, x: Option<u32>) {
        match x {
            Some(x) => self.u32(x),
            None => self.raw(b"null"),
        }
    }

    /// As serde_json writes an f64: `null` unless finite.
    fn f64(&mut self, x: f64) {
        if !x.is_finite() {
            return self.raw(b"null");
        }
        let bits = x.to_bits();
        let slot = (bits.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - FLOAT_BITS)) as usize;
        let (seen, len, text) = &mut self.floats[slot];
        if *seen == bits && *len > 0 {
            // The whole slot and a truncate: a fixed-size copy, not a call to memcpy.
            let at = self.buf.len();
            self.buf.extend_from_slice(text);
            self.buf.truncate(at + *len as usize);
            return;
        }
        let (n, formatted) = format_f64(x);
        (*seen, *len, *text) = (bits, n, formatted);
        let at = self.buf.len();
        self.buf.extend_from_slice(&formatted);
        self.buf.truncate(at + n as usize);
    }

    /// A finite f64 not worth caching (the inter-token gaps are distinct and ascending).
    fn f64_once(&mut self, x: f64) {
        CompactFormatter
            .write_f64(&mut self.buf, x)
            .expect("a Vec takes any bytes");
    }

    /// `"key":` then `v` through serde.
    fn serde(&mut self, key: &[u8], v: &impl Serialize) -> std::io::Result<()> {
        self.raw(key);
        serde_json::to_writer(&mut self.buf, v).map_err(std::io::Error::from)
    }

    /// Hands the buffer to the writer once it holds a chunk.
    fn spill(&mut self) -> std::io::Result<()> {
        if self.buf.len() >= CHUNK {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// `key` then each item of `items` as `each` writes it, comma-separated in brackets.
    fn list<'a, T: 'a>(
        &mut self,
        key: &[u8],
        items: impl IntoIterator<Item = &'a T>,
        mut each: impl FnMut(&mut Self, &T) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        self.raw(key);
        self.raw(b"[");
        for (i, item) in items.into_iter().enumerate() {
            if i > 0 {
                self.raw(b",");
            }
            each(self, item)?;
            self.spill()?;
        }
        self.raw(b"]");
        Ok(())
    }

    fn request(&mut self, r: &RequestRecord) -> std::io::Result<()> {
        let RequestRecord {
            id,
            stage,
            session,
            worker,
            prompt_tokens,
            output_tokens,
            created,
            router_in,
            worker_in,
            kv_lookup_start,
            ready,
            first_scheduled,
            first_token,
            completion,
            preemptions,
            priority,
            sources,
            recomputed,
            failed,
        } = r;
        self.raw(b"{\"id\":");
        self.u64(*id);
        self.raw(b",\"stage\":");
        self.u32(*stage);
        match session.get() {
            Some(s) => {
                self.raw(b",\"session\":{\"session\":");
                self.u32(s.session);
                self.raw(b",\"turn\":");
                self.u32(s.turn);
                self.raw(b"},\"worker\":");
            }
            None => self.raw(b",\"session\":null,\"worker\":"),
        }
        self.opt_u32(*worker);
        self.raw(b",\"prompt_tokens\":");
        self.u32(*prompt_tokens);
        self.raw(b",\"output_tokens\":");
        self.u32(*output_tokens);
        for (key, t) in [
            (&b",\"created\":"[..], created),
            (b",\"router_in\":", router_in),
            (b",\"worker_in\":", worker_in),
            (b",\"kv_lookup_start\":", kv_lookup_start),
            (b",\"ready\":", ready),
            (b",\"first_scheduled\":", first_scheduled),
            (b",\"first_token\":", first_token),
            (b",\"completion\":", completion),
        ] {
            self.raw(key);
            self.f64(*t);
        }
        self.raw(b",\"preemptions\":");
        self.u32(*preemptions);
        self.raw(b",\"priority\":");
        match u32::try_from(*priority) {
            Ok(p) => self.u32(p),
            Err(_) => CompactFormatter
                .write_i32(&mut self.buf, *priority)
                .expect("a Vec takes any bytes"),
        }
        let [t0, t1, t2, t3] = sources.tiers();
        self.raw(b",\"sources\":{\"gpu_cache\":");
        self.u32(sources.gpu_cache);
        self.raw(b",\"gpu_rehit\":");
        self.u32(sources.gpu_rehit);
        self.raw(b",\"tiers\":[");
        self.u32(t0);
        for t in [t1, t2, t3] {
            self.raw(b",");
            self.u32(t);
        }
        self.raw(b"],\"computed\":");
        self.u32(sources.computed);
        self.raw(b"},\"recomputed\":");
        self.u32(*recomputed);
        match failed {
            None => self.raw(b",\"failed\":null}"),
            Some(_) => {
                // Rare, and a tagged enum: serde writes it.
                self.serde(b",\"failed\":", failed)?;
                self.raw(b"}");
            }
        }
        Ok(())
    }

    fn decision(&mut self, d: &RoutingRecord) -> std::io::Result<()> {
        let RoutingRecord {
            request,
            time,
            decision,
        } = d;
        let crate::router::RoutingDecision {
            worker,
            basis,
            candidates,
        } = decision;
        self.raw(b"{\"request\":");
        self.u64(*request);
        self.raw(b",\"time\":");
        self.f64(*time);
        self.raw(b",\"decision\":{\"worker\":");
        self.u32(*worker);
        // The bases are fixed texts with nothing to escape (tested).
        self.raw(b",\"basis\":\"");
        self.raw(basis.as_str().as_bytes());
        self.raw(b"\",\"candidates\":[");
        for (i, c) in candidates.iter().enumerate() {
            self.candidate(&c, i == 0);
        }
        self.raw(b"]}}");
        Ok(())
    }

    /// A candidate, after a comma unless it is the `first`. (The constant pieces between
    /// the values go out whole: a run keeps up to 400,000 of these.)
    fn candidate(&mut self, c: &CandidateScore, first: bool) {
        let CandidateScore {
            worker,
            score,
            outstanding,
            kv_usage,
            prefix,
        } = c;
        if first {
            self.raw(b"{\"worker\":");
        } else {
            self.raw(b",{\"worker\":");
        }
        self.u32(*worker);
        self.raw(b",\"score\":");
        self.f64(*score);
        self.raw(b",\"outstanding\":");
        self.u32(*outstanding);
        self.raw(b",\"kv_usage\":");
        self.f64(*kv_usage);
        match prefix {
            Some(PrefixMatch {
                gpu_tokens,
                tier_tokens,
            }) => {
                self.raw(b",\"prefix\":{\"gpu_tokens\":");
                self.u32(*gpu_tokens);
                self.raw(b",\"tier_tokens\":");
                self.u32(*tier_tokens);
                self.raw(b"}}");
            }
            None => self.raw(b",\"prefix\":null}"),
        }
    }
}

/// `x` (finite) as serde_json formats it: its length and the text, padded.
fn format_f64(x: f64) -> (u8, [u8; 24]) {
    let mut text = [0; 24];
    let mut rest = &mut text[..];
    CompactFormatter
        .write_f64(&mut rest, x)
        .expect("an f64 takes at most 24 bytes");
    let n = 24 - rest.len();
    (n as u8, text)
}

/// Writes `results` as compact JSON to `out`, byte for byte what
/// `serde_json::to_writer(out, results)` writes.
pub(super) fn write(results: &SimulationResults, out: impl Write) -> std::io::Result<()> {
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
    } = results;
    let mut o = Out::new(out);
    o.serde(b"{\"engine_version\":", engine_version)?;
    o.serde(b",\"timing\":", timing)?;
    o.raw(b",\"end_time\":");
    o.f64(*end_time);
    o.serde(b",\"truncated\":", truncated)?;
    o.serde(b",\"stop\":", stop)?;
    o.raw(b",\"events\":");
    o.u64(*events);
    o.serde(b",\"stages\":", stages)?;
    o.serde(b",\"windows\":", windows)?;
    o.serde(b",\"workers\":", workers)?;
    o.serde(b",\"series\":", series)?;
    o.list(b",\"itl\":", itl, |o, gaps| {
        // Not `list`: a gap's opening bracket goes out with the comma before it (a long
        // run has millions of gaps).
        o.raw(b"[");
        for (i, &(gap, count)) in gaps.iter().enumerate() {
            if i > 0 {
                o.raw(b",[");
            } else {
                o.raw(b"[");
            }
            if gap.is_finite() {
                o.f64_once(gap);
            } else {
                o.raw(b"null");
            }
            o.raw(b",");
            o.u64(count);
            o.raw(b"]");
            o.spill()?;
        }
        o.raw(b"]");
        Ok(())
    })?;
    o.list(b",\"requests\":", requests, Out::request)?;
    o.list(b",\"decisions\":", decisions, Out::decision)?;
    if let Some(slo) = slo {
        o.serde(b",\"slo\":", slo)?;
    }
    if let Some(deployment) = deployment {
        o.serde(b",\"deployment\":", deployment)?;
    }
    if !transfers.is_empty() {
        o.serde(b",\"transfers\":", transfers)?;
    }
    if !decode_decisions.is_empty() {
        o.list(b",\"decode_decisions\":", decode_decisions, Out::decision)?;
    }
    if !scaling.is_empty() {
        o.serde(b",\"scaling\":", scaling)?;
    }
    o.raw(b"}");
    o.out.write_all(&o.buf)
}

#[cfg(test)]
mod tests {
    use crate::router::Basis;
    use crate::scenario::{Scenario, ScenarioData};
    use crate::simulation::{Simulation, SimulationResults};

    /// The hand-written JSON equals serde's derived serialisation of the same results.
    fn same_as_serde(doc: &str) -> SimulationResults {
        let scenario = Scenario::from_test_json(doc).expect("valid scenario");
        let mut sim = Simulation::new(&scenario, &ScenarioData::default()).expect("builds");
        while !sim.advance(10_000).finished {}
        let results = sim.results();
        let want = serde_json::to_string(&results).expect("serialises");
        assert_eq!(results.to_json(), want);
        results
    }

    #[test]
    fn writes_what_serde_writes() {
        // Sessions, prefix matches in the evidence, offload tiers, an SLO, a prompt over
        // the model's length (a failure) and a run cut short (null timestamps, a stop).
        let r = same_as_serde(
            r#"{
            "simulation": {"seed": 3, "num_workers": 3, "simulation_time": 15},
            "model": {"max_model_len": 4096},
            "router": {"policy": {"policy": "max_prefix"}},
            "slo": {"ttft_ms": {"max": 500, "p": 99}, "tpot_ms": {"max": 50}},
            "workload": {"stages": [{"type": "UniformReqRate", "request_rate": 20,
                "total_requests": 400, "input_length": {"type": "uniform", "min": 100, "max": 5000}}]}
        }"#,
        );
        assert!(r.stop.is_some() && r.slo.is_some());
        assert!(r.requests.iter().any(|q| q.failed.is_some()));
        assert!(r.requests.iter().any(|q| q.completion.is_nan()));
        let evidence = || {
            r.decisions
                .iter()
                .flat_map(|d| d.decision.candidates.iter())
        };
        assert!(evidence().any(|c| c.prefix.is_some()));
        let r = same_as_serde(
            r#"{
            "simulation": {"num_workers": 2},
            "router": {"policy": {"policy": "session_affinity"}},
            "workload": {"stages": [{"type": "SyntheticSessions", "num_sessions": 3}]}
        }"#,
        );
        assert!(r.requests.iter().all(|q| q.session().is_some()));
        let r = same_as_serde(
            r#"{
            "simulation": {"seed": 5, "num_workers": 2},
            "model": {"max_model_len": 16384},
            "worker": {"gpu_memory_utilization": 0.25},
            "kv_cache": {"chunk_size": 256, "tiers": [{"preset": "cpu_dram", "capacity_gb": 1},
                {"preset": "local_nvme"}]},
            "router": {"policy": {"policy": "prefix_load"}},
            "workload": {"stages": [{"type": "RAGWorkload", "request_rate": 6,
                "num_documents": 20, "total_requests": 60}]}
        }"#,
        );
        assert!(r.requests.iter().any(|q| q.sources.tiers() != [0; 4]));
        // Disaggregated: transfers and decode decisions.
        let r = same_as_serde(
            r#"{
            "deployment": {"pools": [{"role": "prefill"}, {"role": "decode", "num_workers": 2}]},
            "workload": {"stages": [{"type": "UniformReqRate", "request_rate": 20, "total_requests": 50}]}
        }"#,
        );
        assert!(!r.transfers.is_empty() && !r.decode_decisions.is_empty());
        // Autoscaled: a worker asked for, started and released.
        let r = same_as_serde(
            r#"{
            "worker": {"timing": {"model": "constant"}},
            "router": {"autoscaler": {"enabled": true, "max_queue_threshold": 1,
                "scale_down_threshold": 0, "max_workers": 2, "scale_latency": 1, "cooldown": 1}},
            "workload": {"stages": [{"type": "UniformReqRate", "request_rate": 100,
                "output_length": {"type": "constant", "value": 200}, "total_requests": 200},
                {"type": "UniformReqRate", "request_rate": 0.2, "total_requests": 2}]}
        }"#,
        );
        assert!(
            r.scaling.iter().any(|s| !s.released.is_nan()),
            "{:?}",
            r.scaling
        );
        let back = SimulationResults::from_bytes(&r.to_bytes()).expect("decodes");
        assert_eq!(back.to_json(), r.to_json());
    }

    #[test]
    fn integers_come_out_as_serde_writes_them() {
        // The one- and two-digit shortcuts and the general case on either side of them.
        let mut o = super::Out::new(std::io::sink());
        for x in (0..1000).chain([9_999, 10_000, u64::MAX]) {
            o.buf.clear();
            o.u64(x);
            assert_eq!(o.buf, serde_json::to_vec(&x).unwrap(), "{x}");
        }
    }

    #[test]
    fn bases_need_no_escaping() {
        for b in Basis::ALL {
            let s = b.as_str();
            assert_eq!(serde_json::to_string(s).unwrap(), format!("\"{s}\""));
        }
    }
}
