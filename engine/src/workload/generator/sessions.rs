//! Multi-turn sessions (agentic / chat replay): each turn's prompt is the whole conversation
//! so far, and turn *i + 1* is submitted only after turn *i* completed (closed loop), or on
//! the recorded schedule whether or not it has (open loop).
//!
//! # Sessions file (JSONL, one session per line)
//!
//! ```text
//! {"session_id": "chat-17", "start": 2.5, "system_prompt_id": 1, "system_prompt_length": 800,
//!  "turns": [{"input_length": 120, "output_length": 300},
//!            {"input_length": 40, "output_length": 200, "gap": 4.0}]}
//! ```
//!
//! - `session_id` (optional, string or number): a label only; the loop numbers sessions.
//! - `start` (seconds from the stage start, default 0): when the session begins; must not
//!   decrease from line to line.
//! - `system_prompt_id`, `system_prompt_length` (default 0, 0 tokens): a shared
//!   `Source::SystemPrompt(id)` prefix, e.g. an agent's tool definitions.
//! - `turns` (non-empty): `input_length` is the **new** user tokens of that turn (≥ 1),
//!   `output_length` the reply (≥ 1), `gap` (seconds, default 0) the think time before the
//!   turn: after the previous turn completed (open loop: was sent), or after the session
//!   start for turn 0.
//!
//! Turn *i*'s prompt is `SystemPrompt, Turn{s,0}, Reply{s,0}, …, Reply{s,i−1}, Turn{s,i}`, so its
//! length is `system + Σ_{j<i} (input_j + output_j) + input_i` and every turn extends the
//! previous turn's prompt and reply: prefix reuse grows turn by turn.

use super::RequestSpec;
use super::{DataShape, SessionGenerator, SessionTurn};
use crate::request::{PromptContent, Source};
use crate::rng::SimRng;
use crate::workload::arrival::Arrival;
use crate::workload::dist;
use crate::workload::jsonl::{for_each_object, DataError};
use crate::workload::length::LengthDist;
use serde_json::Value;

/// The lengths of one turn and the think time before it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TurnLengths {
    /// New user tokens in this turn.
    pub input: u32,
    /// Reply tokens.
    pub output: u32,
    /// Seconds before the turn is submitted (after the previous turn completed).
    pub gap: f64,
}

/// One session as read from a sessions file.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionData {
    /// The file's `session_id`, if any (a label for people).
    pub label: Option<String>,
    /// Seconds from the stage start.
    pub start: f64,
    /// Shared prefix `(system prompt id, tokens)`, if any.
    pub system_prompt: Option<(u32, u32)>,
    /// The turns, in order.
    pub turns: Vec<TurnLengths>,
}

/// Parses a sessions file; the first malformed line is an error naming its number and field.
pub fn parse_sessions(text: &str) -> Result<Vec<SessionData>, DataError> {
    let mut out: Vec<SessionData> = Vec::new();
    for_each_object("sessions", text, |l| {
        let label = match l.obj.get("session_id") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            Some(v) => {
                return Err(l.error(format!(
                    "field \"session_id\": expected a string or number, got {v}"
                )))
            }
        };
        let start = l.opt_number("start", 0.0)?;
        if let Some(prev) = out.last() {
            if start < prev.start {
                return Err(l.error(format!(
                    "start {start} is earlier than the previous line's {} \
                     (sessions must be in start order)",
                    prev.start
                )));
            }
        }
        let sp_id = l.opt_count("system_prompt_id", 0, 0)?;
        let sp_len = l.opt_count("system_prompt_length", 0, 0)?;
        let Value::Array(raw_turns) = l.required("turns")? else {
            return Err(l.error("field \"turns\": expected an array"));
        };
        if raw_turns.is_empty() {
            return Err(l.error("field \"turns\": a session needs at least one turn"));
        }
        let mut turns = Vec::with_capacity(raw_turns.len());
        for (i, t) in raw_turns.iter().enumerate() {
            let Value::Object(obj) = t else {
                return Err(l.error(format!("turns[{i}]: expected an object")));
            };
            let tl = crate::workload::jsonl::Line {
                kind: l.kind,
                line: l.line,
                obj,
            };
            let in_turn = |e: DataError| DataError {
                message: format!("turns[{i}]: {}", e.message),
                ..e
            };
            turns.push(TurnLengths {
                input: tl.req_count("input_length", 1).map_err(in_turn)?,
                output: tl.req_count("output_length", 1).map_err(in_turn)?,
                gap: tl.opt_number("gap", 0.0).map_err(in_turn)?,
            });
        }
        out.push(SessionData {
            label,
            start,
            system_prompt: (sp_len > 0).then_some((sp_id, sp_len)),
            turns,
        });
        Ok(())
    })?;
    Ok(out)
}

