//! `opal sweep`: every point of a scenario's sweep, run on threads (one per core by
//! default), then a table, `--json` and `--csv`; `--shard K/N` runs one slice and
//! `--merge` puts slices back together.
//!
//! Points go to threads in any order but land in index order, and each depends on its own
//! scenario only, so the output is the same whatever the thread count.

use crate::args::SweepArgs;
use crate::failure::{print, warn, write_file, Failure};
use crate::interrupt;
use crate::load::{read_data, read_scenario, read_text};
use opal::sweep::{merge_shards, Shard, SweepPlan, SweepPoint, SweepResults};
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;

/// Runs the sweep (or merges shards) and reports.
pub(crate) fn sweep(args: &SweepArgs) -> Result<ExitCode, Failure> {
    if !args.merge.is_empty() {
        return merge(args);
    }
    interrupt::install();
    let path = args
        .scenario
        .as_ref()
        .expect("clap requires a scenario without --merge");
    let loaded = read_scenario(path)?;
    let scenario = loaded.scenario;
    let (data, warnings) = read_data(&scenario, &loaded.dir, &args.data)?;
    if !args.quiet {
        warnings.iter().for_each(warn);
    }
    let plan = SweepPlan::new(&scenario, data).map_err(Failure::Invalid)?;
    let shard = args.shard.map(|(k, n)| Shard { k, n });
    let indices: Vec<usize> = (0..plan.len())
        .filter(|&i| shard.is_none_or(|s| s.holds(i)))
        .collect();
    let threads = args.threads.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        |t| t as usize,
    );
    let Some(points) = run_points(&plan, &indices, threads, !args.quiet) else {
        eprintln!("opal: interrupted; no results written");
        return Ok(ExitCode::from(130));
    };
    let results = SweepResults {
        header: plan.header(),
        shard,
        points,
    };
    if let Some(path) = &args.json {
        write_file(path, &results.to_json())?;
    }
    if let Some(path) = &args.csv {
        write_file(path, &results.to_csv())?;
    }
    if !args.quiet {
        print(&results.render_text())?;
    }
    let failed = results.points.iter().any(|p| p.error.is_some());
    Ok(if failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

/// Runs `indices` of the plan on `threads` threads; `None` when Ctrl-C stopped it.
fn run_points(
    plan: &SweepPlan,
    indices: &[usize],
    threads: usize,
    show: bool,
) -> Option<Vec<SweepPoint>> {
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<SweepPoint>();
    let line = ProgressLine::new(show, indices.len());
    let mut done: Vec<SweepPoint> = Vec::with_capacity(indices.len());
    std::thread::scope(|scope| {
        for _ in 0..threads.min(indices.len()).max(1) {
            let tx = tx.clone();
            let next = &next;
            scope.spawn(move || {
                while !interrupt::requested() {
                    let Some(&i) = indices.get(next.fetch_add(1, Ordering::Relaxed)) else {
                        break;
                    };
                    if tx.send(plan.run_point(i)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for point in rx {
            done.push(point);
            line.update(done.len());
        }
    });
    line.finish();
    if done.len() < indices.len() {
        return None;
    }
    done.sort_by_key(|p| p.index);
    Some(done)
}

/// `opal sweep --merge`: the shards' JSON put back together.
fn merge(args: &SweepArgs) -> Result<ExitCode, Failure> {
    let texts = args
        .merge
        .iter()
        .map(|p| read_text(p))
        .collect::<Result<Vec<_>, _>>()?;
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let merged = merge_shards(&refs)
        .map_err(|m| Failure::Invalid(vec![opal::Problem::new("", format!("--merge: {m}"))]))?;
    match &args.json {
        Some(path) => write_file(path, &merged)?,
        None => print(&merged)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `12/24 points  5.3 s` on stderr, redrawn as points finish (only on a terminal).
struct ProgressLine {
    enabled: bool,
    total: usize,
    started: Instant,
}

impl ProgressLine {
    fn new(wanted: bool, total: usize) -> Self {
        let line = Self {
            enabled: wanted && std::io::stderr().is_terminal(),
            total,
            started: Instant::now(),
        };
        line.update(0);
        line
    }

    fn update(&self, done: usize) {
        if self.enabled {
            eprint!(
                "\r{done}/{} points  {:.1} s",
                self.total,
                self.started.elapsed().as_secs_f64()
            );
            let _ = std::io::stderr().flush();
        }
    }

    fn finish(&self) {
        if self.enabled {
            eprint!("\r{:40}\r", "");
            let _ = std::io::stderr().flush();
        }
    }
}
