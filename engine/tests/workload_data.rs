//! Trace and sessions files: parsing, line-numbered errors, replay timing and prompts.

use engine::request::{PromptContent, Source};
use engine::workload::generator::{
    hash_id_warning, parse_sessions, parse_trace, RequestGenerator, SessionCursor,
    SessionGenerator, SessionsGenerator, TraceGenerator, TurnLengths,
};
use engine::workload::{StageConfig, StageGenerator};

const MOONCAKE: &str = include_str!("../../examples/traces/mooncake_small.jsonl");
const SESSIONS: &str = include_str!("../../examples/traces/sessions_small.jsonl");

fn err(text: &str) -> String {
    parse_trace(text).unwrap_err().to_string()
}

fn sessions_err(text: &str) -> String {
    parse_sessions(text).unwrap_err().to_string()
}

#[test]
fn example_trace_parses_and_replays_at_its_timestamps_times_the_scale() {
    let records = parse_trace(MOONCAKE).unwrap();
    assert_eq!(records.len(), 50);
    assert_eq!(records[0].timestamp_ms, 120.0);
    let mut g = TraceGenerator::new(records.clone(), 512, 2.0);
    let mut t = 0.0;
    for (i, r) in records.iter().enumerate() {
        let s = g.next_request(i as u64).unwrap();
        t += s.gap;
        // Arrival = (timestamp − the first one, 120 ms) / 1000 × time_scale 2, within float
        // summation error: the first request arrives at the stage start.
        assert!(
            (t - (r.timestamp_ms - 120.0) / 1000.0 * 2.0).abs() < 1e-9,
            "line {}",
            i + 1
        );
        assert_eq!(s.prompt.len(), r.input_length);
        assert_eq!(s.output_len, r.output_length);
    }
    assert!(g.next_request(50).is_none());
    // With absolute times the first request waits its 120 ms × 2.
    let mut absolute = TraceGenerator::new(records, 512, 2.0).with_absolute_times();
    assert!((absolute.next_request(0).unwrap().gap - 0.24).abs() < 1e-12);
}

#[test]
fn a_trace_in_epoch_milliseconds_replays_from_its_first_line() {
    // Real traces often stamp epoch milliseconds: 1.7e12 ms is 54 years after 1970.
    let text = "\u{feff}{\"timestamp\":1700000000000,\"input_length\":10,\"output_length\":1}\n\
                {\"timestamp\":1700000000500,\"input_length\":10,\"output_length\":1}";
    let records = parse_trace(text).expect("a byte-order mark is skipped");
    let mut g = TraceGenerator::new(records, 512, 1.0);
    assert_eq!(g.next_request(0).unwrap().gap, 0.0);
    assert_eq!(g.next_request(1).unwrap().gap, 0.5);
    assert_eq!(
        g.data_shape().map(|s| (s.requests, s.seconds)),
        Some((2, 0.5))
    );
}

#[test]
fn hash_ids_that_do_not_match_the_block_size_are_a_warning_naming_one_that_fits() {
    // 1024 tokens at 512 per id need 2 ids; these lines carry 64 (1024 / 16) and 32 (512 / 16).
    let ids = |n: u64| format!("{:?}", (0..n).collect::<Vec<_>>());
    let text = format!(
        "{{\"timestamp\":0,\"input_length\":1024,\"output_length\":1,\"hash_ids\":{}}}\n\
         {{\"timestamp\":1,\"input_length\":512,\"output_length\":1,\"hash_ids\":{}}}\n\
         {{\"timestamp\":2,\"input_length\":512,\"output_length\":1}}",
        ids(64),
        ids(32)
    );
    let records = parse_trace(&text).unwrap();
    assert_eq!(
        hash_id_warning(&records, 512).unwrap(),
        "2 of 3 lines have a number of hash_ids other than input_length / hash_block_size \
         (512), e.g. the line of request 1 has 64 ids for 1024 tokens (expected 2); every \
         line fits hash_block_size 16"
    );
    // A line without hash ids is a prompt shared with no one, not a mismatch.
    assert_eq!(hash_id_warning(&records, 16), None);
    assert_eq!(hash_id_warning(&parse_trace(MOONCAKE).unwrap(), 512), None);
}