/// A session being replayed: yields each turn's request once the previous turn completed.
#[derive(Debug, Clone)]
pub struct SessionCursor {
    session: u32,
    turns: Vec<TurnLengths>,
    next: usize,
    /// The conversation up to and including the last reply.
    history: PromptContent,
}

impl SessionCursor {
    /// Session `session` (global id) with an optional `(id, tokens)` system prompt.
    pub fn new(session: u32, system_prompt: Option<(u32, u32)>, turns: Vec<TurnLengths>) -> Self {
        let mut history = PromptContent::new();
        if let Some((id, len)) = system_prompt {
            history.push(Source::SystemPrompt(id), len);
        }
        Self {
            session,
            turns,
            next: 0,
            history,
        }
    }

    /// The global session id.
    pub fn session_id(&self) -> u32 {
        self.session
    }

    /// The next turn's request. Call it for turn 0 when the session starts, and for turn
    /// *i + 1* only once turn *i* completed (its reply is then part of the history). The loop
    /// ends the session when a turn fails: the user never saw a reply to continue from.
    pub fn next_turn(&mut self) -> Option<RequestSpec> {
        let t = *self.turns.get(self.next)?;
        let turn = self.next as u32;
        self.next += 1;
        let s = self.session;
        let prompt = self
            .history
            .clone()
            .with(Source::Turn { session: s, turn }, t.input);
        self.history = prompt
            .clone()
            .with(Source::Reply { session: s, turn }, t.output);
        Some(RequestSpec {
            gap: t.gap,
            prompt,
            output_len: t.output,
            session: Some(SessionTurn { session: s, turn }),
        })
    }
}

/// A session ready to start.
#[derive(Debug, Clone)]
pub struct SessionStart {
    /// Seconds after the previous session's start (the first: after the stage start). At the
    /// concurrency cap the loop then also waits for a running session to end.
    pub gap: f64,
    /// The session's turns.
    pub cursor: SessionCursor,
}

/// `Sessions`: replays a parsed sessions file.
#[derive(Debug, Clone)]
pub struct SessionsGenerator {
    sessions: std::vec::IntoIter<SessionData>,
    prev_start: f64,
    max_concurrent: Option<usize>,
    open_loop: bool,
}

impl SessionsGenerator {
    /// A replay of `sessions` (in start order, as [`parse_sessions`] guarantees).
    pub fn new(sessions: Vec<SessionData>, max_concurrent_sessions: Option<usize>) -> Self {
        Self {
            sessions: sessions.into_iter(),
            prev_start: 0.0,
            max_concurrent: max_concurrent_sessions,
            open_loop: false,
        }
    }

    /// Sends each turn on its schedule rather than after the previous reply (see
    /// [`SessionGenerator::open_loop`]).
    pub fn with_open_loop(mut self, open_loop: bool) -> Self {
        self.open_loop = open_loop;
        self
    }
}

