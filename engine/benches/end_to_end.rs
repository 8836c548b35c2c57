//! End-to-end speed.
//!
//! 1. **Opal's reference run**: the workload the original Python Opal was timed on — 4
//!    workers, round robin, 10,000 requests at 20 req/s, prompts uniform in [32, 16384],
//!    outputs uniform in [32, 128], granite-3.3-8b-instruct on an H100 — imported from the
//!    Opal config `benches/opal_reference.json`, so it runs under Opal's own step formula
//!    (`opal-analytical`) with Opal's peak figures, memory and cache settings: the same
//!    simulated work Opal did. Opal's time (104 s) is a recorded external figure from
//!    another machine and version, not measured here, and is printed as such.
//! 2. **The timing models' cost**: the same workload as our own scenario under the
//!    calibrated model (the default) and the roofline, side by side in this run.
//! 3. A 100,000-request run for memory per request, and a 16-worker routing run.
//!
//! `cargo bench -p opal-engine --bench end_to_end`

use engine::scenario::Scenario;
use engine::simulation::{Simulation, SimulationResults};
use opal::document::import_opal;
use std::time::Instant;

/// Opal's wall time for the reference run: a recorded external figure (another machine,
/// Opal's own version), not measured by this bench.
const OPAL_RECORDED_SECONDS: f64 = 104.0;

/// The reference workload as our scenario, under `timing` (`calibrated`, `roofline`).
fn scenario(requests: u64, timing: &str) -> Scenario {
    opal::parse_scenario(&format!(
        r#"{{
        "simulation": {{ "seed": 42, "num_workers": 4 }},
        "model": {{ "name": "granite-3.3-8b-instruct" }},
        "hardware": {{ "gpu": "H100-SXM" }},
        "worker": {{ "timing": {{ "model": "{timing}" }} }},
        "router": {{ "policy": {{ "policy": "round_robin" }} }},
        "workload": {{ "stages": [ {{
            "type": "UniformReqRate", "request_rate": 20, "total_requests": {requests},
            "input_length": {{ "type": "uniform", "min": 32, "max": 16384 }},
            "output_length": {{ "type": "uniform", "min": 32, "max": 128 }}
        }} ] }}
    }}"#
    ))
    .expect("the bench scenario is valid")
}

/// Opal's reference run, imported from its Opal config.
fn opal_reference() -> Scenario {
    import_opal(include_str!("opal_reference.json"))
        .expect("the reference config imports")
        .0
}

/// Seconds to build and run `scenario` to the end, and its results.
fn time(scenario: &Scenario) -> (f64, SimulationResults) {
    let start = Instant::now();
    let mut sim = Simulation::new(scenario, &Default::default()).expect("builds");
    sim.run();
    let results = sim.results();
    (start.elapsed().as_secs_f64(), results)
}

/// Best wall time of `n` runs, and the last run's results.
fn best_of(n: usize, scenario: &Scenario) -> (f64, SimulationResults) {
    let mut best = f64::INFINITY;
    let mut last = None;
    for _ in 0..n {
        let (t, r) = time(scenario);
        best = best.min(t);
        last = Some(r);
    }
    (best, last.expect("ran at least once"))
}

/// 16 workers routing 100,000 shared-prefix requests with `prefix_load` (issue 5's figure).
fn routing_run() -> (f64, SimulationResults) {
    let scenario = opal::parse_scenario(
        r#"{
        "simulation": { "seed": 7, "num_workers": 16 },
        "router": { "policy": { "policy": "prefix_load" } },
        "workload": { "stages": [ {
            "type": "ExponentialReqRate", "request_rate": 200, "total_requests": 100000,
            "input_length": { "type": "uniform", "min": 100, "max": 1000 },
            "output_length": { "type": "uniform", "min": 32, "max": 128 },
            "shared_prefix": { "groups": 64, "length": 2000, "popularity": { "type": "zipf", "s": 1.1 } }
        } ] }
    }"#,
    )
    .expect("the routing scenario is valid");
    time(&scenario)
}

fn rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn main() {
    let (best, r) = best_of(5, &opal_reference());
    let s = &r.stages[0];
    println!("Opal's reference run (imported Opal config, opal-analytical, best of 5)");
    println!("  wall time            {:>10.3} s", best);
    println!("  simulated time       {:>10.1} s", r.end_time);
    println!("  kernel events        {:>10}", r.events);
    println!("  events per second    {:>10.0}", r.events as f64 / best);
    println!(
        "  completed / failed   {:>10} / {}",
        s.successful_requests, s.failed_requests
    );
    println!(
        "  vs Opal's recorded   {:>10.0}x  (Opal: {OPAL_RECORDED_SECONDS} s, a recorded figure \
         from another machine and version, not measured here)",
        OPAL_RECORDED_SECONDS / best
    );

    let (calibrated, rc) = best_of(3, &scenario(10_000, "calibrated"));
    let (roofline, rr) = best_of(3, &scenario(10_000, "roofline"));
    println!("Timing models on the same workload (our scenario, best of 3)");
    println!(
        "  calibrated           {:>10.3} s  ({} events)",
        calibrated, rc.events
    );
    println!(
        "  roofline             {:>10.3} s  ({} events)",
        roofline, rr.events
    );
    println!("  calibrated / roofline{:>10.2}x", calibrated / roofline);

    let (t, r) = time(&scenario(100_000, "calibrated"));
    println!("100,000 requests");
    println!("  wall time            {:>10.3} s", t);
    println!("  simulated time       {:>10.1} s", r.end_time);
    println!(
        "  results JSON         {:>10.1} MB",
        r.to_json().len() as f64 / 1e6
    );
    if let Some(mb) = rss_mb() {
        // Whole process so far, including the results and their JSON text.
        println!("  peak memory (VmHWM)  {:>10.1} MB", mb);
    }
    drop(r);

    let (t, r) = routing_run();
    println!("16 workers, prefix_load, 100,000 shared-prefix requests");
    println!("  wall time            {:>10.3} s", t);
    println!(
        "  decisions per second {:>10.0}",
        r.decisions.len() as f64 / t
    );
    println!("  simulated s / wall s {:>10.1}", r.end_time / t);
    println!(
        "  mean TTFT            {:>10.1} ms",
        r.stages[0].ttft.mean_ms
    );
}
