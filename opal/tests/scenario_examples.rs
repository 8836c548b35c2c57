//! The example scenarios in `examples/` and the built-in presets parse, validate and carry
//! their data files.

use opal::document::{detect_format, presets, Format};
use opal::scenario::{ScenarioData, SimulationConfig};
use opal::workload::GeneratorConfig;

fn example(name: &str) -> String {
    let path = format!("{}/../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn every_example_document_parses_and_validates() {
    for name in [
        "default.json",
        "routing_prefix_vs_round_robin.json",
        "race_round_robin_vs_prefix.json",
        "autoscaling_burst.json",
        "chunked_prefill_off.json",
        "rag_with_offload_tiers.json",
        "trace_replay.json",
        "sessions_replay.json",
    ] {
        let text = example(name);
        assert_eq!(detect_format(&text), Format::Ours, "{name}");
        let scenario = opal::parse_scenario(&text).unwrap_or_else(|p| panic!("{name}: {p:?}"));
        // A written document reads back as the same scenario.
        assert_eq!(
            opal::parse_scenario(&opal::document::to_json_pretty(&scenario)).unwrap(),
            scenario,
            "{name}"
        );
    }
}

#[test]
fn every_preset_is_an_example_file_and_loads_with_its_data() {
    let presets = presets();
    assert_eq!(presets[0].id, "default");
    assert_eq!(presets.len(), 17);
    for p in &presets {
        assert_eq!(p.json, example(&format!("{}.json", p.id)), "{}", p.id);
        let scenario = p.scenario().unwrap_or_else(|e| panic!("{}: {e:?}", p.id));
        // Every file the scenario names is embedded in the preset.
        for (_, file) in scenario.required_files() {
            assert!(p.files.iter().any(|(n, _)| *n == file), "{}: {file}", p.id);
        }
        assert!(!p.title.is_empty() && !p.description.is_empty());
    }
    let ids: Vec<&str> = presets.iter().map(|p| p.id).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), ids.len(), "preset ids are unique");
}

#[test]
fn default_document_is_the_default_example_and_is_small() {
    assert_eq!(opal::document::default_document(), example("default.json"));
    let s = opal::parse_scenario(opal::document::default_document()).unwrap();
    assert_eq!(s.simulation.num_workers, 4);
    assert_eq!(s.model.name, "granite-3.3-8b-instruct");
    assert_eq!(s.hardware.gpu, "H100-SXM");
    assert_eq!(s.router.policy.name(), "round_robin");
    assert_eq!(s.workload.stages[0].total_requests, Some(300));
    assert_ne!(s.simulation, SimulationConfig::default());
}

#[test]
fn trace_and_sessions_examples_need_their_files() {
    let trace = opal::parse_scenario(&example("trace_replay.json")).unwrap();
    assert_eq!(
        trace.required_files(),
        vec![(
            "workload.stages[0].trace_file".to_string(),
            "traces/mooncake_small.jsonl".to_string()
        )]
    );
    let missing = trace.check_data(&ScenarioData::new());
    assert_eq!(missing.len(), 1);
    assert_eq!(
        missing[0].to_string(),
        "workload.stages[0].trace_file: the file \"traces/mooncake_small.jsonl\" was not provided"
    );
    let data: ScenarioData = [(
        "traces/mooncake_small.jsonl",
        example("traces/mooncake_small.jsonl"),
    )]
    .into_iter()
    .collect();
    assert!(trace.check_data(&data).is_empty());

    let sessions = opal::parse_scenario(&example("sessions_replay.json")).unwrap();
    let GeneratorConfig::Sessions(c) = &sessions.workload.stages[0].generator else {
        panic!("sessions_replay replays sessions");
    };
    assert_eq!(c.sessions_file, "traces/sessions_small.jsonl");
    assert_eq!(sessions.required_data_files()[0].kind, "sessions");
}
