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
/// whose candidates were dropped (past the run's budget) costs nothing for them. Stored as
/// columns in one block of words: 10 bytes a candidate when every routable worker is a
/// candidate, the scores only mark the choice (round robin, random, session affinity) and
/// no worker has 65,536 requests outstanding, up to 28 otherwise, plus 8 for a prefix
/// match only when a policy looked at prefixes (the [`CandidateScore`] they read back as
/// is 40). A 64-worker run keeps its 400,000 scores in ~4 MB rather than ~10.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Candidates(Option<Box<Packed>>);

/// The columns, after a header word: `kv_usage` bits (one word each), `outstanding` (four
/// a word if they fit 16 bits, else two), then only if the header says so: worker ids (two
/// a word), score bits (one word each), and prefix matches (a presence bitmap, then one
/// word each).
#[derive(Debug, Clone, PartialEq)]
struct Packed(Box<[u64]>);

/// Header: the candidate count in the low 32 bits.
const LEN_BITS: u64 = 0xffff_ffff;
/// Header: where the score 1.0 is when the scores are implicit (bits 32..59).
const ONE_SHIFT: u32 = 32;
const ONE_MASK: u64 = (1 << 28) - 1;
/// Header: `ONE_MASK` as the position: every implicit score is 0.0.
const NO_ONE: u64 = ONE_MASK;
/// Header: the workers are `0, 1, …, len − 1`, not stored.
const WORKERS_IMPLICIT: u64 = 1 << 62;
/// Header: the scores are 0.0 but at the position in the header, not stored.
const SCORES_IMPLICIT: u64 = 1 << 63;
/// Header: prefix matches are stored (some candidate has one).
const PREFIX_STORED: u64 = 1 << 61;
/// Header: every outstanding count fits 16 bits, and they are stored four a word.
const OUTSTANDING_NARROW: u64 = 1 << 60;

impl Packed {
    fn header(&self) -> u64 {
        self.0[0]
    }

    fn len(&self) -> usize {
        (self.header() & LEN_BITS) as usize
    }

    /// Candidate `i` (`i < len`).
    fn get(&self, i: usize) -> CandidateScore {
        let (w, h, n) = (&self.0, self.header(), self.len());
        let half = |at: usize| (w[at + i / 2] >> (32 * (i % 2))) as u32;
        let pairs = n.div_ceil(2);
        let (kv_at, out_at) = (1, 1 + n);
        let narrow = h & OUTSTANDING_NARROW != 0;
        let workers_at = out_at + if narrow { n.div_ceil(4) } else { pairs };
        let stored_workers = h & WORKERS_IMPLICIT == 0;
        let scores_at = workers_at + if stored_workers { pairs } else { 0 };
        let stored_scores = h & SCORES_IMPLICIT == 0;
        let prefix_at = scores_at + if stored_scores { n } else { 0 };
        let worker = if stored_workers {
            half(workers_at)
        } else {
            i as u32
        };
        let score = if stored_scores {
            f64::from_bits(w[scores_at + i])
        } else if (h >> ONE_SHIFT) & ONE_MASK == i as u64 {
            1.0
        } else {
            0.0
        };
        let present = h & PREFIX_STORED != 0 && w[prefix_at + i / 64] >> (i % 64) & 1 != 0;
        let prefix = present.then(|| {
            let m = w[prefix_at + n.div_ceil(64) + i];
            PrefixMatch {
                gpu_tokens: m as u32,
                tier_tokens: (m >> 32) as u32,
            }
        });
        CandidateScore {
            worker,
            score,
            outstanding: if narrow {
                (w[out_at + i / 4] >> (16 * (i % 4))) as u16 as u32
            } else {
                half(out_at)
            },
            kv_usage: f64::from_bits(w[kv_at + i]),
            prefix,
        }
    }

    fn pack(c: &[CandidateScore]) -> Self {
        let n = c.len();
        let workers_implicit = c.iter().zip(0..).all(|(c, k)| c.worker == k);
        let (zero, one) = (0.0f64.to_bits(), 1.0f64.to_bits());
        let ones = c.iter().filter(|c| c.score.to_bits() == one).count();
        let scores_implicit = n < ONE_MASK as usize
            && ones <= 1
            && c.iter()
                .all(|c| c.score.to_bits() == zero || c.score.to_bits() == one);
        let one_at = c
            .iter()
            .position(|c| c.score.to_bits() == one)
            .map_or(NO_ONE, |k| k as u64);
        let prefix = c.iter().any(|c| c.prefix.is_some());
        let narrow = c.iter().all(|c| c.outstanding <= u16::MAX as u32);
        let mut header = n as u64;
        if narrow {
            header |= OUTSTANDING_NARROW;
        }
        if workers_implicit {
            header |= WORKERS_IMPLICIT;
        }
        if scores_implicit {
            header |= SCORES_IMPLICIT | one_at << ONE_SHIFT;
        }
        if prefix {
            header |= PREFIX_STORED;
        }
        let mut w = Vec::with_capacity(
            1 + n
                + if narrow { n.div_ceil(4) } else { n.div_ceil(2) }
                + if workers_implicit { 0 } else { n.div_ceil(2) }
                + if scores_implicit { 0 } else { n }
                + if prefix { n.div_ceil(64) + n } else { 0 },
        );
        w.push(header);
        w.extend(c.iter().map(|c| c.kv_usage.to_bits()));
        if narrow {
            w.extend(c.chunks(4).map(|q| {
                q.iter()
                    .enumerate()
                    .map(|(k, c)| (c.outstanding as u64) << (16 * k))
                    .sum::<u64>()
            }));
        } else {
            put_pairs(&mut w, c, |c| c.outstanding);
        }
        if !workers_implicit {
            put_pairs(&mut w, c, |c| c.worker);
        }
        if !scores_implicit {
            w.extend(c.iter().map(|c| c.score.to_bits()));
        }
        if prefix {
            let at = w.len();
            w.resize(at + n.div_ceil(64), 0);
            for (k, c) in c.iter().enumerate() {
                if c.prefix.is_some() {
                    w[at + k / 64] |= 1 << (k % 64);
                }
            }
            w.extend(c.iter().map(|c| {
                let m = c.prefix.unwrap_or_default();
                m.gpu_tokens as u64 | (m.tier_tokens as u64) << 32
            }));
        }
        Packed(w.into_boxed_slice())
    }
}

