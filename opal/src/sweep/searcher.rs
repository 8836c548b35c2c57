//! A search that holds: bisection on runs long enough to judge, then its answer re-run
//! `confirm` times longer together with the next value beyond it. When the longer runs
//! disagree (the answer misses, or the next value also meets), the search is made again
//! at the longer length, once.

use super::point::PointMetrics;
use super::search::{Bisection, Confirmation, SearchOutcome, SearchStep};
use engine::scenario::sweep::{number, Search};
use serde_json::Value;

/// A search in progress.
#[derive(Debug, Clone)]
pub(crate) struct Searcher {
    search: Search,
    bisection: Bisection,
    /// Times longer the confirming runs are.
    confirm: u32,
    stage: Stage,
    /// Probes of an earlier search (before a re-search), kept for the outcome.
    earlier: Vec<super::search::Probe>,
    /// Said when searched again.
    note: Option<String>,
    /// The first answer's check, when it led to a re-search.
    first_check: Option<Confirmation>,
}

#[derive(Debug, Clone)]
enum Stage {
    /// Bisecting at the trials' own length.
    Bisecting,
    /// The answer re-run at `scale`.
    Confirming { outcome: SearchOutcome, scale: u32 },
    /// The next value re-run, the answer having held.
    CheckingNext {
        outcome: SearchOutcome,
        held: Box<PointMetrics>,
        next: f64,
        scale: u32,
    },
    /// Bisecting again at the confirming length (no confirmation after).
    Researching,
}

/// What a search wants next.
pub(crate) enum Next {
    /// A run of `path` = value at `scale` times the stages' length, lengthened further
    /// while too short to judge when the flag says so (bisecting at the trials' own
    /// length; not when confirming, at a length already chosen).
    Probe((String, Value), u32, bool),
    /// The outcome and the figures at its answer.
    Done(Box<(SearchOutcome, Option<PointMetrics>)>),
}

impl Searcher {
    pub(crate) fn new(search: &Search, confirm: u32) -> Self {
        Self {
            search: search.clone(),
            bisection: Bisection::new(search),
            confirm,
            stage: Stage::Bisecting,
            earlier: Vec::new(),
            note: None,
            first_check: None,
        }
    }

    /// The first probe (made at the sweep's own length).
    pub(crate) fn next_probe(&mut self) -> (String, Value) {
        match self.bisection.next() {
            SearchStep::Probe(path, value) => (path, value),
            SearchStep::Done(_) => unreachable!("a search starts with a probe"),
        }
    }

    /// A probe's judged figures, made at `scale`; what to run next.
    pub(crate) fn record(&mut self, m: PointMetrics, scale: u32) -> Next {
        let met = m.slo_met() && m.settled;
        match std::mem::replace(&mut self.stage, Stage::Bisecting) {
            Stage::Bisecting => {
                self.bisection.record(Ok(m)).expect("figures, not an error");
                self.advance(scale, true)
            }
            Stage::Researching => {
                self.stage = Stage::Researching;
                self.bisection.record(Ok(m)).expect("figures, not an error");
                self.advance(scale, false)
            }
            Stage::Confirming {
                mut outcome,
                scale: s,
            } => {
                let value = outcome.value.expect("a confirmed search has an answer");
                let next = self.next_value(&outcome, value);
                outcome.confirmation = Some(Confirmation {
                    scale: s,
                    holds: met,
                    next,
                    next_misses: None,
                });
                if !met {
                    // Too high (rate) or too few (workers): search below it, longer.
                    return self.research(outcome, s, value, false);
                }
                match next {
                    Some(next) => {
                        self.stage = Stage::CheckingNext {
                            outcome,
                            held: Box::new(m),
                            next,
                            scale: s,
                        };
                        Next::Probe((self.bisection.path().to_string(), number(next)), s, false)
                    }
                    None => Next::Done(Box::new((self.finish(outcome), Some(m)))),
                }
            }
            Stage::CheckingNext {
                mut outcome,
                held,
                next,
                scale: s,
            } => {
                if let Some(c) = &mut outcome.confirmation {
                    c.next_misses = Some(!met);
                }
                if met {
                    // The next value holds too: the short runs were pessimistic.
                    return self.research(outcome, s, next, true);
                }
                Next::Done(Box::new((self.finish(outcome), Some(*held))))
            }
        }
    }

