//! Searches: bisection on a request rate, and on the number of workers, for the SLO's edge.
//!
//! Both assume the SLO is monotone in the searched value (more load misses sooner, more
//! workers meet sooner); each probe is a full run, so a search costs about
//! log2(range / tolerance) runs.

use super::point::PointMetrics;
use engine::scenario::sweep::{number, Search};
use serde::Serialize;
use serde_json::Value;

/// One run a search made.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Probe {
    /// The value tried.
    pub value: f64,
    /// Whether the SLO was met there, in a run long enough to judge (one too short counts
    /// as a miss: an answer must hold).
    pub met: bool,
    /// Whether the run was overloaded there.
    pub overloaded: bool,
}

/// What a search found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchOutcome {
    /// The highest rate or fewest workers meeting the SLO; `None` when no value in the
    /// range does.
    pub value: Option<f64>,
    /// The runs made, in order.
    pub probes: Vec<Probe>,
    /// When the answer is at an end of the range, which and what to do; whether it was
    /// searched again at a longer length.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The answer re-run longer, and the next value beyond it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confirmation: Option<Confirmation>,
}

/// A search's answer checked at a longer length.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Confirmation {
    /// How many times the stages' requests the check ran.
    pub scale: u32,
    /// The answer still meets the SLO there.
    pub holds: bool,
    /// The next value beyond the answer (the lowest rate that missed above it; one worker
    /// fewer), when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<f64>,
    /// The next value misses the SLO there (as it should).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_misses: Option<bool>,
}

/// A bisection one probe at a time: [`Bisection::next`] names the run to make, and
/// [`Bisection::record`] takes its figures. The same steps whoever runs the probes (a loop
/// here, a Web Worker per probe in the app), so the answer is the same.
#[derive(Debug, Clone)]
pub(crate) struct Bisection {
    search: Search,
    probes: Vec<Probe>,
    phase: Phase,
    /// The value asked for by `next`, until `record` hears its outcome.
    asked: Option<f64>,
}

/// Where a search stands between probes.
#[derive(Debug, Clone)]
enum Phase {
    /// The first end (max rate: `low`; min workers: `max`).
    First,
    /// The other end, with the first end's figures.
    Second(PointMetrics),
    /// Bisecting `(lo, hi)`, with the figures of the best value met so far.
    Bisect(f64, f64, PointMetrics),
    /// Found (or not): the value, its figures, a note.
    Done(Option<f64>, Option<PointMetrics>, Option<String>),
}

/// What a search wants next.
pub(crate) enum SearchStep {
    /// A run with `path` set to `value`.
    Probe(String, Value),
    /// The search is over: its outcome and the figures at its answer.
    Done(Box<(SearchOutcome, Option<PointMetrics>)>),
}

impl Bisection {
    /// A search about to make its first probe.
    pub(crate) fn new(search: &Search) -> Self {
        Self {
            search: search.clone(),
            probes: Vec::new(),
            phase: Phase::First,
            asked: None,
        }
    }

    pub(crate) fn path(&self) -> &str {
        match &self.search {
            Search::MaxRate { path, .. } => path,
            Search::MinWorkers { .. } => "simulation.num_workers",
        }
    }

    /// The next run to make, or the outcome once there is none.
    pub(crate) fn next(&mut self) -> SearchStep {
        let value = match (&self.search, &self.phase) {
            (_, Phase::Done(value, at, note)) => {
                return SearchStep::Done(Box::new((
                    SearchOutcome {
                        value: *value,
                        probes: self.probes.clone(),
                        note: note.clone(),
                        confirmation: None,
                    },
                    at.clone(),
                )))
            }
            (Search::MaxRate { low, .. }, Phase::First) => *low,
            (Search::MaxRate { high, .. }, Phase::Second(_)) => *high,
            (Search::MinWorkers { max, .. }, Phase::First) => f64::from(*max),
            (Search::MinWorkers { min, .. }, Phase::Second(_)) => f64::from(*min),
            (Search::MaxRate { .. }, Phase::Bisect(lo, hi, _)) => lo + (hi - lo) / 2.0,
            // Worker counts are whole: the midpoint rounds down.
            (Search::MinWorkers { .. }, Phase::Bisect(lo, hi, _)) => lo + ((hi - lo) / 2.0).floor(),
        };
        self.asked = Some(value);
        SearchStep::Probe(self.path().to_string(), number(value))
    }

    /// The figures of the run `next` asked for; an error ends the search with it.
    pub(crate) fn record(&mut self, run: Result<PointMetrics, String>) -> Result<(), String> {
        let x = self.asked.take().expect("record follows next");
        let m = run?;
        let met = m.slo_met() && m.settled;
        self.probes.push(Probe {
            value: x,
            met,
            overloaded: m.overloaded.is_some(),
        });
        let phase = std::mem::replace(&mut self.phase, Phase::First);
        self.phase = match (&self.search, phase) {
            (Search::MaxRate { .. }, Phase::First) if !met => {
                done(None, None, "even low misses the SLO: lower it")
            }
            (Search::MaxRate { .. }, Phase::Second(_)) if met => done(
                Some(x),
                Some(m),
                "high meets the SLO: raise it to find the limit",
            ),
            (Search::MaxRate { low, high, .. }, Phase::Second(m_lo)) => {
                self.bisect_rate(*low, *high, m_lo)
            }
            (Search::MaxRate { .. }, Phase::Bisect(lo, hi, best)) => {
                if met {
                    self.bisect_rate(x, hi, m)
                } else {
                    self.bisect_rate(lo, x, best)
                }
            }
            (Search::MinWorkers { .. }, Phase::First) if !met => {
                done(None, None, "even max workers miss the SLO: raise max")
            }
            (Search::MinWorkers { .. }, Phase::Second(_)) if met => {
                Phase::Done(Some(x), Some(m), None)
            }
            (Search::MinWorkers { min, max }, Phase::Second(m_hi)) => {
                bisect_workers(f64::from(*min), f64::from(*max), m_hi)
            }
            (Search::MinWorkers { .. }, Phase::Bisect(lo, hi, best)) => {
                if met {
                    bisect_workers(lo, x, m)
                } else {
                    bisect_workers(x, hi, best)
                }
            }
            (_, Phase::First) => Phase::Second(m),
            (_, Phase::Done(..)) => unreachable!("next does not ask once done"),
        };
        Ok(())
    }

    /// Bisect `(lo, hi)` on the rate, or stop at `lo` once the bracket is `tolerance`
    /// narrow (or the rates' resolution, whatever the tolerance).
    fn bisect_rate(&self, lo: f64, hi: f64, best: PointMetrics) -> Phase {
        let Search::MaxRate { tolerance, .. } = &self.search else {
            unreachable!("a rate search");
        };
        let mid = lo + (hi - lo) / 2.0;
        if hi - lo > *tolerance && mid > lo && mid < hi {
            Phase::Bisect(lo, hi, best)
        } else {
            Phase::Done(Some(lo), Some(best), None)
        }
    }
}

/// Bisect the worker count in `(lo, hi]`, where `hi` meets the SLO, until they are adjacent.
fn bisect_workers(lo: f64, hi: f64, best: PointMetrics) -> Phase {
    if hi - lo > 1.0 {
        Phase::Bisect(lo, hi, best)
    } else {
        Phase::Done(Some(hi), Some(best), None)
    }
}

fn done(value: Option<f64>, at: Option<PointMetrics>, note: &str) -> Phase {
    Phase::Done(value, at, Some(note.into()))
}
