//! A run is a function of its scenario: the same document gives byte-identical results JSON
//! however often and however sliced it is run, and the seed is what varies a stochastic one.

use engine::scenario::{Scenario, ScenarioData};
use engine::simulation::Simulation;
use opal::document::{presets, Preset};

fn results_json(scenario: &Scenario, data: &ScenarioData) -> String {
    let mut sim = Simulation::new(scenario, data).expect("the scenario builds");
    sim.run();
    sim.results().to_json()
}

fn request_count(results_json: &str) -> usize {
    let v: serde_json::Value = serde_json::from_str(results_json).unwrap();
    v["requests"].as_array().unwrap().len()
}

/// Every preset (the documents in `examples/`), with its data files.
fn every_preset() -> Vec<(Preset, Scenario, ScenarioData)> {
    presets()
        .into_iter()
        .map(|p| {
            let scenario = p.scenario().unwrap_or_else(|e| panic!("{}: {e:?}", p.id));
            let data = p.data();
            (p, scenario, data)
        })
        .collect()
}

#[test]
fn every_example_gives_byte_identical_results_twice() {
    for (preset, scenario, data) in every_preset() {
        let first = results_json(&scenario, &data);
        let second = results_json(&scenario, &data);
        assert!(first == second, "{}: two runs differ", preset.id);
        // Not two empty runs: requests were issued.
        assert!(request_count(&first) > 0, "{}", preset.id);
    }
}

#[test]
fn another_seed_gives_another_run_of_a_stochastic_workload() {
    // default.json: Poisson arrivals, uniform lengths, Zipf system prompts, all seeded.
    let (_, scenario, data) = every_preset()
        .into_iter()
        .find(|(p, _, _)| p.id == "default")
        .unwrap();
    let mut reseeded = scenario.clone();
    reseeded.simulation.seed = scenario.simulation.seed + 1;
    let a = results_json(&scenario, &data);
    let b = results_json(&reseeded, &data);
    assert_ne!(a, b);
    // Same workload size either way (total_requests 300): only the draws changed.
    assert_eq!(request_count(&a), 300);
    assert_eq!(request_count(&b), 300);
}

#[test]
fn results_do_not_depend_on_how_the_run_is_sliced() {
    // The browser advances in slices between frames, the CLI in larger ones. One pass with
    // slices cycling through 1, 7 and 4096 events against one `run()`, on every preset
    // (each exercises other components: autoscaler, offload tiers, trace and session replay).
    for (preset, scenario, data) in every_preset() {
        let whole = results_json(&scenario, &data);
        let mut sim = Simulation::new(&scenario, &data).unwrap();
        let mut last = sim.progress();
        for slice in [1, 7, 4096].into_iter().cycle() {
            let now = sim.advance(slice);
            assert!(now.events <= last.events + slice, "{}", preset.id);
            assert!(now.now >= last.now, "{}: time runs forward", preset.id);
            if now.finished {
                break;
            }
            last = now;
        }
        assert!(
            sim.results().to_json() == whole,
            "{}: sliced run differs from run()",
            preset.id
        );
    }
}
