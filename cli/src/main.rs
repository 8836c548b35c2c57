//! `opal`: run, validate, import and sweep Opal scenarios from the command line.
//!
//! Each command lives in its own module; this file only dispatches the parsed command line
//! and turns a [`Failure`] into its exit code (0 success, 1 I/O, 2 invalid scenario or
//! command line).

mod args;
mod failure;
mod import;
mod interrupt;
mod load;
mod presets;
mod progress;
mod run;
mod sweep;
mod validate;

use args::{Command, Parsed};
use failure::Failure;
use std::process::ExitCode;

fn main() -> ExitCode {
    let result = match args::parse(std::env::args_os().skip(1)) {
        Parsed::Command(command) => execute(command),
        Parsed::Print(text) => failure::print(&text).map(|()| ExitCode::SUCCESS),
        Parsed::Usage(text) => {
            eprint!("{text}");
            Ok(ExitCode::from(2))
        }
    };
    match result {
        Ok(code) => code,
        Err(failure) => failure.report(),
    }
}

fn execute(command: Command) -> Result<ExitCode, Failure> {
    let done = match command {
        Command::Run(a) => return run::run(&a),
        Command::Sweep(a) => return sweep::sweep(&a),
        Command::Validate(a) => validate::validate(&a),
        Command::ImportOpal {
            input,
            output,
            compat,
        } => import::import(&input, output.as_deref(), compat),
        Command::Presets => presets::list(),
        Command::Preset { id, output } => presets::show(&id, output.as_deref()),
    };
    done.map(|()| ExitCode::SUCCESS)
}
