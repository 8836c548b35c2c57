//! Reading a scenario file from disk: either format, and the data files it names.

use crate::failure::Failure;
use engine::scenario::{detect_format, import_opal, Format, ImportReport, Scenario, ScenarioData};
use engine::validate::Problem;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A scenario as read from a file.
pub struct Loaded {
    /// The scenario (imported, when the file was an Opal config).
    pub scenario: Scenario,
    /// What the import did with each Opal key; `None` for our own format.
    pub report: Option<ImportReport>,
    /// The directory data file names are relative to.
    pub dir: PathBuf,
}

/// Reads `path` as our scenario or, when its keys say so, an original Opal config.
pub fn read_scenario(path: &Path) -> Result<Loaded, Failure> {
    let text = read_text(path)?;
    let (scenario, report) = match detect_format(&text) {
        Format::Opal => {
            let (scenario, report) = import_opal(&text).map_err(Failure::Invalid)?;
            (scenario, Some(report))
        }
        // An unknown shape is parsed as ours: its problems then name the stray keys.
        Format::Ours | Format::Unknown => (Scenario::parse(&text).map_err(Failure::Invalid)?, None),
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

/// The text of a file, or an I/O failure naming it.
pub fn read_text(path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path).map_err(|e| Failure::Io(format!("{}: {e}", path.display())))
}

/// Reads every data file the scenario names: from `--data NAME=PATH` when given, else relative
/// to `dir`. A file that cannot be read, or does not parse, is a problem at the field naming
/// it (`workload.stages[0].trace_file: ...`), reported with every other one.
pub fn read_data(
    scenario: &Scenario,
    dir: &Path,
    overrides: &[(String, PathBuf)],
) -> Result<ScenarioData, Failure> {
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
            None => dir.join(&file.file),
        };
        if !unreadable.contains_key(file.file.as_str()) {
            match std::fs::read_to_string(&path) {
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
    let parse_problems: Vec<Problem> = scenario
        .check_data(&data)
        .into_iter()
        .filter(|p| !problems.iter().any(|q| q.path == p.path))
        .collect();
    problems.extend(parse_problems);
    if problems.is_empty() {
        Ok(data)
    } else {
        Err(Failure::Invalid(problems))
    }
}
