//! The workload's processes: the orchestrator runs stages one after another; each stage
//! runs generation and response collection concurrently and ends when both are done
//! (all-of), as Opal's `AbstractWorkload._run` does.

use super::generator::{RequestGenerator, RequestSpec, SessionCursor, SessionGenerator};
use super::{StageConfig, StageGenerator, StagePriority};
use crate::kernel::{AsEvent, Environment, Event, Process, SimError, Store};
use crate::platform::Books;
use crate::request::{PromptContent, Request, Source};
use crate::router::process::{Router, StageMsg, Submission};
use std::rc::Rc;

/// One stage, ready to run.
pub(crate) struct Stage {
    pub index: u32,
    pub total_requests: Option<u64>,
    pub time_duration_sec: Option<f64>,
    pub priority: StagePriority,
    /// The run's seed (priority mixes draw from it).
    pub seed: u64,
    pub generator: StageGenerator,
    /// Every prompt is a prefix of one token sequence, as in the original Opal's synthetic
    /// generator (`opal_compat.shared_prompt_ids`).
    pub opal_ids: bool,
}

impl Stage {
    /// A stage from its configuration and built generator.
    pub(crate) fn new(
        index: u32,
        config: &StageConfig,
        seed: u64,
        generator: StageGenerator,
    ) -> Self {
        Self {
            index,
            total_requests: config.total_requests,
            time_duration_sec: config.time_duration_sec,
            priority: config.priority.clone(),
            seed,
            generator,
            opal_ids: false,
        }
    }
}

/// Runs the stages in order, each to its end (Opal's `WorkloadOrchestrator.run`).
pub(crate) async fn orchestrate(
    env: Environment,
    books: Books,
    router: Rc<Router>,
    stages: Vec<Stage>,
) -> Result<(), SimError> {
    for stage in stages {
        let index = stage.index;
        books.borrow_mut().start_stage(index, env.now());
        env.process(run_stage(
            env.clone(),
            Rc::clone(&books),
            Rc::clone(&router),
            stage,
        ))
        .await??;
        books.borrow_mut().end_stage(index, env.now());
    }
    Ok(())
}

/// Generation and collection side by side; the stage ends when both have.
async fn run_stage(
    env: Environment,
    books: Books,
    router: Rc<Router>,
    stage: Stage,
) -> Result<(), SimError> {
    let responses: Store<StageMsg> = Store::new(&env);
    let submitter = Submitter {
        env: env.clone(),
        books,
        router,
        responses: responses.clone(),
        stage: stage.index,
        priority: stage.priority.clone(),
        seed: stage.seed,
        start: env.now(),
        time_bound: stage.time_duration_sec,
        opal_ids: stage.opal_ids,
    };
    let generation = match stage.generator {
        StageGenerator::Requests(gen) => {
            env.process(generate_requests(submitter, gen, stage.total_requests))
        }
        StageGenerator::Sessions(gen) => env.process(generate_sessions(submitter, gen)),
    };
    let collection = env.process(collect(responses));
    env.all_of([generation.as_event(), collection.as_event()])
        .await?;
    generation.value().unwrap_or(Ok(()))?;
    collection.value().unwrap_or(Ok(()))
}

/// What generation needs to issue requests.
struct Submitter {
    env: Environment,
    books: Books,
    router: Rc<Router>,
    responses: Store<StageMsg>,
    stage: u32,
    priority: StagePriority,
    seed: u64,
    start: f64,
    time_bound: Option<f64>,
    opal_ids: bool,
}

impl Submitter {
    fn env(&self) -> &Environment {
        &self.env
    }

    /// Waits `gap` seconds unless that would cross the stage's time bound; false when the
    /// stage must stop generating (nothing is submitted at or after the bound, nor past the
    /// end of time). A NaN gap is a fault of the generator, reported as the run's error.
    async fn wait(&self, gap: f64) -> Result<bool, SimError> {
        let env = self.env();
        if gap.is_nan() {
            let message = format!(
                "workload.stages[{}]: the generator drew a gap of NaN s",
                self.stage
            );
            return Err(env.fail(SimError::Fault(message.into())));
        }
        let at = env.now() + gap;
        if !at.is_finite() || self.time_bound.is_some_and(|b| at >= self.start + b) {
            return Ok(false);
        }
        if gap > 0.0 {
            env.timeout(gap).await?;
        }
        Ok(true)
    }

    /// Whether another request may be issued (`simulation.max_requests`); every generation
    /// loop asks before each request, so even a burst of zero gaps stays bounded.
    fn may_submit(&self) -> bool {
        self.books.borrow_mut().may_issue()
    }

