//! A routing decision's evidence in compact form: a decision record is 32 bytes, so a
//! million-request run keeps its decisions in 32 MB (a string slice and a vector in each
//! made it 64).

use super::CandidateScore;
use crate::router::PrefixMatch;
use serde::{Serialize, Serializer};

/// What a decision's candidate scores mean, one per policy (two for session affinity).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// Round robin: 1 for the worker whose turn it is.
    ItsTurn,
    /// Random: 1 for the worker drawn.
    Drawn,
    /// Least loaded: outstanding requests.
    Outstanding,
    /// Power of two: outstanding requests of the two sampled.
    OutstandingOfTwo,
    /// Least KV: KV usage fraction.
    KvUsage,
    /// Max prefix: cached prefix fraction.
    PrefixFraction,
    /// Prefix-load: the weighted score.
    PrefixLoad,
    /// Session affinity: the session's worker.
    SessionWorker,
    /// Session affinity: least loaded, for a new or orphaned session.
    SessionLeastLoaded,
}

impl Basis {
    /// Every basis, in declaration order (the wire form is the index).
    pub const ALL: [Basis; 9] = [
        Basis::ItsTurn,
        Basis::Drawn,
        Basis::Outstanding,
        Basis::OutstandingOfTwo,
        Basis::KvUsage,
        Basis::PrefixFraction,
        Basis::PrefixLoad,
        Basis::SessionWorker,
        Basis::SessionLeastLoaded,
    ];

    /// What `score` means, e.g. `"outstanding requests (lowest wins)"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Basis::ItsTurn => "1 = its turn",
            Basis::Drawn => "1 = drawn",
            Basis::Outstanding => "outstanding requests (lowest wins)",
            Basis::OutstandingOfTwo => "outstanding requests of the two sampled (lowest wins)",
            Basis::KvUsage => "KV usage fraction (lowest wins)",
            Basis::PrefixFraction => "cached prefix / prompt length (highest wins)",
            Basis::PrefixLoad => "w_prefix·prefix fraction − w_load·load/max load (highest wins)",
            Basis::SessionWorker => "1 = the session's worker",
            Basis::SessionLeastLoaded => "1 = least loaded (new or orphaned session)",
        }
    }
}

impl std::fmt::Display for Basis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Basis {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A decision's candidate scores, ascending by worker id; one pointer wide, so a decision
/// whose candidates were dropped (past the run's budget) costs nothing for them. Read as
/// [`CandidateScore`] values (24 bytes each stored, plus 12 for a prefix match only when a
/// policy looked at prefixes; the full struct is 40).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Candidates(Option<Box<CandidateList>>);

#[derive(Debug, Clone, PartialEq)]
struct CandidateList {
    scores: Vec<Score>,
    /// Each candidate's prefix match, in step with `scores`; empty when none has one.
    prefix: Vec<Option<PrefixMatch>>,
}

/// A candidate without its prefix match.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Score {
    worker: u32,
    outstanding: u32,
    score: f64,
    kv_usage: f64,
}

impl Candidates {
    /// How many candidates were kept.
    pub fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |l| l.scores.len())
    }

    /// True when none were kept.
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// Candidate `i`, if kept.
    pub fn get(&self, i: usize) -> Option<CandidateScore> {
        let l = self.0.as_deref()?;
        let s = l.scores.get(i)?;
        Some(CandidateScore {
            worker: s.worker,
            score: s.score,
            outstanding: s.outstanding,
            kv_usage: s.kv_usage,
            prefix: l.prefix.get(i).copied().flatten(),
        })
    }

    /// The candidates in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = CandidateScore> + '_ {
        (0..self.len()).map(|i| self.get(i).expect("i < len"))
    }

    /// Keeps only the candidates `keep` accepts.
    pub fn retain(&mut self, mut keep: impl FnMut(&CandidateScore) -> bool) {
        *self = self.iter().filter(|c| keep(c)).collect();
    }
}

impl From<Vec<CandidateScore>> for Candidates {
    fn from(v: Vec<CandidateScore>) -> Self {
        v.into_iter().collect()
    }
}

impl FromIterator<CandidateScore> for Candidates {
    fn from_iter<I: IntoIterator<Item = CandidateScore>>(iter: I) -> Self {
        let mut l = CandidateList {
            scores: Vec::new(),
            prefix: Vec::new(),
        };
        let mut any_prefix = false;
        for c in iter {
            if c.prefix.is_some() && !any_prefix {
                any_prefix = true;
                l.prefix.resize(l.scores.len(), None);
            }
            if any_prefix {
                l.prefix.push(c.prefix);
            }
            l.scores.push(Score {
                worker: c.worker,
                outstanding: c.outstanding,
                score: c.score,
                kv_usage: c.kv_usage,
            });
        }
        if l.scores.is_empty() {
            return Self(None);
        }
        l.scores.shrink_to_fit();
        l.prefix.shrink_to_fit();
        Self(Some(Box::new(l)))
    }
}

impl<'a> IntoIterator for &'a Candidates {
    type Item = CandidateScore;
    type IntoIter = Box<dyn ExactSizeIterator<Item = CandidateScore> + 'a>;
    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

impl Serialize for Candidates {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulation::RoutingRecord;

    #[test]
    fn decision_record_is_32_bytes() {
        assert_eq!(std::mem::size_of::<Candidates>(), 8);
        assert_eq!(std::mem::size_of::<Score>(), 24);
        assert_eq!(std::mem::size_of::<RoutingRecord>(), 32);
    }

    #[test]
    fn candidates_serialise_as_a_list() {
        let c = CandidateScore {
            worker: 3,
            score: 0.5,
            outstanding: 2,
            kv_usage: 0.25,
            prefix: None,
        };
        let some: Candidates = vec![c].into();
        assert_eq!(
            serde_json::to_string(&some).unwrap(),
            r#"[{"worker":3,"score":0.5,"outstanding":2,"kv_usage":0.25,"prefix":null}]"#
        );
        assert_eq!(serde_json::to_string(&Candidates::default()).unwrap(), "[]");
        // A prefix match on a later candidate only: the earlier ones read back as none.
        let m = PrefixMatch {
            gpu_tokens: 16,
            tier_tokens: 0,
        };
        let mixed: Candidates = vec![
            c,
            CandidateScore {
                prefix: Some(m),
                ..c
            },
        ]
        .into();
        assert_eq!(mixed.get(0).unwrap().prefix, None);
        assert_eq!(mixed.get(1).unwrap().prefix, Some(m));
        assert_eq!(mixed.get(2), None);
        assert_eq!(mixed.iter().len(), 2);
        let mut dropped = some.clone();
        dropped.retain(|c| c.worker != 3);
        assert_eq!(dropped, Candidates::default());
        assert_eq!(
            serde_json::to_string(&Basis::ItsTurn).unwrap(),
            r#""1 = its turn""#
        );
    }
}
