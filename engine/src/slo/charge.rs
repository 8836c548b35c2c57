//! Who answers for what in a disaggregated run: a handed-off request's TTFT is its prefill
//! worker's, the rest its decode worker's.

use super::config::{Metric, SloConfig};
use super::report::{value, GroupSlo};
use crate::deployment::TransferRecord;
use crate::stats::RequestRecord;
use std::collections::BTreeMap;

/// The part of a request a worker answers for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Part {
    /// All of it: the request ran on this one worker.
    Whole,
    /// Its prefill, handed off: its TTFT (the worker produced the first token).
    First,
    /// Its decode: completing it, its TPOT and its E2E.
    Rest,
}

impl Part {
    /// Whether a worker answering for this part answers for `metric`.
    pub(super) fn covers(self, metric: Metric) -> bool {
        match self {
            Part::Whole => true,
            Part::First => metric == Metric::Ttft,
            Part::Rest => metric != Metric::Ttft,
        }
    }

    /// The request's value of `metric` as this part charges it: a handed-off request's TTFT
    /// stands once its first token came, whatever became of it on its decode worker.
    pub(super) fn value(self, r: &RequestRecord, metric: Metric) -> f64 {
        if self == Part::First && !r.first_token.is_nan() {
            r.ttft()
        } else {
            value(r, metric)
        }
    }

    /// Whether the part was done: the first token came (`First`), or the request completed.
    pub(super) fn done(self, r: &RequestRecord) -> bool {
        match self {
            Part::First => !r.first_token.is_nan(),
            Part::Whole | Part::Rest => r.is_completed(),
        }
    }
}

impl SloConfig {
    /// One row per worker id up to the highest any request names, over `duration` seconds:
    /// a request that stayed on one worker is charged whole to it; a handed-off one charges
    /// its TTFT to its prefill worker (`worker`) and the rest to its decode worker.
    pub(super) fn worker_rows(
        &self,
        records: &[&RequestRecord],
        transfers: &[TransferRecord],
        duration: f64,
        later: impl Fn(&RequestRecord) -> bool + Copy,
    ) -> Vec<GroupSlo> {
        let decoder: BTreeMap<u64, u32> = transfers
            .iter()
            .filter_map(|t| t.decode_worker.map(|d| (t.request, d)))
            .collect();
        let mut rows: Vec<Vec<(&RequestRecord, Part)>> = Vec::new();
        let mut charge = |w: u32, r, part| {
            let w = w as usize;
            if rows.len() <= w {
                rows.resize_with(w + 1, Vec::new);
            }
            rows[w].push((r, part));
        };
        for &r in records {
            let Some(w) = r.worker else { continue };
            match decoder.get(&r.id) {
                Some(&d) => {
                    charge(w, r, Part::First);
                    charge(d, r, Part::Rest);
                }
                None => charge(w, r, Part::Whole),
            }
        }
        rows.iter()
            .enumerate()
            .map(|(w, charged)| GroupSlo {
                id: w as u32,
                summary: self.summarize_charged(charged, duration, false, later),
            })
            .collect()
    }
}
