//! Per-request phase timestamps, as columns, for the request timeline.

use std::rc::Rc;

use super::format::{format_value, Unit};

/// Phase names in order, matching the CSS variables `--phase-queued` ... `--phase-decode`.
pub const PHASES: [&str; 4] = ["queued", "KV fetch", "prefill", "decode"];

/// The phase each bar segment shows: a request queues, may fetch KV from an offload tier,
/// queues again until admitted, then prefills and decodes.
pub const SEGMENT_PHASE: [usize; 5] = [0, 1, 0, 2, 3];

/// One row per request; segment `k` runs from boundary `k` to boundary `k + 1`:
/// `arrival → kv_fetch_start → kv_fetch_end → prefill_start → decode_start → finish`
/// (seconds of simulated time). A segment a request skipped has equal boundaries; a boundary
/// not reached is NaN.
#[derive(Clone, Debug, Default)]
pub struct RequestPhases {
    /// The request's id as the engine names it.
    pub request_id: Rc<[u64]>,
    /// The worker that served it (one timeline lane per worker).
    pub worker: Rc<[u32]>,
    /// When it arrived and started queueing.
    pub arrival: Rc<[f64]>,
    /// When it started fetching cached KV blocks from an offload tier.
    pub kv_fetch_start: Rc<[f64]>,
    /// When the fetch landed (queued again from there until admitted).
    pub kv_fetch_end: Rc<[f64]>,
    /// When prefill started.
    pub prefill_start: Rc<[f64]>,
    /// When the first token was out and decode started.
    pub decode_start: Rc<[f64]>,
    /// When the last token was out.
    pub finish: Rc<[f64]>,
}

/// Equality is identity of the columns: the phases of a run are derived once and shared,
/// and comparing contents would be O(n) per render and never equal when a request is
/// unfinished (its NaN boundaries are unequal to themselves).
impl PartialEq for RequestPhases {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.request_id, &other.request_id)
            && Rc::ptr_eq(&self.worker, &other.worker)
            && self
                .boundaries()
                .iter()
                .zip(other.boundaries())
                .all(|(a, b)| std::ptr::eq(*a, b))
    }
}

impl RequestPhases {
    /// Number of requests; the columns must agree (see [`RequestPhases::check`]).
    pub fn len(&self) -> usize {
        self.request_id.len()
    }

    /// True when there is no request.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The six boundary columns in segment order.
    pub fn boundaries(&self) -> [&[f64]; 6] {
        [
            &self.arrival,
            &self.kv_fetch_start,
            &self.kv_fetch_end,
            &self.prefill_start,
            &self.decode_start,
            &self.finish,
        ]
    }

    /// An error naming the first column whose length differs from `request_id`'s.
    pub fn check(&self) -> Result<(), String> {
        let n = self.len();
        let named: [(&str, usize); 7] = [
            ("worker", self.worker.len()),
            ("arrival", self.arrival.len()),
            ("kv_fetch_start", self.kv_fetch_start.len()),
            ("kv_fetch_end", self.kv_fetch_end.len()),
            ("prefill_start", self.prefill_start.len()),
            ("decode_start", self.decode_start.len()),
            ("finish", self.finish.len()),
        ];
        match named.iter().find(|(_, len)| *len != n) {
            Some((name, len)) => Err(format!("{name} has {len} entries, request_id has {n}")),
            None => Ok(()),
        }
    }

    /// Start and end of request `i`'s whole bar: arrival to the last boundary reached.
    pub fn span(&self, i: usize) -> (f64, f64) {
        let last = self
            .boundaries()
            .iter()
            .rev()
            .map(|b| b[i])
            .find(|v| v.is_finite())
            .unwrap_or(f64::NAN);
        (self.arrival[i], last)
    }
}

/// The default tooltip: id, worker, and how long each phase took (queueing before and after
/// a KV fetch added up).
///
/// `request 7 · worker 2` / `queued 12.0 ms · KV fetch 0 s · prefill 40.0 ms · decode 1.20 s`
/// / `arrived 3.20 s, finished 4.45 s`. Phases not reached are left out.
pub fn describe_request(data: &RequestPhases, i: usize) -> String {
    let b = data.boundaries();
    let mut took = [None::<f64>; PHASES.len()];
    for (k, &phase) in SEGMENT_PHASE.iter().enumerate() {
        if b[k][i].is_finite() && b[k + 1][i].is_finite() {
            *took[phase].get_or_insert(0.0) += b[k + 1][i] - b[k][i];
        }
    }
    let phases: Vec<String> = PHASES
        .iter()
        .zip(took)
        .filter_map(|(name, t)| Some(format!("{name} {}", format_value(t?, Unit::Seconds))))
        .collect();
    let (start, end) = data.span(i);
    let finished = if data.finish[i].is_finite() {
        format!("finished {}", format_value(end, Unit::Seconds))
    } else {
        "unfinished".to_string()
    };
    format!(
        "request {} · worker {}\n{}\narrived {}, {finished}",
        data.request_id[i],
        data.worker[i],
        phases.join(" · "),
        format_value(start, Unit::Seconds),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two() -> RequestPhases {
        RequestPhases {
            request_id: Rc::from(vec![7, 8]),
            worker: Rc::from(vec![2, 0]),
            arrival: Rc::from(vec![3.2, 1.0]),
            kv_fetch_start: Rc::from(vec![3.205, 1.5]),
            kv_fetch_end: Rc::from(vec![3.207, 1.5]),
            prefill_start: Rc::from(vec![3.212, 1.5]),
            decode_start: Rc::from(vec![3.252, f64::NAN]),
            finish: Rc::from(vec![4.45, f64::NAN]),
        }
    }

    #[test]
    fn describes_phase_durations() {
        // queued (3.205 − 3.2) + (3.212 − 3.207) = 10 ms around a 2 ms KV fetch; prefill
        // 40 ms; decode 4.45 − 3.252 = 1.198 s.
        assert_eq!(
            describe_request(&two(), 0),
            "request 7 · worker 2\nqueued 10.0 ms · KV fetch 2.00 ms · prefill 40.0 ms · decode 1.20 s\n\
             arrived 3.20 s, finished 4.45 s"
        );
    }

    #[test]
    fn unfinished_requests_end_at_their_last_boundary() {
        let d = two();
        assert_eq!(d.span(1), (1.0, 1.5));
        assert!(describe_request(&d, 1).ends_with("arrived 1.00 s, unfinished"));
    }

    #[test]
    fn column_lengths_must_agree() {
        let mut d = two();
        assert_eq!(d.check(), Ok(()));
        d.finish = Rc::from(vec![1.0]);
        assert_eq!(
            d.check(),
            Err("finish has 1 entries, request_id has 2".to_string())
        );
    }
}
