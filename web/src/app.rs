//! The app frame: header, scenario editor, results. Also the page-level wiring: opening a
//! share link at startup, file import by picker or drag-and-drop; the effects (runs,
//! shortcuts, links pasted later, playback) are hooks in [`crate::hooks`].

use crate::charts::ChartScale;
use crate::components::header::Header;
use crate::components::help::Help;
use crate::components::import_report::ImportReportPanel;
use crate::components::json_view::JsonView;
use crate::components::notices::Notices;
use crate::components::pane_switch::PaneSwitch;
use crate::components::presets::Presets;
use crate::components::race_panel::RacePanel;
use crate::components::race_view::RaceView;
use crate::components::result_panels::TimelinePanel;
use crate::components::results::Results;
use crate::components::scenario_form::ScenarioForm;
use crate::components::share_panel::SharePanel;
use crate::components::sweep_panel::SweepPanel;
use crate::components::talk_bar::TalkBar;
use crate::components::talk_view::{too_big_to_play, TalkView};
use crate::hooks::{
    use_after_first_paint, use_link_listener, use_playback_ticker, use_race_driver, use_run_driver,
    use_shortcuts,
};
use crate::link::{link_action, location_hash, split_embed};
use crate::results_view::{RunFacts, ScoreSplit};
use crate::state::{
    Action, AppState, EmbedView, EngineResults, Level, Pane, RunStatus, TalkState, View,
};
use crate::{files, share};
use wasm_bindgen::JsValue;
use yew::prelude::*;

/// How much larger talk mode draws the results' charts: their 12 px text at 18 px.
const TALK_CHART_SCALE: f64 = 1.5;

/// The scenario a fresh page opens with: the engine's default (`examples/default.json`).
pub fn default_scenario() -> &'static str {
    opal::document::default_document()
}

fn window() -> Option<web_sys::Window> {
    web_sys::window()
}

thread_local! {
    /// The state [`open_page`] computed, for the app's first render to start from.
    static OPENING: std::cell::RefCell<Option<AppState>> = const { std::cell::RefCell::new(None) };
}

/// Reads the page's link before the first render and, when it opens a run (a share
/// link), submits that run at once, so the worker computes while the page draws; the app's
/// run driver adopts it (see [`crate::worker::pool::submit_early`]). Says whether it did.
pub fn open_page() -> bool {
    let state = initial_state();
    let submitted = if let RunStatus::Running { scenario, .. } = &state.run {
        crate::worker::pool::submit_early(scenario.to_string());
        true
    } else {
        false
    };
    OPENING.set(Some(state));
    submitted
}

fn initial_state() -> AppState {
    opening_state(&location_hash())
}

/// The state a page opens in at URL fragment `fragment`: a share link's scenario running,
/// a damaged link's notice over the default scenario, or — a plain page — the default
/// scenario already running, so its results are the first thing on screen.
fn opening_state(fragment: &str) -> AppState {
    let mut state = AppState::new(default_scenario());
    match link_action(fragment, "Opened the default scenario instead") {
        Some(action) => {
            let opens = matches!(action, Action::OpenLink(_));
            state.apply(action);
            // An embed of a link that opened; a damaged one shows the app and its notice.
            if let (true, (_, Some(view))) = (opens, split_embed(fragment)) {
                state.apply(Action::Embed(view));
            }
        }
        None => {
            state.apply(Action::Run);
            state.opening_run = true;
        }
    }
    state
}

/// Reads a file the user gave us and opens it as the scenario.
fn import_file(file: web_sys::File, dispatch: Callback<Action>) {
    wasm_bindgen_futures::spawn_local(async move {
        let name = file.name();
        dispatch.emit(match files::read_text(&file).await {
            // Our scenario format or an original Opal config (converted, with a report).
            Ok(text) => Action::ImportFile { text, source: name },
            Err(message) => Action::Notify {
                level: Level::Error,
                message: format!("{message}; your scenario is unchanged."),
            },
        });
    });
}

/// Copies `text` (`what`: "Link" or "Embed code") to the clipboard, and says so.
fn copy_text(text: String, what: &'static str, dispatch: Callback<Action>) {
    wasm_bindgen_futures::spawn_local(async move {
        let message = match files::copy_text(&text).await {
            Ok(()) => format!("{what} copied to the clipboard."),
            Err(_) => format!("The clipboard is not available here: select the {} in its box and copy it with Ctrl/⌘+C.", what.to_lowercase()),
        };
        dispatch.emit(Action::Notify {
            level: Level::Info,
            message,
        });
    });
}