impl SessionGenerator for SessionsGenerator {
    fn next_session(&mut self, session_id: u32) -> Option<SessionStart> {
        let s = self.sessions.next()?;
        let gap = (s.start - self.prev_start).max(0.0);
        self.prev_start = s.start;
        Some(SessionStart {
            gap,
            cursor: SessionCursor::new(session_id, s.system_prompt, s.turns),
        })
    }

    fn max_concurrent_sessions(&self) -> Option<usize> {
        self.max_concurrent
    }

    fn open_loop(&self) -> bool {
        self.open_loop
    }

    fn data_shape(&self) -> Option<DataShape> {
        let sessions = self.sessions.as_slice();
        let turns = |s: &SessionData| s.turns.len() as u64;
        // A session's last turn comes at least its think times after its start.
        let last = |s: &SessionData| s.start + s.turns.iter().map(|t| t.gap).sum::<f64>();
        Some(DataShape {
            requests: sessions.iter().map(turns).sum(),
            seconds: sessions.iter().map(last).fold(0.0, f64::max),
        })
    }
}

/// What `SyntheticSessions` draws.
#[derive(Debug, Clone)]
pub struct SyntheticSessionsParams {
    /// Sessions to run.
    pub num_sessions: u64,
    /// Session start process.
    pub arrival: Arrival,
    /// Turns per session.
    pub turns: LengthDist,
    /// New user tokens per turn.
    pub input_length: LengthDist,
    /// Reply tokens per turn.
    pub output_length: LengthDist,
    /// Mean think time before turns after the first, seconds (exponential; 0 = none).
    pub think_time: f64,
    /// `Source::SystemPrompt(0)` tokens shared by every session (0 for none).
    pub system_prompt_length: u32,
    /// Sessions active at most (`None`: no cap).
    pub max_concurrent_sessions: Option<usize>,
    /// Turns follow the previous turn's sending, not its reply (see
    /// [`SessionGenerator::open_loop`]).
    pub open_loop: bool,
}

/// `SyntheticSessions`: sessions drawn from distributions, for when there is no file.
///
/// All of a session's turns are drawn when it starts, so the workload is the same whatever
/// order sessions happen to finish in (e.g. under a different routing policy).
#[derive(Debug, Clone)]
pub struct SyntheticSessions {
    params: SyntheticSessionsParams,
    started: u64,
    arrivals_rng: SimRng,
    turns_rng: SimRng,
}

impl SyntheticSessions {
    /// A generator whose streams derive from `(seed, stream)`.
    pub fn new(seed: u64, stream: &str, params: SyntheticSessionsParams) -> Self {
        Self {
            params,
            started: 0,
            arrivals_rng: SimRng::stream(seed, &format!("{stream}.arrivals")),
            turns_rng: SimRng::stream(seed, &format!("{stream}.turns")),
        }
    }
}

impl SessionGenerator for SyntheticSessions {
    fn next_session(&mut self, session_id: u32) -> Option<SessionStart> {
        if self.started >= self.params.num_sessions {
            return None;
        }
        self.started += 1;
        let p = &self.params;
        let gap = p.arrival.next_gap(&mut self.arrivals_rng);
        let rng = &mut self.turns_rng;
        let n = p.turns.sample(rng);
        let turns = (0..n)
            .map(|i| TurnLengths {
                input: p.input_length.sample(rng),
                output: p.output_length.sample(rng),
                gap: if i == 0 || p.think_time <= 0.0 {
                    0.0
                } else {
                    dist::exponential(rng, p.think_time)
                },
            })
            .collect();
        let system = (p.system_prompt_length > 0).then_some((0, p.system_prompt_length));
        Some(SessionStart {
            gap,
            cursor: SessionCursor::new(session_id, system, turns),
        })
    }

    fn max_concurrent_sessions(&self) -> Option<usize> {
        self.params.max_concurrent_sessions
    }

    fn open_loop(&self) -> bool {
        self.params.open_loop
    }
}
