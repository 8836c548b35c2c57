//! One inference-lab 1.0.0 run of the peer comparison, in its own process so its peak
//! memory is its own: `inference-lab-side MODEL.toml WORKLOAD.toml REQUESTS WORKERS RATE`.
//! Prints the requests it completed.

use inference_lab::config::{Config, ModelConfig, WorkloadConfig};
use inference_lab::simulation::Simulator;

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [model, workload, requests, workers, rate] = args.as_slice() else {
        return Err(
            "usage: inference-lab-side MODEL.toml WORKLOAD.toml REQUESTS WORKERS RATE".into(),
        );
    };
    let number = |s: &str| s.parse::<f64>().map_err(|e| format!("{s}: {e}"));
    let deployment = ModelConfig::from_file(model)
        .map_err(|e| e.to_string())?
        .deployment(None)
        .map_err(|e| e.to_string())?;
    let mut workload = WorkloadConfig::from_file(workload).map_err(|e| e.to_string())?;
    workload.num_requests = Some(number(requests)? as usize);
    workload.arrival_rate = number(rate)?;
    let mut config = Config::new(deployment, workload);
    config.replicas = number(workers)? as u32;
    let mut sim = Simulator::new(config, None)?;
    sim.run_with_callback(|_| {})?;
    let summary = sim.summary();
    let done = &summary.requests;
    let ttft = summary.latency_metrics.ttft_ms.mean;
    println!(
        "{} of {} completed, mean TTFT {ttft:.1} ms",
        done.completed, done.total
    );
    Ok(())
}
