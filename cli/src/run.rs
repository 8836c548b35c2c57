//! `opal run`: a scenario to the end, then its tables and the files asked for.

use crate::args::RunArgs;
use crate::failure::{print, write_file, Failure};
use crate::load::{read_data, read_scenario};
use crate::progress::ProgressBar;
use engine::simulation::Simulation;

/// Kernel events per slice between progress-bar checks: tens of milliseconds at most on a
/// heavy scenario (a 10,000-request run does about 40,000 events a second), so the bar
/// can redraw ten times a second; the check itself costs next to nothing.
const SLICE: u64 = 1_000;

/// Runs the scenario and reports: the table on stdout, results files where asked.
pub fn run(args: &RunArgs) -> Result<(), Failure> {
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
    let data = read_data(&scenario, &loaded.dir, &args.input.data)?;
    let mut sim = Simulation::new(&scenario, &data).map_err(Failure::Invalid)?;

    let mut bar = ProgressBar::new(!args.quiet);
    loop {
        let progress = sim.advance(SLICE);
        if progress.finished {
            break;
        }
        bar.update(&progress);
    }
    bar.finish();

    let results = sim.results();
    if let Some(path) = &args.json {
        write_file(path, &results.to_json())?;
    }
    if let Some(path) = &args.csv {
        write_file(path, &results.requests_csv())?;
    }
    if !args.quiet {
        print(&format!(
            "Step times: {}.\n\n{}",
            results.timing,
            results.render_text()
        ))?;
    }
    Ok(())
}
