//! End-to-end speed: the scenario the original Python simulator needs about 104 s (and
//! 1.1 GB) for on this machine — 4 workers, round robin, 10,000 requests at 20 req/s,
//! prompts uniform in [32, 16384], outputs uniform in [32, 128], granite-3.3-8b-instruct on
//! an H100 — and a 100,000-request run for memory per request.
//!
//! `cargo bench -p opal-engine --bench end_to_end`

use engine::scenario::Scenario;
use engine::simulation::Simulation;
use std::time::Instant;

/// Opal's wall time for the 10,000-request scenario on this machine (issue figure).
const OPAL_SECONDS: f64 = 104.0;

fn scenario(requests: u64) -> Scenario {
    Scenario::parse(&format!(
        r#"{{
        "simulation": {{ "seed": 42, "num_workers": 4 }},
        "model": {{ "name": "granite-3.3-8b-instruct" }},
        "hardware": {{ "gpu": "H100-SXM" }},
        "worker": {{ "block_size": 16, "max_num_batched_tokens": 8192, "max_num_seqs": 256 }},
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

fn run(requests: u64) -> (f64, engine::simulation::SimulationResults) {
    let scenario = scenario(requests);
    let start = Instant::now();
    let mut sim = Simulation::new(&scenario, &Default::default()).expect("builds");
    sim.run();
    let results = sim.results();
    (start.elapsed().as_secs_f64(), results)
}

/// 16 workers routing 100,000 shared-prefix requests with `prefix_load` (issue 5's figure).
fn routing_run() -> (f64, engine::simulation::SimulationResults) {
    let scenario = Scenario::parse(
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
    let start = Instant::now();
    let mut sim = Simulation::new(&scenario, &Default::default()).expect("builds");
    sim.run();
    let results = sim.results();
    (start.elapsed().as_secs_f64(), results)
}

fn rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn main() {
    let mut best = f64::INFINITY;
    let mut last = None;
    for _ in 0..5 {
        let (t, r) = run(10_000);
        best = best.min(t);
        last = Some(r);
    }
    let r = last.expect("ran");
    let s = &r.stages[0];
    println!("10,000 requests, 4 workers, round robin (best of 5)");
    println!("  wall time            {:>10.3} s", best);
    println!("  simulated time       {:>10.1} s", r.end_time);
    println!("  kernel events        {:>10}", r.events);
    println!("  events per second    {:>10.0}", r.events as f64 / best);
    println!(
        "  completed / failed   {:>10} / {}",
        s.successful_requests, s.failed_requests
    );
    println!(
        "  speed-up vs Opal     {:>10.0}x  (Opal: {OPAL_SECONDS} s)",
        OPAL_SECONDS / best
    );

    let (t, r) = run(100_000);
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
