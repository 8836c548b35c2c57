//! The command line, parsed by hand: five commands with a handful of flags each do not need
//! a parser crate, and this keeps every help text and error message in one readable place.

use std::path::PathBuf;

/// What the user asked for.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// `opal run`: run a scenario and report.
    Run(RunArgs),
    /// `opal validate`: check a scenario and its data files.
    Validate(ScenarioArgs),
    /// `opal import-opal`: convert an original Opal config.
    ImportOpal {
        /// The Opal config file.
        input: PathBuf,
        /// Where to write the scenario (stdout when absent).
        output: Option<PathBuf>,
    },
    /// `opal presets`: list the built-in scenarios.
    Presets,
    /// `opal preset <id>`: print or write one built-in scenario.
    Preset {
        /// The preset's id.
        id: String,
        /// Where to write it (stdout when absent).
        output: Option<PathBuf>,
    },
    /// `--help` (of the whole tool or of one command).
    Help(&'static str),
    /// `--version`.
    Version,
}

/// A scenario file and where its data files come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioArgs {
    /// The scenario (ours or an Opal config).
    pub scenario: PathBuf,
    /// `--data NAME=PATH`: read the data file the scenario calls NAME from PATH.
    pub data: Vec<(String, PathBuf)>,
}

/// `opal run`'s arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct RunArgs {
    /// The scenario and its data files.
    pub input: ScenarioArgs,
    /// `--json`: write the results JSON here.
    pub json: Option<PathBuf>,
    /// `--csv`: write the per-request CSV here.
    pub csv: Option<PathBuf>,
    /// `--seed`: replace `simulation.seed`.
    pub seed: Option<u64>,
    /// `--quiet`: print nothing but errors.
    pub quiet: bool,
    /// `--max-wall-seconds`: stop after this much real time, keeping the partial results.
    pub max_wall_seconds: Option<f64>,
}

/// A command line the tool cannot act on; `help` is the text to point the user to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError {
    /// What is wrong.
    pub message: String,
    /// The usage text of the command concerned.
    pub help: &'static str,
}

/// Top-level help.
pub const HELP: &str = "\
opal: run Opal inference-platform simulations from the command line

Usage: opal <command> [options]

Commands:
  run <scenario.json>         run a scenario and print each stage's table
  validate <scenario.json>    check a scenario and its data files
  import-opal <opal.json>     convert an original Opal config to a scenario
  presets                     list the built-in scenarios
  preset <id>                 print or write a built-in scenario

Options:
  -h, --help       help (also after a command: opal run --help)
  -V, --version    the engine version

Exit codes: 0 success, 1 a file could not be read or written, 2 an invalid scenario or
command line (every problem is printed as `field.path: message`, one per line).
";

const RUN_HELP: &str = "\
Usage: opal run <scenario.json> [options]

Runs a scenario (ours, or an original Opal config, detected from its keys) to the end and
prints each stage's table as `vllm bench serve` does. Data files a stage names (trace_file,
sessions_file) are read relative to the scenario file's directory.

Ctrl-C stops the run and still prints and writes the results it reached (press it twice to
quit at once).

Options:
  --data NAME=PATH        read the data file the scenario calls NAME from PATH (repeatable)
  --json FILE             write the results JSON (tables, series, every request and decision)
  --csv FILE              write one CSV row per request
  --seed N                replace simulation.seed
  --max-wall-seconds S    stop after S seconds of real time, keeping the results reached
  -q, --quiet             print nothing but errors (no table, import report or progress bar)
  -h, --help              this help

Exit codes: 0 the run ended (to the end, or at simulation_time or a simulation.max_* limit,
said on stderr); 2 an invalid scenario, or a run stopped by an error; 124 stopped by
--max-wall-seconds; 130 stopped by Ctrl-C. Results are printed and written in every case.
";

const VALIDATE_HELP: &str = "\
Usage: opal validate <scenario.json> [--data NAME=PATH]...

Checks a scenario (ours or an Opal config) and the data files it names; prints `ok`, or
every problem as `field.path: message` and exits with 2.

Options:
  --data NAME=PATH   read the data file the scenario calls NAME from PATH (repeatable)
  -h, --help         this help
";

const IMPORT_HELP: &str = "\
Usage: opal import-opal <opal.json> [-o scenario.json]

Converts an original Opal config (its configs/defaults.json shape) to a scenario document.
The report says where every Opal key went, or why it was left out. Without -o the scenario
goes to stdout and the report to stderr; with -o the report goes to stdout.

Options:
  -o, --output FILE  write the scenario here
  -h, --help         this help
";

