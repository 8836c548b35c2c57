//! Who answers for what in a disaggregated run: a handed-off request's TTFT is its prefill
//! worker's, the rest its decode worker's.

use super::config::SloConfig;
use super::part::Part;
use super::report::GroupSlo;
use crate::stats::{RequestRecord, TransferRecord};
use std::collections::BTreeMap;

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
