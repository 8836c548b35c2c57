//! Replays every real vLLM run through the simulator and prints predicted against measured.
//!
//! ```text
//! cargo run --release -p opal-fidelity --bin fidelity [-- --check] [--model roofline]
//!     [--only NAME] [--patch JSON] [--profiles] [--runs DIR [--gpu NAME]]
//! ```
//!
//! `--check` exits 1 when the median errors over the training runs exceed the project's
//! bounds (E2E 5 %, TTFT 12 %, ITL 5 %); `make test` runs it. `--model` replays with another
//! timing model (`calibrated`, `roofline`, `opal-analytical`) for comparison; `--only`
//! replays the runs whose name contains NAME; `--patch` merges a scenario fragment over every
//! replay (e.g. `'{"worker": {"async_scheduling": false}}'`). `--profiles` prints whole H100
//! steps summed from the per-layer profiles against the simulator's, then whole steps of the
//! RTX PRO 6000's one-layer profile (GEMMs, attention, elementwise, LM head) likewise, then
//! the H100's attention over a cached prefix against AIConfigurator's rule for one. `--runs DIR` replays
//! real runs stored under DIR in the shared measurements' layout (`replay_data*/` and
//! `default_args/`) instead of the built-in ones — how held-back runs are checked; `--gpu`
//! names the GPU of runs whose name does not.

use fidelity::{
    band_coverage, builtin_runs, compare_all, error_band, median_errors, render, render_band,
};
use serde_json::json;
use std::process::ExitCode;