    /// Turns a spec into a live request and hands it to the router's input store.
    fn submit(&self, spec: RequestSpec) -> Event<bool> {
        let env = self.env();
        let mut rec = self.books.borrow_mut();
        let prompt = if self.opal_ids {
            PromptContent::new().with(Source::OpalIds, spec.prompt.len())
        } else {
            spec.prompt
        };
        let mut request = Request::new(rec.peek_id(), prompt, spec.output_len, env.now());
        request.stage = self.stage;
        // Per session for session stages: every turn of a conversation shares its priority.
        let key = spec
            .session
            .map_or(request.id, |s| u64::from(s.session) | 1 << 63);
        request.priority = self.priority.pick(self.seed, self.stage, key);
        request.session = spec.session.map(|s| s.session);
        request.turn = spec.session.map(|s| s.turn);
        rec.on_arrival(&request, spec.session);
        let completed = env.event();
        let submission = Submission {
            request,
            completed: completed.clone(),
            responses: self.responses.clone(),
        };
        if self.router.input.try_put(submission).is_err() {
            unreachable!("the router's input store is unbounded");
        }
        completed
    }

    fn done(&self, issued: u64) {
        self.responses
            .try_put(StageMsg::GenerationDone { issued })
            .ok();
    }
}

/// Open loop: sleep the gap, submit, repeat; RAG's cap waits for any in-flight request.
async fn generate_requests(
    s: Submitter,
    mut gen: Box<dyn RequestGenerator>,
    total: Option<u64>,
) -> Result<(), SimError> {
    let cap = gen.max_concurrent_requests();
    let mut in_flight: Vec<Event<bool>> = Vec::new();
    let mut issued = 0u64;
    while total.is_none_or(|t| issued < t) {
        let id = s.books.borrow().peek_id();
        let Some(spec) = gen.next_request(id) else {
            break;
        };
        if !s.wait(spec.gap).await? || !s.may_submit() {
            break;
        }
        if let Some(cap) = cap {
            in_flight.retain(|e| !e.triggered());
            while in_flight.len() >= cap {
                s.env()
                    .any_of(in_flight.iter().map(|e| e.as_event()))
                    .await?;
                in_flight.retain(|e| !e.triggered());
            }
        }
        let completed = s.submit(spec);
        if cap.is_some() {
            in_flight.push(completed);
        }
        issued += 1;
    }
    s.done(issued);
    Ok(())
}

/// Closed loop per session: start sessions (at most the cap at once); each submits turn
/// i + 1 only after turn i completed.
async fn generate_sessions(
    s: Submitter,
    mut gen: Box<dyn SessionGenerator>,
) -> Result<(), SimError> {
    let s = Rc::new(s);
    let cap = gen.max_concurrent_sessions();
    let mut sessions: Vec<Process<Result<u64, SimError>>> = Vec::new();
    // The sessions still running, for the cap (pruned as they end, so the check stays
    // proportional to the cap, not to every session ever started).
    let mut live: Vec<Process<Result<u64, SimError>>> = Vec::new();
    loop {
        let id = s.books.borrow_mut().next_session();
        let Some(start) = gen.next_session(id) else {
            break;
        };
        if !s.wait(start.gap).await? || !s.may_submit() {
            break;
        }
        if let Some(cap) = cap {
            live.retain(|p| p.is_alive());
            while live.len() >= cap {
                s.env().any_of(live.iter().map(|p| p.as_event())).await?;
                live.retain(|p| p.is_alive());
            }
        }
        let session = s
            .env()
            .process(replay_session(Rc::clone(&s), start.cursor, gen.open_loop()));
        if cap.is_some() {
            live.push(session.clone());
        }
        sessions.push(session);
    }
    s.env()
        .all_of(sessions.iter().map(|p| p.as_event()))
        .await?;
    let mut issued = 0;
    for p in &sessions {
        issued += p.value().unwrap_or(Ok(0))?;
    }
    s.done(issued);
    Ok(())
}

/// One session. Closed loop: each turn waits for the previous one's `completed` event, and
/// a failed turn ends the session (the conversation cannot go on without its reply). Open
/// loop: turns go out on their schedule and the session ends when all have come back. The
/// router hears when it ends, so session-keyed routing state does not outlive it.
async fn replay_session(
    s: Rc<Submitter>,
    mut cursor: SessionCursor,
    open_loop: bool,
) -> Result<u64, SimError> {
    let mut issued = 0;
    let mut session = None;
    let mut outstanding = Vec::new();
    while let Some(spec) = cursor.next_turn() {
        if !s.wait(spec.gap).await? || !s.may_submit() {
            break;
        }
        issued += 1;
        session = spec.session.map(|t| t.session);
        let completed = s.submit(spec);
        if open_loop {
            outstanding.push(completed);
        } else if !completed.await? {
            break;
        }
    }
    if !outstanding.is_empty() {
        s.env()
            .all_of(outstanding.iter().map(|e| e.as_event()))
            .await?;
    }
    if let Some(id) = session {
        s.router.end_session(id);
    }
    Ok(issued)
}

/// Counts finished requests until generation has stopped and all it issued are back.
async fn collect(responses: Store<StageMsg>) -> Result<(), SimError> {
    let mut finished = 0u64;
    let mut issued = None;
    while issued != Some(finished) {
        match responses.get().await? {
            StageMsg::Finished => finished += 1,
            StageMsg::GenerationDone { issued: n } => issued = Some(n),
        }
    }
    Ok(())
}
