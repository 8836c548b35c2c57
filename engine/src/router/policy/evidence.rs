//! A routing decision's evidence in compact form: a run keeps a decision record for every
//! request, so the record is 32 bytes, without the string slice and the vector that once
//! doubled it.

use super::fraction::{self, DenominatorHint};
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
    /// Cache-aware: the prompt's match in the router's tree of the worker.
    TreeMatch,
    /// Cache-aware: the size of the router's tree of the worker (no match good enough).
    TreeSize,
    /// llm-d: the weighted sum of its scorers.
    Scorers,
    /// Dynamo: the cost in blocks.
    DynamoCost,
}

impl Basis {
    /// Every basis, in declaration order (the wire form is the index).
    pub const ALL: [Basis; 13] = [
        Basis::ItsTurn,
        Basis::Drawn,
        Basis::Outstanding,
        Basis::OutstandingOfTwo,
        Basis::KvUsage,
        Basis::PrefixFraction,
        Basis::PrefixLoad,
        Basis::SessionWorker,
        Basis::SessionLeastLoaded,
        Basis::TreeMatch,
        Basis::TreeSize,
        Basis::Scorers,
        Basis::DynamoCost,
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
            Basis::TreeMatch => {
                "prompt matched in the router's tree / prompt length (highest wins)"
            }
            Basis::TreeSize => {
                "tokens in the router's tree (smallest wins: no match above cache_threshold)"
            }
            Basis::DynamoCost => {
                "overlap_score_weight·prefill blocks + decode blocks (lowest wins)"
            }
            Basis::Scorers => {
                "prefix_weight·prefix + queue_weight·queue + kv_cache_weight·(1 − KV usage) (highest wins)"
            }
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
/// columns in one block of words: 3 bytes a candidate when every routable worker is a
/// candidate, the scores only mark the choice (round robin, random, session affinity),
/// the KV usages are 16-bit ratios over one denominator (the workers' block counts) and
/// no worker has 256 requests outstanding; up to 28 otherwise, plus 8 for a prefix match
/// only when a policy looked at prefixes (the [`CandidateScore`] they read back as is 40).
/// Packed because a run keeps up to 400,000 scores, one per candidate of each decision.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Candidates(Option<Box<Packed>>);

/// The columns, after a header word: KV usage (the denominator, then 16-bit numerators,
/// if the header says so, else the bits, one word each), `outstanding` (8, 16 or 32 bits
/// each, as the largest needs), then only if the header says so: worker ids (two a word),
/// score bits (one word each), and prefix matches (a presence bitmap, then one word each).
#[derive(Debug, Clone, PartialEq)]
struct Packed(Box<[u64]>);

/// Header: the candidate count in the low 32 bits.
const LEN_BITS: u64 = 0xffff_ffff;
/// Header: where the score 1.0 is when the scores are implicit (bits 32..57).
const ONE_SHIFT: u32 = 32;
const ONE_MASK: u64 = (1 << 26) - 1;
/// Header: `ONE_MASK` as the position: every implicit score is 0.0.
const NO_ONE: u64 = ONE_MASK;
/// Header: the workers are `0, 1, …, len − 1`, not stored.
const WORKERS_IMPLICIT: u64 = 1 << 62;
/// Header: the scores are 0.0 but at the position in the header, not stored.
const SCORES_IMPLICIT: u64 = 1 << 63;
/// Header: prefix matches are stored (some candidate has one).
const PREFIX_STORED: u64 = 1 << 61;
/// Header: log2 of the outstanding counts' width in bytes (0, 1 or 2), in bits 59..60.
const OUTSTANDING_SHIFT: u32 = 59;
/// Header: the KV usages are stored as a denominator and 16-bit numerators.
const KV_RATIO: u64 = 1 << 58;

/// Where a packed list's columns start, as its header says: the one reading of the layout
/// [`Packed::pack`] writes, [`Packed::get`] reads and [`Candidates::from_words`] checks.
struct Layout {
    len: usize,
    /// KV usages as a denominator (word 1) and 16-bit numerators from word 2.
    ratio: bool,
    outstanding: usize,
    outstanding_bits: u32,
    workers: Option<usize>,
    scores: Option<usize>,
    /// The presence bitmap, then the matches.
    prefixes: Option<usize>,
    /// Words in all, header included (in u64: a damaged header's sizes cannot overflow).
    words: u64,
}

impl Layout {
    fn of(h: u64) -> Self {
        let n = h & LEN_BITS;
        // Words holding n lanes of `bits` bits each.
        let lanes = |bits: u64| (n * bits).div_ceil(64);
        let ratio = h & KV_RATIO != 0;
        let outstanding = 1 + if ratio { 1 + lanes(16) } else { n };
        let outstanding_bits = 8 << ((h >> OUTSTANDING_SHIFT) & 3);
        let mut at = outstanding + lanes(outstanding_bits);
        let mut column = |stored: bool, words: u64| {
            let from = stored.then_some(at as usize);
            at += if stored { words } else { 0 };
            from
        };
        let workers = column(h & WORKERS_IMPLICIT == 0, lanes(32));
        let scores = column(h & SCORES_IMPLICIT == 0, n);
        let prefixes = column(h & PREFIX_STORED != 0, n.div_ceil(64) + n);
        Layout {
            len: n as usize,
            ratio,
            outstanding: outstanding as usize,
            outstanding_bits: outstanding_bits as u32,
            workers,
            scores,
            prefixes,
            words: at,
        }
    }
}

/// Lane `i` of the `bits`-bit lanes from word `at` (the first in the low bits).
fn lane(w: &[u64], at: usize, i: usize, bits: u32) -> u64 {
    debug_assert!(bits.is_power_of_two() && (8..=64).contains(&bits));
    // Shifts, not divisions (the widths are powers of two): the results JSON reads every
    // kept candidate, up to 400,000 of them.
    let width_log = bits.trailing_zeros();
    let per_log = 6 - width_log; // log2 of lanes per word
    let word = w[at + (i >> per_log)] >> ((i & ((1 << per_log) - 1)) << width_log);
    if bits == 64 {
        word
    } else {
        word & ((1 << bits) - 1)
    }
}

/// Appends `f` of each of `c` in `bits`-bit lanes (each must fit).
fn put_lanes<T>(w: &mut Vec<u64>, c: &[T], bits: u32, f: impl Fn(&T) -> u64) {
    let per = (64 / bits) as usize;
    w.extend(c.chunks(per).map(|q| {
        q.iter()
            .enumerate()
            .fold(0, |word, (k, c)| word | f(c) << (bits as usize * k))
    }));
}

impl Packed {
    fn header(&self) -> u64 {
        self.0[0]
    }

    fn len(&self) -> usize {
        (self.header() & LEN_BITS) as usize
    }

    /// Candidate `i` (`i < len`).
    fn get(&self, i: usize) -> CandidateScore {
        self.read(&Layout::of(self.header()), i)
    }

    /// Candidate `i` (`i < len`) of this layout (its header's).
    fn read(&self, at: &Layout, i: usize) -> CandidateScore {
        let (w, h) = (&self.0, self.header());
        let worker = match at.workers {
            Some(from) => lane(w, from, i, 32) as u32,
            None => i as u32,
        };
        let score = match at.scores {
            Some(from) => f64::from_bits(w[from + i]),
            None if (h >> ONE_SHIFT) & ONE_MASK == i as u64 => 1.0,
            None => 0.0,
        };
        let kv_usage = if at.ratio {
            lane(w, 2, i, 16) as f64 / w[1] as i64 as f64
        } else {
            f64::from_bits(w[1 + i])
        };
        let prefix = at
            .prefixes
            .filter(|&from| w[from + i / 64] >> (i % 64) & 1 != 0)
            .map(|from| {
                let m = w[from + at.len.div_ceil(64) + i];
                PrefixMatch {
                    gpu_tokens: m as u32,
                    tier_tokens: (m >> 32) as u32,
                }
            });
        CandidateScore {
            worker,
            score,
            outstanding: lane(w, at.outstanding, i, at.outstanding_bits) as u32,
            kv_usage,
            prefix,
        }
    }

    fn pack(c: &[CandidateScore], hint: Option<&DenominatorHint>) -> Self {
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
        let most = c.iter().map(|c| c.outstanding).max().unwrap_or(0);
        let out_log = if most <= u8::MAX as u32 {
            0
        } else if most <= u16::MAX as u32 {
            1
        } else {
            2
        };
        let out_bits = 8 << out_log;
        let kv_den = fraction::common_denominator(c.iter().map(|c| c.kv_usage), hint);
        let mut header = n as u64 | out_log << OUTSTANDING_SHIFT;
        if kv_den.is_some() {
            header |= KV_RATIO;
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
        let mut w = Vec::with_capacity(Layout::of(header).words as usize);
        w.push(header);
        match kv_den {
            Some(den) => {
                w.push(den);
                let d = den as i64 as f64;
                put_lanes(&mut w, c, 16, |c| {
                    debug_assert!(fraction::numerator(c.kv_usage, den).is_some());
                    fraction::scaled(c.kv_usage, d) as u64
                });
            }
            None => w.extend(c.iter().map(|c| c.kv_usage.to_bits())),
        }
        put_lanes(&mut w, c, out_bits, |c| c.outstanding as u64);
        if !workers_implicit {
            put_lanes(&mut w, c, 32, |c| c.worker as u64);
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
        debug_assert_eq!(w.len() as u64, Layout::of(header).words);
        Packed(w.into_boxed_slice())
    }
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

    /// The packed words (none if none were kept), for a compact copy elsewhere.
    pub(crate) fn words(&self) -> &[u64] {
        self.0.as_deref().map_or(&[], |p| &p.0)
    }

    /// Candidates from [`Candidates::words`]; an error if the words do not have the layout
    /// their header gives, so reading them cannot go out of bounds.
    pub(crate) fn from_words(w: Vec<u64>) -> Result<Self, String> {
        let Some(&header) = w.first() else {
            return Ok(Self(None));
        };
        let layout = Layout::of(header);
        if layout.len == 0 || layout.words != w.len() as u64 {
            return Err(format!(
                "{} words of candidate scores, for a header that gives {} candidates in {}",
                w.len(),
                layout.len,
                layout.words
            ));
        }
        Ok(Self(Some(Box::new(Packed(w.into_boxed_slice())))))
    }

    /// Candidate `i`, if kept.
    pub fn get(&self, i: usize) -> Option<CandidateScore> {
        let p = self.0.as_deref()?;
        (i < p.len()).then(|| p.get(i))
    }

    /// The candidates in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = CandidateScore> + '_ {
        // The layout read once, not per candidate.
        let packed = self.0.as_deref().map(|p| (p, Layout::of(p.header())));
        (0..self.len()).map(move |i| {
            let (p, at) = packed.as_ref().expect("candidates to read");
            p.read(at, i)
        })
    }

    /// Keeps only the candidates `keep` accepts.
    pub fn retain(&mut self, mut keep: impl FnMut(&CandidateScore) -> bool) {
        *self = self.iter().filter(|c| keep(c)).collect();
    }

    /// `c` packed, the KV usages' denominator searched from `hint` (see [`DenominatorHint`]).
    pub(crate) fn pack(c: &[CandidateScore], hint: Option<&DenominatorHint>) -> Self {
        if c.is_empty() {
            return Self(None);
        }
        Self(Some(Box::new(Packed::pack(c, hint))))
    }
}

impl From<Vec<CandidateScore>> for Candidates {
    fn from(v: Vec<CandidateScore>) -> Self {
        Self::pack(&v, None)
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

    /// A round-robin decision on 64 workers of 30,000 blocks: the header, the denominator,
    /// 16 words of KV numerators and 8 of outstanding counts (3 bytes a candidate).
    #[test]
    fn a_round_robin_decision_takes_three_bytes_a_candidate() {
        let c: Candidates = (0..64)
            .map(|k| CandidateScore {
                worker: k,
                score: (k == 5) as u32 as f64,
                outstanding: k * 4 % 256,
                kv_usage: (k * 468) as f64 / 30_000.0,
                prefix: None,
            })
            .collect();
        assert_eq!(c.0.as_ref().unwrap().0.len(), 1 + 1 + 16 + 8);
        assert_eq!(c.get(5).unwrap().score, 1.0);
        assert_eq!(c.get(63).unwrap().kv_usage, 63.0 * 468.0 / 30_000.0);
    }

    /// The words a list is handed on in give the same list back; words that do not have
    /// their header's layout are refused rather than read out of bounds.
    #[test]
    fn packed_words_come_back_and_damaged_ones_are_refused() {
        let c: Candidates = (0..4)
            .map(|k| CandidateScore {
                worker: k,
                score: (k == 2) as u32 as f64,
                outstanding: k,
                kv_usage: k as f64 / 8.0,
                prefix: None,
            })
            .collect();
        let w = c.words().to_vec();
        // The header, the denominator 8, four 16-bit numerators, four 8-bit counts.
        assert_eq!(
            w[1..],
            [8, 1 << 16 | 2 << 32 | 3 << 48, 1 << 8 | 2 << 16 | 3 << 24]
        );
        assert_eq!(Candidates::from_words(w.clone()), Ok(c));
        assert!(Candidates::from_words(w[..3].to_vec()).is_err());
        let mut many = w.clone();
        many[0] |= LEN_BITS; // claims four billion candidates
        assert!(Candidates::from_words(many).is_err());
        assert!(Candidates::from_words(vec![0]).is_err());
        assert_eq!(
            Candidates::from_words(Vec::new()),
            Ok(Candidates::default())
        );
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
        let mut cases: Vec<Vec<CandidateScore>> = vec![
            // Every worker, the choice marked 1 (round robin): workers and scores implicit.
            (0..5)
                .map(|k| CandidateScore {
                    score: (k == 3) as u32 as f64,
                    ..base(k)
                })
                .collect(),
            // No score 1 at all; one candidate.
            (0..5).map(base).collect(),
            vec![base(0)],
        ];
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
        // Outstanding counts at the edge of 8 bits, and past it.
        for top in [255, 256] {
            cases.push(
                (0..9)
                    .map(|k| CandidateScore {
                        outstanding: top - k,
                        ..base(k)
                    })
                    .collect(),
            );
        }
        // KV usages of 30,000- and 65,535-block pools (16-bit numerators up to the edge),
        // a mixed cluster (denominators 3 and 7), a numerator past 16 bits, and usages
        // that are no small ratio (the bits kept as they are).
        let kv = |v: Vec<f64>| -> Vec<CandidateScore> {
            v.into_iter()
                .zip(0..)
                .map(|(kv_usage, k)| CandidateScore {
                    kv_usage,
                    ..base(k)
                })
                .collect()
        };
        cases.push(kv(vec![0.0, 1.0 / 30_000.0, 12_345.0 / 30_000.0, 1.0]));
        cases.push(kv(vec![65_534.0 / 65_535.0, 1.0, 0.0, 65_535.0 / 65_535.0]));
        cases.push(kv(vec![1.0 / 3.0, 2.0 / 7.0, 0.0]));
        cases.push(kv(vec![0.5, 65_536.0 / 65_537.0]));
        cases.push(kv(vec![0.5, -0.0, 0.25]));
        cases.push(kv(vec![0.5, f64::NAN]));
        cases.push(kv(vec![0.1 + 0.2, 0.75]));
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
