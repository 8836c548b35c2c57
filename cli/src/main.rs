//! `opal`: run, validate and import Opal scenarios from the command line.
//!
//! Each command lives in its own module; this file only parses the command line and turns a
//! [`Failure`] into its exit code (0 success, 1 I/O, 2 invalid scenario or command line).

mod args;
mod failure;
mod import;
mod interrupt;
mod load;
mod presets;
mod progress;
mod run;
mod validate;

use args::Command;
use failure::Failure;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Result<Vec<String>, _> = std::env::args_os()
        .skip(1)
        .map(|a| a.into_string())
        .collect();
    let result = match args {
        Ok(args) => execute(&args),
        Err(bad) => Err(Failure::Usage(args::UsageError {
            message: format!("argument {bad:?} is not valid UTF-8"),
            help: args::HELP,
        })),
    };
    match result {
        Ok(code) => code,
        Err(failure) => failure.report(),
    }
}

fn execute(args: &[String]) -> Result<ExitCode, Failure> {
    let done = match args::parse(args)? {
        Command::Run(a) => return run::run(&a),
        Command::Validate(a) => validate::validate(&a),
        Command::ImportOpal { input, output } => import::import(&input, output.as_deref()),
        Command::Presets => presets::list(),
        Command::Preset { id, output } => presets::show(&id, output.as_deref()),
        Command::Help(text) => failure::print(text),
        Command::Version => failure::print(&format!("opal {}\n", engine::VERSION)),
    };
    done.map(|()| ExitCode::SUCCESS)
}
