//! Workload generators through whole runs: the RAG concurrency cap, closed-loop sessions,
//! trace timing, stage time bounds and stage order. One or two workers, 10 ms steps.

mod platform_common;

use engine::simulation::SimulationResults;
use platform_common::{assert_close, run, trace};

fn scenario(workers: u32, stages: &str) -> String {
    format!(
        r#"{{
        "simulation": {{ "num_workers": {workers} }},
        "worker": {{ "timing": {{ "model": "constant", "constant_step_time": 0.01 }} }},
        "router": {{ "policy": {{ "policy": "session_affinity" }} }},
        "workload": {{ "stages": [ {stages} ] }}
    }}"#
    )
}

/// Requests in flight at `t` (created, not yet completed).
fn in_flight(r: &SimulationResults, t: f64) -> usize {
    r.requests
        .iter()
        .filter(|q| q.created <= t && t < q.completion)
        .count()
}

#[test]
fn rag_never_exceeds_its_concurrency_cap() {
    // 20 req/s offered, but each request decodes 20 tokens (≥ 0.2 s): with the cap of 3
    // the generator waits for a completion before submitting a fourth.
    let stage = r#"{ "type": "RAGWorkload", "request_rate": 20, "total_requests": 30,
        "system_prompt_length": 100, "num_documents": 10, "document_size": 100,
        "docs_per_request": 2, "output_length": 20, "max_concurrent_requests": 3 }"#;
    let r = run(&scenario(1, stage), &[]);
    assert_eq!(r.stages[0].successful_requests, 30);
    let peak = r.requests.iter().map(|q| in_flight(&r, q.created)).max();
    assert_eq!(peak, Some(3), "the cap binds and holds");
    assert_eq!(r.stages[0].peak_concurrent_requests, 3);
}

#[test]
fn session_turns_wait_for_each_other_and_reuse_more_prefix_each_turn() {
    // Two sessions of four turns, 0.5 s think time. Each turn's prompt is the whole
    // conversation so far, so turn i + 1 finds turn i's prompt and reply in the cache.
    let turns = |n: usize| {
        let turn = r#"{"input_length": 60, "output_length": 20, "gap": 0.5}"#;
        vec![turn; n].join(", ")
    };
    let sessions = [
        format!(
            r#"{{"session_id": "a", "start": 0, "system_prompt_id": 1, "system_prompt_length": 300, "turns": [{}]}}"#,
            turns(4)
        ),
        format!(
            r#"{{"session_id": "b", "start": 0.2, "system_prompt_id": 2, "system_prompt_length": 300, "turns": [{}]}}"#,
            turns(4)
        ),
    ]
    .join("\n");
    let stage = r#"{ "type": "Sessions", "sessions_file": "s.jsonl" }"#;
    let r = run(&scenario(2, stage), &[("s.jsonl", &sessions)]);
    assert_eq!(r.requests.len(), 8);
    for session in 0..2 {
        let mut turns: Vec<_> = r
            .requests
            .iter()
            .filter(|q| q.session().map(|s| s.session) == Some(session))
            .collect();
        turns.sort_by_key(|q| q.session().unwrap().turn);
        assert_eq!(turns.len(), 4);
        for pair in turns.windows(2) {
            let (prev, next) = (pair[0], pair[1]);
            // Closed loop: the next turn is created exactly one think time after the
            // previous reply completed.
            assert_close(next.created, prev.completion + 0.5, "turn gap");
            // It carries the previous prompt + reply + a new input: a longer prompt …
            assert!(next.prompt_tokens > prev.prompt_tokens);
            // … and more of it from the GPU cache than the turn before.
            assert!(
                next.sources.gpu_cache > prev.sources.gpu_cache,
                "session {session}: hits {} then {}",
                prev.sources.gpu_cache,
                next.sources.gpu_cache
            );
        }
        assert_eq!(
            turns[0].sources.gpu_cache, 0,
            "the first turn has nothing cached"
        );
    }
}

#[test]
fn a_trace_replays_at_its_timestamps_times_the_time_scale() {
    // time_scale 2: 0, 300, 1250, 4000 ms → created at 0, 0.6, 2.5, 8.0 s.
    let t = trace(&[
        (0.0, 50, 2, &[]),
        (300.0, 50, 2, &[]),
        (1250.0, 50, 2, &[]),
        (4000.0, 50, 2, &[]),
    ]);
    let stage = r#"{ "type": "Trace", "trace_file": "t.jsonl", "time_scale": 2 }"#;
    let r = run(&scenario(1, stage), &[("t.jsonl", &t)]);
    let created: Vec<f64> = r.requests.iter().map(|q| q.created).collect();
    for (c, want) in created.iter().zip([0.0, 0.6, 2.5, 8.0]) {
        assert_close(*c, want, "created");
    }
}

#[test]
fn time_duration_stops_generation_at_the_bound() {
    // 4 req/s = a request every 0.25 s from 0.25; nothing is submitted at or after 2 s:
    // 0.25, 0.5, …, 1.75 = 7 requests. (The stage still waits for them to complete.)
    let stage = r#"{ "type": "UniformReqRate", "request_rate": 4, "time_duration_sec": 2,
        "input_length": { "type": "constant", "value": 50 },
        "output_length": { "type": "constant", "value": 50 } }"#;
    let r = run(&scenario(1, stage), &[]);
    let created: Vec<f64> = r.requests.iter().map(|q| q.created).collect();
    assert_eq!(created, vec![0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75]);
    assert!(r.end_time > 2.0, "the last requests finish after the bound");
}

#[test]
fn stages_run_one_after_another() {
    // Stage 0: a burst of 5 requests; stage 1 starts only when all of them are done, and
    // its first request comes one gap (1 / 10 req/s = 0.1 s) after that.
    let t = trace(
        &(0..5)
            .map(|i| (i as f64, 50, 30, &[][..]))
            .collect::<Vec<_>>(),
    );
    let stages = r#"{ "type": "Trace", "trace_file": "t.jsonl" },
        { "type": "UniformReqRate", "request_rate": 10, "total_requests": 5,
          "input_length": { "type": "constant", "value": 50 },
          "output_length": { "type": "constant", "value": 5 } }"#;
    let r = run(&scenario(2, stages), &[("t.jsonl", &t)]);
    let last_of_0 = r
        .requests
        .iter()
        .filter(|q| q.stage == 0)
        .map(|q| q.completion)
        .fold(f64::MIN, f64::max);
    let first_of_1 = r
        .requests
        .iter()
        .filter(|q| q.stage == 1)
        .map(|q| q.created)
        .fold(f64::MAX, f64::min);
    assert_close(
        first_of_1,
        last_of_0 + 0.1,
        "stage 1 starts when stage 0 ends",
    );
    assert_eq!(r.stages.len(), 2);
    assert_eq!(r.stages[0].successful_requests, 5);
    assert_eq!(r.stages[1].successful_requests, 5);
    assert!(r.stages[0].duration_s > 0.0 && r.stages[1].duration_s > 0.0);
}