/// The whole page.
#[function_component(App)]
pub fn app() -> Html {
    let state = use_reducer(|| OPENING.take().unwrap_or_else(initial_state));
    // One callback for the app's lifetime, so children's props compare equal across renders.
    let on_action = use_callback(state.dispatcher(), |a: Action, dispatcher| {
        dispatcher.dispatch(a)
    });

    use_shortcuts(&state, on_action.clone());
    use_link_listener(on_action.clone());
    use_run_driver(&state.run, state.data_files.clone(), on_action.clone());
    use_race_driver(
        state.race.as_ref(),
        state.data_files.clone(),
        on_action.clone(),
    );
    let race = state.race.as_ref().filter(|_| state.view == View::Race);
    // The clock runs to the run's end in talk mode, to the last entrant's in a race.
    let end_s = match (race, &state.run) {
        (Some(race), _) => race.end_s(),
        (None, RunStatus::Finished { sim_end_s, .. }) => Some(*sim_end_s),
        _ => None,
    };
    let playing = state.view.plays_back() && state.talk.playing;
    use_playback_ticker(playing.then_some(end_s).flatten(), on_action.clone());
    // The editor's panels wait for the first frame, and for a share link's results.
    let editor_panels = use_after_first_paint(state.run.is_running());

    let file_input = use_node_ref();
    let dragging = use_state(|| false);
    // The timeline embed's routing terms, read once from the run's scenario.
    let embed_run = match (&state.run, state.embed) {
        (RunStatus::Finished { scenario, .. }, Some(EmbedView::Timeline)) => Some(scenario.clone()),
        _ => None,
    };
    let embed_split = use_memo(embed_run, |run| {
        run.as_ref().and_then(|s| RunFacts::of(s).split)
    });
    if let Some(view) = state.embed {
        return embed_page(&state, view, race, end_s, (*embed_split).clone(), on_action);
    }

    let on_share = {
        let text = state.scenario.text.clone();
        let on_action = on_action.clone();
        Callback::from(move |()| match share::encode(&text) {
            Err(e) => on_action.emit(Action::Notify {
                level: Level::Error,
                message: format!("Cannot make a link: {e}."),
            }),
            Ok(fragment) => {
                let Some(w) = window() else { return };
                let location = w.location();
                let link = format!(
                    "{}{}{}#{fragment}",
                    location.origin().unwrap_or_default(),
                    location.pathname().unwrap_or_default(),
                    location.search().unwrap_or_default()
                );
                // The address bar shows the link too; replaceState adds no history entry.
                if let Ok(history) = w.history() {
                    let _ = history.replace_state_with_url(
                        &JsValue::NULL,
                        "",
                        Some(&format!("#{fragment}")),
                    );
                }
                on_action.emit(Action::ShowShareLink(Some(link.clone())));
                copy_text(link, "Link", on_action.clone());
            }
        })
    };
    let on_import = {
        let file_input = file_input.clone();
        Callback::from(move |()| {
            if let Some(input) = file_input.cast::<web_sys::HtmlInputElement>() {
                input.click();
            }
        })
    };
    let on_export = {
        let text = state.scenario.text.clone();
        let on_action = on_action.clone();
        Callback::from(move |()| {
            if let Err(message) = files::download_text("scenario.json", "application/json", &text) {
                on_action.emit(Action::Notify {
                    level: Level::Error,
                    message,
                });
            }
        })
    };
    let on_file_chosen = {
        let on_action = on_action.clone();
        Callback::from(move |e: Event| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            if let Some(file) = input.files().and_then(|f| f.get(0)) {
                import_file(file, on_action.clone());
            }
            // Choosing the same file again must fire `change` again.
            input.set_value("");
        })
    };
    let ondragover = {
        let dragging = dragging.clone();
        Callback::from(move |e: DragEvent| {
            // Without preventDefault the browser would open the file itself.
            e.prevent_default();
            if !*dragging {
                dragging.set(true);
            }
        })
    };
    let ondragleave = {
        let dragging = dragging.clone();
        Callback::from(move |e: DragEvent| {
            if e.related_target().is_none() {
                dragging.set(false);
            }
        })
    };
    let ondrop = {
        let dragging = dragging.clone();
        let on_action = on_action.clone();
        Callback::from(move |e: DragEvent| {
            dragging.set(false);
            // A drop the editor already took (a trace on its stage, a config.json on the model).
            if e.default_prevented() {
                return;
            }
            e.prevent_default();
            if let Some(file) = e
                .data_transfer()
                .and_then(|d| d.files())
                .and_then(|f| f.get(0))
            {
                import_file(file, on_action.clone());
            }
        })
    };

    let talk = state.view.plays_back();
    let class = classes!(
        "app",
        format!("theme-{}", state.theme.name()),
        talk.then_some("talk"),
        race.is_some().then_some("racing"),
        dragging.then_some("dragging"),
    );
    let close_overlays = on_action.reform(|()| Action::CloseOverlays);
    // Talk mode's charts are drawn larger, to be read from the back of a room.
    let chart_scale = ChartScale(if talk { TALK_CHART_SCALE } else { 1.0 });
    html! {
        <ContextProvider<ChartScale> context={chart_scale}>
        <div {class} {ondragover} {ondragleave} {ondrop}>
            <Header running={state.run.is_running()} {talk} theme={state.theme}
                on_action={on_action.clone()} {on_share} {on_import} {on_export} />
            <input type="file" class="visually-hidden" accept=".json,application/json" tabindex="-1"
                aria-label="Import a scenario file" data-testid="import-file" ref={file_input} onchange={on_file_chosen} />
            if let Some(link) = &state.share_link {
                <SharePanel link={AttrValue::from(link.clone())}
                    on_copy={{ let a = on_action.clone(); Callback::from(move |(text, what): (AttrValue, &'static str)| copy_text(text.to_string(), what, a.clone())) }}
                    on_close={on_action.reform(|()| Action::ShowShareLink(None))} />
            }
            <Notices notices={state.notices.clone()} on_dismiss={on_action.reform(Action::Dismiss)} />
            if let Some(report) = &state.import_report {
                <ImportReportPanel report={report.clone()} on_dismiss={on_action.reform(|()| Action::DismissImportReport)}
                    on_reproduce={on_action.reform(|()| Action::ReproduceOriginal)} />
            }
            if let Some(race) = race {
                <TalkBar talk={state.talk} {end_s} on_action={on_action.clone()}
                    idle={if race.is_running() { "Simulating every entrant…" } else { "No entrant finished" }} />
                <main class="race-main">
                    <RaceView race={race.clone()} talk={state.talk} on_action={on_action.clone()} />
                    <button type="button" class="race-leave" onclick={on_action.reform(|_: MouseEvent| Action::LeaveRace)} title="Esc">
                        { "Back to the editor" }
                    </button>
                </main>
            } else {
            if talk {
                <TalkBar talk={state.talk} {end_s} on_action={on_action.clone()}
                    idle={if state.run.is_running() { "Simulating… it plays when the run finishes" } else { "Run a scenario to play it back" }} />
            }
            <PaneSwitch pane={state.pane} on_action={on_action.clone()} />
            <main class={classes!("app-main", match state.pane { Pane::Results => "show-results", Pane::Scenario => "show-scenario" })}>
                <section class="editor" id="pane-scenario" aria-label="Scenario editor">
                    <h2>{ "Scenario" }</h2>
                    if editor_panels {
                        <Presets on_action={on_action.clone()} />
                        <RacePanel scenario={state.scenario.clone()} on_action={on_action.clone()} />
                        <ScenarioForm scenario={state.scenario.clone()} data_files={state.data_files.clone()} on_action={on_action.clone()} />
                    }
                    <JsonView text={state.scenario.text.clone()} parse_error={state.scenario.parse_error.clone()}
                        on_edit={on_action.reform(Action::EditScenario)} />
                </section>
                <section class="results" id="pane-results" aria-label="Results">
                    <h2>{ "Results" }</h2>
                    if talk {
                        if let RunStatus::Finished { results, .. } = &state.run {
                            { playback(results, state.talk) }
                        }
                    }
                    <Results scenario={state.scenario.clone()} run={state.run.clone()} pinned={state.pinned.clone()}
                        opening={state.opening_run} on_action={on_action.clone()} />
                    <SweepPanel scenario={state.scenario.clone()} data_files={state.data_files.clone()}
                        held={state.held_by_drafts("sweeping").map(AttrValue::from)} />
                </section>
            </main>
            }
            if state.help_open {
                <Help on_close={close_overlays} />
            }
            if *dragging {
                <div class="drop-hint" aria-hidden="true">{ "Drop a scenario JSON file to open it" }</div>
            }
        </div>
        </ContextProvider<ChartScale>>
    }
}

/// Talk mode's playback of a finished run, or why a run this large is not played.
fn playback(results: &EngineResults, talk: TalkState) -> Html {
    match too_big_to_play(results.requests.len()) {
        Some(note) => html! { <p class="note" data-testid="talk-too-big">{ note }</p> },
        None => html! { <TalkView results={results.clone()} {talk} /> },
    }
}

/// An embed: the playback bar and the run's playback (or the race's lanes), or the run's
/// request timeline; and a link to the whole app on the same scenario.
fn embed_page(
    state: &AppState,
    view: EmbedView,
    race: Option<&crate::state::RaceRun>,
    end_s: Option<f64>,
    split: Option<ScoreSplit>,
    on_action: Callback<Action>,
) -> Html {
    let class = classes!(
        "app",
        "embed",
        "talk",
        format!("theme-{}", state.theme.name()),
        race.is_some().then_some("racing")
    );
    let whole_app = window()
        .and_then(|w| w.location().href().ok())
        .map(|href| split_embed(&href).0.to_string())
        .unwrap_or_default();
    let idle = match (race, &state.run) {
        (Some(_), _) | (None, RunStatus::Running { .. }) => "Simulating…",
        (None, RunStatus::Failed { .. }) => "The run failed",
        _ => "Nothing to play",
    };
    html! {
        <div {class}>
            if race.is_some() || view == EmbedView::Playback {
                <TalkBar talk={state.talk} {end_s} on_action={on_action.clone()} {idle} />
            }
            <main class="embed-main">
                if let Some(race) = race {
                    <RaceView race={race.clone()} talk={state.talk} {on_action} />
                } else if let (RunStatus::Finished { results, scenario, .. }, EmbedView::Timeline) = (&state.run, view) {
                    <TimelinePanel results={results.clone()} scenario={AttrValue::from(scenario.clone())} {split} />
                } else if let (RunStatus::Running { .. }, EmbedView::Timeline) = (&state.run, view) {
                    <p class="note">{ "Simulating…" }</p>
                } else if let RunStatus::Finished { results, .. } = &state.run {
                    { playback(results, state.talk) }
                } else if let RunStatus::Failed { message, .. } = &state.run {
                    <p class="run-failed" role="alert">{ message }</p>
                }
            </main>
            <p class="embed-credit">
                <a href={whole_app} target="_blank" rel="noopener" data-testid="embed-open">
                    { "Opal: open this scenario to edit, run and compare" }
                </a>
            </p>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::link_action;

    #[test]
    fn an_embed_link_opens_its_run_in_talk_mode_and_stays_there() {
        let fragment = share::encode("{\"simulation\":{\"seed\":7}}").unwrap();
        let mut state = opening_state(&format!("#{fragment}&embed"));
        assert_eq!(state.embed, Some(EmbedView::Playback));
        assert!(state.run.is_running(), "it runs itself");
        assert_eq!(state.view, View::Talk);
        assert!(
            state.talk.play_when_finished,
            "and plays when the run finishes"
        );
        // Esc and `t` have nothing to go back to.
        state.apply(Action::ToggleTalk);
        assert_eq!(state.view, View::Talk);
        // The same link without the flag opens the app; a damaged one with it too.
        assert_eq!(opening_state(&format!("#{fragment}")).embed, None);
        assert_eq!(opening_state("#s=v1.eJy!&embed").embed, None);
        // The timeline's embed runs and waits for the run, without playback.
        let state = opening_state(&format!("#{fragment}&embed=timeline"));
        assert_eq!(state.embed, Some(EmbedView::Timeline));
        assert!(state.run.is_running());
        assert_eq!(state.view, View::Editor);
    }

    #[test]
    fn a_plain_page_opens_the_default_scenario_running() {
        assert_eq!(link_action("", "x"), None);
        assert_eq!(link_action("#about", "x"), None);
        for fragment in ["", "#about"] {
            let state = opening_state(fragment);
            assert!(state.run.is_running(), "an answer on open, without a click");
            assert!(state.opening_run);
            assert_eq!(&*state.scenario.text, default_scenario());
            assert!(state.notices.is_empty(), "and quietly");
        }
        // A damaged link runs nothing: the user asked for another scenario.
        let state = opening_state("#s=v1.eJy!");
        assert_eq!(state.run, RunStatus::Idle);
        assert!(!state.opening_run);
    }

    #[test]
    fn a_good_link_opens_its_scenario() {
        let fragment = share::encode("{\"simulation\":{\"seed\":7}}").unwrap();
        let mut state = AppState::new(default_scenario());
        state.apply(link_action(&format!("#{fragment}"), "x").unwrap());
        assert_eq!(
            &*state.scenario.text,
            "{\n  \"simulation\": {\n    \"seed\": 7\n  }\n}\n"
        );
    }

    #[test]
    fn opening_a_link_runs_its_scenario_but_a_damaged_link_runs_nothing() {
        let fragment = share::encode("{\"simulation\":{\"seed\":7}}").unwrap();
        let state = opening_state(&format!("#{fragment}"));
        assert!(state.run.is_running(), "the link's run starts at once");
        assert!(!state.opening_run, "the link's scenario, not the default");
        assert_eq!(opening_state("#s=v1.eJy!").run, RunStatus::Idle);
    }

    #[test]
    fn a_damaged_link_keeps_the_default_and_says_so() {
        let mut state = AppState::new(default_scenario());
        state.apply(link_action("#s=v1.eJy!", "Opened the default scenario instead").unwrap());
        assert_eq!(&*state.scenario.text, default_scenario());
        assert_eq!(
            state.notices[0].message,
            "The link was damaged: it has a stray character at position 3. Opened the default scenario instead."
        );
        assert_eq!(state.notices[0].level, Level::Warning);
    }
}
