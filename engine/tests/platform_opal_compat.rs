//! The `opal_compat` switches, each on one worker with 0.1 s steps (the `constant` timing
//! model), where every timestamp follows by hand from the original Opal's worker
//! (`opal/worker/vllm_worker.py`): its persistent batch, its prefill step that emits no
//! token and its 1 ms pauses; and from its workload generator, whose prompts are all
//! token ids 0 to n − 1.

mod platform_common;

use platform_common::{assert_close, run, trace};

/// One worker, 0.1 s steps, synchronous scheduling, the trace in `t.jsonl`, and the given
/// `opal_compat` switches.
fn one_worker(compat: &str) -> String {
    format!(
        r#"{{
        "simulation": {{ "num_workers": 1 }},
        "worker": {{ "async_scheduling": false,
                     "timing": {{ "model": "constant", "constant_step_time": 0.1 }} }},
        "workload": {{ "stages": [ {{ "type": "Trace", "trace_file": "t.jsonl" }} ] }},
        "opal_compat": {{ {compat} }}
    }}"#
    )
}

#[test]
fn in_a_persistent_batch_a_new_request_waits_for_a_completion() {
    // Request 0 (4 tokens) is prefilled in [0, .1] and decodes at .2, .3, .4. Request 1
    // arrives at .05. Under vLLM's rules it joins the next step: prefilled in [.1, .2],
    // its 2 tokens at .2 and .3. In Opal's persistent batch it joins only when request 0
    // completes at .4: prefilled in [.4, .5], tokens at .5 and .6.
    let t = trace(&[(0.0, 100, 4, &[]), (50.0, 100, 2, &[])]);
    let files = [("t.jsonl", t.as_str())];
    let vllm = run(&one_worker(""), &files);
    assert_close(vllm.requests[1].first_scheduled, 0.1, "vLLM: joins at once");
    assert_close(vllm.requests[1].completion, 0.3, "vLLM: completion");
    let opal = run(&one_worker(r#""persistent_batch": true"#), &files);
    let (a, b) = (&opal.requests[0], &opal.requests[1]);
    assert_close(a.completion, 0.4, "request 0 completion");
    assert_close(b.first_scheduled, 0.4, "request 1 joins at the rebuild");
    assert_close(b.first_token, 0.5, "request 1 first token");
    assert_close(b.completion, 0.6, "request 1 completion");
}

#[test]
fn a_prefill_step_emits_no_token() {
    // 3 output tokens: the prefill step [0, .1] ends with Opal's "prefill done" (TTFT .1),
    // then 3 decode steps: completion at .4 (vLLM: at .3, its first token sampled by the
    // prefill step). Opal's TPOT is the mean of the 3 gaps after the prefill: 0.1 s.
    let t = trace(&[(0.0, 100, 3, &[])]);
    let files = [("t.jsonl", t.as_str())];
    let vllm = run(&one_worker(""), &files);
    assert_close(vllm.requests[0].completion, 0.3, "vLLM completion");
    let r = run(&one_worker(r#""prefill_step": true"#), &files);
    let q = &r.requests[0];
    assert_close(q.first_token, 0.1, "prefill done");
    assert_close(q.completion, 0.4, "completion");
    assert_eq!(
        q.output_tokens, 4,
        "the prefill step's mark counts as a token"
    );
    assert_close(r.stages[0].tpot.mean_ms, 100.0, "TPOT ms");
}

#[test]
fn step_delays_pause_1_ms_before_each_build_and_after_completions() {
    // Persistent batch with Opal's pauses. Request 0 (3 tokens) arrives at 0: the batch is
    // built after 1 ms and runs [.001, .101], [.101, .201], [.201, .301]; it completes at
    // .301. Request 1 (1 token) arrived at .05 and waits; 1 ms to hand request 0 back, 1 ms
    // to rebuild: prefilled in [.303, .403], which completes it.
    let t = trace(&[(0.0, 100, 3, &[]), (50.0, 100, 1, &[])]);
    let compat = r#""persistent_batch": true, "step_delays": true"#;
    let r = run(&one_worker(compat), &[("t.jsonl", &t)]);
    let (a, b) = (&r.requests[0], &r.requests[1]);
    assert_close(
        a.first_scheduled,
        0.001,
        "request 0 scheduled after the build",
    );
    assert_close(a.first_token, 0.101, "request 0 first token");
    assert_close(a.completion, 0.301, "request 0 completion");
    assert_close(
        b.first_scheduled,
        0.303,
        "request 1 after hand-back and rebuild",
    );
    assert_close(b.completion, 0.403, "request 1 completion");
}

#[test]
fn without_a_persistent_batch_every_step_is_built_after_1_ms() {
    // vLLM's scheduler builds a batch every step, so each step waits 1 ms: [.001, .101]
    // and, after the first token, [.102, .202].
    let t = trace(&[(0.0, 100, 2, &[])]);
    let r = run(&one_worker(r#""step_delays": true"#), &[("t.jsonl", &t)]);
    assert_close(r.requests[0].first_token, 0.101, "first token");
    assert_close(r.requests[0].completion, 0.202, "completion");
}

/// Two 1,000-token prompts a second apart on one worker with a CPU tier of 256-token
/// chunks written on completion, and no GPU prefix cache (Opal's defaults).
fn two_synthetic_prompts(compat: &str) -> String {
    format!(
        r#"{{
        "simulation": {{ "num_workers": 1 }},
        "worker": {{ "enable_prefix_caching": false,
                     "timing": {{ "model": "constant", "constant_step_time": 0.1 }} }},
        "kv_cache": {{ "chunk_size": 256,
                       "tiers": [ {{ "name": "cpu", "bandwidth_gbps": 50, "capacity_gb": 8 }} ] }},
        "workload": {{ "stages": [ {{ "type": "UniformReqRate", "request_rate": 1,
            "total_requests": 2,
            "input_length": {{ "type": "constant", "value": 1000 }},
            "output_length": {{ "type": "constant", "value": 2 }} }} ] }},
        "opal_compat": {{ {compat} }}
    }}"#
    )
}

#[test]
fn shared_prompt_ids_make_every_prompt_a_prefix_of_the_others() {
    // Each prompt is its own tokens: the second finds nothing in the tier.
    let own = run(&two_synthetic_prompts(""), &[]);
    assert_eq!(own.requests[1].sources.tiers()[0], 0);
    // Both are token ids 0..999: the second finds the first's 3 whole 256-token chunks
    // (768 tokens; the last 232 are no whole chunk) and computes the other 232.
    let shared = run(&two_synthetic_prompts(r#""shared_prompt_ids": true"#), &[]);
    let second = &shared.requests[1];
    assert_eq!(second.sources.tiers()[0], 768);
    assert_eq!(second.sources.computed, 232);
}

#[test]
fn frozen_chunks_need_a_persistent_batch() {
    let problems = opal::document::parse_with_data(
        &one_worker(r#""frozen_chunks": true"#),
        &Default::default(),
    )
    .unwrap_err();
    assert!(
        problems
            .iter()
            .any(|p| p.path == "opal_compat.frozen_chunks"
                && p.message.contains("needs persistent_batch")),
        "{problems:?}"
    );
}
