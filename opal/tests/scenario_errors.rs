//! Reading a scenario: every type error and duplicate key at once, each at its exact field,
//! and no message longer than a person can read.

use opal::Problem;
use std::time::Instant;

fn problems(json: &str) -> Vec<Problem> {
    opal::parse_scenario(json).expect_err("the scenario should be rejected")
}

fn lines(p: &[Problem]) -> Vec<String> {
    p.iter().map(Problem::to_string).collect()
}

#[test]
fn every_type_error_is_reported_at_its_field_inside_stages_and_tagged_objects() {
    let p = problems(
        r#"{"worker": {"max_num_seqs": "many", "block_size": -1},
            "router": {"policy": {"policy": "prefix_load", "w_prefix": "high"}},
            "workload": {"stages": [
              {"type": "UniformReqRate", "request_rate": "fast", "total_requests": "all",
               "input_length": {"type": "uniform", "min": "short", "max": 10}},
              {"type": "Nope"},
              {"type": "Gamma", "cv": "bursty", "total_requests": 3}]}}"#,
    );
    // serde reads an object's keys in sorted order, so that is the order within one.
    assert_eq!(
        lines(&p),
        [
            "router.policy.w_prefix: invalid type: string \"high\", expected f64",
            "worker.block_size: invalid value: integer `-1`, expected u32",
            "worker.max_num_seqs: invalid type: string \"many\", expected u32",
            "workload.stages[0].total_requests: expected a whole number, got \"all\"",
            "workload.stages[0].input_length.min: invalid type: string \"short\", expected u32",
            "workload.stages[0].request_rate: invalid type: string \"fast\", expected f64",
            "workload.stages[1].type: unknown variant `Nope`, expected one of `UniformReqRate`, \
             `ExponentialReqRate`, `Gamma`, `RAGWorkload`, `Trace`, `Sessions`, \
             `SyntheticSessions`",
            "workload.stages[2].cv: invalid type: string \"bursty\", expected f64",
        ]
    );
}

#[test]
fn unknown_fields_and_presets_are_named_where_they_are() {
    let p = problems(
        r#"{"workload": {"stages": [{"type": "UniformReqRate", "total_requests": 1,
                                     "rate": 5}]},
            "kv_cache": {"tiers": [{"preset": "tape"}]}}"#,
    );
    assert_eq!(p[0].path, "kv_cache.tiers[0].preset");
    assert_eq!(p[1].path, "workload.stages[0].rate");
    assert!(p[1].message.starts_with("unknown field `rate`"), "{p:?}");
}

#[test]
fn duplicate_keys_are_reported_not_silently_resolved() {
    let p = problems(r#"{"simulation": {"seed": 1, "num_workers": 2, "seed": 2}}"#);
    assert_eq!(
        lines(&p),
        ["simulation.seed: \"seed\" is given twice; only one value can count, remove the other"]
    );
    // With type errors, both kinds are listed.
    let p = problems(
        r#"{"workload": {"stages": [{"type": "Gamma", "type": "Gamma", "cv": "x",
                                     "total_requests": 1}]}}"#,
    );
    assert_eq!(p.len(), 2, "{p:?}");
    assert_eq!(p[0].path, "workload.stages[0].type");
    assert_eq!(p[1].path, "workload.stages[0].cv");
}

#[test]
fn a_ten_megabyte_value_gives_a_short_message() {
    let name = "x".repeat(10 << 20);
    let started = Instant::now();
    for doc in [
        format!(r#"{{"model": {{"name": "{name}"}}}}"#),
        format!(r#"{{"simulation": {{"seed": "{name}"}}}}"#),
        format!(r#"{{"{name}": 1}}"#),
    ] {
        let p = problems(&doc);
        assert_eq!(p.len(), 1);
        assert!(p[0].to_string().len() < 1000, "{}", p[0].to_string().len());
        assert!(p[0].message.contains(" characters]…"), "{}", p[0].message);
    }
    assert!(started.elapsed().as_secs() < 10, "read in bounded time");
}

#[test]
fn a_document_of_many_mistakes_lists_the_first_fifty_in_bounded_time() {
    // 30,000 stages, each with a mistyped rate: the list stops at 50 with a note, and
    // finding them reads each faulty stage on its own, not the whole document per probe.
    let stage = r#"{"type": "UniformReqRate", "request_rate": "x", "total_requests": 1}"#;
    let doc = format!(
        r#"{{"workload": {{"stages": [{}]}}}}"#,
        vec![stage; 30_000].join(",")
    );
    let p = problems(&doc);
    assert_eq!(p.len(), 51);
    assert_eq!(p[49].path, "workload.stages[49].request_rate");
    assert_eq!(p[50].message, "more problems follow; fix these 50 first");
}

#[test]
fn a_section_written_as_an_array_is_a_type_error_at_the_section() {
    // Sections and other structs are objects; serde_json would also take an array in field
    // order, which the scenario reader does not (every type's copy of that path weighed
    // 14 KB gzipped in the page's wasm).
    let p = problems(r#"{"simulation": [7, 8]}"#);
    assert_eq!(
        lines(&p),
        ["simulation: invalid type: sequence, expected struct SimulationConfig"]
    );
}
