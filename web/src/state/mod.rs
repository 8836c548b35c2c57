//! The app's single state and its reducer: every change the UI makes is an [`Action`].
//!
//! Pure logic (no browser calls), so it is tested natively with `cargo test -p opal-web`.

use crate::json_path::{set_json_path, PathError};
use opal::document::{Format, ImportReport};
use serde_json::Value;
use std::collections::BTreeMap;
use std::rc::Rc;
use yew::Reducible;

mod race;
mod run;
mod scenario_doc;
mod talk;
mod view;

/// The data files picked in the tab: (name, text) by name.
pub type DataFiles = crate::sorted_map::SortedMap<String, Rc<str>>;
pub use race::{Lane, LaneStatus, RaceRun};
pub use run::{EngineResults, PinnedRun, Progress, RunStatus};
pub use scenario_doc::{ParseError, Scenario};
use talk::step_speed;
pub use talk::{TalkState, TALK_SPEEDS};
pub use view::{EmbedView, Level, Notice, Pane, Theme, View};

/// Most notices kept on screen; older ones drop off first.
pub const MAX_NOTICES: usize = 5;
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
    /// Messages on screen, oldest first.
    pub notices: Vec<Notice>,
    /// Talk-mode playback.
    pub talk: TalkState,
    /// Colour theme.
    pub theme: Theme,
    /// Whether the keyboard-shortcut help is open.
    pub help_open: bool,
    /// The pane a narrow screen shows.
    pub pane: Pane,
    /// The last share link made, shown so it can be copied by hand.
    pub share_link: Option<String>,
    /// The race being run or played back (the race view shows it).
    pub race: Option<RaceRun>,
    /// The page is an embed (a share link's `&embed`): one view of the run, or its race,
    /// alone, for an iframe; the editor and the views that lead to it stay away.
    pub embed: Option<EmbedView>,
    // ---- editor: data files ----
    /// Trace and sessions files picked in this tab, by file name (what a stage's
    /// `trace_file` / `sessions_file` names). Kept out of the scenario and its share link.
    pub data_files: Rc<DataFiles>,
    /// What the last import of an original Opal config did with its keys, and the file's
    /// name; shown until dismissed.
    pub import_report: Option<Rc<(String, ImportReport)>>,
    /// Form fields showing what was typed where it is not a valid value, by field path: their
    /// label and what is wrong. The document still holds the last valid value, so nothing
    /// runs while one is listed.
    pub field_drafts: BTreeMap<String, (String, String)>,
    // ---- end editor ----
    /// The run shown is the one a plain page starts with its default scenario as it
    /// opens (so the first thing on screen is an answer); false once anything else runs.
    pub opening_run: bool,
    last_run_id: u64,
    last_notice_id: u64,
    last_race_id: u64,
}

