//! The long fuzz run: the property test's cases (`engine/tests/run_budget.rs`), for as long
//! as asked. Every input must be rejected with problems, or run to an end within a budget
//! of CPU time and memory with its books agreeing; anything else is written out to replay.
//!
//! ```sh
//! cargo run --release -p opal-engine --example fuzz -- --seconds 600
//! cargo run --release -p opal-engine --example fuzz -- --seconds 60 --seed 7 --out fuzz-out
//! ```
//!
//! Cases are numbered from 0 and drawn from `--seed` (default 1), so a run is repeatable
//! and `--from N` resumes a sequence. A failing case is written to
//! `<out>/case-<N>/scenario.json`, with the data files it was offered beside it.

#[path = "../tests/fuzz_common/mod.rs"]
mod fuzz_common;

use fuzz_common::{case, run_case, Budget, Case, Tally};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[global_allocator]
static ALLOC: fuzz_common::CountingAlloc = fuzz_common::CountingAlloc;

/// What one case may cost: as in the property test. Optimised, the costliest cases (every
/// step a batch of 256 long sequences, up to the 300,000 events a case may run) take ~2 s.
const BUDGET: Budget = Budget {
    cpu: Duration::from_secs(5),
    bytes: 256 << 20,
};

struct Args {
    seconds: f64,
    seed: u64,
    from: u64,
    out: PathBuf,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        seconds: 60.0,
        seed: 1,
        from: 0,
        out: PathBuf::from("fuzz-out"),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} wants a value"));
        match flag.as_str() {
            "--seconds" => a.seconds = value()?.parse().map_err(|_| "--seconds: a number")?,
            "--seed" => a.seed = value()?.parse().map_err(|_| "--seed: a whole number")?,
            "--from" => a.from = value()?.parse().map_err(|_| "--from: a whole number")?,
            "--out" => a.out = value()?.into(),
            _ => {
                return Err(format!(
                    "unknown option {flag} (--seconds, --seed, --from, --out)"
                ))
            }
        }
    }
    Ok(a)
}

/// Writes a failing case where it can be replayed with `opal run scenario.json`.
fn keep(out: &Path, i: u64, c: &Case, why: &str) -> std::io::Result<PathBuf> {
    let dir = out.join(format!("case-{i}"));
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("scenario.json"), &c.text)?;
    std::fs::write(dir.join("why.txt"), format!("{} ({})\n", why, c.kind))?;
    for p in opal::document::presets() {
        for (name, _) in p.files {
            if let Some(text) = c.data.get(name) {
                let file = dir.join(name);
                std::fs::create_dir_all(file.parent().unwrap_or(&dir))?;
                std::fs::write(file, text)?;
            }
        }
    }
    Ok(dir)
}

fn main() {
    let a = args().unwrap_or_else(|e| {
        eprintln!("fuzz: {e}");
        std::process::exit(2);
    });
    let started = Instant::now();
    let deadline = Duration::from_secs_f64(a.seconds);
    let mut tally = Tally::default();
    let mut failures = 0u64;
    let mut last_report = Instant::now();
    let mut i = a.from;
    while started.elapsed() < deadline {
        let c = case(a.seed, i);
        let (tx, rx) = mpsc::channel();
        let shared = std::sync::Arc::new(c);
        let job = std::sync::Arc::clone(&shared);
        std::thread::spawn(move || tx.send(run_case(&job, BUDGET)));
        let result = match rx.recv_timeout(BUDGET.cpu * 10) {
            Ok(r) => r,
            Err(_) => Err("hangs inside one event".to_string()),
        };
        match result {
            Ok((outcome, cost)) => tally.add(&outcome, cost),
            Err(why) => {
                failures += 1;
                match keep(&a.out, i, &shared, &why) {
                    Ok(dir) => eprintln!("case {i}: {why}; kept in {}", dir.display()),
                    Err(e) => eprintln!("case {i}: {why}; could not keep it: {e}"),
                }
                if why.starts_with("hangs") {
                    break; // its thread still spins; the next cases would share its core
                }
            }
        }
        i += 1;
        if last_report.elapsed() >= Duration::from_secs(10) {
            eprintln!(
                "{:>6.0} s: {} cases ({} rejected, {} ran), {failures} failures",
                started.elapsed().as_secs_f64(),
                i - a.from,
                tally.rejected,
                tally.ran
            );
            last_report = Instant::now();
        }
    }
    println!(
        "{} cases in {:.0} s (seed {}, cases {}..{}), {failures} failures: {tally}",
        i - a.from,
        started.elapsed().as_secs_f64(),
        a.seed,
        a.from,
        i
    );
    if failures > 0 {
        std::process::exit(1);
    }
}
