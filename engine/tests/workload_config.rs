//! Stage configuration: JSON shape, defaults, validation paths and messages, the builder.

use engine::validate::Problems;
use engine::workload::config::GeneratorConfig;
use engine::workload::{StageConfig, StageGenerator, WorkloadConfig};

fn workload(json: &str) -> WorkloadConfig {
    serde_json::from_str(json).unwrap()
}

fn problems(w: &WorkloadConfig, simulation_time: bool) -> Vec<String> {
    let mut p = Problems::new();
    w.validate_with("workload", simulation_time, &mut p);
    p.into_vec().iter().map(|x| x.to_string()).collect()
}

#[test]
fn an_empty_document_is_the_default_bounded_workload() {
    let w = workload("{}");
    assert_eq!(w, WorkloadConfig::default());
    assert_eq!(w.stages[0].type_name(), "ExponentialReqRate");
    assert_eq!(w.stages[0].total_requests, Some(100));
    assert!(problems(&w, false).is_empty());
}

#[test]
fn stages_are_flat_objects_tagged_by_type_and_round_trip() {
    let w = workload(
        r#"{"stages":[
            {"type":"Gamma","request_rate":8,"cv":2.5,"time_duration_sec":60,
             "shared_prefix":{"groups":4,"popularity":{"type":"zipf","s":1.1}}},
            {"type":"RAGWorkload","num_documents":50,"total_requests":10},
            {"type":"Trace","trace_file":"mooncake.jsonl","time_scale":0.5},
            {"type":"Sessions","sessions_file":"s.jsonl","max_concurrent_sessions":4},
            {"type":"SyntheticSessions","num_sessions":3}
        ]}"#,
    );
    let GeneratorConfig::Gamma(g) = &w.stages[0].generator else {
        panic!()
    };
    assert_eq!((g.request_rate, g.cv), (8.0, Some(2.5)));
    // Unset fields take their documented defaults.
    assert_eq!(g.shared_prefix.as_ref().unwrap().length, 1024);
    let GeneratorConfig::RagWorkload(r) = &w.stages[1].generator else {
        panic!()
    };
    assert_eq!(
        (r.num_documents, r.docs_per_request, r.output_length),
        (50, 4, 256)
    );
    let GeneratorConfig::Trace(t) = &w.stages[2].generator else {
        panic!()
    };
    assert_eq!((t.hash_block_size, t.time_scale), (512, 0.5));
    assert!(problems(&w, false).is_empty(), "{:?}", problems(&w, false));
    let again: WorkloadConfig = serde_json::from_str(&serde_json::to_string(&w).unwrap()).unwrap();
    assert_eq!(again, w);
}

