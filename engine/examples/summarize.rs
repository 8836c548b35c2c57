//! Runs a scenario natively and prints what the web app's results table shows, as JSON, so
//! the browser tests can check the wasm build against the native one.
//!
//! ```sh
//! cargo run -p opal-engine --example summarize -- scenario.json [results.json]
//! ```
//!
//! Prints `{"stages": [{"successful_requests", "mean_ttft_ms", "output_throughput"}, ...]}`;
//! with a second path, also writes the full results JSON there (`SimulationResults::to_json`).

use engine::scenario::ScenarioData;
use engine::simulation::Simulation;
use serde_json::json;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: summarize <scenario.json> [results.json]");
        return ExitCode::from(2);
    };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("cannot read {path}: {e}");
            return ExitCode::from(2);
        }
    };
    let problems = match opal::parse_scenario(&text)
        .and_then(|s| Simulation::new(&s, &ScenarioData::new()).map(|sim| (s, sim)))
    {
        Ok((_, mut sim)) => {
            sim.run();
            let results = sim.results();
            if let Some(out) = args.get(1) {
                if let Err(e) = std::fs::write(out, results.to_json()) {
                    eprintln!("cannot write {out}: {e}");
                    return ExitCode::from(2);
                }
            }
            let stages: Vec<_> = results
                .stages
                .iter()
                .map(|s| {
                    json!({
                        "successful_requests": s.successful_requests,
                        "mean_ttft_ms": s.ttft.mean_ms,
                        "output_throughput": s.output_throughput,
                    })
                })
                .collect();
            println!("{}", json!({ "stages": stages }));
            return ExitCode::SUCCESS;
        }
        Err(problems) => problems,
    };
    for p in problems {
        eprintln!("{}: {}", p.path, p.message);
    }
    ExitCode::FAILURE
}
