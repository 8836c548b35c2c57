//! The command line, declared with clap's derive: each command's flags, help and value
//! checks in one place. Usage errors keep the tool's own wording (`unknown option "--x"`)
//! and exit code 2; `--help` and `--version` print to stdout and exit 0.

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Args, Parser, Subcommand};
use std::ffi::OsString;
use std::path::PathBuf;

/// Usage line and text after the options, shared by every command's help.
const TEMPLATE: &str = "{usage-heading} {usage}\n\n{about-with-newline}\n{all-args}{after-help}";

/// Exit codes, listed at the end of the top-level help.
const EXIT_CODES: &str = "\
Exit codes: 0 success, 1 a file could not be read or written, 2 an invalid scenario or
command line (every problem is printed as `field.path: message`, one per line).";

/// `opal`: run Opal inference-platform simulations from the command line.
#[derive(Debug, Parser)]
#[command(
    name = "opal",
    version = opal::VERSION,
    help_template = TEMPLATE,
    after_help = EXIT_CODES,
    disable_help_subcommand = false,
    subcommand_help_heading = "Commands",
)]
pub(crate) struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// What the user asked for.
#[derive(Debug, Clone, PartialEq, Subcommand)]
pub(crate) enum Command {
    /// Run a scenario and print each stage's table.
    #[command(help_template = TEMPLATE, after_help = RUN_AFTER)]
    Run(RunArgs),
    /// Check a scenario and its data files.
    #[command(help_template = TEMPLATE)]
    Validate(ScenarioArgs),
    /// Convert an original Opal config to a scenario.
    #[command(name = "import-opal", help_template = TEMPLATE)]
    ImportOpal {
        /// The Opal config file (its configs/defaults.json shape).
        input: PathBuf,
        /// Write the scenario here (stdout when absent; the report then goes to stderr).
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
        /// Turn on every opal_compat switch, so the scenario runs as the original does and
        /// gives its figures (off: vLLM's behaviour; the report lists what then differs).
        #[arg(long)]
        compat: bool,
    },
    /// List the built-in scenarios.
    #[command(help_template = TEMPLATE)]
    Presets,
    /// Print or write a built-in scenario.
    #[command(help_template = TEMPLATE)]
    Preset {
        /// The preset's id (see `opal presets`).
        id: String,
        /// Write the scenario here, with the data files it names beside it.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Run a scenario's sweep (every point a full run, on every core) and print a table.
    #[command(help_template = TEMPLATE, after_help = SWEEP_AFTER)]
    Sweep(SweepArgs),
}

const RUN_AFTER: &str = "\
Ctrl-C stops the run and still prints and writes the results it reached (press it twice to
quit at once).

Exit codes: 0 the run ended (to the end, or at simulation_time or a simulation.max_* limit,
said on stderr); 2 an invalid scenario, or a run stopped by an error; 124 stopped by
--max-wall-seconds; 130 stopped by Ctrl-C. Results are printed and written in every case.";

const SWEEP_AFTER: &str = "\
The same sweep gives the same numbers whatever the thread count or sharding. A shard writes
its points with --json; `opal sweep --merge` puts shards back together, byte for byte the
JSON an unsharded run writes.

Exit codes: 0 every point ran; 2 an invalid scenario or command line, or a point stopped by
an error (the table says which); 1 a file could not be read or written; 130 Ctrl-C.";

/// A scenario file and where its data files come from.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub(crate) struct ScenarioArgs {
    /// The scenario (ours, or an original Opal config, detected from its keys).
    pub scenario: PathBuf,
    /// Read the data file the scenario calls NAME from PATH (repeatable); otherwise
    /// trace_file / sessions_file are read relative to the scenario's directory.
    #[arg(long, value_name = "NAME=PATH", value_parser = data_pair)]
    pub data: Vec<(String, PathBuf)>,
}

/// `opal run`'s arguments.
#[derive(Debug, Clone, PartialEq, Args)]
pub(crate) struct RunArgs {
    /// The scenario and its data files.
    #[command(flatten)]
    pub input: ScenarioArgs,
    /// Write the results JSON (tables, series, every request and decision).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write one CSV row per request.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Replace simulation.seed.
    #[arg(long, value_name = "N", value_parser = seed)]
    pub seed: Option<u64>,
    /// Print nothing but errors (no table, import report or progress bar).
    #[arg(short, long)]
    pub quiet: bool,
    /// Stop after S seconds of real time, keeping the results reached.
    #[arg(long, value_name = "S", value_parser = wall_seconds)]
    pub max_wall_seconds: Option<f64>,
}