    /// Asks the bisection for its next probe; once it answers, confirms when `confirm` (at
    /// `confirm` times the scenario's length, or twice the answer's if that is longer).
    fn advance(&mut self, scale: u32, confirm: bool) -> Next {
        match self.bisection.next() {
            SearchStep::Probe(path, value) => Next::Probe((path, value), scale, confirm),
            SearchStep::Done(found) => {
                let (outcome, at) = *found;
                match outcome.value {
                    Some(v) if confirm && self.confirm > 1 => {
                        let s = self.confirm.max(scale.saturating_mul(2));
                        self.stage = Stage::Confirming { outcome, scale: s };
                        Next::Probe((self.bisection.path().to_string(), number(v)), s, false)
                    }
                    _ => Next::Done(Box::new((self.finish(outcome), at))),
                }
            }
        }
    }

    /// The value just beyond the answer: the lowest rate that missed above it, or one
    /// worker fewer.
    fn next_value(&self, outcome: &SearchOutcome, value: f64) -> Option<f64> {
        match &self.search {
            Search::MaxRate { .. } => outcome
                .probes
                .iter()
                .filter(|p| !p.met && p.value > value)
                .map(|p| p.value)
                .reduce(f64::min),
            Search::MinWorkers { min, .. } => (value > f64::from(*min)).then_some(value - 1.0),
        }
    }

    /// Searches again at `scale` on the side of `edge` the longer run showed: below it
    /// (`above` false: the answer missed) or from it (`above` true: the next value met).
    fn research(&mut self, outcome: SearchOutcome, scale: u32, edge: f64, above: bool) -> Next {
        let narrowed = match (&self.search, above) {
            (
                Search::MaxRate {
                    path,
                    low,
                    tolerance,
                    ..
                },
                false,
            ) => Search::MaxRate {
                path: path.clone(),
                low: *low,
                high: edge,
                tolerance: *tolerance,
            },
            (
                Search::MaxRate {
                    path,
                    high,
                    tolerance,
                    ..
                },
                true,
            ) => Search::MaxRate {
                path: path.clone(),
                low: edge,
                // Up to the lowest rate found overloaded above it: no longer run sustains it.
                high: (outcome.probes.iter())
                    .filter(|p| p.overloaded && p.value > edge)
                    .map(|p| p.value)
                    .fold(*high, f64::min),
                tolerance: *tolerance,
            },
            (Search::MinWorkers { max, .. }, false) => Search::MinWorkers {
                min: edge as u32 + 1,
                max: *max,
            },
            (Search::MinWorkers { min, .. }, true) => Search::MinWorkers {
                min: *min,
                max: edge as u32,
            },
        };
        let bracket_ok = match &narrowed {
            Search::MaxRate { low, high, .. } => high > low,
            Search::MinWorkers { min, max } => min <= max,
        };
        let first = outcome.value.unwrap_or(f64::NAN);
        if !bracket_ok {
            return Next::Done(Box::new((self.finish(outcome), None)));
        }
        self.note = Some(format!(
            "searched again at {scale}x the requests: the first answer ({}) {}",
            super::output::short_number(first),
            if above {
                "was beaten by the next value at that length"
            } else {
                "did not hold at that length"
            }
        ));
        self.earlier.extend(outcome.probes);
        self.first_check = outcome.confirmation;
        self.bisection = Bisection::new(&narrowed);
        self.stage = Stage::Researching;
        Next::Probe(self.next_probe(), scale, false)
    }

    /// The outcome with earlier probes first and the re-search's note.
    fn finish(&mut self, mut outcome: SearchOutcome) -> SearchOutcome {
        if !self.earlier.is_empty() {
            let mut probes = std::mem::take(&mut self.earlier);
            probes.append(&mut outcome.probes);
            outcome.probes = probes;
        }
        if outcome.confirmation.is_none() {
            outcome.confirmation = self.first_check.take();
        }
        if let Some(n) = self.note.take() {
            outcome.note = Some(match outcome.note.take() {
                Some(old) => format!("{n}; {old}"),
                None => n,
            });
        }
        outcome
    }
}
