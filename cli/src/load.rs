//! Reading a scenario file from disk: either format, and the data files it names.
//!
//! Only what a scenario may mean is read: regular files (not `/dev/zero`, a pipe or a
//! directory) of bounded size, holding UTF-8 text. A scenario names its data files
//! relative to its own directory, without `..` or an absolute path, so a scenario from
//! elsewhere cannot make the CLI read any file on the machine; `--data NAME=PATH` is how
//! the user points a name at a file anywhere.

use crate::failure::Failure;
use opal::document::{detect_format, import_opal, Format, ImportReport};
use opal::parse_scenario;
use opal::scenario::{Scenario, ScenarioData};
use opal::Problem;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// Largest scenario (or Opal config) file read, bytes: documents are kilobytes; this
/// leaves room for generated ones of many thousands of stages.
pub(crate) const MAX_SCENARIO_BYTES: u64 = 64 << 20;
/// Largest trace or sessions file read, bytes: room for a million-line trace such as
/// Mooncake's.
pub(crate) const MAX_DATA_BYTES: u64 = 512 << 20;

/// A scenario as read from a file.
pub(crate) struct Loaded {
    /// The scenario (imported, when the file was an Opal config).
    pub scenario: Scenario,
    /// What the import did with each Opal key; `None` for our own format.
    pub report: Option<ImportReport>,
    /// The directory data file names are relative to.
    pub dir: PathBuf,
}

/// Reads `path` as our scenario or, when its keys say so, an original Opal config.
pub(crate) fn read_scenario(path: &Path) -> Result<Loaded, Failure> {
    let text = read_text(path)?;
    let (scenario, report) = match detect_format(&text) {
        Format::Opal => {
            let (scenario, report) = import_opal(&text).map_err(Failure::Invalid)?;
            (scenario, Some(report))
        }
        // An unknown shape is parsed as ours: its problems then name the stray keys.
        Format::Ours | Format::Unknown => (parse_scenario(&text).map_err(Failure::Invalid)?, None),
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    Ok(Loaded {
        scenario,
        report,
        dir,
    })
}

/// The text of a scenario file: an I/O failure naming it when it cannot be read, an invalid
/// scenario (exit 2) when it is not a regular file of UTF-8 text within the size limit.
pub(crate) fn read_text(path: &Path) -> Result<String, Failure> {
    read_bounded(path, MAX_SCENARIO_BYTES).map_err(|e| match e {
        ReadError::Io(e) => Failure::Io(format!("{}: {e}", path.display())),
        e => Failure::Invalid(vec![Problem {
            path: String::new(),
            message: format!("{}: {e}", path.display()),
        }]),
    })
}

/// Why a file was not read.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The operating system's reason (missing, no permission, …).
    Io(std::io::Error),
    /// A device, pipe, directory or other non-file.
    NotRegular,
    /// Bigger than the limit.
    TooLarge(u64),
    /// Not UTF-8 at this 1-based line and column (in bytes).
    NotUtf8 { line: usize, column: usize },
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io(e) => e.fmt(f),
            ReadError::NotRegular => f.write_str("not a regular file"),
            ReadError::TooLarge(limit) => write!(f, "larger than {} MB", limit >> 20),
            ReadError::NotUtf8 { line, column } => {
                write!(
                    f,
                    "not UTF-8 text (invalid byte at line {line}, column {column})"
                )
            }
        }
    }
}

/// Reads `path` if it is a regular file of at most `limit` bytes of UTF-8 text. The kind of
/// file is checked before opening it (opening a pipe would wait for a writer) and the read
/// stops past `limit` whatever the file claims its size is.
pub(crate) fn read_bounded(path: &Path, limit: u64) -> Result<String, ReadError> {
    if !std::fs::metadata(path).map_err(ReadError::Io)?.is_file() {
        return Err(ReadError::NotRegular);
    }
    let file = std::fs::File::open(path).map_err(ReadError::Io)?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular); // replaced since the first look
    }
    if meta.len() > limit {
        return Err(ReadError::TooLarge(limit));
    }
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge(limit));
    }
    String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = good.len() - good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1) + 1;
        ReadError::NotUtf8 { line, column }
    })
}

/// Whether a data file name from a scenario stays inside the scenario's directory: relative,
/// with no `..` (and no drive or root on Windows).
fn stays_inside(name: &str) -> bool {
    Path::new(name)
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// Reads every data file the scenario names: from `--data NAME=PATH` when given, else relative
/// to `dir`. A file that cannot be read, or does not parse, is a problem at the field naming
/// it (`workload.stages[0].trace_file: ...`), reported with every other one. Alongside the
/// files come the warnings about them (odd but usable).
pub(crate) fn read_data(
    scenario: &Scenario,
    dir: &Path,
    overrides: &[(String, PathBuf)],
) -> Result<(ScenarioData, Vec<Problem>), Failure> {
    let required = scenario.required_data_files();
    if let Some((name, _)) = overrides
        .iter()
        .find(|(name, _)| !required.iter().any(|f| &f.file == name))
    {
        let named: Vec<&str> = required.iter().map(|f| f.file.as_str()).collect();
        return Err(Failure::Invalid(vec![Problem {
            path: String::new(),
            message: if named.is_empty() {
                format!("--data {name}: the scenario names no data files")
            } else {
                format!(
                    "--data {name}: the scenario names no such file (it names {})",
                    named.join(", ")
                )
            },
        }]));
    }
    let overrides: BTreeMap<&str, &Path> = overrides
        .iter()
        .map(|(n, p)| (n.as_str(), p.as_path()))
        .collect();

    let mut data = ScenarioData::new();
    let mut problems = Vec::new();
    // File name → why it could not be read (a file two stages name is tried once).
    let mut unreadable: BTreeMap<&str, String> = BTreeMap::new();
    for file in &required {
        if data.get(&file.file).is_some() {
            continue;
        }
        let path = match overrides.get(file.file.as_str()) {
            Some(p) => p.to_path_buf(),
            None if !stays_inside(&file.file) => {
                problems.push(Problem {
                    path: file.path.clone(),
                    message: format!(
                        "\"{}\" is not a path inside the scenario's directory; a scenario names \
                         its data files relative to itself, without \"..\" (to use a file \
                         elsewhere, run with --data \"{}=PATH\")",
                        file.file, file.file
                    ),
                });
                continue;
            }
            None => dir.join(&file.file),
        };
        if !unreadable.contains_key(file.file.as_str()) {
            match read_bounded(&path, MAX_DATA_BYTES) {
                Ok(text) => {
                    data.insert(file.file.clone(), text);
                    continue;
                }
                Err(e) => {
                    unreadable.insert(&file.file, e.to_string());
                }
            }
        }
        problems.push(Problem {
            path: file.path.clone(),
            message: format!(
                "cannot read the {} file \"{}\" (at {}): {}",
                file.kind,
                file.file,
                path.display(),
                unreadable[file.file.as_str()]
            ),
        });
    }
    // The files that were read: do they parse? (The unread ones are reported above.)
    let report = scenario.inspect_data(&data);
    let unread: BTreeSet<String> = problems.iter().map(|p| p.path.clone()).collect();
    problems.extend(
        report
            .problems
            .into_iter()
            .filter(|p| !unread.contains(&p.path)),
    );
    if problems.is_empty() {
        Ok((data, report.warnings))
    } else {
        Err(Failure::Invalid(problems))
    }
}
