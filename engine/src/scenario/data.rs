//! The data files a scenario names (trace and sessions JSONL), kept next to the document.
//!
//! A scenario names its files (`trace_file`, `sessions_file`); it never holds their text, so a
//! shared link stays short. The CLI reads them from disk, the app from a file picker or a
//! preset; both pass them in as a [`ScenarioData`].

use super::Scenario;
use crate::validate::{index, join, Problem, Problems};
use serde::Serialize;
use std::collections::BTreeMap;

/// The text of each data file, by the name the scenario gives it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScenarioData {
    files: BTreeMap<String, String>,
}

impl ScenarioData {
    /// No files.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the file called `name`.
    pub fn insert(&mut self, name: impl Into<String>, text: impl Into<String>) {
        self.files.insert(name.into(), text.into());
    }

    /// The text of the file called `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.files.get(name).map(String::as_str)
    }
}

impl<N: Into<String>, T: Into<String>> FromIterator<(N, T)> for ScenarioData {
    fn from_iter<I: IntoIterator<Item = (N, T)>>(iter: I) -> Self {
        let mut data = Self::new();
        for (n, t) in iter {
            data.insert(n, t);
        }
        data
    }
}

/// One data file a scenario needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RequiredFile {
    /// Field path naming it, e.g. `workload.stages[1].trace_file`.
    pub path: String,
    /// The file name as written there.
    pub file: String,
    /// `trace` or `sessions` (what the file must contain).
    pub kind: &'static str,
}

impl Scenario {
    /// Every data file the workload names, in stage order, as (field path, file name).
    pub fn required_files(&self) -> Vec<(String, String)> {
        self.required_data_files()
            .into_iter()
            .map(|f| (f.path, f.file))
            .collect()
    }

    /// As [`Scenario::required_files`], with what each file must contain.
    pub fn required_data_files(&self) -> Vec<RequiredFile> {
        let mut out = Vec::new();
        for (i, stage) in self.workload.stages.iter().enumerate() {
            let (field, kind) = match stage.type_name() {
                "Trace" => ("trace_file", "trace"),
                "Sessions" => ("sessions_file", "sessions"),
                _ => continue,
            };
            if let Some(file) = stage.data_file().filter(|f| !f.is_empty()) {
                out.push(RequiredFile {
                    path: join(&index("workload.stages", i), field),
                    file: file.to_string(),
                    kind,
                });
            }
        }
        out
    }

    /// Problems with the data files: missing ones, and the first malformed line of each
    /// given one (`workload.stages[1].trace_file: trace line 3: missing field "input_length"`).
    pub fn check_data(&self, data: &ScenarioData) -> Vec<Problem> {
        let mut p = Problems::new();
        for (i, stage) in self.workload.stages.iter().enumerate() {
            let Some(file) = stage.data_file().filter(|f| !f.is_empty()) else {
                continue;
            };
            let Some(text) = data.get(file) else {
                let field = if stage.type_name() == "Trace" {
                    "trace_file"
                } else {
                    "sessions_file"
                };
                p.push(
                    join(&index("workload.stages", i), field),
                    format!("the file \"{file}\" was not provided"),
                );
                continue;
            };
            // Building the generator parses the file and reports its first bad line.
            if let Err(problems) = stage.build(self.simulation.seed, i, Some(text)) {
                for problem in problems {
                    p.push(problem.path, problem.message);
                }
            }
        }
        p.into_vec()
    }

    /// Parses a document and checks it together with its data files: every problem at once.
    pub fn parse_with_data(text: &str, data: &ScenarioData) -> Result<Self, Vec<Problem>> {
        let scenario = Self::parse(text)?;
        let problems = scenario.check_data(data);
        if problems.is_empty() {
            Ok(scenario)
        } else {
            Err(problems)
        }
    }
}
