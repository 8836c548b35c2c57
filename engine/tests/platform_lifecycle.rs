//! Whole runs on one worker with the `constant` timing model, where every timestamp can be
//! worked out by hand: a step takes exactly 0.1 s, a prompt that fits the token budget is
//! prefilled in one step and emits its first token at that step's end, and every later
//! step emits one token per running request.

mod platform_common;

use engine::stats::FailReason;
use platform_common::{assert_close, run, trace};

/// One worker, 0.1 s steps, the trace in `t.jsonl`.
/// One worker with 0.1 s steps and vLLM's synchronous scheduling (each batch decided at
/// the previous step's end), so every timestamp below is a multiple of 0.1 s.
fn one_worker(extra_model: &str) -> String {
    one_worker_scheduling(extra_model, false)
}

fn one_worker_scheduling(extra_model: &str, async_scheduling: bool) -> String {
    format!(
        r#"{{
        "simulation": {{ "num_workers": 1 }},
        "model": {{ "name": "granite-3.3-8b-instruct" {extra_model} }},
        "worker": {{ "async_scheduling": {async_scheduling},
                     "timing": {{ "model": "constant", "constant_step_time": 0.1 }} }},
        "workload": {{ "stages": [ {{ "type": "Trace", "trace_file": "t.jsonl" }} ] }}
    }}"#
    )
}

#[test]
fn one_request_has_exact_ttft_and_e2e() {
    // 100 prompt tokens fit one step's budget (8192): the step [0, 0.1] prefills them and
    // emits token 1 at 0.1; tokens 2..=10 take nine more steps, so the last one lands at
    // 10 × 0.1 = 1.0 s. The request reaches the router and the worker at its creation.
    let r = run(
        &one_worker(""),
        &[("t.jsonl", &trace(&[(0.0, 100, 10, &[])]))],
    );
    assert_eq!(r.requests.len(), 1);
    let q = &r.requests[0];
    assert_eq!(q.worker, Some(0));
    assert_eq!((q.created, q.router_in, q.worker_in), (0.0, 0.0, 0.0));
    assert_eq!(
        (q.kv_lookup_start, q.ready, q.first_scheduled),
        (0.0, 0.0, 0.0)
    );
    assert_close(q.first_token, 0.1, "first token");
    assert_close(q.completion, 1.0, "completion");
    assert_eq!(q.output_tokens, 10);
    assert_eq!(q.sources.computed, 100);
    let s = &r.stages[0];
    assert_eq!((s.successful_requests, s.failed_requests), (1, 0));
    assert_close(s.ttft.mean_ms, 100.0, "TTFT ms");
    assert_close(s.e2e.mean_ms, 1000.0, "E2E ms");
    // TPOT = (E2E − TTFT) / (10 − 1) = 0.9 / 9 = 0.1 s.
    assert_close(s.tpot.mean_ms, 100.0, "TPOT ms");
    // Every gap between consecutive tokens is one step.
    assert_close(s.itl.mean_ms, 100.0, "ITL ms");
    assert_eq!(s.total_generated_tokens, 10);
}

#[test]
fn two_requests_one_second_apart_do_not_interact() {
    // Each: prefill step (TTFT 0.1) + 4 decode steps = 0.5 s. The first is done at 0.5,
    // before the second arrives at 1.0; the worker is busy [0, 0.5] and [1.0, 1.5].
    let t = trace(&[(0.0, 100, 5, &[]), (1000.0, 100, 5, &[])]);
    let r = run(&one_worker(""), &[("t.jsonl", &t)]);
    for (q, created) in r.requests.iter().zip([0.0, 1.0]) {
        assert_close(q.created, created, "created");
        assert_close(q.ttft(), 0.1, "TTFT");
        assert_close(q.e2e(), 0.5, "E2E");
    }
    assert_close(r.end_time, 1.5, "end");
    // Second 0: busy 0.5 of 1 s; second 1: the run ends at 1.5, busy all of [1, 1.5].
    let busy = &r.series.workers[0].busy_fraction;
    assert_eq!(busy.len(), 2);
    assert_close(busy[0], 0.5, "busy in second 0");
    assert_close(busy[1], 1.0, "busy in second 1");
    assert_eq!(r.series.arrivals, vec![1, 1]);
    assert_eq!(r.series.completions, vec![1, 1]);
    assert_eq!(r.series.output_tokens, vec![5, 5]);
}

