//! Runs one scenario file to the end and prints its tables: `cargo run --release -p
//! opal-engine --example run_scenario -- scenario.json`.

use engine::scenario::Scenario;
use engine::simulation::Simulation;

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: run_scenario <scenario.json>");
    let text = std::fs::read_to_string(&path).expect("readable scenario file");
    let scenario = match Scenario::parse(&text) {
        Ok(s) => s,
        Err(problems) => {
            for p in problems {
                eprintln!("{p}");
            }
            std::process::exit(2);
        }
    };
    let mut sim = Simulation::new(&scenario, &Default::default()).unwrap_or_else(|problems| {
        for p in problems {
            eprintln!("{p}");
        }
        std::process::exit(2);
    });
    sim.run();
    print!("{}", sim.results().render_text());
}
