//! `opal run`: a scenario to the end (or until stopped), then its tables and the files
//! asked for. A run stopped early by Ctrl-C, `--max-wall-seconds`, a bound or an error
//! still reports the results it reached.

use crate::args::RunArgs;
use crate::failure::{print, stream_file, warn, Failure};
use crate::interrupt;
use crate::load::{read_data, read_scenario};
use crate::progress::ProgressBar;
use opal::simulation::{Simulation, SimulationResults, Stop};
use opal::timing::ErrorBand;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Kernel events per slice between progress-bar checks: tens of milliseconds at most on a
/// heavy scenario (a 10,000-request run does about 40,000 events a second), so the bar
/// can redraw ten times a second; the check itself costs next to nothing.
const SLICE: u64 = 1_000;

/// Why the CLI stopped a run before the engine did.
enum Halt {
    Interrupted,
    WallClock(f64),
}

/// Runs the scenario and reports: the table on stdout, results files where asked, and on
/// stderr why the run stopped if it did not reach its end. The exit code says how it ended.
pub(crate) fn run(args: &RunArgs) -> Result<ExitCode, Failure> {
    interrupt::install();
    let loaded = read_scenario(&args.input.scenario)?;
    if let (Some(report), false) = (&loaded.report, args.quiet) {
        eprintln!(
            "{}: imported as an Opal config\n{report}",
            args.input.scenario.display()
        );
    }
    let mut scenario = loaded.scenario;
    if let Some(seed) = args.seed {
        scenario.simulation.seed = seed;
    }
    let (data, warnings) = read_data(&scenario, &loaded.dir, &args.input.data)?;
    if !args.quiet {
        warnings.iter().for_each(warn);
    }
    let mut sim = Simulation::new(&scenario, &data).map_err(Failure::Invalid)?;

    let started = Instant::now();
    let wall_limit = args.max_wall_seconds.map(Duration::from_secs_f64);
    let mut bar = ProgressBar::new(!args.quiet);
    let halt = loop {
        let progress = sim.advance(SLICE);
        if progress.finished {
            break None;
        }
        if interrupt::requested() {
            break Some(Halt::Interrupted);
        }
        if let Some(limit) = wall_limit.filter(|&l| started.elapsed() >= l) {
            break Some(Halt::WallClock(limit.as_secs_f64()));
        }
        bar.update(&progress);
    };
    bar.finish();

    let results = sim.finish();
    if let Some(path) = &args.json {
        stream_file(path, |out| results.write_json(out))?;
    }
    if let Some(path) = &args.csv {
        stream_file(path, |out| results.write_csv(out))?;
    }
    if !args.quiet {
        print(&format!(
            "Step times: {}.\n\n{}",
            results.timing,
            results.render_text()
        ))?;
        if let (None, Some(band)) = (&halt, scenario.error_band()) {
            print(&likely(&band, &scenario.hardware.gpu, &results))?;
        }
    }
    // Even with -q: an overloaded run's percentiles grow with its length, which no table
    // of a finite run can show. (A run stopped here is partial, and says so instead.)
    for w in results.windows.iter().filter(|_| halt.is_none()) {
        if let Some(o) = &w.overload {
            eprintln!(
                "opal: warning: stage {} is overloaded ({}): the cluster does not sustain \
                 this load, and its latencies keep growing with the run's length",
                w.stage,
                o.describe()
            );
        }
    }
    let when = format!("at t = {:.3} s of simulated time", results.end_time);
    Ok(match (halt, &results.stop) {
        (Some(Halt::Interrupted), _) => {
            eprintln!("opal: interrupted {when}; the results are partial");
            ExitCode::from(130)
        }
        (Some(Halt::WallClock(s)), _) => {
            eprintln!("opal: stopped after {s} s of real time (--max-wall-seconds) {when}; the results are partial");
            ExitCode::from(124)
        }
        (None, Some(stop @ Stop::Error(_))) => {
            eprintln!("opal: {}", stop.describe());
            ExitCode::from(2)
        }
        (None, Some(stop)) => {
            if !args.quiet {
                eprintln!("opal: {} {when}", stop.describe());
            }
            ExitCode::SUCCESS
        }
        (None, None) => ExitCode::SUCCESS,
    })
}

/// Where each stage's latencies would likely fall on a real vLLM: its figures times the
/// GPU calibration's error band.
fn likely(band: &ErrorBand, gpu: &str, results: &SimulationResults) -> String {
    let mut out = format!(
        "\nLikely on a real vLLM (measured ÷ predicted, 10th–90th percentile over {} real {gpu} \
         runs; it held {:.0} % of runs left out of it):\n",
        band.runs,
        band.held_out * 100.0
    );
    for s in &results.stages {
        let ranges: Vec<String> = [
            ("mean TTFT", s.ttft.mean_ms, band.ttft_mean),
            ("p99 TTFT", s.ttft.p99_ms, band.ttft_p99),
            ("mean E2E", s.e2e.mean_ms, band.e2e_mean),
            ("p99 E2E", s.e2e.p99_ms, band.e2e_p99),
            ("mean ITL", s.itl.mean_ms, band.itl_mean),
        ]
        .iter()
        .filter(|(_, ms, _)| ms.is_finite())
        .map(|(name, ms, [lo, hi])| format!("{name} {:.1}–{:.1} ms", ms * lo, ms * hi))
        .collect();
        out.push_str(&format!("  stage {}: {}\n", s.stage, ranges.join(", ")));
    }
    out
}