const PRESETS_HELP: &str = "\
Usage: opal presets

Lists the built-in scenarios (the documents in examples/) by id and title.
";

const PRESET_HELP: &str = "\
Usage: opal preset <id> [-o scenario.json]

Prints a built-in scenario's document. With -o it is written to FILE together with the data
files it names (next to it, e.g. traces/mooncake_small.jsonl), ready for `opal run FILE`.

Options:
  -o, --output FILE  write the scenario (and its data files) here
  -h, --help         this help
";

/// One flag a command accepts.
struct Flag {
    long: &'static str,
    short: Option<&'static str>,
    takes_value: bool,
}

const fn flag(long: &'static str, short: Option<&'static str>, takes_value: bool) -> Flag {
    Flag {
        long,
        short,
        takes_value,
    }
}

/// A command's arguments split into positionals and (flag, value) pairs in given order.
struct Parsed {
    positional: Vec<String>,
    flags: Vec<(&'static str, String)>,
}

impl Parsed {
    fn last(&self, long: &str) -> Option<&str> {
        self.flags
            .iter()
            .rev()
            .find(|(f, _)| *f == long)
            .map(|(_, v)| v.as_str())
    }

    fn all(&self, long: &'static str) -> impl Iterator<Item = &str> + '_ {
        self.flags
            .iter()
            .filter(move |(f, _)| *f == long)
            .map(|(_, v)| v.as_str())
    }
}

/// Parses the arguments after the program name.
pub fn parse(args: &[String]) -> Result<Command, UsageError> {
    let usage = |message: String| UsageError {
        message,
        help: HELP,
    };
    let Some((command, rest)) = args.split_first() else {
        return Ok(Command::Help(HELP));
    };
    match command.as_str() {
        "-h" | "--help" | "help" => Ok(Command::Help(match rest.first() {
            Some(c) => help_of(c).ok_or_else(|| usage(format!("no command \"{c}\"")))?,
            None => HELP,
        })),
        "-V" | "--version" => Ok(Command::Version),
        "run" => parse_run(rest),
        "validate" => {
            let help = VALIDATE_HELP;
            if wants_help(rest) {
                return Ok(Command::Help(help));
            }
            let p = split(rest, &[flag("--data", None, true)], help)?;
            Ok(Command::Validate(scenario_args(&p, help)?))
        }
        "import-opal" => {
            let help = IMPORT_HELP;
            if wants_help(rest) {
                return Ok(Command::Help(help));
            }
            let p = split(rest, &[flag("--output", Some("-o"), true)], help)?;
            Ok(Command::ImportOpal {
                input: one_positional(&p, "an Opal config file", help)?.into(),
                output: p.last("--output").map(PathBuf::from),
            })
        }
        "presets" => {
            if wants_help(rest) {
                return Ok(Command::Help(PRESETS_HELP));
            }
            let p = split(rest, &[], PRESETS_HELP)?;
            if let Some(extra) = p.positional.first() {
                return Err(UsageError {
                    message: format!("unexpected argument \"{extra}\""),
                    help: PRESETS_HELP,
                });
            }
            Ok(Command::Presets)
        }
        "preset" => {
            let help = PRESET_HELP;
            if wants_help(rest) {
                return Ok(Command::Help(help));
            }
            let p = split(rest, &[flag("--output", Some("-o"), true)], help)?;
            Ok(Command::Preset {
                id: one_positional(&p, "a preset id (see `opal presets`)", help)?.into(),
                output: p.last("--output").map(PathBuf::from),
            })
        }
        other => Err(usage(format!("no command \"{other}\""))),
    }
}

fn help_of(command: &str) -> Option<&'static str> {
    Some(match command {
        "run" => RUN_HELP,
        "validate" => VALIDATE_HELP,
        "import-opal" => IMPORT_HELP,
        "presets" => PRESETS_HELP,
        "preset" => PRESET_HELP,
        _ => return None,
    })
}

fn wants_help(args: &[String]) -> bool {
    args.iter().any(|a| a == "-h" || a == "--help")
}

fn parse_run(rest: &[String]) -> Result<Command, UsageError> {
    let help = RUN_HELP;
    if wants_help(rest) {
        return Ok(Command::Help(help));
    }
    let p = split(
        rest,
        &[
            flag("--data", None, true),
            flag("--json", None, true),
            flag("--csv", None, true),
            flag("--seed", None, true),
            flag("--max-wall-seconds", None, true),
            flag("--quiet", Some("-q"), false),
        ],
        help,
    )?;
    let max_wall_seconds = match p.last("--max-wall-seconds") {
        None => None,
        Some(s) => match s.parse::<f64>() {
            Ok(x) if x > 0.0 && x.is_finite() => Some(x),
            _ => {
                return Err(UsageError {
                    message: format!(
                        "--max-wall-seconds wants a number of seconds > 0, not \"{s}\""
                    ),
                    help,
                })
            }
        },
    };
    let seed = match p.last("--seed") {
        None => None,
        Some(s) => Some(s.parse::<u64>().map_err(|_| UsageError {
            message: format!("--seed wants a whole number in [0, 2^64), not \"{s}\""),
            help,
        })?),
    };
    Ok(Command::Run(RunArgs {
        input: scenario_args(&p, help)?,
        json: p.last("--json").map(PathBuf::from),
        csv: p.last("--csv").map(PathBuf::from),
        seed,
        quiet: p.last("--quiet").is_some(),
        max_wall_seconds,
    }))
}

fn scenario_args(p: &Parsed, help: &'static str) -> Result<ScenarioArgs, UsageError> {
    let scenario = one_positional(p, "a scenario file", help)?.into();
    let data = p
        .all("--data")
        .map(|d| match d.split_once('=') {
            Some((name, path)) if !name.is_empty() && !path.is_empty() => {
                Ok((name.to_string(), PathBuf::from(path)))
            }
            _ => Err(UsageError {
                message: format!("--data wants NAME=PATH, not \"{d}\""),
                help,
            }),
        })
        .collect::<Result<_, _>>()?;
    Ok(ScenarioArgs { scenario, data })
}

fn one_positional<'a>(
    p: &'a Parsed,
    what: &str,
    help: &'static str,
) -> Result<&'a str, UsageError> {
    match p.positional.as_slice() {
        [one] => Ok(one),
        [] => Err(UsageError {
            message: format!("missing {what}"),
            help,
        }),
        [_, extra, ..] => Err(UsageError {
            message: format!("unexpected argument \"{extra}\""),
            help,
        }),
    }
}

