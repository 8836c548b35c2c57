//! Per-request phase timestamps, as columns, for the request timeline.

use std::rc::Rc;

use super::format::{format_value, Unit};

/// Phase names in order.
pub const PHASES: [&str; 6] = [
    "queued",
    "KV fetch",
    "prefill",
    "KV transfer wait",
    "KV transfer",
    "decode",
];

/// The CSS variable holding each phase's colour.
pub const PHASE_COLOURS: [&str; 6] = [
    "--phase-queued",
    "--phase-kv",
    "--phase-prefill",
    "--phase-transfer-wait",
    "--phase-transfer",
    "--phase-decode",
];

/// The phases only a disaggregated run has (left out of the legend otherwise).
pub const TRANSFER_PHASES: [usize; 2] = [3, 4];

/// The phase each bar segment shows: a request queues, may fetch KV from an offload tier,
/// queues again until admitted, prefills, may wait for room on a decode worker and move its
/// KV there (disaggregated runs), then decodes.
pub const SEGMENT_PHASE: [usize; 7] = [0, 1, 0, 2, 3, 4, 5];

/// Marks a bar without a partner in [`RequestPhases::partner`].
pub const NO_PARTNER: u32 = u32::MAX;

/// One row per bar; segment `k` runs from boundary `k` to boundary `k + 1`:
/// `arrival → kv_fetch_start → kv_fetch_end → prefill_start → handoff → transfer_start →
/// decode_start → finish` (seconds of simulated time). A segment a bar skips has equal
/// boundaries; a boundary not reached is NaN.
///
/// A request served by one worker is one bar (its transfer segments empty). A disaggregated
/// request is two bars, each on its worker's lane and naming the other in `partner`: the
/// prefill side (arrival to hand-off) and, listed after it, the decode side (hand-off, the
/// wait for room, the transfer, decode).
#[derive(Clone, Debug, Default)]
pub struct RequestPhases {
    /// The request's id as the engine names it.
    pub request_id: Rc<[u64]>,
    /// The worker that served it (one timeline lane per worker).
    pub worker: Rc<[u32]>,
    /// The other bar of a disaggregated request, or [`NO_PARTNER`]. May be empty (no partners).
    pub partner: Rc<[u32]>,
    /// When it arrived and started queueing.
    pub arrival: Rc<[f64]>,
    /// When it started fetching cached KV blocks from an offload tier.
    pub kv_fetch_start: Rc<[f64]>,
    /// When the fetch landed (queued again from there until admitted).
    pub kv_fetch_end: Rc<[f64]>,
    /// When prefill started.
    pub prefill_start: Rc<[f64]>,
    /// When the first token was out (and, disaggregated, the request was handed off).
    pub handoff: Rc<[f64]>,
    /// When its KV started to move to the decode worker (= hand-off when colocated).
    pub transfer_start: Rc<[f64]>,
    /// When decode could start: the KV had landed (= hand-off when colocated).
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
            && Rc::ptr_eq(&self.partner, &other.partner)
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

    /// The eight boundary columns in segment order.
    pub fn boundaries(&self) -> [&[f64]; 8] {
        [
            &self.arrival,
            &self.kv_fetch_start,
            &self.kv_fetch_end,
            &self.prefill_start,
            &self.handoff,
            &self.transfer_start,
            &self.decode_start,
            &self.finish,
        ]
    }

