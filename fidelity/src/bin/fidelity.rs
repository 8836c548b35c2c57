//! Replays every real vLLM run through the simulator and prints predicted against measured.
//!
//! ```text
//! cargo run --release -p opal-fidelity --bin fidelity [-- --check] [--model roofline]
//! ```
//!
//! `--check` exits 1 when the median errors over the training runs exceed the project's
//! bounds (E2E 5 %, TTFT 12 %, ITL 5 %); `make test` runs it. `--model` replays with another
//! timing model (`calibrated`, `roofline`, `opal-analytical`) for comparison.

use fidelity::{builtin_runs, compare_all, median_errors, render};
use serde_json::json;
use std::process::ExitCode;

/// Largest median absolute error over the training runs `--check` accepts, by metric:
/// TTFT mean, E2E mean, ITL mean.
const BOUNDS: [(&str, usize, f64); 3] = [("TTFT mean", 0, 12.0), ("E2E mean", 3, 5.0), ("ITL mean", 6, 5.0)];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let check = args.iter().any(|a| a == "--check");
    let model = args
        .iter()
        .skip_while(|a| *a != "--model")
        .nth(1)
        .cloned()
        .unwrap_or_else(|| "calibrated".into());
    let patch = json!({ "worker": { "timing": { "model": model } } });
    let comparisons = compare_all(&builtin_runs(), &patch);
    println!("timing model: {model}; measured/predicted, absolute error\n");
    print!("{}", render(&comparisons));
    if !check {
        return ExitCode::SUCCESS;
    }
    let train = median_errors(&comparisons, Some("train"));
    let mut ok = true;
    for (name, k, bound) in BOUNDS {
        let pass = train[k] <= bound;
        ok &= pass;
        println!(
            "{} {name}: median {:.1}% (bound {bound}%)",
            if pass { "ok  " } else { "FAIL" },
            train[k]
        );
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
