//! What a request counts for: its value of a metric, and the part of it a worker answers
//! for (all of it, or a handed-off request's prefill or decode).

use super::config::Metric;
use crate::stats::RequestRecord;

/// A request's value of `metric` in seconds: ∞ if it did not complete; NaN when it has none
/// (TPOT of a one-token answer).
fn value(r: &RequestRecord, metric: Metric) -> f64 {
    if !r.is_completed() {
        return f64::INFINITY;
    }
    match metric {
        Metric::Ttft => r.ttft(),
        Metric::Tpot => r.tpot(),
        Metric::E2e => r.e2e(),
    }
}

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
