//! `Trace`: replay of a Mooncake-style JSONL trace.
//!
//! One request per line: `{"timestamp": 1200, "input_length": 1800, "output_length": 40,
//! "hash_ids": [0, 1, 2, 7]}`. `timestamp` is milliseconds from the stage start and must not
//! decrease from line to line; each hash id stands for `hash_block_size` prompt tokens
//! (Mooncake uses 512), so equal hash ids at equal positions are shared prefixes.

use super::{RequestGenerator, RequestSpec};
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

/// Replays trace records at their timestamps × `time_scale` (2.0 = half the request rate).
#[derive(Debug, Clone)]
pub struct TraceGenerator {
    records: Vec<TraceRecord>,
    next: usize,
    hash_block_size: u32,
    time_scale: f64,
    prev_at: f64,
}

impl TraceGenerator {
    /// A replay of `records` (in time order, as [`parse_trace`] guarantees).
    pub fn new(records: Vec<TraceRecord>, hash_block_size: u32, time_scale: f64) -> Self {
        Self {
            records,
            next: 0,
            hash_block_size,
            time_scale,
            prev_at: 0.0,
        }
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
        let at = r.timestamp_ms / 1000.0 * self.time_scale;
        let gap = (at - self.prev_at).max(0.0);
        self.prev_at = at;
        Some(RequestSpec {
            gap,
            prompt: r.prompt(self.hash_block_size, request_id),
            output_len: r.output_length,
            session: None,
        })
    }
}