/// Appends `f` of each candidate, two to a word (the first in the low half).
fn put_pairs(w: &mut Vec<u64>, c: &[CandidateScore], f: impl Fn(&CandidateScore) -> u32) {
    w.extend(
        c.chunks(2)
            .map(|p| f(&p[0]) as u64 | p.get(1).map_or(0, |b| (f(b) as u64) << 32)),
    );
}

impl Candidates {
    /// How many candidates were kept.
    pub fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |p| p.len())
    }

    /// True when none were kept.
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// Candidate `i`, if kept.
    pub fn get(&self, i: usize) -> Option<CandidateScore> {
        let p = self.0.as_deref()?;
        (i < p.len()).then(|| p.get(i))
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
        if v.is_empty() {
            return Self(None);
        }
        Self(Some(Box::new(Packed::pack(&v))))
    }
}

impl FromIterator<CandidateScore> for Candidates {
    fn from_iter<I: IntoIterator<Item = CandidateScore>>(iter: I) -> Self {
        iter.into_iter().collect::<Vec<_>>().into()
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
        assert_eq!(std::mem::size_of::<RoutingRecord>(), 32);
    }

    /// Every column layout reads back bit for bit what was stored.
    #[test]
    fn candidates_read_back_exactly() {
        let base = |k: u32| CandidateScore {
            worker: k,
            score: 0.0,
            outstanding: k * 7 + 1,
            kv_usage: k as f64 / 3.0,
            prefix: None,
        };
        let mut cases: Vec<Vec<CandidateScore>> = Vec::new();
        // Every worker, the choice marked 1 (round robin): workers and scores implicit.
        cases.push(
            (0..5)
                .map(|k| CandidateScore {
                    score: (k == 3) as u32 as f64,
                    ..base(k)
                })
                .collect(),
        );
        // No score 1 at all; one candidate.
        cases.push((0..5).map(base).collect());
        cases.push(vec![base(0)]);
        // A subset of workers (power of two), real scores.
        cases.push(vec![
            CandidateScore {
                score: 4.0,
                ..base(2)
            },
            CandidateScore {
                score: 1.0,
                ..base(9)
            },
        ]);
        // Outstanding counts at the edge of 16 bits, and past it.
        cases.push(
            (0..5)
                .map(|k| CandidateScore {
                    outstanding: 65_535 - k,
                    ..base(k)
                })
                .collect(),
        );
        cases.push(
            (0..5)
                .map(|k| CandidateScore {
                    outstanding: 65_532 + k,
                    ..base(k)
                })
                .collect(),
        );
        // Scores that only look like a mark: −0.0, two 1s, NaN.
        cases.push(
            (0..3)
                .map(|k| CandidateScore {
                    score: -0.0,
                    ..base(k)
                })
                .collect(),
        );
        cases.push(
            (0..3)
                .map(|k| CandidateScore {
                    score: 1.0,
                    ..base(k)
                })
                .collect(),
        );
        cases.push(vec![CandidateScore {
            score: f64::NAN,
            ..base(0)
        }]);
        // Prefix matches on some of 130 candidates (a bitmap of three words).
        cases.push(
            (0..130)
                .map(|k| CandidateScore {
                    score: k as f64 * 0.5,
                    outstanding: u32::MAX - k,
                    prefix: (k % 3 == 0).then_some(PrefixMatch {
                        gpu_tokens: k * 16,
                        tier_tokens: u32::MAX - k,
                    }),
                    ..base(k)
                })
                .collect(),
        );
        for case in cases {
            let packed: Candidates = case.clone().into();
            assert_eq!(packed.len(), case.len());
            for (i, want) in case.iter().enumerate() {
                let got = packed.get(i).unwrap();
                assert_eq!(got.worker, want.worker);
                assert_eq!(got.score.to_bits(), want.score.to_bits());
                assert_eq!(got.outstanding, want.outstanding);
                assert_eq!(got.kv_usage.to_bits(), want.kv_usage.to_bits());
                assert_eq!(got.prefix, want.prefix);
            }
            assert_eq!(packed.get(case.len()), None);
        }
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