/// Largest median absolute error over the training runs `--check` accepts, by metric:
/// TTFT mean, E2E mean, ITL mean.
const BOUNDS: [(&str, usize, f64); 3] = [
    ("TTFT mean", 0, 12.0),
    ("E2E mean", 3, 5.0),
    ("ITL mean", 6, 5.0),
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--profiles") {
        print_step_checks();
        return ExitCode::SUCCESS;
    }
    let check = args.iter().any(|a| a == "--check");
    let flag = |name: &str| args.iter().skip_while(|a| *a != name).nth(1).cloned();
    let model = flag("--model").unwrap_or_else(|| "calibrated".into());
    let mut patch = json!({ "worker": { "timing": { "model": model } } });
    if let Some(text) = flag("--patch") {
        match serde_json::from_str(&text) {
            Ok(extra) => fidelity::replay::merge(&mut patch, &extra),
            Err(e) => {
                eprintln!("--patch: not valid JSON: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let only = flag("--only").unwrap_or_default();
    let all = match flag("--runs") {
        Some(dir) => {
            match fidelity::external::load_runs(
                std::path::Path::new(&dir),
                flag("--gpu").as_deref(),
            ) {
                Ok(runs) => runs,
                Err(e) => {
                    eprintln!("--runs: {e}");
                    return ExitCode::from(2);
                }
            }
        }
        None => builtin_runs(),
    };
    let runs: Vec<_> = all.into_iter().filter(|r| r.name.contains(&only)).collect();
    let comparisons = compare_all(&runs, &patch);
    println!("timing model: {model}; measured/predicted, absolute error\n");
    print!("{}", render(&comparisons));
    let band = error_band(&comparisons);
    if let Some(band) = &band {
        println!();
        print!("{}", render_band(band, band_coverage(&comparisons)));
    }
    if !check {
        return ExitCode::SUCCESS;
    }
    // The H100 calibration carries the band of its own runs: when they are the runs
    // replayed here, as the calibration prices them, it must be the band just measured.
    let own_runs = flag("--runs").is_none() && only.is_empty() && args.len() == 1;
    if own_runs {
        let kept = engine::timing::h100_calibration().error_band;
        let pass = kept == band;
        println!(
            "{} H100 calibration's error_band: {}",
            if pass { "ok  " } else { "FAIL" },
            if pass {
                "the band just measured".to_string()
            } else {
                format!("{kept:?} where the runs give {band:?}; write it into h100_calibration()")
            }
        );
        if !pass {
            return ExitCode::FAILURE;
        }
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

/// Whole steps summed from the per-layer H100 profiles, and from the RTX PRO 6000's
/// per-kernel profile, against the simulator's kernels under each GPU's calibration.
fn print_step_checks() {
    use fidelity::fit::kernels::{decode_step_checks, rtx_step_checks, step_checks};
    let h100 = engine::timing::h100_calibration();
    print_steps("step (H100)", &step_checks(&h100));
    // Whether large, long decode batches are priced without bias: signed errors.
    let large = decode_step_checks(
        &h100,
        &[64.0, 128.0, 256.0],
        &[512.0, 1024.0, 2048.0, 4096.0],
    );
    let signed: Vec<f64> = large
        .iter()
        .map(|c| (c.predicted - c.profile) / c.profile * 100.0)
        .collect();
    let (lo, hi) = signed
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &e| {
            (a.min(e), b.max(e))
        });
    println!(
        "decode steps of 64-256 sequences at 512-4096 tokens ({} steps): median signed error {:+.1}% (from {lo:+.1}% to {hi:+.1}%)",
        large.len(),
        fidelity::report::median(signed.clone()),
    );
    println!();
    print_steps(
        "step (RTX PRO 6000 Blackwell)",
        &rtx_step_checks(&engine::timing::rtx_pro_6000_calibration()),
    );
    println!();
    print_prefix_checks(&h100);
}

/// One layer's attention over chunks with a cached prefix on the H100 against
/// AIConfigurator's rule for a prefix (its zero-prefix table scaled by the chunk's share of
/// the pairs), split by whether the chunk computes at least a quarter of the pairs (where
/// the rule prices them as the long kernel's tiles) or less (where it scales the launch and
/// the KV read down with them).
fn print_prefix_checks(cal: &engine::timing::Calibration) {
    let checks = fidelity::fit::kernels::prefix_checks(cal);
    println!(
        "{:<52} {:>6} {:>10} {:>10} {:>7} {:>10}",
        "attention over a prefix (H100)", "share", "rule us", "predicted", "error", "KV floor"
    );
    let (mut large, mut small) = (Vec::new(), Vec::new());
    for c in &checks {
        let e = (c.predicted - c.rule) / c.rule * 100.0;
        if c.share >= 0.25 {
            large.push(e.abs());
        } else {
            small.push(e.abs());
        }
        println!(
            "{:<52} {:>6.3} {:>10.1} {:>10.1} {:>+6.1}% {:>10.1}",
            c.label,
            c.share,
            c.rule * 1e6,
            c.predicted * 1e6,
            e,
            c.floor * 1e6
        );
    }
    let below = checks.iter().filter(|c| c.rule < c.floor).count();
    println!(
        "\n{} batches whose chunks compute >= 1/4 of the pairs: median absolute error {:.1}%",
        large.len(),
        fidelity::report::median(large)
    );
    println!(
        "{} batches of shorter chunks: median {:.1}% ({below} of all {} rules below reading the KV)",
        small.len(),
        fidelity::report::median(small),
        checks.len()
    );
}
/// One GPU's step checks and their median absolute error.
fn print_steps(title: &str, checks: &[fidelity::fit::kernels::StepCheck]) {
    println!(
        "{:<52} {:>12} {:>12} {:>7}",
        title, "profile ms", "predicted", "error"
    );
    let mut errors = Vec::new();
    for c in checks {
        let e = (c.predicted - c.profile) / c.profile * 100.0;
        errors.push(e.abs());
        println!(
            "{:<52} {:>12.3} {:>12.3} {:>+6.1}%",
            c.label,
            c.profile * 1e3,
            c.predicted * 1e3,
            e
        );
    }
    println!(
        "\n{} steps: median absolute error {:.1}%",
        checks.len(),
        fidelity::report::median(errors)
    );
}
