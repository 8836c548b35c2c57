//! Documents written before a field moved read as they did: a custom GPU's calibration,
//! once `hardware.custom.calibration`, is the timing section's now.

use opal::hardware::lookup;
use opal::simulation::Simulation;
use opal::timing::{calibration_for, Calibration};
use serde_json::{json, Value};

/// A custom GPU with the L40S's datasheet under another name, so that only a calibration
/// given in the document can give it the L40S's figures (a custom GPU defaults to the H100's).
fn custom_gpu() -> Value {
    let mut spec = serde_json::to_value(lookup("L40S").unwrap()).unwrap();
    spec["name"] = "my L40S".into();
    spec
}

fn l40s() -> Calibration {
    calibration_for(&lookup("L40S").unwrap())
}

fn doc(hardware: Value, worker: Value) -> String {
    json!({
        "model": { "name": "Llama-3.1-8B" },
        "hardware": hardware,
        "worker": worker,
        "simulation": { "num_workers": 2 },
        "workload": { "stages": [ { "type": "UniformReqRate", "request_rate": 20,
                                    "total_requests": 60 } ] }
    })
    .to_string()
}

fn results(text: &str) -> String {
    let s = opal::parse_scenario(text).unwrap_or_else(|p| panic!("{p:?}"));
    let mut sim = Simulation::new(&s, &Default::default()).unwrap();
    sim.run();
    sim.finish().to_json()
}

#[test]
fn an_old_custom_gpu_calibration_is_the_timing_section_s_and_gives_the_same_run() {
    let mut old_spec = custom_gpu();
    old_spec["calibration"] = serde_json::to_value(l40s()).unwrap();
    let old = doc(json!({ "gpu": "custom", "custom": old_spec }), json!({}));
    let new = doc(
        json!({ "gpu": "custom", "custom": custom_gpu() }),
        json!({ "timing": { "calibration": l40s() } }),
    );
    let s = opal::parse_scenario(&old).unwrap();
    assert_eq!(s.worker.timing.calibration, Some(l40s()));
    assert_eq!(results(&old), results(&new));
    // Without it the custom GPU is priced with the H100's figures: another run.
    let bare = doc(
        json!({ "gpu": "custom", "custom": custom_gpu() }),
        json!({}),
    );
    assert_ne!(results(&old), results(&bare));
}

#[test]
fn a_calibration_given_in_both_places_is_a_problem_at_the_old_one() {
    let mut old_spec = custom_gpu();
    old_spec["calibration"] = json!({ "step_overhead_us": 100 });
    let text = doc(
        json!({ "gpu": "custom", "custom": old_spec }),
        json!({ "timing": { "calibration": { "step_overhead_us": 200 } } }),
    );
    let problems = opal::parse_scenario(&text).unwrap_err();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].path, "hardware.custom.calibration");
    assert!(problems[0].message.contains("worker.timing.calibration"));
}

#[test]
fn a_custom_section_beside_a_catalogue_gpu_stays_ignored() {
    let mut old_spec = custom_gpu();
    old_spec["calibration"] = serde_json::to_value(l40s()).unwrap();
    let text = doc(json!({ "gpu": "H100-SXM", "custom": old_spec }), json!({}));
    let s = opal::parse_scenario(&text).unwrap();
    assert_eq!(s.worker.timing.calibration, None);
}

#[test]
fn each_pool_keeps_the_calibration_it_had() {
    let mut old_spec = custom_gpu();
    old_spec["calibration"] = serde_json::to_value(l40s()).unwrap();
    let mut text: Value = serde_json::from_str(&doc(
        json!({ "gpu": "custom", "custom": old_spec }),
        json!({ "timing": { "model": "calibrated" } }),
    ))
    .unwrap();
    text["deployment"] = json!({ "pools": [
        { "name": "prefill", "role": "prefill", "num_workers": 1 },
        { "name": "decode", "role": "decode", "num_workers": 1,
          "hardware": { "gpu": "A100-80GB" } }
    ] });
    let s = opal::parse_scenario(&text.to_string()).unwrap_or_else(|p| panic!("{p:?}"));
    let calibration = |i: usize| {
        let pool = &s.deployment.as_ref().unwrap().pools[i];
        let hw = pool
            .effective_hardware(&s.hardware)
            .unwrap()
            .resolve()
            .unwrap();
        pool.effective_worker(&s.worker)
            .unwrap()
            .timing
            .calibration(&hw)
    };
    // On the custom GPU: its calibration. On the A100: the A100's own, as before.
    assert_eq!(calibration(0), l40s());
    assert_eq!(
        calibration(1),
        calibration_for(&lookup("A100-80GB").unwrap())
    );
}