#[test]
fn a_request_arriving_mid_step_joins_the_next_batch() {
    // Request 0 steps at [0, .1], [.1, .2], ... and emits tokens at 0.1..=0.5.
    // Request 1 arrives at 0.25, during the step [0.2, 0.3]: it is queued on the worker at
    // once, scheduled with request 0's decode at 0.3, prefilled in [0.3, 0.4] (first token
    // 0.4, TTFT 0.15) and decodes at 0.5, 0.6, 0.7, 0.8 (E2E 0.8 − 0.25 = 0.55).
    let t = trace(&[(0.0, 100, 5, &[]), (250.0, 100, 5, &[])]);
    let r = run(&one_worker(""), &[("t.jsonl", &t)]);
    let (a, b) = (&r.requests[0], &r.requests[1]);
    assert_close(a.first_token, 0.1, "request 0 first token");
    assert_close(a.completion, 0.5, "request 0 completion");
    assert_eq!(b.worker_in, 0.25);
    assert_close(
        b.first_scheduled,
        0.3,
        "request 1 scheduled at the step boundary",
    );
    assert_close(b.first_token, 0.4, "request 1 first token");
    assert_close(b.completion, 0.8, "request 1 completion");
    // Mean TTFT = (0.1 + 0.15) / 2 = 125 ms; mean queueing = (0 + 0.05) / 2 = 25 ms.
    assert_close(r.stages[0].ttft.mean_ms, 125.0, "mean TTFT");
    assert_close(r.stages[0].queueing.mean_ms, 25.0, "mean queueing");
    assert_eq!(r.stages[0].peak_concurrent_requests, 2);
}

#[test]
fn with_async_scheduling_a_mid_step_arrival_waits_for_the_batch_already_decided() {
    // As above, but the batch of [0.3, 0.4] was decided when [0.2, 0.3] started, before
    // request 1 arrived at 0.25: it is prefilled in [0.4, 0.5] (first token 0.5, TTFT 0.25)
    // and decodes at 0.6, 0.7, 0.8, 0.9. Request 0 is unaffected.
    let t = trace(&[(0.0, 100, 5, &[]), (250.0, 100, 5, &[])]);
    let r = run(&one_worker_scheduling("", true), &[("t.jsonl", &t)]);
    let (a, b) = (&r.requests[0], &r.requests[1]);
    assert_close(a.completion, 0.5, "request 0 completion");
    assert_close(b.first_scheduled, 0.4, "request 1 scheduled a step later");
    assert_close(b.first_token, 0.5, "request 1 first token");
    assert_close(b.completion, 0.9, "request 1 completion");
}

#[test]
fn a_request_that_can_never_fit_fails_with_its_reason_and_the_others_complete() {
    // max_model_len 1024: 1100 + 10 = 1110 tokens can never run; it is rejected at the
    // worker the moment it arrives (completion = worker_in = 0.05), without delaying the
    // two others: request 0 (t = 0, done at 0.5) and request 2 (t = 0.15, prefilled in the
    // step [0.2, 0.3] next to request 0's decode, first token 0.3, done at 0.7).
    let t = trace(&[
        (0.0, 100, 5, &[]),
        (50.0, 1100, 10, &[]),
        (150.0, 100, 5, &[]),
    ]);
    let r = run(
        &one_worker(r#", "max_model_len": 1024"#),
        &[("t.jsonl", &t)],
    );
    let failed = &r.requests[1];
    assert_eq!(
        failed.failed,
        Some(FailReason::ExceedsMaxModelLen {
            tokens: 1110,
            max_model_len: 1024
        })
    );
    assert_eq!(failed.completion, 0.05);
    assert_eq!(failed.output_tokens, 0);
    assert_close(r.requests[0].completion, 0.5, "request 0");
    assert_close(r.requests[2].first_token, 0.3, "request 2 first token");
    assert_close(r.requests[2].completion, 0.7, "request 2");
    let s = &r.stages[0];
    assert_eq!((s.successful_requests, s.failed_requests), (2, 1));
    assert_eq!(s.failed_by_reason.get("exceeds_max_model_len"), Some(&1));
    // Latency tables cover the completed requests only: TTFT (0.1 + 0.15) / 2 = 125 ms.
    assert_eq!(s.ttft.count, 2);
    assert_close(s.ttft.mean_ms, 125.0, "TTFT of the completed");
}

#[test]
fn a_long_prompt_is_prefilled_in_chunks_of_the_token_budget() {
    // max_num_batched_tokens 512: a 1200-token prompt takes ceil(1200 / 512) = 3 steps
    // (512 + 512 + 176 tokens), so its first token comes at 0.3 and the 3 decode steps
    // end it at 0.6.
    let json = one_worker("").replace(
        r#""worker": {"#,
        r#""worker": { "max_num_batched_tokens": 512,"#,
    );
    let r = run(&json, &[("t.jsonl", &trace(&[(0.0, 1200, 4, &[])]))]);
    assert_close(r.requests[0].first_token, 0.3, "first token");
    assert_close(r.requests[0].completion, 0.6, "completion");
}
