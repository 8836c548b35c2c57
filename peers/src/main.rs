//! Our engine against inference-lab 1.0.0 on the same work, side by side in one run.
//!
//! Llama-3.1-8B on H100 at datasheet speed (our roofline with efficiencies 1.0;
//! inference-lab's default roofline), round robin, Poisson arrivals at 4 requests/s per
//! worker, prompts U[32, 16384], outputs U[32, 128]; configs in `engine/benches/peers/`.
//! Every run is its own child process, so its CPU time (user + system) and peak resident
//! memory (`ru_maxrss` from `wait4`) are its own. Best of `--reps` CPU seconds (default 3).
//!
//! ```sh
//! cargo build --release -p opal-peers -p opal-peers-lab
//! target/release/peers [--reps N] [--requests 1000,10000,100000] [--workers 4,16,64]
//! ```

use opal::simulation::Simulation;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Requests per second per worker: below saturation at datasheet speed on both sides.
const RATE_PER_WORKER: f64 = 4.0;

/// The configs, relative to the workspace.
const CONFIGS: &str = "engine/benches/peers";

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("opal-side") {
        return opal_side(&args[1..]);
    }
    let mut reps = 3;
    let mut sizes = vec![1_000u64, 10_000, 100_000];
    let mut workers = vec![4u32, 16, 64];
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let list = |v: &str| -> Result<Vec<u64>, String> {
            v.split(',')
                .map(|x| x.parse().map_err(|e| format!("{flag} {x}: {e}")))
                .collect()
        };
        match flag.as_str() {
            "--reps" => reps = value.parse().map_err(|e| format!("--reps: {e}"))?,
            "--requests" => sizes = list(value)?,
            "--workers" => workers = list(value)?.into_iter().map(|w| w as u32).collect(),
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let lab = exe.with_file_name("inference-lab-side");
    if !lab.exists() {
        return Err(format!(
            "{} is missing: cargo build --release -p opal-peers-lab",
            lab.display()
        ));
    }
    let configs = configs_dir()?;
    println!(
        "best of {reps} CPU seconds (user + system) and peak RSS, each run in its own process"
    );
    println!(
        "| requests | workers | opal CPU s | inference-lab CPU s | speed-up | opal MiB | inference-lab MiB | memory ratio |"
    );
    println!("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for &n in &sizes {
        for &w in &workers {
            let rate = RATE_PER_WORKER * w as f64;
            let (n_s, w_s, r_s) = (n.to_string(), w.to_string(), rate.to_string());
            let mut ours = Command::new(&exe);
            ours.args([
                "opal-side",
                &configs.join("opal.json").to_string_lossy(),
                &n_s,
                &w_s,
                &r_s,
            ]);
            let ours = best_of(reps, &mut ours)?;
            let mut theirs = Command::new(&lab);
            theirs.args([
                &*configs.join("inference_lab_model.toml").to_string_lossy(),
                &configs
                    .join("inference_lab_workload.toml")
                    .to_string_lossy(),
                &n_s,
                &w_s,
                &r_s,
            ]);
            let theirs = best_of(reps, &mut theirs)?;
            println!(
                "| {n} | {w} | {:.3} | {:.3} | {:.2}× | {:.0} | {:.0} | {:.2} |",
                ours.cpu,
                theirs.cpu,
                theirs.cpu / ours.cpu,
                ours.mib,
                theirs.mib,
                ours.mib / theirs.mib
            );
            eprintln!("  opal: {}  inference-lab: {}", ours.said, theirs.said);
        }
    }
    Ok(())
}

/// The configs directory: `engine/benches/peers` above the current directory or the binary.
fn configs_dir() -> Result<PathBuf, String> {
    let mut starts = vec![std::env::current_dir().map_err(|e| e.to_string())?];
    starts.extend(std::env::current_exe().ok());
    for start in starts {
        for dir in start.ancestors() {
            if dir.join(CONFIGS).join("opal.json").exists() {
                return Ok(dir.join(CONFIGS));
            }
        }
    }
    Err(format!("cannot find {CONFIGS}/ (run from the workspace)"))
}

/// One side's figures.
struct Measured {
    /// Best CPU seconds.
    cpu: f64,
    /// Highest peak resident memory, MiB.
    mib: f64,
    /// What the last run printed.
    said: String,
}

/// Runs `cmd` `reps` times: the least CPU time and the largest peak memory.
fn best_of(reps: usize, cmd: &mut Command) -> Result<Measured, String> {
    let mut best = Measured {
        cpu: f64::INFINITY,
        mib: 0.0,
        said: String::new(),
    };
    for _ in 0..reps.max(1) {
        let (cpu, mib, said) = measure(cmd)?;
        best.cpu = best.cpu.min(cpu);
        best.mib = best.mib.max(mib);
        best.said = said;
    }
    Ok(best)
}

/// Runs `cmd` to its end: (CPU seconds, peak RSS in MiB, its first stdout line).
fn measure(cmd: &mut Command) -> Result<(f64, f64, String), String> {
    let mut child = cmd
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{cmd:?}: {e}"))?;
    let mut out = String::new();
    if let Some(mut stdout) = child.stdout.take() {
        use std::io::Read;
        stdout.read_to_string(&mut out).map_err(|e| e.to_string())?;
    }
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: the pid is our live, unreaped child; both pointers are to locals.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    if pid < 0 {
        return Err(format!("wait4: {}", std::io::Error::last_os_error()));
    }
    if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        return Err(format!("{cmd:?} failed ({status})"));
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    let cpu = secs(usage.ru_utime) + secs(usage.ru_stime);
    let mib = usage.ru_maxrss as f64 / 1024.0; // kilobytes on Linux
    Ok((cpu, mib, out.lines().next().unwrap_or("").to_string()))
}

/// The child: our engine on `opal.json` with `REQUESTS WORKERS RATE`, run to its end and
/// reported (the tables, moved out of the run as `opal run` does).
fn opal_side(args: &[String]) -> Result<(), String> {
    let [path, requests, workers, rate] = args else {
        return Err("usage: peers opal-side opal.json REQUESTS WORKERS RATE".into());
    };
    let text = std::fs::read_to_string(Path::new(path)).map_err(|e| format!("{path}: {e}"))?;
    let mut doc: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let number = |s: &str| s.parse::<f64>().map_err(|e| format!("{s}: {e}"));
    doc["simulation"]["num_workers"] = (number(workers)? as u64).into();
    let stage = &mut doc["workload"]["stages"][0];
    stage["total_requests"] = (number(requests)? as u64).into();
    stage["request_rate"] = number(rate)?.into();
    let scenario = opal::parse_scenario(&doc.to_string()).map_err(|p| format!("{p:?}"))?;
    let mut sim = Simulation::new(&scenario, &Default::default()).map_err(|p| format!("{p:?}"))?;
    sim.run();
    let results = sim.finish();
    let stage = &results.stages[0];
    println!(
        "{} of {} completed, mean TTFT {:.1} ms",
        stage.successful_requests,
        results.requests.len(),
        stage.ttft.mean_ms
    );
    Ok(())
}
