//! Property test: parsing, validating and importing never panic, whatever the input, and every
//! problem says something. Inputs are random JSON and random mutations of the example
//! documents (so most of them get deep into the sections), drawn from seeded streams.

mod fuzz_common;

use engine::rng::SimRng;
use engine::scenario::ScenarioData;
use engine::validate::Problem;
use fuzz_common::{all_data, extremes, mangle_text, mutate, random_value, CUSTOM_MODELS};
use opal::document::{detect_format, import_opal, presets};
use serde_json::Value;

fn assert_messages(input: &str, problems: &[Problem]) {
    assert!(
        !problems.is_empty(),
        "an error without problems for {input}"
    );
    for p in problems {
        assert!(
            !p.message.trim().is_empty(),
            "empty message at {:?} for {input}",
            p.path
        );
    }
}

/// Runs everything a user's text reaches and checks the contracts.
fn exercise(text: &str, data: &ScenarioData) {
    detect_format(text);
    match opal::parse_scenario(text) {
        Ok(s) => {
            // A valid scenario writes out and reads back as itself.
            let written = opal::document::to_json_pretty(&s);
            assert_eq!(
                opal::parse_scenario(&written).as_ref(),
                Ok(&s),
                "round trip of {text}"
            );
            s.required_files();
            let problems = s.check_data(data);
            for p in &problems {
                assert!(!p.message.is_empty());
            }
        }
        Err(p) => assert_messages(text, &p),
    }
    match import_opal(text) {
        Ok((s, report)) => {
            assert!(
                s.validate().is_empty(),
                "an import that does not validate: {text}"
            );
            serde_json::to_string(&report).unwrap();
        }
        Err(p) => assert_messages(text, &p),
    }
}

#[test]
fn random_json_never_panics() {
    let mut rng = SimRng::stream(1, "robustness.random");
    let data = all_data();
    for _ in 0..3000 {
        let v = random_value(&mut rng, 5);
        exercise(&v.to_string(), &data);
    }
}

#[test]
fn mutated_examples_never_panic() {
    let mut rng = SimRng::stream(2, "robustness.mutate");
    let data = all_data();
    let docs: Vec<Value> = presets()
        .iter()
        .map(|p| p.json)
        .chain(CUSTOM_MODELS.iter().copied())
        .map(|text| serde_json::from_str(text).unwrap())
        .collect();
    for i in 0..6000 {
        let mut v = docs[i % docs.len()].clone();
        if rng.below(4) == 0 {
            extremes(&mut rng, &mut v);
        }
        for _ in 0..=rng.below(3) {
            mutate(&mut rng, &mut v);
        }
        exercise(&v.to_string(), &data);
    }
}

#[test]
fn mangled_text_never_panics() {
    let mut rng = SimRng::stream(3, "robustness.text");
    let data = all_data();
    let docs: Vec<&str> = presets().iter().map(|p| p.json).collect();
    for i in 0..2000 {
        exercise(&mangle_text(&mut rng, docs[i % docs.len()]), &data);
    }
}

#[test]
fn mangled_data_files_give_problems_not_panics() {
    let mut rng = SimRng::stream(4, "robustness.data");
    for p in presets()
        .iter()
        .filter(|p| !p.files.is_empty() && !p.is_opal())
    {
        let s = opal::parse_scenario(p.json).unwrap();
        for _ in 0..200 {
            let mut data = ScenarioData::new();
            for (name, text) in p.files {
                data.insert(*name, mangle_text(&mut rng, text));
            }
            for problem in s.check_data(&data) {
                assert!(!problem.message.is_empty());
            }
        }
    }
}

// Crashers the property test found, kept as regressions (each used to overflow a u64).

#[test]
fn regression_rag_stage_of_maximal_sizes_is_measured_without_overflow() {
    // 4 294 967 295 · 4 294 967 295 documents' tokens plus three more u32::MAX terms
    // overflowed the shortest-request sum in the cross-section check.
    let p = opal::parse_scenario(
        r#"{"workload": {"stages": [{"type": "RAGWorkload", "total_requests": 1,
            "docs_per_request": 4294967295, "num_documents": 4294967295,
            "document_size": 4294967295, "system_prompt_length": 4294967295,
            "output_length": 4294967295}]}}"#,
    )
    .unwrap_err();
    // Rejected, without overflowing: the cross-section check still measures the stage,
    // and the document count is over the population cap as well.
    assert!(
        p.iter().any(|p| p.path == "workload.stages[0]"
            && p.message.contains("every request would be rejected")),
        "{p:?}"
    );
    assert!(p
        .iter()
        .any(|p| p.path == "workload.stages[0].num_documents"));
}

#[test]
fn regression_custom_model_of_maximal_shape_is_rejected_not_sized() {
    // Sizing this shape overflowed the parameter count before validation bounded it.
    let p = opal::parse_scenario(
        r#"{"model": {"name": "custom", "custom": {"num_layers": 4294967295,
            "hidden_size": 4294967295, "num_heads": 1, "num_kv_heads": 1,
            "intermediate_size": 4294967295, "vocab_size": 4294967295,
            "max_model_len": 4294967295, "bytes_per_param": 4294967295}}}"#,
    )
    .unwrap_err();
    let paths: Vec<&str> = p.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "model.custom.num_layers",
            "model.custom.hidden_size",
            "model.custom.intermediate_size",
            "model.custom.vocab_size",
            "model.custom.max_model_len",
            "model.custom.bytes_per_param",
        ]
    );
    let p = opal::parse_scenario(
        r#"{"model": {"name": "custom", "hf_config": {"num_hidden_layers": 4294967295,
            "hidden_size": 4294967295, "num_attention_heads": 1,
            "intermediate_size": 4294967295, "vocab_size": 4294967295}}}"#,
    )
    .unwrap_err();
    assert_eq!(p[0].path, "model.hf_config");
    assert!(p[0].message.contains("at most"), "{}", p[0].message);
}