/// `opal sweep`'s arguments.
#[derive(Debug, Clone, PartialEq, Args)]
pub(crate) struct SweepArgs {
    /// The scenario with a `sweep` section.
    #[arg(required_unless_present = "merge")]
    pub scenario: Option<PathBuf>,
    /// Read the data file the scenario calls NAME from PATH (repeatable).
    #[arg(long, value_name = "NAME=PATH", value_parser = data_pair)]
    pub data: Vec<(String, PathBuf)>,
    /// Write the sweep's JSON (one line per point).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write one CSV row per point.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Threads running points (default: one per core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: Option<u32>,
    /// Run only the K-th of N slices of the points (K from 1), e.g. a job array's index.
    #[arg(long, value_name = "K/N", value_parser = shard, requires = "json", conflicts_with = "merge")]
    pub shard: Option<(usize, usize)>,
    /// Merge shard files into the whole sweep's JSON (to --json FILE, or stdout).
    #[arg(long, value_name = "FILE", num_args = 1.., conflicts_with_all = ["scenario", "data", "csv", "threads"])]
    pub merge: Vec<PathBuf>,
    /// Print nothing but errors (no table or progress line).
    #[arg(short, long)]
    pub quiet: bool,
}

fn data_pair(d: &str) -> Result<(String, PathBuf), String> {
    match d.split_once('=') {
        Some((name, path)) if !name.is_empty() && !path.is_empty() => {
            Ok((name.to_string(), PathBuf::from(path)))
        }
        _ => Err(format!("--data wants NAME=PATH, not \"{d}\"")),
    }
}

fn seed(s: &str) -> Result<u64, String> {
    s.parse()
        .map_err(|_| format!("--seed wants a whole number in [0, 2^64), not \"{s}\""))
}

fn wall_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err(format!(
            "--max-wall-seconds wants a number of seconds > 0, not \"{s}\""
        )),
    }
}

fn shard(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("--shard wants K/N with 1 <= K <= N, not \"{s}\"");
    let (k, n) = s.split_once('/').ok_or_else(bad)?;
    let (k, n) = (
        k.parse::<usize>().map_err(|_| bad())?,
        n.parse::<usize>().map_err(|_| bad())?,
    );
    if k == 0 || k > n {
        return Err(bad());
    }
    Ok((k, n))
}

/// What parsing the command line gave: a command, or text to print and an exit code.
pub(crate) enum Parsed {
    /// Run this command.
    Command(Command),
    /// Print this (help or version) on stdout and exit 0.
    Print(String),
    /// Print this usage error on stderr and exit 2.
    Usage(String),
}

/// Parses the arguments after the program name (any OS strings: paths need not be UTF-8).
pub(crate) fn parse<I: IntoIterator<Item = T>, T: Into<OsString> + Clone>(args: I) -> Parsed {
    let args: Vec<OsString> = std::iter::once(OsString::from("opal"))
        .chain(args.into_iter().map(Into::into))
        .collect();
    if args.len() == 1 {
        return Parsed::Print(help());
    }
    match Cli::try_parse_from(args) {
        Ok(cli) => Parsed::Command(cli.command),
        Err(e) => match e.kind() {
            ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => Parsed::Print(e.to_string()),
            _ => Parsed::Usage(usage_error(&e)),
        },
    }
}

/// The top-level help.
pub(crate) fn help() -> String {
    use clap::CommandFactory;
    Cli::command().render_help().to_string()
}

/// A clap error in the tool's words: `opal: <what>`, then clap's usage line.
fn usage_error(e: &clap::Error) -> String {
    let context = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    let what = match e.kind() {
        ErrorKind::UnknownArgument => context(ContextKind::InvalidArg).map(|a| {
            if a.starts_with('-') {
                format!("unknown option \"{}\"", a.split('=').next().unwrap_or(&a))
            } else {
                format!("unexpected argument \"{a}\"")
            }
        }),
        ErrorKind::MissingRequiredArgument => match e.get(ContextKind::InvalidArg) {
            Some(ContextValue::Strings(missing)) => Some(format!("missing {}", missing.join(", "))),
            _ => None,
        },
        ErrorKind::InvalidSubcommand => {
            context(ContextKind::InvalidSubcommand).map(|c| format!("no command \"{c}\""))
        }
        ErrorKind::ValueValidation => std::error::Error::source(e).map(|s| s.to_string()),
        _ => None,
    };
    let rendered = e.render().to_string();
    let mut lines = rendered.lines();
    let first = lines.next().unwrap_or_default();
    let what = what.unwrap_or_else(|| first.trim_start_matches("error: ").to_string());
    let usage = lines
        .find(|l| l.starts_with("Usage:"))
        .unwrap_or("Usage: opal <COMMAND>");
    format!("opal: {what}\n{usage}\n(--help for more)\n")
}

