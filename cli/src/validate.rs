//! `opal validate`: the checks `opal run` makes before it starts, without running.

use crate::args::ScenarioArgs;
use crate::failure::{print, warn, Failure};
use crate::load::{read_data, read_scenario};
use opal::simulation::Simulation;

/// Prints `ok`, or fails with every problem of the scenario and its data files.
pub(crate) fn validate(args: &ScenarioArgs) -> Result<(), Failure> {
    let loaded = read_scenario(&args.scenario)?;
    if let Some(report) = &loaded.report {
        eprintln!(
            "{}: imported as an Opal config\n{report}",
            args.scenario.display()
        );
    }
    let (data, warnings) = read_data(&loaded.scenario, &loaded.dir, &args.data)?;
    warnings.iter().for_each(warn);
    // Building the run also resolves the model and sizes the KV cache, which can fail on
    // its own (a model too large for the GPU); nothing runs until `advance`.
    Simulation::new(&loaded.scenario, &data).map_err(Failure::Invalid)?;
    print("ok\n")
}