/// Splits `args` into positionals and flags; `--flag value`, `--flag=value` and `-o value`
/// all work, and `--` ends the flags.
fn split(args: &[String], flags: &[Flag], help: &'static str) -> Result<Parsed, UsageError> {
    let err = |message: String| UsageError { message, help };
    let mut parsed = Parsed {
        positional: Vec::new(),
        flags: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        if arg == "--" {
            parsed.positional.extend(it.cloned());
            break;
        }
        if arg == "-" || !arg.starts_with('-') {
            parsed.positional.push(arg.clone());
            continue;
        }
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v)),
            _ => (arg.as_str(), None),
        };
        let Some(f) = flags
            .iter()
            .find(|f| f.long == name || f.short == Some(name))
        else {
            return Err(err(format!("unknown option \"{name}\"")));
        };
        let value = if !f.takes_value {
            if inline.is_some() {
                return Err(err(format!("{} takes no value", f.long)));
            }
            String::new()
        } else if let Some(v) = inline {
            v.to_string()
        } else {
            it.next()
                .cloned()
                .ok_or_else(|| err(format!("{} wants a value", f.long)))?
        };
        parsed.flags.push((f.long, value));
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn run_takes_every_flag_in_both_spellings() {
        let cmd = parse(&args(
            "run s.json --data a=x.jsonl --data=b=y.jsonl --json=o.json --csv o.csv --seed 7 -q \
             --max-wall-seconds 2.5",
        ))
        .unwrap();
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
        let msg = |s: &str| parse(&args(s)).unwrap_err().message;
        assert_eq!(msg("run"), "missing a scenario file");
        assert_eq!(msg("run a.json b.json"), "unexpected argument \"b.json\"");
        assert_eq!(msg("run a.json --speed 2"), "unknown option \"--speed\"");
        assert_eq!(msg("run a.json --json"), "--json wants a value");
        assert_eq!(
            msg("run a.json --data x.jsonl"),
            "--data wants NAME=PATH, not \"x.jsonl\""
        );
        assert!(msg("run a.json --seed -1").starts_with("--seed wants a whole number"));
        assert_eq!(
            msg("run a.json --max-wall-seconds 0"),
            "--max-wall-seconds wants a number of seconds > 0, not \"0\""
        );
        assert_eq!(msg("simulate a.json"), "no command \"simulate\"");
    }

    #[test]
    fn help_is_per_command() {
        assert_eq!(parse(&args("run --help")).unwrap(), Command::Help(RUN_HELP));
        assert_eq!(
            parse(&args("help preset")).unwrap(),
            Command::Help(PRESET_HELP)
        );
        assert_eq!(parse(&[]).unwrap(), Command::Help(HELP));
    }
}
