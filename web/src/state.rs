//! The app's single state and its reducer: every change the UI makes is an [`Action`].
//!
//! Pure logic (no browser calls), so it is tested natively with `cargo test -p opal-web`.

use crate::json_path::{set_json_path, PathError};
use engine::api::Problem;
use engine::scenario::{Format, ImportReport};
use engine::simulation::SimulationResults;
use serde_json::Value;
use std::collections::BTreeMap;
use std::rc::Rc;
use yew::Reducible;

/// The engine's results for one finished run, shared without copying.
///
/// Equality is identity: two runs' results are "equal" only when they are the same run, so
/// Yew's prop comparisons stay O(1) however many requests a run had.
#[derive(Debug, Clone)]
pub struct EngineResults(pub Rc<SimulationResults>);

impl EngineResults {
    /// Wraps freshly computed results.
    pub fn new(results: SimulationResults) -> Self {
        Self(Rc::new(results))
    }
}

impl PartialEq for EngineResults {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl std::ops::Deref for EngineResults {
    type Target = SimulationResults;
    fn deref(&self) -> &SimulationResults {
        &self.0
    }
}

/// Most notices kept on screen; older ones drop off first.
pub const MAX_NOTICES: usize = 5;
/// Talk-mode playback speeds, in simulated seconds per wall-clock second.
pub const TALK_SPEEDS: [f64; 9] = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0];

/// Where the JSON text fails to parse, 1-based like an editor's status bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Line, from 1.
    pub line: usize,
    /// Column in characters, from 1.
    pub column: usize,
    /// What the parser expected.
    pub message: String,
    /// The text ended too early (the fix goes at the end, not at line/column).
    pub at_end: bool,
}

/// The scenario as the user wrote it (the source of truth) and what is known about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// The JSON text exactly as typed, even when it does not parse.
    pub text: Rc<str>,
    /// The parsed document, when the text is JSON; forms read from it.
    pub document: Option<Rc<Value>>,
    /// The engine's validation of the text.
    pub problems: Rc<Vec<Problem>>,
    /// Where the text stops being JSON, if it does.
    pub parse_error: Option<ParseError>,
}

impl Scenario {
    /// Parses and validates `text`, keeping it verbatim.
    pub fn new(text: impl Into<Rc<str>>) -> Self {
        let text: Rc<str> = text.into();
        let (document, parse_error) = match serde_json::from_str::<Value>(&text) {
            Ok(v) => (Some(Rc::new(v)), None),
            Err(e) => (
                None,
                Some(ParseError {
                    line: e.line(),
                    column: e.column(),
                    message: parse_message(&e),
                    at_end: e.is_eof(),
                }),
            ),
        };
        let problems = Rc::new(engine::api::check_scenario(&text));
        Self {
            text,
            document,
            problems,
            parse_error,
        }
    }

    /// The first problem the engine reports at exactly `path`, for a field's inline error.
    pub fn problem_at(&self, path: &str) -> Option<&str> {
        self.problems
            .iter()
            .find(|p| p.path == path)
            .map(|p| p.message.as_str())
    }

    /// Whether the engine accepts the scenario as it stands.
    pub fn is_runnable(&self) -> bool {
        self.problems.is_empty()
    }
}

/// serde_json's message without its trailing " at line L column C" (we show those separately).
fn parse_message(e: &serde_json::Error) -> String {
    let full = e.to_string();
    match full.rfind(" at line ") {
        Some(i) => full[..i].to_string(),
        None => full,
    }
}

/// How far a run has got.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Progress {
    /// Fraction of the planned simulation done, 0 to 1; `None` when the engine cannot tell
    /// (no time bound and an open-ended workload), shown as an indeterminate bar.
    pub fraction: Option<f64>,
    /// Simulated time reached, seconds.
    pub sim_time_s: f64,
    /// Requests issued so far.
    pub requests_issued: u64,
    /// Requests completed or failed so far.
    pub requests_done: u64,
}

impl From<engine::simulation::Progress> for Progress {
    fn from(p: engine::simulation::Progress) -> Self {
        Self {
            fraction: p.fraction,
            sim_time_s: p.now,
            requests_issued: p.requests_issued,
            requests_done: p.requests_finished,
        }
    }
}

/// The state of the current (or last) run. Runs are numbered so that slices of an old run
/// arriving after Stop or a new Run are ignored.
#[derive(Debug, Clone, PartialEq)]
pub enum RunStatus {
    /// Nothing run yet.
    Idle,
    /// Running in slices.
    Running {
        id: u64,
        scenario: Rc<str>,
        progress: Progress,
    },
    /// Ran to the end, or was stopped and its results so far collected (`stopped`).
    Finished {
        id: u64,
        scenario: Rc<str>,
        sim_end_s: f64,
        results: EngineResults,
        stopped: bool,
    },
    /// Stopped by the user; its results so far are being collected.
    Stopped {
        id: u64,
        scenario: Rc<str>,
        progress: Progress,
    },
    /// The engine refused or failed.
    Failed { id: u64, message: String },
}

