//! Refits a GPU's calibration: kernel figures on its kernel profiles, then (where real runs
//! on it exist) the serving engine's figures on the training runs. Prints each stage's
//! errors and the figures for `engine/src/hardware.rs`.
//!
//! `cargo run --release -p opal-fidelity --bin fit [-- --gpu H100-SXM] [--evals N]`

use fidelity::fit::{self, kernels::Profiles, KERNEL_GROUPS};

fn flag(name: &str) -> Option<String> {
    std::env::args().skip_while(|a| a != name).nth(1)
}

fn main() {
    let gpu = flag("--gpu").unwrap_or_else(|| "H100-SXM".into());
    let evals = flag("--evals").and_then(|v| v.parse().ok()).unwrap_or(120);
    let start = engine::timing::calibration_for(
        &engine::hardware::lookup(&gpu).unwrap_or_else(|| panic!("{gpu} is not a catalogue GPU")),
    );
    let profiles = Profiles::for_gpu(&gpu);
    println!("kernel profiles ({gpu}): median / p90 absolute error, before -> after");
    let kernels = fit::fit_kernels(&profiles, &start);
    for (group, _) in KERNEL_GROUPS {
        let (b50, b90, n) = fit::group_errors(&profiles, &start, group);
        if n == 0 {
            println!("  {group:<17} no profile: kept");
            continue;
        }
        let (a50, a90, _) = fit::group_errors(&profiles, &kernels, group);
        println!(
            "  {group:<17} {n:>4} points  {b50:>5.1}% / {b90:>5.1}%  ->  {a50:>5.1}% / {a90:>5.1}%"
        );
    }
    // Groups no figure is fitted on: how the fitted figures price them.
    let mut held_out: Vec<&str> = profiles
        .points
        .iter()
        .map(|p| p.group)
        .filter(|g| KERNEL_GROUPS.iter().all(|(k, _)| k != g))
        .collect();
    held_out.dedup();
    for group in held_out {
        let (b50, b90, n) = fit::group_errors(&profiles, &start, group);
        let (a50, a90, _) = fit::group_errors(&profiles, &kernels, group);
        println!(
            "  {group:<17} {n:>4} points  {b50:>5.1}% / {b90:>5.1}%  ->  {a50:>5.1}% / {a90:>5.1}%"
        );
    }
    // GEMMs of the low-precision formats (per-operation tables only): their efficiencies
    // are fitted apart, after the bf16 figures.
    let before = fidelity::fit::kernels::dtype_checks(&gpu, &kernels);
    let kernels = fidelity::fit::kernels::fit_format_efficiencies(&gpu, &kernels);
    let checks = fidelity::fit::kernels::dtype_checks(&gpu, &kernels);
    for dtype in ["fp8", "nvfp4"] {
        let as_bf16: Vec<f64> = before
            .iter()
            .filter(|c| c.dtype == dtype)
            .map(|c| ((c.predicted - c.measured) / c.measured).abs() * 100.0)
            .collect();
        if !as_bf16.is_empty() {
            println!(
                "  {dtype} GEMMs at the bf16 efficiency: median error {:.1}%",
                fidelity::report::median(as_bf16)
            );
        }
        let rows: Vec<_> = checks.iter().filter(|c| c.dtype == dtype).collect();
        if rows.is_empty() {
            continue;
        }
        let mut errs: Vec<f64> = rows
            .iter()
            .map(|c| ((c.predicted - c.measured) / c.measured).abs() * 100.0)
            .collect();
        errs.sort_by(f64::total_cmp);
        let p90 = errs[(errs.len() as f64 * 0.9) as usize];
        let ratio =
            fidelity::report::median(rows.iter().map(|c| c.predicted / c.measured).collect());
        let big: Vec<_> = rows
            .iter()
            .filter(|c| c.label.starts_with("8192×"))
            .collect();
        let big_ratio =
            fidelity::report::median(big.iter().map(|c| c.predicted / c.measured).collect());
        println!(
            "  {dtype} GEMMs (fitted)  {:>3} points  {:>5.1}% / {p90:>5.1}%  (median predicted / measured {ratio:.2}, at m = 8192 {big_ratio:.2})",
            rows.len(),
            fidelity::report::median(errs.clone()),
        );
    }
    let train: Vec<_> = fidelity::builtin_runs()
        .into_iter()
        .filter(|r| r.is_scored() && r.split == "train" && r.gpu == gpu)
        .collect();
    let cal = if train.is_empty() {
        println!("\nno real runs on {gpu}: serving-engine figures kept");
        kernels
    } else {
        println!(
            "\nserving engine on {} training runs: loss {:.4}",
            train.len(),
            fit::run_loss(&train, &gpu, &kernels)
        );
        let cal = fit::fit_engine(&train, &gpu, &kernels, evals);
        println!("  after fit: loss {:.4}", fit::run_loss(&train, &gpu, &cal));
        cal
    };
    println!(
        "\n{}",
        serde_json::to_string_pretty(&cal).expect("serialises")
    );
}