/// Every change the UI can make.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// The JSON text was edited directly.
    EditScenario(String),
    /// A form field set the value at a field path.
    SetField {
        /// The field path.
        path: String,
        /// The value set there.
        value: Value,
    },
    /// A share link's scenario: open it and, when it loads and validates, run it.
    OpenLink(String),
    /// Start running the current scenario.
    Run,
    /// A slice of run `id` finished.
    RunProgress {
        /// The run's id.
        id: u64,
        /// How far it has got.
        progress: Progress,
    },
    /// Run `id` reached its end.
    RunFinished {
        /// The run's id.
        id: u64,
        /// The simulated time it ended at, seconds.
        sim_end_s: f64,
        /// Its results.
        results: EngineResults,
    },
    /// Run `id`, stopped by the user, reached these results.
    RunStopped {
        /// The run's id.
        id: u64,
        /// Its results.
        results: EngineResults,
    },
    /// Run `id` failed.
    RunFailed {
        /// The run's id.
        id: u64,
        /// What went wrong.
        message: String,
    },
    /// Stop the current run.
    Stop,
    /// Keep the finished run for comparison.
    PinRun,
    /// Drop the pinned run.
    Unpin,
    /// Enter or leave talk mode.
    ToggleTalk,
    /// Show only one view of the opened link's run (its race, if it holds one), for an
    /// iframe.
    Embed(EmbedView),
    /// Tell the user something.
    Notify {
        /// How prominently it is shown.
        level: Level,
        /// What to say.
        message: String,
    },
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
    TalkTick {
        /// Wall-clock seconds since the last tick.
        wall_dt_s: f64,
        /// Where playback ends, simulated seconds.
        end_s: f64,
    },
    /// Open or close the shortcut help.
    ToggleHelp,
    /// Close whatever overlay is open (Esc).
    CloseOverlays,
    /// Next colour theme.
    CycleTheme,
    /// Show (or hide) a freshly made share link.
    ShowShareLink(Option<String>),
    /// Run the scenario's race entrants side by side and show the race view.
    StartRace,
    /// Entrant `lane` of race `id` at seed `seed` (0: the played-back one) has got this far.
    RaceProgress {
        /// The race's id.
        id: u64,
        /// The seed's offset (0: the played-back one).
        seed: usize,
        /// The entrant's lane.
        lane: usize,
        /// How far it has got.
        progress: Progress,
    },
    /// Entrant `lane` of race `id` at seed `seed` ran to its end.
    RaceFinished {
        /// The race's id.
        id: u64,
        /// The seed's offset (0: the played-back one).
        seed: usize,
        /// The entrant's lane.
        lane: usize,
        /// Its results.
        results: EngineResults,
    },
    /// Entrant `lane` of race `id` at seed `seed` failed.
    RaceFailed {
        /// The race's id.
        id: u64,
        /// The seed's offset (0: the played-back one).
        seed: usize,
        /// The entrant's lane.
        lane: usize,
        /// What went wrong.
        message: String,
    },
    /// Leave the race view (stopping entrants still simulating).
    LeaveRace,
    // ---- editor: data files ----
    /// Keep the text of a picked data file under its name (replacing one of the same name).
    SetDataFile {
        /// The name the scenario calls the file by.
        name: String,
        /// The file's text.
        text: Rc<str>,
    },
    /// Forget a picked data file.
    RemoveDataFile(String),
    /// Replace the scenario with the built-in preset `id`, and its data files.
    LoadPreset(String),
    /// A file given to Import: our scenario format, or an original Opal config to convert.
    ImportFile {
        /// The file's text.
        text: String,
        /// Where the text came from (a file's name).
        source: String,
    },
    /// Show a pane on a narrow screen.
    ShowPane(Pane),
    /// Close the import report.
    DismissImportReport,
    /// Turn on every `opal_compat` switch, so the imported config runs as the original
    /// Opal does.
    ReproduceOriginal,
    /// A form field's typed text is not a valid value (`error`), or is again (`None`).
    FieldDraft {
        /// The field's path in the document.
        path: String,
        /// The field's label.
        label: String,
        /// What is wrong with what was typed.
        error: Option<String>,
    },
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
            notices: Vec::new(),
            talk: TalkState::default(),
            theme: Theme::System,
            help_open: false,
            pane: Pane::Results,
            share_link: None,
            race: None,
            embed: None,
            data_files: Rc::default(),
            import_report: None,
            field_drafts: BTreeMap::new(),
            opening_run: false,
            last_run_id: 0,
            last_notice_id: 0,
            last_race_id: 0,
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
        if std::mem::take(&mut self.talk.play_when_finished) && self.view == View::Talk {
            self.talk.position_s = 0.0;
            self.talk.playing = true;
        }
    }

    /// Talk mode plays by itself: the finished run from its start (or from where it was
    /// paused), else the scenario is run and plays when it finishes.
    fn enter_talk(&mut self) {
        match &self.run {
            RunStatus::Finished { sim_end_s, .. } => {
                if self.talk.position_s >= *sim_end_s {
                    self.talk.position_s = 0.0;
                }
                self.talk.playing = true;
            }
            RunStatus::Running { .. } | RunStatus::Stopped { .. } => {
                self.talk.play_when_finished = true;
            }
            _ => {
                self.start_run();
                self.talk.play_when_finished = self.run.is_running();
            }
        }
    }

    /// Applies one action.
    pub fn apply(&mut self, action: Action) {
        match action {
            Action::EditScenario(text) => self.scenario = Scenario::new(text),
            Action::SetField { path, value } => self.set_field(&path, value),
            Action::OpenLink(text) => {
                let opened: Rc<str> = Rc::from(text.as_str());
                self.load(text, "the link");
                if self.scenario.text == opened && self.scenario.is_runnable() {
                    // A link with a race opens the race; any other runs its scenario.
                    if self.has_race() {
                        self.start_race();
                    } else {
                        self.start_run();
                    }
                }
            }
            Action::Run => {
                // On a phone, Run shows what it starts.
                self.pane = Pane::Results;
                self.start_run();
            }
            Action::ShowPane(pane) => self.pane = pane,
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
                // Also while stopping: a run that fails then never reports what it reached.
                if matches!(self.run, RunStatus::Running { id: current, .. }
                    | RunStatus::Stopped { id: current, .. } if current == id)
                {
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
            Action::Unpin => self.pinned = None,
            // An embed has nothing else to show.
            Action::ToggleTalk | Action::LeaveRace if self.embed.is_some() => {}
            Action::Embed(view) => {
                self.embed = Some(view);
                if self.view == View::Race {
                    // The race's clock starts once its last entrant has finished.
                    self.talk.playing = true;
                } else if view == EmbedView::Playback {
                    self.view = View::Talk;
                    self.enter_talk();
                }
            }
            Action::ToggleTalk => {
                self.view = match self.view {
                    View::Talk | View::Race => View::Editor,
                    View::Editor => View::Talk,
                };
                self.race = None;
                self.talk.playing = false;
                self.talk.play_when_finished = false;
                if self.view == View::Talk {
                    self.enter_talk();
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
            Action::StartRace => self.start_race(),
            Action::RaceProgress {
                id,
                seed,
                lane,
                progress,
            } => self.race_lane(id, seed, lane, LaneStatus::Running(progress)),
            Action::RaceFinished {
                id,
                seed,
                lane,
                results,
            } => self.race_lane(id, seed, lane, LaneStatus::Finished(results)),
            Action::RaceFailed {
                id,
                seed,
                lane,
                message,
            } => self.race_lane(id, seed, lane, LaneStatus::Failed(message)),
            Action::LeaveRace => {
                if self.view == View::Race {
                    self.view = View::Editor;
                }
                self.race = None;
                self.talk.playing = false;
            }
            Action::SetDataFile { name, text } => {
                Rc::make_mut(&mut self.data_files).insert(name, text);
            }
            Action::RemoveDataFile(name) => {
                Rc::make_mut(&mut self.data_files).remove(&name);
            }
            Action::LoadPreset(id) => self.load_preset(&id),
            Action::ImportFile { text, source } => self.import(text, &source),
            Action::DismissImportReport => self.import_report = None,
            Action::ReproduceOriginal => self.reproduce_original(),
            Action::FieldDraft { path, label, error } => match error {
                Some(error) => {
                    self.field_drafts.insert(path, (label, error));
                }
                None => {
                    self.field_drafts.remove(&path);
                }
            },
        }
    }

    fn reproduce_original(&mut self) {
        let all = serde_json::to_value(opal::scenario::OpalCompatConfig::all())
            .expect("plain data serializes");
        // Without a document (the JSON has an error) set_field says why nothing changed.
        let editable = self.scenario.document.is_some();
        self.set_field("opal_compat", all);
        if !editable {
            return;
        }
        if let Some(report) = &mut self.import_report {
            let (source, old) = &**report;
            let mut new = old.clone();
            new.compat = true;
            *report = Rc::new((source.clone(), new));
        }
        self.notify(
            Level::Info,
            "Every opal_compat switch is on: runs follow the original Opal's prompts, \
             batching and delays, and give its figures.",
        );
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
        let Some(preset) = opal::document::preset(id) else {
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
        // A preset is a question: one click shows its answer. A race preset opens the race
        // (Esc returns to its document); the others run, in place of a run under way (its
        // driver stops it when the running id changes, and its late reports are ignored).
        if !self.scenario.is_runnable() {
            return;
        }
        if self.has_race() {
            self.start_race();
        } else {
            // Superseded only when the new run can start (a field showing an invalid value
            // holds it back, and start_run says so).
            if self.run.is_running() && self.held_by_drafts("running").is_none() {
                self.run = RunStatus::Idle;
            }
            self.pane = Pane::Results;
            self.start_run();
        }
    }

    fn import(&mut self, text: String, source: &str) {
        if opal::document::detect_format(&text) != Format::Opal {
            return self.load(text, source);
        }
        match opal::document::import_opal(&text) {
            Ok((scenario, report)) => {
                self.scenario = Scenario::new(opal::document::to_json_pretty(&scenario) + "\n");
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

    /// Why nothing can start (`what`: "running", "racing", ...) while a form field shows
    /// text that is not a valid value: the first such field, what is wrong, and what the
    /// document holds instead.
    pub fn held_by_drafts(&self, what: &str) -> Option<String> {
        let (path, (label, error)) = self.field_drafts.iter().next()?;
        let value = self
            .scenario
            .document
            .as_ref()
            .and_then(|d| crate::json_path::get_json_path(d, path))
            .map_or(" (the scenario keeps the default)".into(), |v| {
                format!(" (the scenario still holds {v})")
            });
        let more = match self.field_drafts.len() {
            1 => String::new(),
            n => format!(" and {} more field{}", n - 1, if n == 2 { "" } else { "s" }),
        };
        Some(format!("Fix {label}: {error}{value}{more} before {what}."))
    }

    /// Says, as an error notice, why nothing can start while a field shows an invalid
    /// value; true when one does.
    fn refuse_for_drafts(&mut self, what: &str) -> bool {
        match self.held_by_drafts(what) {
            Some(message) => {
                self.notify(Level::Error, message);
                true
            }
            None => false,
        }
    }

    fn start_run(&mut self) {
        if self.run.is_running() || self.refuse_for_drafts("running") {
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
        let pinned = self.pinned.as_ref().map_or(0, |p| p.results.requests.len());
        if let Some(message) = crate::tab_limit::beside_pinned(&self.scenario.text, pinned) {
            self.notify(Level::Error, message);
            return;
        }
        self.last_run_id += 1;
        self.opening_run = false;
        self.run = RunStatus::Running {
            id: self.last_run_id,
            scenario: self.scenario.text.clone(),
            progress: Progress::default(),
        };
        self.talk.position_s = 0.0;
    }

    /// Whether the scenario document has a race section.
    fn has_race(&self) -> bool {
        self.scenario
            .document
            .as_ref()
            .is_some_and(|d| d.get("race").is_some_and(|r| !r.is_null()))
    }

    fn start_race(&mut self) {
        if self.refuse_for_drafts("racing") {
            return;
        }
        if !self.scenario.is_runnable() {
            let n = self.scenario.problems.len();
            let s = if n == 1 { "" } else { "s" };
            self.notify(
                Level::Error,
                format!("Fix {n} problem{s} in the scenario before racing."),
            );
            return;
        }
        match race::lanes(&self.scenario.text) {
            Ok(mut seeds) => {
                self.last_race_id += 1;
                let later = seeds.split_off(1);
                self.race = Some(RaceRun {
                    id: self.last_race_id,
                    lanes: seeds.pop().unwrap_or_default(),
                    later,
                });
                self.view = View::Race;
                self.talk.position_s = 0.0;
                self.talk.playing = false;
            }
            Err(message) => self.notify(Level::Error, message),
        }
    }

    /// Entrant `lane` of race `id` at seed `seed` reports; ignored unless `id` is the
    /// current race.
    fn race_lane(&mut self, id: u64, seed: usize, lane: usize, status: LaneStatus) {
        if let Some(race) = self.race.as_mut().filter(|r| r.id == id) {
            race.update(seed, lane, status);
        }
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

#[cfg(test)]
mod race_tests;
#[cfg(test)]
mod tests;