    /// An error naming the first column whose length differs from `request_id`'s.
    pub fn check(&self) -> Result<(), String> {
        let n = self.len();
        if !self.partner.is_empty() && self.partner.len() != n {
            return Err(format!(
                "partner has {} entries, request_id has {n}",
                self.partner.len()
            ));
        }
        let named: [(&str, usize); 9] = [
            ("worker", self.worker.len()),
            ("arrival", self.arrival.len()),
            ("kv_fetch_start", self.kv_fetch_start.len()),
            ("kv_fetch_end", self.kv_fetch_end.len()),
            ("prefill_start", self.prefill_start.len()),
            ("handoff", self.handoff.len()),
            ("transfer_start", self.transfer_start.len()),
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

    /// The other bar of bar `i`'s request, if it is disaggregated.
    pub fn partner_of(&self, i: usize) -> Option<usize> {
        self.partner
            .get(i)
            .filter(|&&p| p != NO_PARTNER)
            .map(|&p| p as usize)
    }

    /// Bar `i`'s request as (prefill-side bar, decode-side bar if any).
    pub fn halves(&self, i: usize) -> (usize, Option<usize>) {
        match self.partner_of(i) {
            Some(p) if p < i => (p, Some(i)),
            Some(p) => (i, Some(p)),
            None => (i, None),
        }
    }
}

/// The default tooltip: id, worker, and how long each phase took (queueing before and after
/// a KV fetch added up).
///
/// `request 7 · worker 2` / `queued 12.0 ms · KV fetch 0 s · prefill 40.0 ms · decode 1.20 s`
/// / `arrived 3.20 s, finished 4.45 s`. Phases not reached are left out.
///
/// A disaggregated request reads the same over both its bars: `worker 0 → worker 2`, the
/// prefill side's phases then the decode side's (transfer phases are left out otherwise).
pub fn describe_request(data: &RequestPhases, i: usize) -> String {
    let b = data.boundaries();
    let (first, second) = data.halves(i);
    let mut took = [None::<f64>; PHASES.len()];
    for (k, &phase) in SEGMENT_PHASE.iter().enumerate() {
        // The prefill side up to hand-off, the decode side from there.
        let bar = if k < 4 {
            first
        } else {
            second.unwrap_or(first)
        };
        if b[k][bar].is_finite() && b[k + 1][bar].is_finite() {
            *took[phase].get_or_insert(0.0) += b[k + 1][bar] - b[k][bar];
        }
    }
    if second.is_none() {
        for p in TRANSFER_PHASES {
            took[p] = None;
        }
    }
    let phases: Vec<String> = PHASES
        .iter()
        .zip(took)
        .filter_map(|(name, t)| Some(format!("{name} {}", format_value(t?, Unit::Seconds))))
        .collect();
    let last = second.unwrap_or(first);
    let finished = if data.finish[last].is_finite() {
        format!(
            "finished {}",
            format_value(data.span(last).1, Unit::Seconds)
        )
    } else {
        "unfinished".to_string()
    };
    let workers = match second {
        Some(d) => format!("worker {} → worker {}", data.worker[first], data.worker[d]),
        None => format!("worker {}", data.worker[first]),
    };
    format!(
        "request {} · {workers}\n{}\narrived {}, {finished}",
        data.request_id[i],
        phases.join(" · "),
        format_value(data.arrival[first], Unit::Seconds),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two() -> RequestPhases {
        RequestPhases {
            request_id: Rc::from(vec![7, 8]),
            worker: Rc::from(vec![2, 0]),
            partner: Rc::from(vec![]),
            arrival: Rc::from(vec![3.2, 1.0]),
            kv_fetch_start: Rc::from(vec![3.205, 1.5]),
            kv_fetch_end: Rc::from(vec![3.207, 1.5]),
            prefill_start: Rc::from(vec![3.212, 1.5]),
            handoff: Rc::from(vec![3.252, f64::NAN]),
            transfer_start: Rc::from(vec![3.252, f64::NAN]),
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
    fn a_disaggregated_request_reads_the_same_from_both_bars() {
        // Request 9: queued 0.5 s, prefill 1.0 → 1.2 on worker 0; handed off at 1.2, waited
        // until 1.25 for room on worker 3, moved until 1.3, decoded until 2.5.
        let h = 1.2;
        let d = RequestPhases {
            request_id: Rc::from(vec![9, 9]),
            worker: Rc::from(vec![0, 3]),
            partner: Rc::from(vec![1, 0]),
            arrival: Rc::from(vec![0.5, h]),
            kv_fetch_start: Rc::from(vec![1.0, h]),
            kv_fetch_end: Rc::from(vec![1.0, h]),
            prefill_start: Rc::from(vec![1.0, h]),
            handoff: Rc::from(vec![h, h]),
            transfer_start: Rc::from(vec![h, 1.25]),
            decode_start: Rc::from(vec![h, 1.3]),
            finish: Rc::from(vec![h, 2.5]),
        };
        let text =
            "request 9 · worker 0 → worker 3\nqueued 500 ms · KV fetch 0 s · prefill 200 ms \
                    · KV transfer wait 50.0 ms · KV transfer 50.0 ms · decode 1.20 s\n\
                    arrived 500 ms, finished 2.50 s";
        assert_eq!(describe_request(&d, 0), text);
        assert_eq!(describe_request(&d, 1), text);
        assert_eq!(d.halves(1), (0, Some(1)));
        assert_eq!(d.check(), Ok(()));
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
