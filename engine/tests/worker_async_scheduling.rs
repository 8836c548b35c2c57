//! vLLM's async scheduling (on by default since v0.14): the engine decides the next batch
//! while the current one runs, so a request that arrives during a step joins the batch after
//! the next one, unless the engine has nothing else to run.

use engine::model::Model;
use engine::request::{PromptContent, Request, Source};
use engine::timing::TimingModel;
use engine::worker::{NoOffload, Scheduler, SchedulerConfig, SchedulerOutput, StepOutcome};

const DT: f64 = 0.25;

fn scheduler(async_scheduling: bool) -> Scheduler {
    let cfg = SchedulerConfig {
        async_scheduling,
        ..Default::default()
    };
    let model = Model::from_catalogue("granite-3.3-8b-instruct").unwrap();
    Scheduler::with_blocks(0, &cfg, &model, TimingModel::Constant(DT), 1000)
}

fn request(id: u64, output: u32) -> Request {
    Request::new(
        id,
        PromptContent::new().with(Source::Unique(id), 32),
        output,
        0.0,
    )
}

/// Request 1 arrives at 0 and decodes for ten steps; request 2 arrives in the middle of the
/// first step (t = 0.1). Returns request 2's first-token time.
fn second_request_first_token(async_scheduling: bool) -> f64 {
    let mut s = scheduler(async_scheduling);
    s.add_request(request(1, 10), 0.0).unwrap();
    let mut now = 0.0;
    let mut first = None;
    let (mut out, mut done) = (SchedulerOutput::default(), StepOutcome::default());
    for step in 0..10 {
        s.schedule(now, &mut NoOffload, &mut out);
        if step == 0 {
            s.add_request(request(2, 2), 0.1).unwrap();
        }
        now += s.step_time(&out);
        s.finish_step(now, &mut done);
        if done.first_tokens.contains(&2) {
            first = Some(now);
            break;
        }
    }
    first.expect("request 2 produced a token")
}

#[test]
fn a_request_arriving_mid_step_waits_one_more_step_with_async_scheduling() {
    // Without async scheduling it joins step 2 ([0.25, 0.5)): first token at 0.5.
    assert_eq!(second_request_first_token(false), 0.5);
    // With it, step 2 was decided when step 1 started: it joins step 3, first token at 0.75.
    assert_eq!(second_request_first_token(true), 0.75);
}

#[test]
fn an_idle_engine_runs_a_late_arrival_at_once() {
    // Request 2 arrives while request 1's only step runs; after it nothing else is queued,
    // so the batch queue is empty and request 2 runs in the very next step.
    let mut s = scheduler(true);
    s.add_request(request(1, 1), 0.0).unwrap();
    let (mut out, mut done) = (SchedulerOutput::default(), StepOutcome::default());
    s.schedule(0.0, &mut NoOffload, &mut out);
    s.add_request(request(2, 1), 0.1).unwrap();
    s.finish_step(s.step_time(&out), &mut done);
    assert_eq!(done.finished.len(), 1);
    s.schedule(DT, &mut NoOffload, &mut out);
    assert_eq!(out.scheduled.len(), 1);
    assert_eq!(out.scheduled[0].request, 2);
}
