//! The data files a scenario names (trace and sessions JSONL), kept next to the document.
//!
//! A scenario names its files (`trace_file`, `sessions_file`); it never holds their text, so a
//! shared link stays short. The CLI reads them from disk, the app from a file picker or a
//! preset; both pass them in as a [`ScenarioData`].

use super::Scenario;
use crate::validate::{index, join, Problem, Problems};
use crate::workload::StageConfig;
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

/// The problem of stage `i`'s data file not being given.
pub(crate) fn missing_data_file(i: usize, stage: &StageConfig) -> Problem {
    Problem {
        path: join(&index("workload.stages", i), stage.data_field()),
        message: format!(
            "the file \"{}\" was not provided",
            stage.data_file().unwrap_or_default()
        ),
    }
}

/// What checking a scenario's data files found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DataReport {
    /// What stops the run, each at its field.
    pub problems: Vec<Problem>,
    /// What is odd but does not stop it: the document's at their fields (see
    /// [`Scenario::warnings`]), then each file's at the field naming it.
    pub warnings: Vec<Problem>,
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
            let kind = match stage.type_name() {
                "Trace" => "trace",
                "Sessions" => "sessions",
                _ => continue,
            };
            if let Some(file) = stage.data_file().filter(|f| !f.is_empty()) {
                out.push(RequiredFile {
                    path: join(&index("workload.stages", i), stage.data_field()),
                    file: file.to_string(),
                    kind,
                });
            }
        }
        out
    }

    /// What is odd about the document but does not stop a run, each at its field: a
    /// top-level `hardware.cost_per_gpu_hour` that does not price a pool on another GPU.
    pub fn warnings(&self) -> Vec<Problem> {
        self.deployment
            .as_ref()
            .map_or_else(Vec::new, |d| d.warnings("deployment", &self.hardware))
    }

    /// Problems with the data files: missing ones, the first malformed line of each given
    /// one (`workload.stages[1].trace_file: trace line 3: missing field "input_length"`), and
    /// any limit of the `simulation` section the files push the work past.
    pub fn check_data(&self, data: &ScenarioData) -> Vec<Problem> {
        self.inspect_data(data).problems
    }

    /// Everything [`check_data`](Self::check_data) finds, plus what is odd about the document
    /// or a file but does not stop the run (warnings: the document's at their fields, then
    /// each file's at the field naming it).
    pub fn inspect_data(&self, data: &ScenarioData) -> DataReport {
        let mut p = Problems::new();
        let mut warnings = self.warnings();
        let mut shapes = vec![None; self.workload.stages.len()];
        for (i, stage) in self.workload.stages.iter().enumerate() {
            let Some(file) = stage.data_file().filter(|f| !f.is_empty()) else {
                continue;
            };
            let field = join(&index("workload.stages", i), stage.data_field());
            let Some(text) = data.get(file) else {
                let missing = missing_data_file(i, stage);
                p.push(missing.path, missing.message);
                continue;
            };
            // Building the generator parses the file and reports its first bad line.
            match stage.build(self.simulation.seed, i, Some(text)) {
                Ok(generator) => {
                    shapes[i] = generator.data_shape();
                    if let Some(message) = generator.data_warning() {
                        warnings.push(Problem {
                            path: field,
                            message,
                        });
                    }
                }
                Err(problems) => {
                    for problem in problems {
                        p.push(problem.path, problem.message);
                    }
                }
            }
        }
        let mut problems = p.into_vec();
        // Limits the configuration alone exceeds are the document's problems, not the files'.
        if self.work_problems(&[]).is_empty() {
            problems.extend(self.work_problems(&shapes));
        }
        DataReport { problems, warnings }
    }
}
