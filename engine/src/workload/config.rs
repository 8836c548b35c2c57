//! Workload configuration: stages as they appear in a scenario document, their validation,
//! and the builder that turns a stage into its generator.
//!
//! ```json
//! {"stages": [
//!   {"type": "ExponentialReqRate", "request_rate": 8, "jitter": 1,
//!    "input_length": {"type": "lognormal", "mean": 800, "cv": 0.6, "max": 8000},
//!    "shared_prefix": {"groups": 4, "length": 1024, "popularity": {"type": "zipf", "s": 1.1}},
//!    "total_requests": 500},
//!   {"type": "Trace", "trace_file": "mooncake.jsonl", "time_scale": 2}
//! ]}
//! ```
//!
//! Trace and sessions data are not read here: the config names the file, the caller (CLI:
//! the file system; browser: a picked file) reads it and passes the text to
//! [`StageConfig::build`].

use super::arrival::Arrival;
use super::generator::{
    parse_sessions, parse_trace, Limit, Picker, Popularity, PrefixGroups, PromptPool, RagGenerator,
    RagParams, RequestGenerator, SessionsGenerator, StageGenerator, SyntheticGenerator,
    SyntheticSessions, SyntheticSessionsParams, TraceGenerator,
};
use super::length::LengthDist;
use crate::validate::{index, join, Problem, Problems};
use serde::{Deserialize, Serialize};

/// The workload section: stages run one after another.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkloadConfig {
    /// The stages, in order (default: one `ExponentialReqRate` stage, see [`StageConfig`]).
    pub stages: Vec<StageConfig>,
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        Self {
            stages: vec![StageConfig::default()],
        }
    }
}

/// One stage: a generator and its stop conditions.
///
/// JSON is flat: the generator's `type` and fields sit next to `total_requests` and
/// `time_duration_sec`. `type` is required. Unknown fields are rejected: the stop conditions
/// are taken out first and the rest goes to the generator's `deny_unknown_fields` struct
/// (serde's `flatten` cannot be combined with `deny_unknown_fields`, hence the hand-written
/// `Deserialize`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StageConfig {
    /// Stop after this many requests (open-loop stages only; default none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_requests: Option<u64>,
    /// Stop generating after this many seconds from the stage start (default none): no request
    /// (or, for sessions, no new session or turn) is submitted at or after the bound; requests
    /// already issued still complete.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_duration_sec: Option<f64>,
    /// Scheduling priority of the stage's requests under the workers' `priority` policy
    /// (lower runs first, as vLLM's `priority`); ignored under `fcfs`. Default 0.
    #[serde(skip_serializing_if = "StagePriority::is_default")]
    pub priority: StagePriority,
    /// What generates the requests.
    #[serde(flatten)]
    pub generator: GeneratorConfig,
}

impl Default for StageConfig {
    /// 100 requests of `ExponentialReqRate` at 5 req/s (Poisson).
    fn default() -> Self {
        Self {
            total_requests: Some(100),
            time_duration_sec: None,
            priority: StagePriority::default(),
            generator: GeneratorConfig::ExponentialReqRate(SyntheticConfig::default()),
        }
    }
}

/// The generator of a stage, tagged by `type` (names as in the original Opal where it had them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum GeneratorConfig {
    /// Fixed gap `1 / request_rate`.
    UniformReqRate(SyntheticConfig),
    /// Gap = mean·(1 − jitter) + Exp(mean)·jitter (jitter 1 = Poisson).
    ExponentialReqRate(SyntheticConfig),
    /// Gamma-distributed gaps with coefficient of variation `cv` (bursty when cv > 1).
    Gamma(SyntheticConfig),
    /// System prompt + distinct documents from a corpus + unique query.
    #[serde(rename = "RAGWorkload")]
    RagWorkload(RagConfig),
    /// Mooncake-style JSONL trace replay.
    Trace(TraceConfig),
    /// Multi-turn sessions replayed from a JSONL file.
    Sessions(SessionsConfig),
    /// Multi-turn sessions drawn from distributions.
    SyntheticSessions(SyntheticSessionsConfig),
}