impl RunStatus {
    /// Whether a run is in progress.
    pub fn is_running(&self) -> bool {
        matches!(self, Self::Running { .. })
    }
}

/// A finished run kept aside to compare the next one against.
#[derive(Debug, Clone, PartialEq)]
pub struct PinnedRun {
    /// Which run it was.
    pub id: u64,
    /// The scenario it ran.
    pub scenario: Rc<str>,
    /// Its results.
    pub results: EngineResults,
}

/// What the main area shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum View {
    /// Forms and JSON, with results beside them.
    #[default]
    Editor,
    /// Results, full width.
    Results,
    /// The pinned run against the current one.
    Compare,
    /// Large type and playback of simulated time, for presenting.
    Talk,
}

/// How loud a notice is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Something happened as asked.
    Info,
    /// Something was not as expected but nothing was lost.
    Warning,
    /// Something the user asked for failed.
    Error,
}

/// A dismissable message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// Stable id, for dismissing.
    pub id: u64,
    /// How loud.
    pub level: Level,
    /// What to tell the user.
    pub message: String,
}

/// Talk-mode playback of simulated time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TalkState {
    /// Whether playback advances.
    pub playing: bool,
    /// Simulated seconds per wall-clock second; one of [`TALK_SPEEDS`].
    pub speed: f64,
    /// Simulated time shown, seconds.
    pub position_s: f64,
}

impl Default for TalkState {
    fn default() -> Self {
        Self {
            playing: false,
            speed: 1.0,
            position_s: 0.0,
        }
    }
}

/// Colour theme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Theme {
    /// Follow the system's `prefers-color-scheme`.
    #[default]
    System,
    /// Always light.
    Light,
    /// Always dark.
    Dark,
}

impl Theme {
    /// The next theme of the toggle: system → light → dark → system.
    pub fn next(self) -> Self {
        match self {
            Self::System => Self::Light,
            Self::Light => Self::Dark,
            Self::Dark => Self::System,
        }
    }

    /// Its name, for the button label and the CSS class.
    pub fn name(self) -> &'static str {
        match self {
            Self::System => "system",
            Self::Light => "light",
            Self::Dark => "dark",
        }
    }
}

/// Everything the app knows.
#[derive(Debug, Clone, PartialEq)]
pub struct AppState {
    /// The scenario being edited.
    pub scenario: Scenario,
    /// The current or last run.
    pub run: RunStatus,
    /// A run kept for comparison.
    pub pinned: Option<PinnedRun>,
    /// What the main area shows.
    pub view: View,
    /// The view to return to when talk mode ends.
    pub view_before_talk: View,
    /// Messages on screen, oldest first.
    pub notices: Vec<Notice>,
    /// Talk-mode playback.
    pub talk: TalkState,
    /// Colour theme.
    pub theme: Theme,
    /// Whether the keyboard-shortcut help is open.
    pub help_open: bool,
    /// The last share link made, shown so it can be copied by hand.
    pub share_link: Option<String>,
    // ---- editor: data files ----
    /// Trace and sessions files picked in this tab, by file name (what a stage's
    /// `trace_file` / `sessions_file` names). Kept out of the scenario and its share link.
    pub data_files: Rc<BTreeMap<String, Rc<str>>>,
    /// What the last import of an original Opal config did with its keys, and the file's
    /// name; shown until dismissed.
    pub import_report: Option<Rc<(String, ImportReport)>>,
    // ---- end editor ----
    last_run_id: u64,
    last_notice_id: u64,
}

