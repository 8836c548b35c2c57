//! Why a command stopped, and the exit code each reason maps to.

use crate::args::UsageError;
use opal::Problem;
use std::process::ExitCode;

/// A command that could not finish.
pub(crate) enum Failure {
    /// The scenario (or its data files) is invalid: every problem, with its field path.
    Invalid(Vec<Problem>),
    /// A file could not be read or written.
    Io(String),
    /// The command line makes no sense.
    Usage(UsageError),
}

impl Failure {
    /// Prints the failure to stderr and gives the exit code: 2 for an invalid scenario or
    /// command line, 1 for I/O.
    pub(crate) fn report(&self) -> ExitCode {
        match self {
            Failure::Invalid(problems) => {
                for p in problems {
                    eprintln!("{p}");
                }
                ExitCode::from(2)
            }
            Failure::Io(message) => {
                eprintln!("opal: {message}");
                ExitCode::from(1)
            }
            Failure::Usage(e) => {
                // The usage line is enough to spot the mistake; `--help` has the rest.
                eprintln!("opal: {}", e.message);
                match e.help.lines().find(|l| l.starts_with("Usage:")) {
                    Some(usage) => eprintln!("{usage}\n(--help for more)"),
                    None => eprint!("{}", e.help),
                }
                ExitCode::from(2)
            }
        }
    }
}

impl From<UsageError> for Failure {
    fn from(e: UsageError) -> Self {
        Failure::Usage(e)
    }
}

/// Writes `text` to `path`, or an I/O failure naming it.
pub(crate) fn write_file(path: &std::path::Path, text: &str) -> Result<(), Failure> {
    std::fs::write(path, text).map_err(|e| Failure::Io(format!("{}: {e}", path.display())))
}

/// Streams what `write` produces into `path` through a buffer (a large run's results
/// are never held whole in memory), or an I/O failure naming it.
pub(crate) fn stream_file(
    path: &std::path::Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> Result<(), Failure> {
    use std::io::Write;
    let fail = |e: std::io::Error| Failure::Io(format!("{}: {e}", path.display()));
    let mut out =
        std::io::BufWriter::with_capacity(1 << 16, std::fs::File::create(path).map_err(fail)?);
    write(&mut out).and_then(|()| out.flush()).map_err(fail)
}

/// Writes `text` to stdout; a closed pipe (`opal run x | head`) is not an error.
pub(crate) fn print(text: &str) -> Result<(), Failure> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Failure::Io(format!("stdout: {e}")))
        }
        _ => Ok(()),
    }
}

/// Prints a warning about the scenario or its data on stderr (`warning: field.path: message`).
pub(crate) fn warn(problem: &Problem) {
    eprintln!("warning: {problem}");
}