impl GeneratorConfig {
    /// An open-loop stage of drawn lengths (`UniformReqRate`, `ExponentialReqRate`,
    /// `Gamma`): what the original Opal's synthetic workloads are.
    pub fn is_synthetic(&self) -> bool {
        matches!(
            self,
            Self::UniformReqRate(_) | Self::ExponentialReqRate(_) | Self::Gamma(_)
        )
    }
}

/// Fields of `UniformReqRate`, `ExponentialReqRate` and `Gamma` stages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SyntheticConfig {
    /// Requests per second (default 5).
    pub request_rate: f64,
    /// `ExponentialReqRate` only: random share of the gap, 0..=1 (default 1, Poisson).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jitter: Option<f64>,
    /// `Gamma` only: coefficient of variation of the gaps, > 0 (default 2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cv: Option<f64>,
    /// Prompt tokens after the shared prefix (default uniform 128..=1024).
    pub input_length: LengthDist,
    /// Tokens to generate (default uniform 64..=512).
    pub output_length: LengthDist,
    /// Shared system-prompt groups (default none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shared_prefix: Option<SharedPrefixConfig>,
    /// A fixed pool of prompts the requests send, as a benchmark client cycling through its
    /// dataset does (default none: every request has its own prompt).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_pool: Option<PromptPoolConfig>,
}

/// A fixed pool of `size` prompts: each is drawn (group, length) the first time a request
/// sends it; later requests send it again, whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PromptPoolConfig {
    /// Prompts in the pool (default 100).
    pub size: u32,
    /// `cycle`: request *i* sends prompt *i mod size* (inference-perf's and `vllm bench`'s
    /// datasets); `random`: a uniformly drawn prompt (default `cycle`).
    pub order: PoolOrder,
}

impl Default for PromptPoolConfig {
    fn default() -> Self {
        Self {
            size: 100,
            order: PoolOrder::Cycle,
        }
    }
}

/// How requests pick from a prompt pool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PoolOrder {
    /// In order, starting over at the end.
    #[default]
    Cycle,
    /// Uniformly at random.
    Random,
}

impl Default for SyntheticConfig {
    fn default() -> Self {
        Self {
            request_rate: 5.0,
            jitter: None,
            cv: None,
            input_length: LengthDist::uniform(128, 1024),
            output_length: LengthDist::uniform(64, 512),
            shared_prefix: None,
            prompt_pool: None,
        }
    }
}

/// Largest `cv` of a `Gamma` stage: at cv 10 the gamma shape is 0.01, and most of a
/// burstier stage's gaps would round to 0 s.
pub const MAX_GAMMA_CV: f64 = 10.0;

/// Most prefix groups or documents a stage may draw from: Zipf popularity keeps a table
/// of this many probabilities, which must stay small enough for a browser tab.
pub const MAX_POPULATION: u32 = 1_000_000;

/// Shared-prefix groups: every request starts with one group's system prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SharedPrefixConfig {
    /// Number of groups (default 8).
    pub groups: u32,
    /// Prefix length, tokens (default 1024).
    pub length: u32,
    /// How requests pick a group (default uniform).
    pub popularity: Popularity,
}

impl Default for SharedPrefixConfig {
    fn default() -> Self {
        Self {
            groups: 8,
            length: 1024,
            popularity: Popularity::Uniform,
        }
    }
}

/// Fields of a `RAGWorkload` stage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RagConfig {
    /// Requests per second (default 2).
    pub request_rate: f64,
    /// Random share of the gap, 0..=1 (default 1, Poisson).
    pub jitter: f64,
    /// System prompt, tokens (default 512).
    pub system_prompt_length: u32,
    /// Corpus size, documents (default 100).
    pub num_documents: u32,
    /// Tokens per document (default 1024).
    pub document_size: u32,
    /// Distinct documents per request, ≤ num_documents (default 4).
    pub docs_per_request: u32,
    /// Which documents get retrieved (default zipf s = 1).
    pub document_popularity: Popularity,
    /// Unique query tail, tokens (default constant 64).
    pub query_length: LengthDist,
    /// Tokens to generate, fixed (default 256).
    pub output_length: u32,
    /// Requests in flight at most; 0 = no cap (default 0).
    pub max_concurrent_requests: u32,
}