#[test]
fn unknown_fields_and_types_are_rejected() {
    let e = serde_json::from_str::<WorkloadConfig>(
        r#"{"stages":[{"type":"UniformReqRate","request_rat":3}]}"#,
    )
    .unwrap_err();
    assert!(e.to_string().contains("unknown field `request_rat`"), "{e}");
    let e =
        serde_json::from_str::<WorkloadConfig>(r#"{"stages":[{"type":"Poisson"}]}"#).unwrap_err();
    assert!(e.to_string().contains("unknown variant `Poisson`"), "{e}");
    let e =
        serde_json::from_str::<WorkloadConfig>(r#"{"stages":[{"request_rate":3}]}"#).unwrap_err();
    assert!(e.to_string().contains("missing field `type`"), "{e}");
    let e = serde_json::from_str::<WorkloadConfig>(r#"{"stagez":[]}"#).unwrap_err();
    assert!(e.to_string().contains("unknown field `stagez`"), "{e}");
}

#[test]
fn validation_reports_every_problem_with_its_path() {
    let w = workload(
        r#"{"stages":[
            {"type":"UniformReqRate","request_rate":3,"total_requests":10},
            {"type":"ExponentialReqRate","request_rate":0,"jitter":1.5,"total_requests":0},
            {"type":"UniformReqRate","jitter":0.5,"cv":1,"total_requests":5,
             "input_length":{"type":"uniform","min":50,"max":10}},
            {"type":"RAGWorkload","num_documents":3,"docs_per_request":5,"time_duration_sec":-1},
            {"type":"Trace","time_scale":0},
            {"type":"SyntheticSessions","total_requests":4,"session_rate":-2}
        ]}"#,
    );
    assert_eq!(
        problems(&w, false),
        [
            "workload.stages[1].total_requests: must be >= 1",
            "workload.stages[1].request_rate: must be > 0",
            "workload.stages[1].jitter: must be between 0 and 1",
            "workload.stages[2].jitter: only ExponentialReqRate has jitter, not UniformReqRate",
            "workload.stages[2].cv: only Gamma has cv, not UniformReqRate",
            "workload.stages[2].input_length.max: must be >= min",
            "workload.stages[3].time_duration_sec: must be > 0",
            "workload.stages[3].docs_per_request: must be <= num_documents (3): documents in a \
             request are distinct",
            "workload.stages[4].trace_file: choose a trace file",
            "workload.stages[4].time_scale: must be > 0",
            "workload.stages[5].total_requests: does not apply to session stages (a session's \
             turns always run to its end); bound them with time_duration_sec or the number of \
             sessions",
            "workload.stages[5].session_rate: must be > 0",
        ]
    );
}

#[test]
fn stages_need_a_bound_unless_they_replay_data() {
    let unbounded = r#"{"type":"ExponentialReqRate","request_rate":3}"#;
    let w = workload(&format!(r#"{{"stages":[{unbounded},{unbounded}]}}"#));
    assert!(!w.stages[0].is_self_bounded());
    let p = problems(&w, false);
    assert_eq!(p.len(), 2);
    assert!(p[0].starts_with("workload.stages[0]: a stage needs a bound (total_requests or"));
    assert!(p[0].ends_with("without one the stages after it never run"));
    assert!(p[1].ends_with("or simulation_time is set"));
    // With a global simulation_time only the last stage may go unbounded.
    assert_eq!(problems(&w, true).len(), 1);
    assert!(problems(&workload(&format!(r#"{{"stages":[{unbounded}]}}"#)), true).is_empty());
    // Replays are bounded by their data.
    let replay = workload(
        r#"{"stages":[{"type":"Trace","trace_file":"t"},{"type":"Sessions","sessions_file":"s"}]}"#,
    );
    assert!(replay.stages.iter().all(StageConfig::is_self_bounded));
    assert!(problems(&replay, false).is_empty());
}

#[test]
fn an_empty_stage_list_is_a_problem() {
    assert_eq!(
        problems(&workload(r#"{"stages":[]}"#), true),
        ["workload.stages: needs at least one stage"]
    );
}

#[test]
fn build_takes_the_data_text_and_reports_its_problems_at_the_file_field() {
    let cfg: StageConfig =
        serde_json::from_str(r#"{"type":"Trace","trace_file":"t.jsonl"}"#).unwrap();
    assert_eq!(cfg.data_file(), Some("t.jsonl"));
    let e = cfg.build(1, 2, None).unwrap_err();
    assert_eq!(
        e[0].to_string(),
        "workload.stages[2].trace_file: no data given for t.jsonl"
    );
    let bad = "{\"timestamp\":0,\"input_length\":5,\"output_length\":1}\n{\"timestamp\":1}";
    let e = cfg.build(1, 2, Some(bad)).unwrap_err();
    assert_eq!(
        e[0].to_string(),
        "workload.stages[2].trace_file: trace line 2: missing field \"input_length\""
    );
    let e = cfg.build(1, 0, Some("\n\n")).unwrap_err();
    assert_eq!(e[0].message, "the trace has no requests");
    let good = "{\"timestamp\":0,\"input_length\":5,\"output_length\":1}";
    assert!(matches!(
        cfg.build(1, 0, Some(good)),
        Ok(StageGenerator::Requests(_))
    ));
}

#[test]
fn build_refuses_an_invalid_stage() {
    let cfg: StageConfig =
        serde_json::from_str(r#"{"type":"UniformReqRate","request_rate":-1}"#).unwrap();
    let e = cfg.build(1, 4, None).unwrap_err();
    assert_eq!(
        e[0].to_string(),
        "workload.stages[4].request_rate: must be > 0"
    );
}

#[test]
fn total_requests_also_caps_a_trace() {
    let cfg: StageConfig = serde_json::from_str(
        r#"{"type":"Trace","trace_file":"mooncake_small.jsonl","total_requests":7}"#,
    )
    .unwrap();
    let text = include_str!("../../examples/traces/mooncake_small.jsonl");
    let StageGenerator::Requests(mut g) = cfg.build(1, 0, Some(text)).unwrap() else {
        panic!()
    };
    assert_eq!((0..100).map_while(|i| g.next_request(i)).count(), 7);
}

#[test]
fn a_stage_priority_is_a_number_or_a_weighted_mix() {
    use engine::workload::StagePriority;
    let w = workload(
        r#"{"stages":[
            {"type":"UniformReqRate","total_requests":5,"priority":-2},
            {"type":"UniformReqRate","total_requests":5,
             "priority":{"values":[0,1],"weights":[1,3]}},
            {"type":"UniformReqRate","total_requests":5}]}"#,
    );
    assert_eq!(w.stages[0].priority, StagePriority::Fixed(-2));
    assert_eq!(w.stages[2].priority, StagePriority::Fixed(0));
    // The default is left out when written back; the others round-trip.
    let text = serde_json::to_string(&w).unwrap();
    assert_eq!(text.matches("priority").count(), 2);
    assert_eq!(workload(&text), w);
    // A mix draws about weight / Σ weights of each value: 1 : 3 over 4,000 keys.
    let mix = &w.stages[1].priority;
    let ones = (0..4000).filter(|&k| mix.pick(7, 1, k) == 1).count();
    assert!((2850..3150).contains(&ones), "{ones}");
    assert_eq!(mix.pick(7, 1, 42), mix.pick(7, 1, 42));
    assert!(problems(&w, false).is_empty());

    let bad = workload(
        r#"{"stages":[{"type":"UniformReqRate","total_requests":5,
             "priority":{"values":[0,1],"weights":[0,-1]}}]}"#,
    );
    assert_eq!(
        problems(&bad, false),
        ["workload.stages[0].priority.weights: must be finite, >= 0 and not all 0"]
    );
    let bad = workload(
        r#"{"stages":[{"type":"UniformReqRate","total_requests":5,
             "priority":{"values":[0,1],"weights":[1]}}]}"#,
    );
    assert_eq!(
        problems(&bad, false),
        ["workload.stages[0].priority: needs as many weights as values, and at least one"]
    );
    let err = serde_json::from_str::<WorkloadConfig>(
        r#"{"stages":[{"type":"UniformReqRate","priority":"high"}]}"#,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("priority: expected a whole number"), "{err}");
}
