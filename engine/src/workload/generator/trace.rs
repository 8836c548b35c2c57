//! `Trace`: replay of a Mooncake-style JSONL trace.
//!
//! One request per line: `{"timestamp": 1200, "input_length": 1800, "output_length": 40,
//! "hash_ids": [0, 1, 2, 7]}`. `timestamp` is in milliseconds and must not decrease from line
//! to line; each hash id stands for `hash_block_size` prompt tokens (Mooncake uses 512), so
//! equal hash ids at equal positions are shared prefixes.
//!
//! The replay starts at the first line's timestamp: the first request arrives at the stage
//! start and the others keep their spacing, so a slice cut from the middle of a trace, or a
//! trace stamped with epoch milliseconds, replays without hours of idle time before it.
//! [`TraceGenerator::with_absolute_times`] keeps the timestamps as offsets from the stage
//! start instead.

use super::{DataShape, RequestGenerator, RequestSpec};
use crate::request::{PromptContent, Source};
use crate::workload::jsonl::{for_each_object, DataError};

/// One parsed trace line.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceRecord {
    /// Milliseconds from the stage start.
    pub timestamp_ms: f64,
    /// Prompt tokens (≥ 1).
    pub input_length: u32,
    /// Tokens to generate (≥ 1).
    pub output_length: u32,
    /// Block ids of the prompt, in order.
    pub hash_ids: Vec<u64>,
}

/// The block sizes a trace's hash ids are commonly cut at, tried when the configured one
/// does not fit.
const COMMON_BLOCK_SIZES: [u32; 7] = [16, 32, 64, 128, 256, 512, 1024];

/// A warning when lines carry a number of hash ids other than ⌈input_length /
/// hash_block_size⌉: the prefixes then share too much or too little, which usually means
/// `hash_block_size` is not the trace's. `None` when every line with hash ids fits.
pub fn hash_id_warning(records: &[TraceRecord], hash_block_size: u32) -> Option<String> {
    let fits = |r: &TraceRecord, bs: u32| {
        r.hash_ids.is_empty() || r.hash_ids.len() as u64 == r.input_length.div_ceil(bs) as u64
    };
    let bs = hash_block_size.max(1);
    let bad: Vec<usize> = (0..records.len())
        .filter(|&i| !fits(&records[i], bs))
        .collect();
    let &first = bad.first()?;
    let r = &records[first];
    let mut message = format!(
        "{} of {} lines have a number of hash_ids other than input_length / hash_block_size \
         ({bs}), e.g. the line of request {} has {} ids for {} tokens (expected {})",
        bad.len(),
        records.len(),
        first + 1,
        r.hash_ids.len(),
        r.input_length,
        r.input_length.div_ceil(bs)
    );
    if let Some(other) = COMMON_BLOCK_SIZES
        .into_iter()
        .find(|&b| b != bs && records.iter().all(|r| fits(r, b)))
    {
        message.push_str(&format!("; every line fits hash_block_size {other}"));
    }
    Some(message)
}

/// Parses a whole trace; the first malformed line is an error naming its number and field.
pub fn parse_trace(text: &str) -> Result<Vec<TraceRecord>, DataError> {
    let mut out: Vec<TraceRecord> = Vec::new();
    for_each_object("trace", text, |l| {
        let timestamp_ms = l.req_number("timestamp")?;
        let input_length = l.req_count("input_length", 1)?;
        let output_length = l.req_count("output_length", 1)?;
        let hash_ids = match l.obj.get("hash_ids") {
            None | Some(serde_json::Value::Null) => Vec::new(),
            Some(serde_json::Value::Array(a)) => a
                .iter()
                .map(|v| {
                    v.as_u64().ok_or_else(|| {
                        l.error(format!(
                            "field \"hash_ids\": expected non-negative integers, got {v}"
                        ))
                    })
                })
                .collect::<Result<_, _>>()?,
            Some(v) => {
                return Err(l.error(format!("field \"hash_ids\": expected an array, got {v}")))
            }
        };
        if let Some(prev) = out.last() {
            if timestamp_ms < prev.timestamp_ms {
                return Err(l.error(format!(
                    "timestamp {timestamp_ms} is earlier than the previous line's {} \
                     (a trace must be in time order)",
                    prev.timestamp_ms
                )));
            }
        }
        out.push(TraceRecord {
            timestamp_ms,
            input_length,
            output_length,
            hash_ids,
        });
        Ok(())
    })?;
    Ok(out)
}

impl TraceRecord {
    /// The prompt: one `TraceBlock(id)` segment per hash id covering `input_length` (the last
    /// one partial), then `Unique(request_id)` for tokens beyond the hash ids' coverage.
    pub fn prompt(&self, hash_block_size: u32, request_id: u64) -> PromptContent {
        let bs = hash_block_size.max(1);
        let mut prompt = PromptContent::new();
        let mut left = self.input_length;
        for &h in &self.hash_ids {
            if left == 0 {
                break;
            }
            let take = left.min(bs);
            prompt.push(Source::TraceBlock(h), take);
            left -= take;
        }
        prompt.push(Source::Unique(request_id), left);
        prompt
    }
}

/// Replays trace records at their timestamps × `time_scale` (2.0 = half the request rate),
/// counted from the first record's timestamp.
#[derive(Debug, Clone)]
pub struct TraceGenerator {
    records: Vec<TraceRecord>,
    next: usize,
    hash_block_size: u32,
    time_scale: f64,
    /// The timestamp (ms) replayed at the stage start.
    origin_ms: f64,
    prev_at: f64,
}

impl TraceGenerator {
    /// A replay of `records` (in time order, as [`parse_trace`] guarantees) whose first
    /// request arrives at the stage start.
    pub fn new(records: Vec<TraceRecord>, hash_block_size: u32, time_scale: f64) -> Self {
        Self {
            origin_ms: records.first().map_or(0.0, |r| r.timestamp_ms),
            records,
            next: 0,
            hash_block_size,
            time_scale,
            prev_at: 0.0,
        }
    }

    /// Replays each timestamp as milliseconds after the stage start, not after the first
    /// record's.
    pub fn with_absolute_times(mut self) -> Self {
        self.origin_ms = 0.0;
        self
    }

    /// When record `r` arrives, in seconds after the stage start.
    fn arrival(&self, r: &TraceRecord) -> f64 {
        (r.timestamp_ms - self.origin_ms) / 1000.0 * self.time_scale
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// True for an empty trace.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
}

impl RequestGenerator for TraceGenerator {
    fn next_request(&mut self, request_id: u64) -> Option<RequestSpec> {
        let r = self.records.get(self.next)?;
        self.next += 1;
        let at = self.arrival(r);
        let gap = (at - self.prev_at).max(0.0);
        self.prev_at = at;
        Some(RequestSpec {
            gap,
            prompt: r.prompt(self.hash_block_size, request_id),
            output_len: r.output_length,
            session: None,
        })
    }

    fn data_shape(&self) -> Option<DataShape> {
        Some(DataShape {
            requests: self.records.len() as u64,
            seconds: self.records.last().map_or(0.0, |r| self.arrival(r)),
        })
    }

    fn data_warning(&self) -> Option<String> {
        hash_id_warning(&self.records, self.hash_block_size)
    }
}
