//! Refits the H100 calibration: kernel figures on the kernel profiles, then the serving
//! engine's figures on the training runs. Prints each stage's errors and the result.
//!
//! `cargo run --release -p opal-fidelity --bin fit [-- --evals N]`

use fidelity::fit::{self, kernels::Profiles, KERNEL_GROUPS};

fn main() {
    let evals = std::env::args()
        .skip_while(|a| a != "--evals")
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(120);
    let start = engine::hardware::h100_calibration();
    let profiles = Profiles::h100();
    println!("kernel profiles (H100): median / p90 absolute error, before -> after");
    let kernels = fit::fit_kernels(&profiles, &start);
    for (group, _) in KERNEL_GROUPS {
        let (b50, b90, n) = fit::group_errors(&profiles, &start, group);
        let (a50, a90, _) = fit::group_errors(&profiles, &kernels, group);
        println!("  {group:<12} {n:>4} points  {b50:>5.1}% / {b90:>5.1}%  ->  {a50:>5.1}% / {a90:>5.1}%");
    }
    let train: Vec<_> = fidelity::builtin_runs()
        .into_iter()
        .filter(|r| r.is_scored() && r.split == "train" && r.gpu == "H100-SXM")
        .collect();
    println!(
        "\nserving engine on {} training runs: loss {:.4}",
        train.len(),
        fit::run_loss(&train, "H100-SXM", &kernels)
    );
    let cal = fit::fit_engine(&train, "H100-SXM", &kernels, evals);
    println!("  after fit: loss {:.4}\n", fit::run_loss(&train, "H100-SXM", &cal));
    println!("{}", serde_json::to_string_pretty(&cal).expect("serialises"));
}
