//! The run as a whole, checked from inside: invariants after every single kernel event,
//! and what a run reports before and after it ends.

use super::Simulation;
use crate::scenario::{Scenario, ScenarioData};

/// Two workers with a GPU cache of 64 blocks (1024 tokens) each; prompts of 128 + 200..=500
/// tokens and 100..=300 output tokens (at most 928 < max_model_len): two or three running
/// requests fill a worker's cache, so running requests are preempted and recomputed.
const PRESSURE: &str = r#"{
    "simulation": { "num_workers": 2, "seed": 7 },
    "model": { "max_model_len": 1024 },
    "worker": { "num_gpu_blocks_override": 64,
                "timing": { "model": "constant", "constant_step_time": 0.01 } },
    "router": { "policy": { "policy": "least_loaded" }, "kv_event_interval": 0.25 },
    "workload": { "stages": [ { "type": "UniformReqRate", "request_rate": 40,
        "total_requests": 60,
        "input_length": { "type": "uniform", "min": 200, "max": 500 },
        "output_length": { "type": "uniform", "min": 100, "max": 300 },
        "shared_prefix": { "groups": 2, "length": 128 } } ] }
}"#;

fn build(json: &str) -> Simulation {
    let scenario = Scenario::from_test_json(json).unwrap();
    Simulation::new(&scenario, &ScenarioData::new()).unwrap()
}

#[test]
fn invariants_hold_after_every_event_even_under_preemption() {
    let mut sim = build(PRESSURE);
    while !sim.advance(1).finished {
        sim.check_invariants().unwrap_or_else(|e| {
            panic!("after event {}: {e}", sim.progress().events);
        });
    }
    sim.check_invariants().unwrap();
    let r = sim.results();
    assert_eq!(r.stages[0].successful_requests, 60);
    // The scenario must actually exercise preemption, or this test proves little.
    assert!(r.stages[0].preemptions > 0, "no preemption happened");
    // Every request was reported back to its stage exactly once.
    assert_eq!(sim.books.borrow().finished, 60);
}

#[test]
fn a_run_stopped_midway_reports_itself_truncated_and_unfinished() {
    let mut sim = build(PRESSURE);
    sim.advance(2_000);
    assert!(!sim.is_finished());
    // Mid-run the workers hold requests: the idle check does not apply yet.
    sim.check_invariants().unwrap();
    let mid = sim.results();
    assert!(mid.truncated);
    let open = mid
        .requests
        .iter()
        .filter(|r| r.completion.is_nan())
        .count();
    assert!(open > 0, "some requests are still in flight");
    assert_eq!(
        mid.stages[0].unfinished_requests as usize, open,
        "the table counts the requests still in flight"
    );
    sim.run();
    let end = sim.results();
    assert!(!end.truncated);
    assert!(end.requests.iter().all(|r| !r.completion.is_nan()));
}

#[test]
fn the_same_scenario_gives_identical_results() {
    let a = build(PRESSURE).run_to_results();
    let b = build(PRESSURE).run_to_results();
    assert_eq!(a.to_json(), b.to_json());
}

impl Simulation {
    fn run_to_results(mut self) -> super::SimulationResults {
        self.run();
        self.results()
    }
}