impl Default for RagConfig {
    fn default() -> Self {
        Self {
            request_rate: 2.0,
            jitter: 1.0,
            system_prompt_length: 512,
            num_documents: 100,
            document_size: 1024,
            docs_per_request: 4,
            document_popularity: Popularity::Zipf { s: 1.0 },
            query_length: LengthDist::constant(64),
            output_length: 256,
            max_concurrent_requests: 0,
        }
    }
}

/// Fields of a `Trace` stage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TraceConfig {
    /// The JSONL file, as named to the user (default empty: must be set).
    pub trace_file: String,
    /// Tokens per hash id (default 512, as in Mooncake traces).
    pub hash_block_size: u32,
    /// Multiplies every timestamp: 2 replays at half the rate (default 1).
    pub time_scale: f64,
    /// Replay each timestamp as milliseconds after the stage start, rather than after the
    /// trace's first timestamp (default false: the first request arrives at the stage start).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub absolute_times: bool,
}

impl Default for TraceConfig {
    fn default() -> Self {
        Self {
            trace_file: String::new(),
            hash_block_size: 512,
            time_scale: 1.0,
            absolute_times: false,
        }
    }
}

/// Fields of a `Sessions` stage.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SessionsConfig {
    /// The JSONL file, as named to the user (default empty: must be set).
    pub sessions_file: String,
    /// Sessions active at most; 0 = no cap (default 0).
    pub max_concurrent_sessions: u32,
    /// Send each turn its `gap` after the previous turn was sent, not after its reply came
    /// back (a client replaying recorded conversations on their schedule; default false).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub open_loop: bool,
}

/// Fields of a `SyntheticSessions` stage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SyntheticSessionsConfig {
    /// Sessions to run (default 20).
    pub num_sessions: u64,
    /// New sessions per second, Poisson (default 1).
    pub session_rate: f64,
    /// Turns per session (default uniform 2..=8).
    pub turns: LengthDist,
    /// New user tokens per turn (default uniform 32..=512).
    pub input_length: LengthDist,
    /// Reply tokens per turn (default uniform 64..=512).
    pub output_length: LengthDist,
    /// Mean think time before each later turn, seconds, exponential; 0 = none (default 2).
    pub think_time: f64,
    /// System prompt shared by all sessions, tokens (default 1024).
    pub system_prompt_length: u32,
    /// Sessions active at most; 0 = no cap (default 0).
    pub max_concurrent_sessions: u32,
    /// Send each turn its think time after the previous turn was sent, not after its reply
    /// came back (default false).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub open_loop: bool,
}

impl Default for SyntheticSessionsConfig {
    fn default() -> Self {
        Self {
            num_sessions: 20,
            session_rate: 1.0,
            turns: LengthDist::uniform(2, 8),
            input_length: LengthDist::uniform(32, 512),
            output_length: LengthDist::uniform(64, 512),
            think_time: 2.0,
            system_prompt_length: 1024,
            max_concurrent_sessions: 0,
            open_loop: false,
        }
    }
}

impl<'de> Deserialize<'de> for StageConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut map = serde_json::Map::deserialize(d)?;
        let mut take = |field: &str| -> Option<serde_json::Value> {
            map.remove(field).filter(|v| !v.is_null())
        };
        let total_requests = take("total_requests")
            .map(|v| {
                v.as_u64()
                    .ok_or_else(|| D::Error::custom(format!("expected a whole number, got {v}")))
            })
            .transpose()?;
        let time_duration_sec = take("time_duration_sec")
            .map(|v| {
                v.as_f64()
                    .ok_or_else(|| D::Error::custom(format!("expected a number, got {v}")))
            })
            .transpose()?;
        let priority = take("priority")
            .map(|v| {
                crate::tracked::read::<StagePriority>(&v).map_err(|_| {
                    D::Error::custom(format!(
                        "priority: expected a whole number or {{\"values\": [...], \"weights\": [...]}}, got {v}"
                    ))
                })
            })
            .transpose()?
            .unwrap_or_default();
        let generator =
            crate::tracked::read(&serde_json::Value::Object(map)).map_err(D::Error::custom)?;
        Ok(Self {
            total_requests,
            time_duration_sec,
            priority,
            generator,
        })
    }
}