/// A command line the tool cannot act on beyond what clap checks; `help` is the text to
/// point the user to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UsageError {
    /// What is wrong.
    pub message: String,
    /// The usage text of the command concerned.
    pub help: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(s: &str) -> Parsed {
        parse(s.split_whitespace())
    }

    fn command(s: &str) -> Command {
        match parse_str(s) {
            Parsed::Command(c) => c,
            _ => panic!("{s}: not a command"),
        }
    }

    fn usage(s: &str) -> String {
        match parse_str(s) {
            Parsed::Usage(u) => u.lines().next().unwrap().to_string(),
            _ => panic!("{s}: not a usage error"),
        }
    }

    #[test]
    fn run_takes_every_flag_in_both_spellings() {
        let cmd = command(
            "run s.json --data a=x.jsonl --data=b=y.jsonl --json=o.json --csv o.csv --seed 7 -q \
             --max-wall-seconds 2.5",
        );
        assert_eq!(
            cmd,
            Command::Run(RunArgs {
                input: ScenarioArgs {
                    scenario: "s.json".into(),
                    data: vec![
                        ("a".into(), "x.jsonl".into()),
                        ("b".into(), "y.jsonl".into())
                    ],
                },
                json: Some("o.json".into()),
                csv: Some("o.csv".into()),
                seed: Some(7),
                quiet: true,
                max_wall_seconds: Some(2.5),
            })
        );
    }

    #[test]
    fn mistakes_are_usage_errors_naming_the_argument() {
        assert_eq!(usage("run"), "opal: missing <SCENARIO>");
        assert_eq!(
            usage("run a.json b.json"),
            "opal: unexpected argument \"b.json\""
        );
        assert_eq!(
            usage("run a.json --speed 2"),
            "opal: unknown option \"--speed\""
        );
        assert_eq!(
            usage("run a.json --data x.jsonl"),
            "opal: --data wants NAME=PATH, not \"x.jsonl\""
        );
        assert_eq!(
            usage("run a.json --max-wall-seconds 0"),
            "opal: --max-wall-seconds wants a number of seconds > 0, not \"0\""
        );
        assert_eq!(usage("simulate a.json"), "opal: no command \"simulate\"");
        assert_eq!(
            usage("sweep s.json --json o.json --shard 3/2"),
            "opal: --shard wants K/N with 1 <= K <= N, not \"3/2\""
        );
        // A shard writes its points to a file; merging takes no scenario.
        assert_eq!(
            usage("sweep s.json --shard 1/2"),
            "opal: missing --json <FILE>"
        );
        assert!(usage("sweep s.json --merge a.json").contains("cannot be used"));
    }

    #[test]
    fn sweep_reads_shards_and_merges() {
        let Command::Sweep(a) = command("sweep s.json --shard 2/4 --json o.json --threads 3")
        else {
            panic!()
        };
        assert_eq!((a.shard, a.threads), (Some((2, 4)), Some(3)));
        let Command::Sweep(a) = command("sweep --merge a.json b.json") else {
            panic!()
        };
        assert_eq!(a.merge, [PathBuf::from("a.json"), PathBuf::from("b.json")]);
        assert_eq!(a.scenario, None);
    }

    #[test]
    fn help_is_per_command_and_starts_with_the_usage() {
        for c in [
            "run",
            "validate",
            "import-opal",
            "presets",
            "preset",
            "sweep",
        ] {
            let Parsed::Print(text) = parse_str(&format!("{c} --help")) else {
                panic!("{c}")
            };
            assert!(text.starts_with(&format!("Usage: opal {c}")), "{text}");
        }
        let Parsed::Print(text) = parse_str("help preset") else {
            panic!()
        };
        assert!(text.starts_with("Usage: opal preset"), "{text}");
        assert!(matches!(parse_str(""), Parsed::Print(t) if t.contains("Exit codes")));
    }
}
