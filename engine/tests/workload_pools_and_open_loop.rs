//! What real benchmark clients do: cycle through a fixed pool of prompts, and replay
//! conversations on their recorded schedule (open loop) rather than turn by turn.

mod platform_common;

use platform_common::{assert_close, run};

#[test]
fn a_prompt_pool_is_sent_in_cycles_and_repeats_hit_the_prefix_cache_whole() {
    // Pool of 6 prompts in 3 groups (uniform: prompts 0–1 in group 0, 2–3 in 1, 4–5 in 2),
    // each a 32-token group prefix plus 100 tokens of its own: 132 tokens, 8 full blocks of
    // 16 below the last token (which is always computed). 12 requests, one a second, so each
    // finished long before the next.
    let r = run(
        r#"{
        "simulation": { "num_workers": 1 },
        "worker": { "timing": { "model": "constant", "constant_step_time": 0.01 } },
        "workload": { "stages": [ { "type": "UniformReqRate", "request_rate": 1,
            "total_requests": 12,
            "input_length": { "type": "constant", "value": 100 },
            "output_length": { "type": "constant", "value": 4 },
            "shared_prefix": { "groups": 3, "length": 32 },
            "prompt_pool": { "size": 6 } } ] }
    }"#,
        &[],
    );
    let hits: Vec<u32> = r.requests.iter().map(|q| q.sources.gpu_cache).collect();
    // First cycle: the second prompt of each group hits its group's 32-token prefix; the
    // second cycle sends the same six prompts again: 8 blocks = 128 tokens each.
    assert_eq!(hits, [0, 32, 0, 32, 0, 32, 128, 128, 128, 128, 128, 128]);
    assert!(r.requests.iter().all(|q| q.prompt_tokens == 132));
}

#[test]
fn a_pool_of_one_drawn_at_random_is_always_the_same_prompt() {
    let r = run(
        r#"{
        "simulation": { "num_workers": 1 },
        "worker": { "timing": { "model": "constant", "constant_step_time": 0.01 } },
        "workload": { "stages": [ { "type": "UniformReqRate", "request_rate": 1,
            "total_requests": 4,
            "input_length": { "type": "uniform", "min": 50, "max": 500 },
            "output_length": { "type": "constant", "value": 2 },
            "prompt_pool": { "size": 1, "order": "random" } } ] }
    }"#,
        &[],
    );
    let len = r.requests[0].prompt_tokens;
    assert!(r.requests.iter().all(|q| q.prompt_tokens == len));
    // Every repeat hits all full blocks below its last token.
    let full = (len - 1) / 16 * 16;
    assert!(r
        .requests
        .iter()
        .skip(1)
        .all(|q| q.sources.gpu_cache == full));
}

/// One conversation: turn 0 (100 new tokens, a 50-token reply) at 0, turn 1 (20 tokens,
/// a 10-token reply) 0.1 s later.
const SESSION: &str = concat!(
    r#"{"turns": [{"input_length": 100, "output_length": 50}, "#,
    r#"{"input_length": 20, "output_length": 10, "gap": 0.1}]}"#
);

fn conversation(open_loop: bool) -> engine::simulation::SimulationResults {
    run(
        &format!(
            r#"{{
        "simulation": {{ "num_workers": 1 }},
        "worker": {{ "timing": {{ "model": "constant", "constant_step_time": 0.01 }} }},
        "workload": {{ "stages": [ {{ "type": "Sessions", "sessions_file": "s.jsonl",
            "open_loop": {open_loop} }} ] }}
    }}"#
        ),
        &[("s.jsonl", SESSION)],
    )
}

#[test]
fn a_closed_loop_turn_waits_for_the_previous_reply() {
    // Turn 0: prefill step [0, 0.01] gives token 1, 49 decode steps end at 0.50; turn 1
    // goes out 0.1 s of think time later, at 0.60.
    let r = conversation(false);
    assert_close(r.requests[0].completion, 0.50, "turn 0 done");
    assert_close(r.requests[1].created, 0.60, "turn 1 sent after the reply");
}

#[test]
fn an_open_loop_turn_goes_out_on_its_schedule() {
    // Turn 1 goes out at 0.1 while turn 0 still decodes; both complete. Turn 1's prompt
    // (turn 0, its reply, turn 1: 170 tokens) finds only what turn 0 has computed: turn 1
    // arrives during the step [0.10, 0.11], so (async scheduling) it is first considered at
    // 0.12, where the step [0.12, 0.13] computes turn 0's token 112 and so fills block 7
    // (tokens 96..112: 4 of the prompt, 12 of the reply), registered as it is allocated.
    // 7 blocks = 112 tokens hit; the rest of the reply does not exist yet.
    let r = conversation(true);
    assert_close(r.requests[1].created, 0.10, "turn 1 sent on schedule");
    assert_eq!(r.requests[1].prompt_tokens, 170);
    assert_eq!(r.requests[1].sources.gpu_cache, 112);
    assert!(r.requests.iter().all(|q| q.is_completed()));
}