#[test]
fn trace_prompt_is_one_block_per_hash_id_with_a_partial_last_one() {
    let r =
        &parse_trace(r#"{"timestamp":0,"input_length":1100,"output_length":5,"hash_ids":[7,8,9]}"#)
            .unwrap()[0];
    let p = r.prompt(512, 99);
    let segs: Vec<(Source, u32)> = p.segments().iter().map(|s| (s.source, s.len)).collect();
    // 1100 = 512 + 512 + 76.
    assert_eq!(
        segs,
        [
            (Source::TraceBlock(7), 512),
            (Source::TraceBlock(8), 512),
            (Source::TraceBlock(9), 76)
        ]
    );
}

#[test]
fn tokens_beyond_the_hash_ids_are_unique_to_the_request() {
    let r = &parse_trace(r#"{"timestamp":0,"input_length":1300,"output_length":5,"hash_ids":[1]}"#)
        .unwrap()[0];
    let p = r.prompt(512, 42);
    let segs: Vec<(Source, u32)> = p.segments().iter().map(|s| (s.source, s.len)).collect();
    assert_eq!(
        segs,
        [(Source::TraceBlock(1), 512), (Source::Unique(42), 788)]
    );
}

#[test]
fn equal_leading_hash_ids_share_kv_blocks() {
    let t = "{\"timestamp\":0,\"input_length\":1024,\"output_length\":1,\"hash_ids\":[5,6]}\n\
             {\"timestamp\":10,\"input_length\":1024,\"output_length\":1,\"hash_ids\":[5,9]}";
    let rs = parse_trace(t).unwrap();
    let h = |p: PromptContent| p.block_hashes(16).collect::<Vec<_>>();
    let (a, b) = (h(rs[0].prompt(512, 1)), h(rs[1].prompt(512, 2)));
    // First 512 tokens = 32 blocks of 16 shared; block 32 is where they diverge.
    assert_eq!(a[..32], b[..32]);
    assert_ne!(a[32], b[32]);
}

#[test]
fn malformed_trace_lines_are_errors_with_line_and_field() {
    let ok = r#"{"timestamp":0,"input_length":10,"output_length":5,"hash_ids":[1]}"#;
    assert_eq!(
        err(&format!("{ok}\n\n{{\"timestamp\":5,\"output_length\":3}}")),
        "trace line 3: missing field \"input_length\""
    );
    assert_eq!(
        err(r#"{"timestamp":"soon","input_length":10,"output_length":5}"#),
        "trace line 1: field \"timestamp\": expected a number >= 0, got \"soon\""
    );
    assert_eq!(
        err(r#"{"timestamp":1,"input_length":10,"output_length":0}"#),
        "trace line 1: field \"output_length\": expected an integer >= 1, got 0"
    );
    assert_eq!(
        err(r#"{"timestamp":1,"input_length":10,"output_length":2,"hash_ids":[1,-2]}"#),
        "trace line 1: field \"hash_ids\": expected non-negative integers, got -2"
    );
    assert!(err(&format!("{ok}\n{{\"timestamp\":")).starts_with("trace line 2: not valid JSON"));
    assert_eq!(err("[1,2]"), "trace line 1: expected a JSON object");
    let back_in_time = r#"{"timestamp":900,"input_length":1,"output_length":1}
{"timestamp":800,"input_length":1,"output_length":1}"#;
    assert!(err(back_in_time).starts_with("trace line 2: timestamp 800 is earlier"));
}

#[test]
fn example_sessions_parse() {
    let s = parse_sessions(SESSIONS).unwrap();
    assert_eq!(s.len(), 8);
    assert_eq!(s[0].label.as_deref(), Some("agent-0"));
    assert_eq!(s[0].system_prompt, Some((1, 1500)));
    assert!(s.iter().all(|x| (2..=5).contains(&x.turns.len())));
}

#[test]
fn each_turn_prompt_is_the_whole_conversation_so_far() {
    let turns = vec![
        TurnLengths {
            input: 100,
            output: 50,
            gap: 0.0,
        },
        TurnLengths {
            input: 30,
            output: 20,
            gap: 2.0,
        },
        TurnLengths {
            input: 10,
            output: 5,
            gap: 1.5,
        },
    ];
    let mut c = SessionCursor::new(4, Some((1, 200)), turns);
    let t0 = c.next_turn().unwrap();
    let t1 = c.next_turn().unwrap();
    let t2 = c.next_turn().unwrap();
    assert!(c.next_turn().is_none());
    // Turn i prompt = 200 system + Σ_{j<i}(in_j + out_j) + in_i:
    // 200 + 100 = 300; 200 + 150 + 30 = 380; 200 + 150 + 50 + 10 = 410.
    assert_eq!(
        [t0.prompt.len(), t1.prompt.len(), t2.prompt.len()],
        [300, 380, 410]
    );
    assert_eq!([t0.gap, t1.gap, t2.gap], [0.0, 2.0, 1.5]);
    assert_eq!([t0.output_len, t1.output_len, t2.output_len], [50, 20, 5]);
    assert_eq!(t2.session.unwrap().turn, 2);
    let seg: Vec<Source> = t2.prompt.segments().iter().map(|s| s.source).collect();
    let (s, turn) = (4, |t| Source::Turn {
        session: 4,
        turn: t,
    });
    assert_eq!(
        seg,
        [
            Source::SystemPrompt(1),
            turn(0),
            Source::Reply {
                session: s,
                turn: 0
            },
            turn(1),
            Source::Reply {
                session: s,
                turn: 1
            },
            turn(2)
        ]
    );
    // Turn 1's prompt plus its reply is a prefix of turn 2's prompt, so its KV blocks
    // (all (380 + 20) / 16 = 25 full ones) are reusable.
    let h1: Vec<u64> = t1
        .prompt
        .clone()
        .with(
            Source::Reply {
                session: 4,
                turn: 1,
            },
            20,
        )
        .block_hashes(16)
        .collect();
    let h2: Vec<u64> = t2.prompt.block_hashes(16).collect();
    assert_eq!(h1.len(), 25);
    assert_eq!(h1[..], h2[..25]);
}

#[test]
fn sessions_start_at_their_start_times() {
    let text = r#"{"start":1.0,"turns":[{"input_length":5,"output_length":5}]}
{"start":1.0,"turns":[{"input_length":5,"output_length":5}]}
{"start":4.5,"turns":[{"input_length":5,"output_length":5}]}"#;
    let mut g = SessionsGenerator::new(parse_sessions(text).unwrap(), Some(2));
    assert_eq!(g.max_concurrent_sessions(), Some(2));
    let gaps: Vec<f64> = (10..)
        .map_while(|id| g.next_session(id))
        .map(|s| s.gap)
        .collect();
    assert_eq!(gaps, [1.0, 0.0, 3.5]);
}

#[test]
fn malformed_session_lines_are_errors_with_line_and_field() {
    let ok = r#"{"turns":[{"input_length":5,"output_length":5}]}"#;
    assert_eq!(
        sessions_err(&format!(
            "{ok}\n{{\"turns\":[{{\"input_length\":5,\"output_length\":5}},{{\"output_length\":3}}]}}"
        )),
        "sessions line 2: turns[1]: missing field \"input_length\""
    );
    assert_eq!(
        sessions_err(r#"{"session_id":1}"#),
        "sessions line 1: missing field \"turns\""
    );
    assert_eq!(
        sessions_err(r#"{"turns":[]}"#),
        "sessions line 1: field \"turns\": a session needs at least one turn"
    );
    assert_eq!(
        sessions_err(r#"{"turns":[{"input_length":5,"output_length":5,"gap":-1}]}"#),
        "sessions line 1: turns[0]: field \"gap\": expected a number >= 0, got -1"
    );
    assert!(
        sessions_err(&format!("{ok}\n{ok}\nnope")).starts_with("sessions line 3: not valid JSON")
    );
}

#[test]
fn synthetic_sessions_draw_whole_sessions_reproducibly() {
    let cfg: StageConfig = serde_json::from_str(
        r#"{"type":"SyntheticSessions","num_sessions":30,"turns":{"type":"uniform","min":2,"max":4},
            "input_length":{"type":"constant","value":10},"output_length":{"type":"constant","value":20},
            "system_prompt_length":100,"think_time":3,"max_concurrent_sessions":5}"#,
    )
    .unwrap();
    let run = || {
        let StageGenerator::Sessions(mut g) = cfg.build(9, 2, None).unwrap() else {
            panic!("sessions expected")
        };
        assert_eq!(g.max_concurrent_sessions(), Some(5));
        let mut out = Vec::new();
        let mut id = 0;
        while let Some(mut s) = g.next_session(id) {
            assert_eq!(s.cursor.session_id(), id);
            let mut turns = Vec::new();
            while let Some(t) = s.cursor.next_turn() {
                turns.push((t.gap, t.prompt.len()));
            }
            out.push((s.gap, turns));
            id += 1;
        }
        out
    };
    let a = run();
    assert_eq!(a, run());
    assert_eq!(a.len(), 30);
    for (_, turns) in &a {
        assert!((2..=4).contains(&turns.len()));
        assert_eq!(turns[0].0, 0.0, "the first turn has no think time");
        // Prompt i = 100 + 30·i + 10.
        for (i, &(_, len)) in turns.iter().enumerate() {
            assert_eq!(len, 110 + 30 * i as u32);
        }
    }
    let think: Vec<f64> = a
        .iter()
        .flat_map(|(_, t)| t[1..].iter().map(|x| x.0))
        .collect();
    assert!(think.iter().all(|&g| g > 0.0));
}