/// Every change the UI can make.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// The JSON text was edited directly.
    EditScenario(String),
    /// A form field set the value at a field path.
    SetField { path: String, value: Value },
    /// A whole scenario arrived from a file or a link; `source` names it for the notice.
    LoadScenario { text: String, source: String },
    /// A share link's scenario: open it and, when it loads and validates, run it.
    OpenLink(String),
    /// Start running the current scenario.
    Run,
    /// A slice of run `id` finished.
    RunProgress { id: u64, progress: Progress },
    /// Run `id` reached its end.
    RunFinished {
        id: u64,
        sim_end_s: f64,
        results: EngineResults,
    },
    /// Run `id`, stopped by the user, reached these results.
    RunStopped { id: u64, results: EngineResults },
    /// Run `id` failed.
    RunFailed { id: u64, message: String },
    /// Stop the current run.
    Stop,
    /// Keep the finished run for comparison.
    PinRun,
    /// Drop the pinned run.
    Unpin,
    /// Show a view.
    ShowView(View),
    /// Enter or leave talk mode.
    ToggleTalk,
    /// Tell the user something.
    Notify { level: Level, message: String },
    /// Remove a notice.
    Dismiss(u64),
    /// Start or pause playback.
    TalkPlayPause,
    /// Next faster playback speed.
    TalkFaster,
    /// Next slower playback speed.
    TalkSlower,
    /// Jump to a simulated time.
    TalkSeek(f64),
    /// Wall-clock time passed during playback; playback stops at `end_s`.
    TalkTick { wall_dt_s: f64, end_s: f64 },
    /// Open or close the shortcut help.
    ToggleHelp,
    /// Close whatever overlay is open (Esc).
    CloseOverlays,
    /// Next colour theme.
    CycleTheme,
    /// Show (or hide) a freshly made share link.
    ShowShareLink(Option<String>),
    // ---- editor: data files ----
    /// Keep the text of a picked data file under its name (replacing one of the same name).
    SetDataFile { name: String, text: Rc<str> },
    /// Forget a picked data file.
    RemoveDataFile(String),
    /// Replace the scenario with the built-in preset `id`, and its data files.
    LoadPreset(String),
    /// A file given to Import: our scenario format, or an original Opal config to convert.
    ImportFile { text: String, source: String },
    /// Close the import report.
    DismissImportReport,
    // ---- end editor ----
}

impl AppState {
    /// A fresh app editing `scenario_text`.
    pub fn new(scenario_text: &str) -> Self {
        Self {
            scenario: Scenario::new(scenario_text),
            run: RunStatus::Idle,
            pinned: None,
            view: View::Editor,
            view_before_talk: View::Editor,
            notices: Vec::new(),
            talk: TalkState::default(),
            theme: Theme::System,
            help_open: false,
            share_link: None,
            data_files: Rc::default(),
            import_report: None,
            last_run_id: 0,
            last_notice_id: 0,
        }
    }

    /// Results of run `id` arrived: kept only while `id` is still the run they belong to
    /// (running, or stopped by the user when `stopped`), so a late slice of an older run
    /// never overwrites a newer one.
    fn finish_run(&mut self, id: u64, sim_end_s: f64, results: EngineResults, stopped: bool) {
        let scenario = match &self.run {
            RunStatus::Running {
                id: current,
                scenario,
                ..
            } if !stopped && *current == id => scenario.clone(),
            RunStatus::Stopped {
                id: current,
                scenario,
                ..
            } if stopped && *current == id => scenario.clone(),
            _ => return,
        };
        self.run = RunStatus::Finished {
            id,
            scenario,
            sim_end_s,
            results,
            stopped,
        };
        self.talk.position_s = self.talk.position_s.min(sim_end_s);
    }

