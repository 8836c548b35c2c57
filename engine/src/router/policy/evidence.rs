//! A routing decision's evidence in compact form: a decision record is 32 bytes, so a
//! million-request run keeps its decisions in 32 MB (a string slice and a vector in each
//! made it 64).

use super::CandidateScore;
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
/// whose candidates were dropped (past the run's budget) costs nothing for them.
#[derive(Debug, Clone, Default, PartialEq)]
// A boxed Vec is one word where a Vec (or a boxed slice) is three (two): the extra
// allocation is paid only by decisions that keep their candidates.
#[allow(clippy::box_collection)]
pub struct Candidates(Option<Box<Vec<CandidateScore>>>);

impl Candidates {
    /// Keeps only the candidates `keep` accepts.
    pub fn retain(&mut self, keep: impl FnMut(&CandidateScore) -> bool) {
        if let Some(v) = &mut self.0 {
            v.retain(keep);
            if v.is_empty() {
                self.0 = None;
            }
        }
    }
}

impl From<Vec<CandidateScore>> for Candidates {
    fn from(v: Vec<CandidateScore>) -> Self {
        Self((!v.is_empty()).then(|| Box::new(v)))
    }
}

impl FromIterator<CandidateScore> for Candidates {
    fn from_iter<I: IntoIterator<Item = CandidateScore>>(iter: I) -> Self {
        Vec::from_iter(iter).into()
    }
}

impl std::ops::Deref for Candidates {
    type Target = [CandidateScore];
    fn deref(&self) -> &[CandidateScore] {
        self.0.as_deref().map_or(&[], Vec::as_slice)
    }
}

impl<'a> IntoIterator for &'a Candidates {
    type Item = &'a CandidateScore;
    type IntoIter = std::slice::Iter<'a, CandidateScore>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl Serialize for Candidates {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulation::RoutingRecord;

    #[test]
    fn decision_record_is_32_bytes() {
        assert_eq!(std::mem::size_of::<Candidates>(), 8);
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
        let mut dropped = some.clone();
        dropped.retain(|c| c.worker != 3);
        assert_eq!(dropped, Candidates::default());
        assert_eq!(
            serde_json::to_string(&Basis::ItsTurn).unwrap(),
            r#""1 = its turn""#
        );
    }
}
