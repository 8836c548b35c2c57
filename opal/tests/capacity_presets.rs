//! The capacity preset's answer holds: it still meets the SLO at 10x the requests the
//! preset names, and 10 % above it the cluster is overloaded.

use opal::document::preset;
use opal::scenario::Scenario;
use opal::simulation::Simulation;
use opal::sweep::SweepPlan;

/// The preset's scenario at `rate` req/s with `scale` times its requests, run plainly.
fn run_at(base: &Scenario, rate: f64, scale: u64) -> opal::simulation::SimulationResults {
    let mut s = base.clone();
    s.sweep = None;
    let stage = &mut s.workload.stages[0];
    stage.total_requests = stage.total_requests.map(|n| n * scale);
    let mut tree = opal::document::to_tree(&s);
    tree["workload"]["stages"][0]["request_rate"] = serde_json::json!(rate);
    let s = opal::parse_scenario(&tree.to_string()).unwrap();
    let mut sim = Simulation::new(&s, &Default::default()).unwrap();
    sim.run();
    sim.results()
}

#[test]
fn the_capacity_presets_answer_holds_at_ten_times_the_requests_and_not_above() {
    let p = preset("capacity_4xh100_ttft500").expect("the preset");
    let base = opal::parse_scenario(p.json).unwrap();
    let plan = SweepPlan::new(&base, Default::default()).unwrap();
    let point = plan.run_point(0);
    let search = point.search.as_ref().unwrap();
    let rate = search.value.expect("an answer");
    // What the cluster sustains with long runs: 122.5 req/s (116.6 while a prefix-cache hit's
    // chunk was priced with every pair under the short-chunk penalty).
    assert!((105.0..=125.0).contains(&rate), "{search:?}");
    let long = run_at(&base, rate, 10);
    let slo = long.slo.as_ref().unwrap();
    assert!(slo.overall.met, "at {rate} req/s, 10x: {:?}", slo.overall);
    let above = run_at(&base, rate * 1.1, 1);
    let slo = above.slo.as_ref().unwrap();
    assert!(
        slo.overall.overloaded && !slo.overall.met,
        "at {} req/s: {:?}",
        rate * 1.1,
        long.windows
    );
}