/// The priority of a stage's requests: one value, or a weighted mix drawn per request (per
/// session for session stages, whose turns share it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum StagePriority {
    /// Every request gets this priority.
    Fixed(i32),
    /// Each request (session) draws `values[i]` with probability `weights[i] / Σ weights`.
    Mix {
        /// The priorities.
        values: Vec<i32>,
        /// Their relative weights (≥ 0, not all 0).
        weights: Vec<f64>,
    },
}

impl Default for StagePriority {
    fn default() -> Self {
        StagePriority::Fixed(0)
    }
}

impl StagePriority {
    fn is_default(&self) -> bool {
        *self == StagePriority::Fixed(0)
    }

    /// The priority of the request (or session) `key` of stage `stage` in a run seeded `seed`:
    /// a pure function of the three, so runs stay reproducible.
    pub fn pick(&self, seed: u64, stage: u32, key: u64) -> i32 {
        match self {
            StagePriority::Fixed(p) => *p,
            StagePriority::Mix { values, weights } => {
                let h = crate::rng::splitmix64(
                    crate::rng::splitmix64(seed ^ ((stage as u64) << 40)) ^ key,
                );
                let total: f64 = weights.iter().sum();
                let mut u = (h >> 11) as f64 / (1u64 << 53) as f64 * total;
                for (v, w) in values.iter().zip(weights) {
                    if u < *w {
                        return *v;
                    }
                    u -= w;
                }
                *values.last().expect("validated: at least one value")
            }
        }
    }

    /// Reports problems under `path`.
    pub fn validate(&self, path: &str, problems: &mut Problems) {
        if let StagePriority::Mix { values, weights } = self {
            if values.is_empty() || values.len() != weights.len() {
                problems.push(
                    path.to_string(),
                    "needs as many weights as values, and at least one",
                );
            }
            if weights.iter().any(|w| !(w.is_finite() && *w >= 0.0))
                || weights.iter().sum::<f64>() <= 0.0
            {
                problems.push(join(path, "weights"), "must be finite, >= 0 and not all 0");
            }
        }
    }
}

fn cap(n: u32) -> Option<usize> {
    (n > 0).then_some(n as usize)
}

impl WorkloadConfig {
    /// Reports every problem under `path` (e.g. `"workload"`), requiring every stage to bound
    /// itself. Use [`WorkloadConfig::validate_with`] when a global `simulation_time` is set.
    pub fn validate(&self, path: &str, problems: &mut Problems) {
        self.validate_with(path, false, problems);
    }

    /// As [`WorkloadConfig::validate`]; with `simulation_time_bounded`, the *last* stage may
    /// rely on the global `simulation_time` bound (an earlier unbounded stage would never end,
    /// so the stages after it would never run).
    pub fn validate_with(
        &self,
        path: &str,
        simulation_time_bounded: bool,
        problems: &mut Problems,
    ) {
        let stages = join(path, "stages");
        if self.stages.is_empty() {
            problems.push(stages.clone(), "needs at least one stage");
        }
        let last = self.stages.len().saturating_sub(1);
        for (i, s) in self.stages.iter().enumerate() {
            let p = index(&stages, i);
            s.validate(&p, problems);
            if !s.is_self_bounded() {
                if i < last {
                    problems.push(
                        p,
                        "a stage needs a bound (total_requests or time_duration_sec) unless it \
                         replays a trace or sessions; without one the stages after it never run",
                    );
                } else if !simulation_time_bounded {
                    problems.push(
                        p,
                        "a stage needs a bound (total_requests or time_duration_sec) unless it \
                         replays a trace or sessions, or simulation_time is set",
                    );
                }
            }
        }
    }
}

