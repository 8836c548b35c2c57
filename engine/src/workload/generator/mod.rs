//! Workload generators: pure producers of request specs, driven by a stage loop.
//!
//! Two shapes, because they need two different loops:
//! - [`RequestGenerator`] is **open loop** (synthetic, RAG, trace): the loop sleeps
//!   [`RequestSpec::gap`], submits, and asks for the next one. RAG adds a cap on requests in
//!   flight ([`RequestGenerator::max_concurrent_requests`]): at the cap the loop waits for
//!   any in-flight request's `completed` event before submitting.
//! - [`SessionGenerator`] is **closed loop per session** (multi-turn replay): the loop starts
//!   sessions (at most [`SessionGenerator::max_concurrent_sessions`] at once), and each session
//!   submits turn *i + 1* only after turn *i* completed, via its [`SessionCursor`].
//!
//! Generators never allocate ids: the loop passes a global request id (used for
//! `Source::Unique` tails) and a global session id, so ids never collide across stages.

pub mod limit;
pub mod rag;
pub mod sessions;
pub mod synthetic;
pub mod trace;

pub use limit::Limit;
pub use rag::{RagGenerator, RagParams};
pub use sessions::{
    parse_sessions, SessionCursor, SessionData, SessionStart, SessionsGenerator, SyntheticSessions,
    SyntheticSessionsParams, TurnLengths,
};
pub use synthetic::{PrefixGroups, PromptPool, SyntheticGenerator};
pub use trace::{hash_id_warning, parse_trace, TraceGenerator, TraceRecord};

use super::dist::Zipf;
use crate::request::PromptContent;
use crate::rng::SimRng;
use serde::{Deserialize, Serialize};

/// Which turn of which session a request is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SessionTurn {
    /// Global session id (as passed to [`SessionGenerator::next_session`]).
    pub session: u32,
    /// Turn index within the session, from 0.
    pub turn: u32,
}

/// One request as a generator describes it; the loop turns it into a live request.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestSpec {
    /// Seconds to wait before submitting it: after the previous request of this generator
    /// (open loop; the first is after the stage start), or after the previous turn
    /// completed (sessions; the first turn is after the session start).
    pub gap: f64,
    /// The prompt, as segments of sources.
    pub prompt: PromptContent,
    /// Tokens to generate (≥ 1).
    pub output_len: u32,
    /// Session and turn, for session workloads.
    pub session: Option<SessionTurn>,
}

/// What a replayed data file holds, for the work estimate: a generator drawing from
/// distributions has none (the stage's configuration says what it will do).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DataShape {
    /// Requests it issues (trace lines, or session turns).
    pub requests: u64,
    /// Seconds from the stage start to its last arrival, service times aside.
    pub seconds: f64,
}

/// An open-loop producer of requests.
pub trait RequestGenerator {
    /// The next request, whose unique content is keyed by `request_id`; `None` when done.
    fn next_request(&mut self, request_id: u64) -> Option<RequestSpec>;

    /// At most this many of the stage's requests in flight at once (`None`: no cap).
    fn max_concurrent_requests(&self) -> Option<usize> {
        None
    }

    /// The shape of the file it replays, if it replays one.
    fn data_shape(&self) -> Option<DataShape> {
        None
    }

    /// Something odd about the file it replays that does not stop it (e.g. hash ids that
    /// do not match the configured block size).
    fn data_warning(&self) -> Option<String> {
        None
    }
}

/// A producer of sessions, each replayed turn by turn.
pub trait SessionGenerator {
    /// The next session to start, numbered `session_id`; `None` when done.
    fn next_session(&mut self, session_id: u32) -> Option<SessionStart>;

    /// At most this many sessions active at once (`None`: no cap).
    fn max_concurrent_sessions(&self) -> Option<usize>;

    /// Open loop: turn *i + 1* is sent its gap after turn *i* was sent, whether or not turn
    /// *i*'s reply has come back (a client replaying recorded conversations on their
    /// schedule). Closed loop (the default): its gap after turn *i* completed.
    fn open_loop(&self) -> bool {
        false
    }

    /// The shape of the file it replays, if it replays one.
    fn data_shape(&self) -> Option<DataShape> {
        None
    }
}

/// What a stage runs: the builder's output.
pub enum StageGenerator {
    /// Open loop (synthetic, RAG, trace).
    Requests(Box<dyn RequestGenerator>),
    /// Closed loop per session (sessions file, synthetic sessions).
    Sessions(Box<dyn SessionGenerator>),
}

impl StageGenerator {
    /// The shape of the file the stage replays, if it replays one.
    pub fn data_shape(&self) -> Option<DataShape> {
        match self {
            StageGenerator::Requests(g) => g.data_shape(),
            StageGenerator::Sessions(g) => g.data_shape(),
        }
    }