    /// Applies one action.
    pub fn apply(&mut self, action: Action) {
        match action {
            Action::EditScenario(text) => self.scenario = Scenario::new(text),
            Action::SetField { path, value } => self.set_field(&path, value),
            Action::LoadScenario { text, source } => self.load(text, &source),
            Action::OpenLink(text) => {
                let opened: Rc<str> = Rc::from(text.as_str());
                self.load(text, "the link");
                if self.scenario.text == opened && self.scenario.is_runnable() {
                    self.start_run();
                }
            }
            Action::Run => self.start_run(),
            Action::RunProgress { id, progress } => {
                if let RunStatus::Running {
                    id: current,
                    progress: p,
                    ..
                } = &mut self.run
                {
                    if *current == id {
                        *p = progress;
                    }
                }
            }
            Action::RunFinished {
                id,
                sim_end_s,
                results,
            } => self.finish_run(id, sim_end_s, results, false),
            Action::RunFailed { id, message } => {
                if matches!(self.run, RunStatus::Running { id: current, .. } if current == id) {
                    self.run = RunStatus::Failed { id, message };
                }
            }
            Action::Stop => {
                if let RunStatus::Running {
                    id,
                    scenario,
                    progress,
                } = &self.run
                {
                    self.run = RunStatus::Stopped {
                        id: *id,
                        scenario: scenario.clone(),
                        progress: *progress,
                    };
                }
            }
            Action::RunStopped { id, results } => {
                let end = results.end_time;
                self.finish_run(id, end, results, true)
            }
            Action::PinRun => match &self.run {
                RunStatus::Finished {
                    id,
                    scenario,
                    results,
                    ..
                } => {
                    self.pinned = Some(PinnedRun {
                        id: *id,
                        scenario: scenario.clone(),
                        results: results.clone(),
                    })
                }
                _ => self.notify(
                    Level::Warning,
                    "Only a finished run can be kept for comparison.",
                ),
            },
            Action::Unpin => {
                self.pinned = None;
                if self.view == View::Compare {
                    self.view = View::Results;
                }
            }
            Action::ShowView(view) => self.show(view),
            Action::ToggleTalk => {
                if self.view == View::Talk {
                    self.view = self.view_before_talk;
                    self.talk.playing = false;
                } else {
                    self.show(View::Talk);
                }
            }
            Action::Notify { level, message } => self.notify(level, message),
            Action::Dismiss(id) => self.notices.retain(|n| n.id != id),
            Action::TalkPlayPause => self.talk.playing = !self.talk.playing,
            Action::TalkFaster => self.talk.speed = step_speed(self.talk.speed, 1),
            Action::TalkSlower => self.talk.speed = step_speed(self.talk.speed, -1),
            Action::TalkSeek(t) => {
                if t.is_finite() {
                    self.talk.position_s = t.max(0.0);
                }
            }
            Action::TalkTick { wall_dt_s, end_s } => {
                if self.talk.playing && wall_dt_s.is_finite() && wall_dt_s > 0.0 {
                    let next = self.talk.position_s + wall_dt_s * self.talk.speed;
                    if next >= end_s {
                        self.talk.position_s = end_s.max(0.0);
                        self.talk.playing = false;
                    } else {
                        self.talk.position_s = next;
                    }
                }
            }
            Action::ToggleHelp => self.help_open = !self.help_open,
            Action::CloseOverlays => {
                self.help_open = false;
                self.share_link = None;
            }
            Action::CycleTheme => self.theme = self.theme.next(),
            Action::ShowShareLink(link) => self.share_link = link,
            Action::SetDataFile { name, text } => {
                Rc::make_mut(&mut self.data_files).insert(name, text);
            }
            Action::RemoveDataFile(name) => {
                Rc::make_mut(&mut self.data_files).remove(&name);
            }
            Action::LoadPreset(id) => self.load_preset(&id),
            Action::ImportFile { text, source } => self.import(text, &source),
            Action::DismissImportReport => self.import_report = None,
        }
    }

    fn show(&mut self, view: View) {
        if view == View::Talk && self.view != View::Talk {
            self.view_before_talk = self.view;
        }
        if view != View::Talk {
            self.talk.playing = false;
        }
        self.view = view;
    }

    fn set_field(&mut self, path: &str, value: Value) {
        let Some(doc) = &self.scenario.document else {
            self.notify(
                Level::Warning,
                "The JSON has an error; fix it there before using the form.",
            );
            return;
        };
        let mut doc = (**doc).clone();
        match set_json_path(&mut doc, path, value) {
            Ok(()) => self.scenario = Scenario::new(pretty(&doc)),
            Err(e) => self.notify(Level::Error, field_error(path, &e)),
        }
    }

    fn load(&mut self, text: String, source: &str) {
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(_)) => {
                self.scenario = Scenario::new(text);
                self.notify(Level::Info, format!("Opened the scenario from {source}."));
            }
            Ok(_) => self.notify(
                Level::Error,
                format!("{source} is JSON but not a scenario (not an object); your scenario is unchanged."),
            ),
            Err(e) => self.notify(
                Level::Error,
                format!("{source} is not valid JSON ({e}); your scenario is unchanged."),
            ),
        }
    }

    // ---- editor: presets and import ----
    fn load_preset(&mut self, id: &str) {
        let Some(preset) = engine::scenario::preset(id) else {
            self.notify(Level::Error, format!("There is no preset called {id}."));
            return;
        };
        let files = Rc::make_mut(&mut self.data_files);
        for (name, text) in preset.files {
            files.insert((*name).to_string(), Rc::from(*text));
        }
        if preset.is_opal() {
            self.import(
                preset.json.to_string(),
                &format!("preset \"{}\"", preset.title),
            );
        } else {
            self.scenario = Scenario::new(preset.json);
            self.import_report = None;
            self.notify(Level::Info, format!("Loaded preset \"{}\".", preset.title));
        }
    }

    fn import(&mut self, text: String, source: &str) {
        if engine::scenario::detect_format(&text) != Format::Opal {
            return self.load(text, source);
        }
        match engine::scenario::import_opal(&text) {
            Ok((scenario, report)) => {
                self.scenario = Scenario::new(scenario.to_json_pretty() + "\n");
                self.notify(
                    Level::Info,
                    format!(
                        "Converted {source} from the original Opal format: {} keys mapped, {} ignored (see the report).",
                        report.mapped.len(),
                        report.ignored.len()
                    ),
                );
                self.import_report = Some(Rc::new((source.to_string(), report)));
            }
            Err(problems) => {
                let list: Vec<String> = problems.iter().take(3).map(|p| p.to_string()).collect();
                self.notify(
                    Level::Error,
                    format!(
                        "{source} looks like an original Opal config but could not be converted: {}; your scenario is unchanged.",
                        list.join("; ")
                    ),
                );
            }
        }
    }
    // ---- end editor ----

    fn start_run(&mut self) {
        if self.run.is_running() {
            return;
        }
        if !self.scenario.is_runnable() {
            let n = self.scenario.problems.len();
            let s = if n == 1 { "" } else { "s" };
            self.notify(
                Level::Error,
                format!("Fix {n} problem{s} in the scenario before running."),
            );
            return;
        }
        self.last_run_id += 1;
        self.run = RunStatus::Running {
            id: self.last_run_id,
            scenario: self.scenario.text.clone(),
            progress: Progress::default(),
        };
        self.talk.position_s = 0.0;
    }

    fn notify(&mut self, level: Level, message: impl Into<String>) {
        let message = message.into();
        // The same message twice (e.g. a key held down) shows once, as the newest.
        self.notices.retain(|n| n.message != message);
        self.last_notice_id += 1;
        self.notices.push(Notice {
            id: self.last_notice_id,
            level,
            message,
        });
        if self.notices.len() > MAX_NOTICES {
            self.notices.remove(0);
        }
    }
}