impl StageConfig {
    /// True when the stage ends on its own: `total_requests` or `time_duration_sec` is set,
    /// or it replays a finite trace, sessions file, or a fixed number of synthetic sessions.
    pub fn is_self_bounded(&self) -> bool {
        self.total_requests.is_some()
            || self.time_duration_sec.is_some()
            || matches!(
                self.generator,
                GeneratorConfig::Trace(_)
                    | GeneratorConfig::Sessions(_)
                    | GeneratorConfig::SyntheticSessions(_)
            )
    }

    /// The generator's `type` name as written in JSON.
    pub fn type_name(&self) -> &'static str {
        match self.generator {
            GeneratorConfig::UniformReqRate(_) => "UniformReqRate",
            GeneratorConfig::ExponentialReqRate(_) => "ExponentialReqRate",
            GeneratorConfig::Gamma(_) => "Gamma",
            GeneratorConfig::RagWorkload(_) => "RAGWorkload",
            GeneratorConfig::Trace(_) => "Trace",
            GeneratorConfig::Sessions(_) => "Sessions",
            GeneratorConfig::SyntheticSessions(_) => "SyntheticSessions",
        }
    }

    /// The data file this stage needs (`trace_file` / `sessions_file`), if any.
    pub fn data_file(&self) -> Option<&str> {
        match &self.generator {
            GeneratorConfig::Trace(t) => Some(&t.trace_file),
            GeneratorConfig::Sessions(s) => Some(&s.sessions_file),
            _ => None,
        }
    }

    /// The field naming the stage's data file: `trace_file` or `sessions_file`.
    pub fn data_field(&self) -> &'static str {
        match self.generator {
            GeneratorConfig::Sessions(_) => "sessions_file",
            _ => "trace_file",
        }
    }

    /// Reports every problem of this stage under `path` (e.g. `workload.stages[1]`).
    pub fn validate(&self, path: &str, problems: &mut Problems) {
        self.priority.validate(&join(path, "priority"), problems);
        let sessions = matches!(
            self.generator,
            GeneratorConfig::Sessions(_) | GeneratorConfig::SyntheticSessions(_)
        );
        match self.total_requests {
            Some(0) => problems.push(join(path, "total_requests"), "must be >= 1"),
            Some(_) if sessions => problems.push(
                join(path, "total_requests"),
                "does not apply to session stages (a session's turns always run to its end); \
                 bound them with time_duration_sec or the number of sessions",
            ),
            _ => {}
        }
        if let Some(d) = self.time_duration_sec {
            problems.positive(path, "time_duration_sec", d);
        }
        let ty = self.type_name();
        match &self.generator {
            GeneratorConfig::UniformReqRate(c)
            | GeneratorConfig::ExponentialReqRate(c)
            | GeneratorConfig::Gamma(c) => {
                problems.positive(path, "request_rate", c.request_rate);
                match (ty, c.jitter) {
                    ("ExponentialReqRate", Some(j)) => {
                        problems.in_range(path, "jitter", j, 0.0, 1.0)
                    }
                    (_, Some(_)) => problems.push(
                        join(path, "jitter"),
                        format!("only ExponentialReqRate has jitter, not {ty}"),
                    ),
                    _ => {}
                }
                match (ty, c.cv) {
                    ("Gamma", Some(cv)) if !(cv > 0.0 && cv <= MAX_GAMMA_CV) => problems.push(
                        join(path, "cv"),
                        format!(
                            "must be > 0 and at most {MAX_GAMMA_CV} (burstier gaps underflow \
                             to zero, and the rate stops being the rate)"
                        ),
                    ),
                    ("Gamma", Some(_)) => {}
                    (_, Some(_)) => {
                        problems.push(join(path, "cv"), format!("only Gamma has cv, not {ty}"))
                    }
                    _ => {}
                }
                c.input_length.validate(path, "input_length", problems);
                c.output_length.validate(path, "output_length", problems);
                if let Some(sp) = &c.shared_prefix {
                    let p = join(path, "shared_prefix");
                    if sp.groups == 0 || sp.groups > MAX_POPULATION {
                        problems.push(
                            join(&p, "groups"),
                            format!("must be between 1 and {MAX_POPULATION}"),
                        );
                    }
                    if sp.length == 0 {
                        problems.push(join(&p, "length"), "must be >= 1");
                    }
                    popularity_problems(&p, "popularity", sp.popularity, problems);
                }
                if let Some(pool) = &c.prompt_pool {
                    if pool.size == 0 || pool.size > MAX_POPULATION {
                        problems.push(
                            join(&join(path, "prompt_pool"), "size"),
                            format!("must be between 1 and {MAX_POPULATION}"),
                        );
                    }
                }
            }
            GeneratorConfig::RagWorkload(c) => {
                problems.positive(path, "request_rate", c.request_rate);
                problems.in_range(path, "jitter", c.jitter, 0.0, 1.0);
                if c.num_documents == 0 || c.num_documents > MAX_POPULATION {
                    problems.push(
                        join(path, "num_documents"),
                        format!("must be between 1 and {MAX_POPULATION}"),
                    );
                }
                if c.document_size == 0 {
                    problems.push(join(path, "document_size"), "must be >= 1");
                }
                if c.docs_per_request == 0 {
                    problems.push(join(path, "docs_per_request"), "must be >= 1");
                } else if c.docs_per_request > c.num_documents {
                    problems.push(
                        join(path, "docs_per_request"),
                        format!(
                            "must be <= num_documents ({}): documents in a request are distinct",
                            c.num_documents
                        ),
                    );
                }
                popularity_problems(path, "document_popularity", c.document_popularity, problems);
                c.query_length.validate(path, "query_length", problems);
                if c.output_length == 0 {
                    problems.push(join(path, "output_length"), "must be >= 1");
                }
            }
            GeneratorConfig::Trace(c) => {
                if c.trace_file.is_empty() {
                    problems.push(join(path, "trace_file"), "choose a trace file");
                }
                if c.hash_block_size == 0 {
                    problems.push(join(path, "hash_block_size"), "must be >= 1");
                }
                problems.positive(path, "time_scale", c.time_scale);
            }
            GeneratorConfig::Sessions(c) => {
                if c.sessions_file.is_empty() {
                    problems.push(join(path, "sessions_file"), "choose a sessions file");
                }
            }
            GeneratorConfig::SyntheticSessions(c) => {
                if c.num_sessions == 0 {
                    problems.push(join(path, "num_sessions"), "must be >= 1");
                }
                if c.num_sessions > u32::MAX as u64 {
                    problems.push(join(path, "num_sessions"), "must be < 2^32");
                }
                problems.positive(path, "session_rate", c.session_rate);
                c.turns.validate(path, "turns", problems);
                c.input_length.validate(path, "input_length", problems);
                c.output_length.validate(path, "output_length", problems);
                problems.non_negative(path, "think_time", c.think_time);
            }
        }
    }

    /// Builds the stage's generator. `seed` is the scenario seed; every random stream is
    /// `workload.stage.<stage_index>.<purpose>`, so adding or changing another component never
    /// shifts this stage's numbers. `data` is the text of `trace_file` / `sessions_file`.
    /// Problems are located at `workload.stages[<stage_index>]…`.
    pub fn build(
        &self,
        seed: u64,
        stage_index: usize,
        data: Option<&str>,
    ) -> Result<StageGenerator, Vec<Problem>> {
        let path = index("workload.stages", stage_index);
        let mut problems = Problems::new();
        self.validate(&path, &mut problems);
        if !problems.is_empty() {
            return Err(problems.into_vec());
        }
        let stream = format!("workload.stage.{stage_index}");
        let fail = |field: &str, message: String| {
            Err(vec![Problem {
                path: join(&path, field),
                message,
            }])
        };
        let requests: Box<dyn RequestGenerator> = match &self.generator {
            GeneratorConfig::UniformReqRate(c)
            | GeneratorConfig::ExponentialReqRate(c)
            | GeneratorConfig::Gamma(c) => {
                let rate = c.request_rate;
                let arrival = match self.generator {
                    GeneratorConfig::UniformReqRate(_) => Arrival::Uniform { rate },
                    GeneratorConfig::ExponentialReqRate(_) => Arrival::Exponential {
                        rate,
                        jitter: c.jitter.unwrap_or(1.0),
                    },
                    _ => Arrival::Gamma {
                        rate,
                        cv: c.cv.unwrap_or(2.0),
                    },
                };
                let prefix = c.shared_prefix.as_ref().map(|sp| PrefixGroups {
                    length: sp.length,
                    picker: Picker::new(sp.groups, sp.popularity).expect("validated"),
                });
                let generator = SyntheticGenerator::new(
                    seed,
                    &stream,
                    arrival,
                    c.input_length.clone(),
                    c.output_length.clone(),
                    prefix,
                );
                Box::new(match &c.prompt_pool {
                    Some(pool) => generator.with_pool(PromptPool {
                        pool: stage_index as u32,
                        size: pool.size,
                        cycle: pool.order == PoolOrder::Cycle,
                    }),
                    None => generator,
                })
            }
            GeneratorConfig::RagWorkload(c) => Box::new(RagGenerator::new(
                seed,
                &stream,
                RagParams {
                    arrival: Arrival::Exponential {
                        rate: c.request_rate,
                        jitter: c.jitter,
                    },
                    system_prompt_length: c.system_prompt_length,
                    document_size: c.document_size,
                    docs_per_request: c.docs_per_request,
                    documents: Picker::new(c.num_documents, c.document_popularity)
                        .expect("validated"),
                    query_length: c.query_length.clone(),
                    output_length: c.output_length,
                    max_concurrent_requests: cap(c.max_concurrent_requests),
                },
            )),
            GeneratorConfig::Trace(c) => {
                let Some(text) = data else {
                    return fail("trace_file", format!("no data given for {}", c.trace_file));
                };
                match parse_trace(text) {
                    Ok(records) if records.is_empty() => {
                        return fail("trace_file", "the trace has no requests".into())
                    }
                    Ok(records) => {
                        let g = TraceGenerator::new(records, c.hash_block_size, c.time_scale);
                        Box::new(if c.absolute_times {
                            g.with_absolute_times()
                        } else {
                            g
                        })
                    }
                    Err(e) => return fail("trace_file", e.to_string()),
                }
            }
            GeneratorConfig::Sessions(c) => {
                let Some(text) = data else {
                    return fail(
                        "sessions_file",
                        format!("no data given for {}", c.sessions_file),
                    );
                };
                return match parse_sessions(text) {
                    Ok(s) if s.is_empty() => {
                        fail("sessions_file", "the file has no sessions".into())
                    }
                    Ok(s) => Ok(StageGenerator::Sessions(Box::new(
                        SessionsGenerator::new(s, cap(c.max_concurrent_sessions))
                            .with_open_loop(c.open_loop),
                    ))),
                    Err(e) => fail("sessions_file", e.to_string()),
                };
            }
            GeneratorConfig::SyntheticSessions(c) => {
                return Ok(StageGenerator::Sessions(Box::new(SyntheticSessions::new(
                    seed,
                    &stream,
                    SyntheticSessionsParams {
                        num_sessions: c.num_sessions,
                        arrival: Arrival::Exponential {
                            rate: c.session_rate,
                            jitter: 1.0,
                        },
                        turns: c.turns.clone(),
                        input_length: c.input_length.clone(),
                        output_length: c.output_length.clone(),
                        think_time: c.think_time,
                        system_prompt_length: c.system_prompt_length,
                        max_concurrent_sessions: cap(c.max_concurrent_sessions),
                        open_loop: c.open_loop,
                    },
                ))));
            }
        };
        Ok(StageGenerator::Requests(match self.total_requests {
            Some(n) => Box::new(Limit::new(requests, n)),
            None => requests,
        }))
    }
}

fn popularity_problems(path: &str, field: &str, p: Popularity, problems: &mut Problems) {
    if let Popularity::Zipf { s } = p {
        problems.non_negative(&join(path, field), "s", s);
    }
}