    /// Something odd about the file the stage replays that does not stop it.
    pub fn data_warning(&self) -> Option<String> {
        match self {
            StageGenerator::Requests(g) => g.data_warning(),
            StageGenerator::Sessions(_) => None,
        }
    }
}

impl std::fmt::Debug for StageGenerator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StageGenerator::Requests(_) => "StageGenerator::Requests",
            StageGenerator::Sessions(_) => "StageGenerator::Sessions",
        })
    }
}

/// How popular each of n items (prefix groups, documents) is.
///
/// JSON: `{"type": "uniform"}` or `{"type": "zipf", "s": 1.1}`. Under Zipf, item 0 is the
/// most popular (rank 1), item 1 the next, and so on.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Popularity {
    /// Every item equally likely.
    #[default]
    Uniform,
    /// P(item i) ∝ (i + 1)^(−s).
    Zipf {
        /// Exponent, ≥ 0 (0 is uniform; ≈ 1 is typical of real popularity).
        s: f64,
    },
}

/// Draws item indices `0..n` with a given [`Popularity`].
#[derive(Debug, Clone)]
pub enum Picker {
    /// Uniform over `0..n`.
    Uniform(u32),
    /// Zipf rank − 1.
    Zipf(Zipf),
}

impl Picker {
    /// A picker over `0..n` (`None` if `n == 0` or the Zipf exponent is invalid).
    pub fn new(n: u32, popularity: Popularity) -> Option<Self> {
        match popularity {
            _ if n == 0 => None,
            Popularity::Uniform => Some(Picker::Uniform(n)),
            Popularity::Zipf { s } => Zipf::new(n, s).map(Picker::Zipf),
        }
    }

    /// Number of items.
    pub fn n(&self) -> u32 {
        match self {
            Picker::Uniform(n) => *n,
            Picker::Zipf(z) => z.n(),
        }
    }

    /// Probability of item `i`.
    pub fn probability(&self, i: u32) -> f64 {
        match self {
            Picker::Uniform(n) if i < *n => 1.0 / *n as f64,
            Picker::Uniform(_) => 0.0,
            Picker::Zipf(z) => z.probability(i + 1),
        }
    }

    /// One item index in `0..n`.
    pub fn pick(&self, rng: &mut SimRng) -> u32 {
        match self {
            Picker::Uniform(n) => rng.below(*n as u64) as u32,
            Picker::Zipf(z) => z.sample(rng) - 1,
        }
    }

    /// One item index in `0..n` outside `excluded` (ascending, distinct, fewer than n),
    /// drawn by popularity renormalised over the rest: O(k) for uniform, a binary search
    /// for Zipf. When the rest has no probability left (a Zipf exponent so steep that
    /// every other item's probability underflows), the most popular of the rest.
    pub fn pick_excluding(&self, rng: &mut SimRng, excluded: &[u32]) -> u32 {
        // The `i`-th index (from 0) not in `excluded`.
        let nth_free = |i: u64| {
            let mut d = i;
            for &c in excluded {
                if c as u64 <= d {
                    d += 1;
                }
            }
            d as u32
        };
        let n = self.n() as u64;
        let free = n - excluded.len() as u64;
        let Picker::Zipf(z) = self else {
            return nth_free(rng.below(free));
        };
        // G(d): probability of the items up to d that are not excluded (flat at excluded d).
        let mut below = Vec::with_capacity(excluded.len());
        let mut mass = 0.0;
        for &c in excluded {
            mass += self.probability(c);
            below.push(mass);
        }
        let left = 1.0 - mass;
        let u = rng.next_f64() * left;
        if left.is_nan() || left <= 0.0 {
            return nth_free(0);
        }
        let g = |d: u32| {
            let k = excluded.partition_point(|&c| c <= d);
            z.cumulative(d + 1) - if k == 0 { 0.0 } else { below[k - 1] }
        };
        // The first d with G(d) > u: it is never excluded, as G does not rise there.
        let (mut lo, mut hi) = (0u32, self.n());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if g(mid) <= u {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let d = lo;
        if d < self.n() && excluded.binary_search(&d).is_err() {
            d
        } else {
            nth_free(free - 1) // rounding at the very end of the CDF
        }
    }
}

impl<G: RequestGenerator + ?Sized> RequestGenerator for Box<G> {
    fn next_request(&mut self, request_id: u64) -> Option<RequestSpec> {
        (**self).next_request(request_id)
    }

    fn max_concurrent_requests(&self) -> Option<usize> {
        (**self).max_concurrent_requests()
    }

    fn data_shape(&self) -> Option<DataShape> {
        (**self).data_shape()
    }

    fn data_warning(&self) -> Option<String> {
        (**self).data_warning()
    }
}