impl Reducible for AppState {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let mut next = (*self).clone();
        next.apply(action);
        Rc::new(next)
    }
}

/// The scenario as the editor shows it after a form edit: pretty, ending in a newline.
fn pretty(doc: &Value) -> String {
    let mut text = serde_json::to_string_pretty(doc).unwrap_or_else(|_| doc.to_string());
    text.push('\n');
    text
}

fn field_error(path: &str, e: &PathError) -> String {
    format!("Could not set {path}: {e}.")
}

/// The speed `steps` places along [`TALK_SPEEDS`] from `speed`, stopping at either end.
fn step_speed(speed: f64, steps: isize) -> f64 {
    let here = TALK_SPEEDS
        .iter()
        .position(|&s| s >= speed)
        .unwrap_or(TALK_SPEEDS.len() - 1) as isize;
    let to = (here + steps).clamp(0, TALK_SPEEDS.len() as isize - 1);
    TALK_SPEEDS[to as usize]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const VALID: &str = "{\n  \"simulation\": { \"seed\": 42 }\n}\n";

    fn state() -> AppState {
        AppState::new(VALID)
    }

    fn running_id(s: &AppState) -> u64 {
        match s.run {
            RunStatus::Running { id, .. } => id,
            ref other => panic!("not running: {other:?}"),
        }
    }

    /// Results of a real (tiny) run: 2 requests on one worker.
    fn tiny_results() -> EngineResults {
        let scenario = engine::scenario::Scenario::parse(
            r#"{"workload": {"stages": [{"type": "UniformReqRate", "request_rate": 1, "total_requests": 2}]}}"#,
        )
        .unwrap();
        let mut sim = engine::simulation::Simulation::new(&scenario, &Default::default()).unwrap();
        sim.run();
        EngineResults::new(sim.results())
    }

    fn finish(s: &mut AppState, end: f64) -> EngineResults {
        let id = running_id(s);
        let results = tiny_results();
        s.apply(Action::RunFinished {
            id,
            sim_end_s: end,
            results: results.clone(),
        });
        results
    }

    #[test]
    fn typed_text_is_kept_even_when_it_is_not_json() {
        let mut s = state();
        s.apply(Action::EditScenario("{\n  \"simulation\": ".into()));
        assert_eq!(&*s.scenario.text, "{\n  \"simulation\": ");
        assert!(s.scenario.document.is_none());
        let e = s.scenario.parse_error.clone().unwrap();
        // The text ends after the space on line 2: "  \"simulation\": " is 16 characters.
        assert_eq!((e.line, e.column), (2, 16));
        assert!(!e.message.contains(" at line "), "{}", e.message);
        assert!(e.at_end);
        assert!(!s.scenario.is_runnable());
    }

    #[test]
    fn form_edits_rewrite_the_json_text() {
        let mut s = state();
        s.apply(Action::SetField {
            path: "simulation.seed".into(),
            value: json!(7),
        });
        assert_eq!(
            &*s.scenario.text,
            "{\n  \"simulation\": {\n    \"seed\": 7\n  }\n}\n"
        );
        assert_eq!(
            s.scenario.document.as_deref(),
            Some(&json!({ "simulation": { "seed": 7 } }))
        );
    }

    #[test]
    fn form_edits_wait_for_the_json_to_parse() {
        let mut s = state();
        s.apply(Action::EditScenario("{ broken".into()));
        s.apply(Action::SetField {
            path: "simulation.seed".into(),
            value: json!(7),
        });
        assert_eq!(&*s.scenario.text, "{ broken", "what was typed survives");
        assert_eq!(s.notices.len(), 1);
        assert_eq!(s.notices[0].level, Level::Warning);
    }

    #[test]
    fn a_bad_field_path_is_reported_not_applied() {
        let mut s = state();
        s.apply(Action::SetField {
            path: "simulation.seed.x".into(),
            value: json!(1),
        });
        assert_eq!(&*s.scenario.text, VALID);
        assert_eq!(
            s.notices[0].message,
            "Could not set simulation.seed.x: 'simulation.seed' is not an object."
        );
    }

    #[test]
    fn loading_broken_json_keeps_the_scenario() {
        let mut s = state();
        s.apply(Action::LoadScenario {
            text: "{ nope".into(),
            source: "bad.json".into(),
        });
        assert_eq!(&*s.scenario.text, VALID);
        assert!(s.notices[0]
            .message
            .starts_with("bad.json is not valid JSON"));
        s.apply(Action::LoadScenario {
            text: "[1, 2]".into(),
            source: "list.json".into(),
        });
        assert_eq!(&*s.scenario.text, VALID);
        s.apply(Action::LoadScenario {
            text: "{\"simulation\":{\"seed\":1}}".into(),
            source: "good.json".into(),
        });
        assert_eq!(&*s.scenario.text, "{\"simulation\":{\"seed\":1}}");
        assert_eq!(
            s.notices.last().unwrap().message,
            "Opened the scenario from good.json."
        );
    }

    #[test]
    fn runs_are_numbered_and_progress_updates_the_current_one() {
        let mut s = state();
        s.apply(Action::Run);
        assert_eq!(running_id(&s), 1);
        let p = Progress {
            fraction: Some(0.25),
            sim_time_s: 30.0,
            requests_issued: 130,
            requests_done: 120,
        };
        s.apply(Action::RunProgress { id: 1, progress: p });
        assert!(matches!(s.run, RunStatus::Running { progress, .. } if progress == p));
        finish(&mut s, 120.0);
        assert!(
            matches!(s.run, RunStatus::Finished { id: 1, sim_end_s, .. } if sim_end_s == 120.0)
        );
        s.apply(Action::Run);
        assert_eq!(running_id(&s), 2);
    }

    #[test]
    fn a_link_runs_its_scenario_only_when_it_loads_and_validates() {
        let mut s = state();
        s.apply(Action::OpenLink("{ broken".into()));
        assert_eq!(
            s.run,
            RunStatus::Idle,
            "the old scenario is not run instead"
        );
        s.apply(Action::OpenLink(
            "{\"worker\": {\"max_num_seqs\": \"many\"}}".into(),
        ));
        assert_eq!(
            s.run,
            RunStatus::Idle,
            "an invalid scenario opens but does not run"
        );
        s.apply(Action::OpenLink("{\"simulation\": {\"seed\": 9}}".into()));
        assert_eq!(running_id(&s), 1);
        assert_eq!(&*s.scenario.text, "{\"simulation\": {\"seed\": 9}}");
    }

    #[test]
    fn run_is_refused_while_the_scenario_has_problems() {
        let mut s = state();
        s.apply(Action::EditScenario("[]".into()));
        s.apply(Action::Run);
        assert_eq!(s.run, RunStatus::Idle);
        assert_eq!(
            s.notices[0].message,
            "Fix 1 problem in the scenario before running."
        );
    }

    #[test]
    fn stop_keeps_progress_and_late_slices_are_ignored() {
        let mut s = state();
        s.apply(Action::Run);
        let p = Progress {
            fraction: None,
            sim_time_s: 60.0,
            requests_issued: 310,
            requests_done: 300,
        };
        s.apply(Action::RunProgress { id: 1, progress: p });
        s.apply(Action::Stop);
        assert!(matches!(s.run, RunStatus::Stopped { id: 1, progress, .. } if progress == p));
        // A slice already queued when Stop was pressed must not revive the run.
        s.apply(Action::RunProgress {
            id: 1,
            progress: Progress::default(),
        });
        s.apply(Action::RunFinished {
            id: 1,
            sim_end_s: 1.0,
            results: tiny_results(),
        });
        assert!(matches!(s.run, RunStatus::Stopped { id: 1, progress, .. } if progress == p));
        // The results it reached replace the progress; stale ones of another run do not.
        s.apply(Action::RunStopped {
            id: 2,
            results: tiny_results(),
        });
        assert!(matches!(s.run, RunStatus::Stopped { .. }));
        s.apply(Action::RunStopped {
            id: 1,
            results: tiny_results(),
        });
        assert!(matches!(
            s.run,
            RunStatus::Finished {
                id: 1,
                stopped: true,
                ..
            }
        ));
    }

    #[test]
    fn results_of_an_older_run_do_not_overwrite_a_newer_one() {
        let mut s = state();
        s.apply(Action::Run);
        s.apply(Action::Stop);
        s.apply(Action::Run);
        s.apply(Action::RunFailed {
            id: 1,
            message: "old".into(),
        });
        assert_eq!(running_id(&s), 2);
        s.apply(Action::RunFailed {
            id: 2,
            message: "engine said no".into(),
        });
        assert_eq!(
            s.run,
            RunStatus::Failed {
                id: 2,
                message: "engine said no".into()
            }
        );
    }

    #[test]
    fn a_finished_run_can_be_pinned_and_survives_the_next_run() {
        let mut s = state();
        s.apply(Action::PinRun);
        assert!(s.pinned.is_none());
        assert_eq!(s.notices.len(), 1, "pinning nothing says why");
        s.apply(Action::Run);
        let first = finish(&mut s, 10.0);
        s.apply(Action::PinRun);
        s.apply(Action::ShowView(View::Compare));
        s.apply(Action::Run);
        finish(&mut s, 12.0);
        let pinned = s.pinned.clone().unwrap();
        assert_eq!(pinned.id, 1);
        assert_eq!(
            pinned.results, first,
            "the pinned run is the first run's results"
        );
        assert_eq!(pinned.results.requests.len(), 2);
        s.apply(Action::Unpin);
        assert!(s.pinned.is_none());
        assert_eq!(s.view, View::Results, "nothing left to compare");
    }

    #[test]
    fn notices_are_deduplicated_capped_and_dismissable() {
        let mut s = state();
        for i in 0..7 {
            s.apply(Action::Notify {
                level: Level::Info,
                message: format!("n{i}"),
            });
        }
        let texts: Vec<_> = s.notices.iter().map(|n| n.message.as_str()).collect();
        assert_eq!(texts, ["n2", "n3", "n4", "n5", "n6"]);
        s.apply(Action::Notify {
            level: Level::Info,
            message: "n3".into(),
        });
        let texts: Vec<_> = s.notices.iter().map(|n| n.message.as_str()).collect();
        assert_eq!(texts, ["n2", "n4", "n5", "n6", "n3"]);
        let id = s.notices[0].id;
        s.apply(Action::Dismiss(id));
        assert_eq!(s.notices.len(), 4);
        assert!(s.notices.iter().all(|n| n.id != id));
    }

    #[test]
    fn talk_mode_returns_to_the_previous_view_and_pauses() {
        let mut s = state();
        s.apply(Action::ShowView(View::Results));
        s.apply(Action::ToggleTalk);
        assert_eq!(s.view, View::Talk);
        s.apply(Action::TalkPlayPause);
        assert!(s.talk.playing);
        s.apply(Action::ToggleTalk);
        assert_eq!(s.view, View::Results);
        assert!(!s.talk.playing);
    }

    #[test]
    fn playback_advances_at_speed_and_stops_at_the_end() {
        let mut s = state();
        s.apply(Action::TalkTick {
            wall_dt_s: 1.0,
            end_s: 100.0,
        });
        assert_eq!(s.talk.position_s, 0.0, "paused playback does not move");
        s.apply(Action::TalkPlayPause);
        s.apply(Action::TalkFaster); // 1 -> 2
        s.apply(Action::TalkFaster); // 2 -> 4
        assert_eq!(s.talk.speed, 4.0);
        // 0.5 s of wall time at 4x = 2 simulated seconds.
        s.apply(Action::TalkTick {
            wall_dt_s: 0.5,
            end_s: 100.0,
        });
        assert_eq!(s.talk.position_s, 2.0);
        s.apply(Action::TalkSeek(99.0));
        // 99 + 1 s x 4 = 103 > 100: clamp to the end and pause.
        s.apply(Action::TalkTick {
            wall_dt_s: 1.0,
            end_s: 100.0,
        });
        assert_eq!(s.talk.position_s, 100.0);
        assert!(!s.talk.playing);
    }

    #[test]
    fn playback_speed_and_seek_stay_in_bounds() {
        let mut s = state();
        for _ in 0..20 {
            s.apply(Action::TalkSlower);
        }
        assert_eq!(s.talk.speed, 0.25);
        for _ in 0..20 {
            s.apply(Action::TalkFaster);
        }
        assert_eq!(s.talk.speed, 64.0);
        s.apply(Action::TalkSeek(-5.0));
        assert_eq!(s.talk.position_s, 0.0);
        s.apply(Action::TalkSeek(f64::NAN));
        assert_eq!(s.talk.position_s, 0.0);
    }

    #[test]
    fn theme_cycles_and_escape_closes_overlays() {
        let mut s = state();
        let names: Vec<_> = (0..4)
            .map(|_| {
                s.apply(Action::CycleTheme);
                s.theme.name()
            })
            .collect();
        assert_eq!(names, ["light", "dark", "system", "light"]);
        s.apply(Action::ToggleHelp);
        s.apply(Action::ShowShareLink(Some("http://x/#s=v1.a".into())));
        s.apply(Action::CloseOverlays);
        assert!(!s.help_open);
        assert!(s.share_link.is_none());
    }

    #[test]
    fn data_files_are_kept_by_name_and_outside_the_scenario() {
        let mut s = state();
        s.apply(Action::SetDataFile {
            name: "t.jsonl".into(),
            text: Rc::from("{}\n"),
        });
        s.apply(Action::SetDataFile {
            name: "t.jsonl".into(),
            text: Rc::from("{}\n{}\n"),
        });
        assert_eq!(
            s.data_files.len(),
            1,
            "a file of the same name replaces the old one"
        );
        assert_eq!(s.data_files["t.jsonl"].as_ref(), "{}\n{}\n");
        assert_eq!(&*s.scenario.text, VALID, "the scenario does not carry data");
        s.apply(Action::RemoveDataFile("t.jsonl".into()));
        assert!(s.data_files.is_empty());
    }

    #[test]
    fn a_preset_loads_its_scenario_and_its_data_files() {
        let mut s = state();
        s.apply(Action::LoadPreset("trace_replay".into()));
        let preset = engine::scenario::preset("trace_replay").unwrap();
        assert_eq!(&*s.scenario.text, preset.json);
        assert!(s.scenario.is_runnable(), "{:?}", s.scenario.problems);
        assert!(s.data_files.contains_key("traces/mooncake_small.jsonl"));
        assert_eq!(
            s.notices.last().unwrap().message,
            format!("Loaded preset \"{}\".", preset.title)
        );
        s.apply(Action::LoadPreset("nope".into()));
        assert_eq!(
            &*s.scenario.text, preset.json,
            "an unknown preset changes nothing"
        );
    }

    #[test]
    fn an_opal_config_is_converted_and_reported() {
        let mut s = state();
        let opal = engine::scenario::preset("opal_defaults").unwrap().json;
        s.apply(Action::ImportFile {
            text: opal.into(),
            source: "defaults.json".into(),
        });
        let (source, report) = &**s.import_report.as_ref().unwrap();
        assert_eq!(source, "defaults.json");
        assert!(!report.mapped.is_empty());
        assert_eq!(
            engine::scenario::detect_format(&s.scenario.text),
            Format::Ours,
            "the editor now holds our format"
        );
        s.apply(Action::DismissImportReport);
        assert!(s.import_report.is_none());
        // The browser test's fixture: vllm_params.max_num_seqs 128 lands in worker.max_num_seqs.
        s.apply(Action::ImportFile {
            text: include_str!("../../tests/browser/fixtures/opal_small.json").into(),
            source: "opal_small.json".into(),
        });
        let (_, report) = &**s.import_report.as_ref().unwrap();
        assert_eq!(
            report
                .mapping("worker.vllm_params.max_num_seqs")
                .map(|m| m.to.as_str()),
            Some("worker.max_num_seqs")
        );
        let doc = s.scenario.document.as_deref().unwrap();
        assert_eq!(doc["worker"]["max_num_seqs"], 128);
        assert!(s.scenario.is_runnable(), "{:?}", s.scenario.problems);
        s.apply(Action::DismissImportReport);
        // Our own format goes through the ordinary load.
        s.apply(Action::ImportFile {
            text: VALID.into(),
            source: "ours.json".into(),
        });
        assert_eq!(&*s.scenario.text, VALID);
        assert!(s.import_report.is_none());
    }

    #[test]
    fn field_problems_are_found_by_path() {
        let mut s = state();
        s.scenario.problems = Rc::new(vec![Problem {
            path: "workload.stages[1].request_rate".into(),
            message: "must be > 0".into(),
        }]);
        assert_eq!(
            s.scenario.problem_at("workload.stages[1].request_rate"),
            Some("must be > 0")
        );
        assert_eq!(
            s.scenario.problem_at("workload.stages[0].request_rate"),
            None
        );
    }
}
