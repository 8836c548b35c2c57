//! The reducer's rules, one test each.

use super::*;
use opal::Problem;
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
    let scenario = opal::parse_scenario(
        r#"{"workload": {"stages": [{"type": "UniformReqRate", "request_rate": 1, "total_requests": 2}]}}"#,
    )
    .unwrap();
    let mut sim = opal::simulation::Simulation::new(&scenario, &Default::default()).unwrap();
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
    s.apply(Action::ImportFile {
        text: "{ nope".into(),
        source: "bad.json".into(),
    });
    assert_eq!(&*s.scenario.text, VALID);
    assert!(s.notices[0]
        .message
        .starts_with("bad.json is not valid JSON"));
    s.apply(Action::ImportFile {
        text: "[1, 2]".into(),
        source: "list.json".into(),
    });
    assert_eq!(&*s.scenario.text, VALID);
    s.apply(Action::ImportFile {
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
    assert!(matches!(s.run, RunStatus::Finished { id: 1, sim_end_s, .. } if sim_end_s == 120.0));
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
fn talk_mode_returns_to_the_editor_and_pauses() {
    let mut s = state();
    s.apply(Action::ToggleTalk);
    assert_eq!(s.view, View::Talk);
    s.apply(Action::TalkPlayPause);
    assert!(s.talk.playing);
    s.apply(Action::ToggleTalk);
    assert_eq!(s.view, View::Editor);
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
    assert_eq!(s.data_files.get("t.jsonl").map(|t| &**t), Some("{}\n{}\n"));
    assert_eq!(&*s.scenario.text, VALID, "the scenario does not carry data");
    s.apply(Action::RemoveDataFile("t.jsonl".into()));
    assert!(s.data_files.is_empty());
}

#[test]
fn a_preset_loads_its_scenario_and_its_data_files() {
    let mut s = state();
    s.apply(Action::LoadPreset("trace_replay".into()));
    let preset = opal::document::preset("trace_replay").unwrap();
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
    let opal = opal::document::preset("opal_defaults").unwrap().json;
    s.apply(Action::ImportFile {
        text: opal.into(),
        source: "defaults.json".into(),
    });
    let (source, report) = &**s.import_report.as_ref().unwrap();
    assert_eq!(source, "defaults.json");
    assert!(!report.mapped.is_empty());
    assert_eq!(
        opal::document::detect_format(&s.scenario.text),
        Format::Ours,
        "the editor now holds our format"
    );
    assert!(!report.compat && !report.behaviours.is_empty());
    // One click turns on every opal_compat switch, and the report says so.
    s.apply(Action::ReproduceOriginal);
    let doc = s.scenario.document.as_deref().unwrap();
    for switch in [
        "shared_prompt_ids",
        "persistent_batch",
        "frozen_chunks",
        "step_delays",
        "prefill_step",
    ] {
        assert_eq!(doc["opal_compat"][switch], true, "{switch}");
    }
    assert!(s.scenario.is_runnable(), "{:?}", s.scenario.problems);
    assert!(s.import_report.as_ref().unwrap().1.compat);
    s.apply(Action::DismissImportReport);
    assert!(s.import_report.is_none());
    // The browser test's fixture: vllm_params.max_num_seqs 128 lands in worker.max_num_seqs.
    s.apply(Action::ImportFile {
        text: include_str!("../../../tests/browser/fixtures/opal_small.json").into(),
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

#[test]
fn nothing_runs_while_a_field_shows_text_that_is_not_a_valid_value() {
    let mut s = state();
    let draft = |error: Option<&str>| Action::FieldDraft {
        path: "simulation.seed".into(),
        label: "Seed".into(),
        error: error.map(String::from),
    };
    s.apply(draft(Some("must be at least 0")));
    s.apply(Action::Run);
    assert!(matches!(s.run, RunStatus::Idle), "{:?}", s.run);
    // The notice names the field, what is wrong, and the value the document still holds.
    assert_eq!(
        s.notices.last().unwrap().message,
        "Fix Seed: must be at least 0 (the scenario still holds 42) before running."
    );
    assert_eq!(s.notices.last().unwrap().level, Level::Error);
    s.apply(Action::FieldDraft {
        path: "simulation.num_workers".into(),
        label: "Workers".into(),
        error: Some("enter a number".into()),
    });
    s.apply(Action::Run);
    assert_eq!(
        s.notices.last().unwrap().message,
        "Fix Workers: enter a number (the scenario keeps the default) and 1 more field \
         before running."
    );
    // Fixed (or gone from the form), they no longer hold the run back.
    s.apply(draft(None));
    s.apply(Action::FieldDraft {
        path: "simulation.num_workers".into(),
        label: "Workers".into(),
        error: None,
    });
    s.apply(Action::Run);
    assert_eq!(running_id(&s), 1);
}

#[test]
fn talk_mode_plays_by_itself_running_the_scenario_first_when_nothing_has_run() {
    let mut s = state();
    s.apply(Action::ToggleTalk);
    // A fresh page: entering talk mode runs the scenario, and playback waits for it.
    assert_eq!(running_id(&s), 1);
    assert!(!s.talk.playing);
    finish(&mut s, 120.0);
    assert!(s.talk.playing);
    assert_eq!(s.talk.position_s, 0.0);
    // Leaving stops playback; entering again plays the finished run without running again.
    s.apply(Action::ToggleTalk);
    assert!(!s.talk.playing);
    s.apply(Action::TalkSeek(120.0));
    s.apply(Action::ToggleTalk);
    assert!(matches!(s.run, RunStatus::Finished { id: 1, .. }));
    assert!(s.talk.playing);
    assert_eq!(s.talk.position_s, 0.0, "played to the end: starts over");
    // A run that finishes after talk mode was left does not start playing.
    s.apply(Action::ToggleTalk);
    s.apply(Action::Run);
    s.apply(Action::ToggleTalk);
    s.apply(Action::ToggleTalk);
    finish(&mut s, 60.0);
    assert!(!s.talk.playing);
}

#[test]
fn a_phone_shows_the_results_first_and_run_returns_to_them() {
    let mut s = state();
    assert_eq!(s.pane, Pane::Results, "the page opens on its answer");
    s.apply(Action::ShowPane(Pane::Scenario));
    assert_eq!(s.pane, Pane::Scenario);
    s.apply(Action::Run);
    assert_eq!(s.pane, Pane::Results, "Run shows what it starts");
}

#[test]
fn a_preset_is_one_click_from_its_answer() {
    let mut s = state();
    s.apply(Action::ShowPane(Pane::Scenario));
    s.apply(Action::LoadPreset("routing_prefix_vs_round_robin".into()));
    assert!(s.run.is_running(), "the preset runs at once");
    assert_eq!(s.pane, Pane::Results, "a phone shows the answer");
    // A click while a run is under way runs the new preset in its place; the old run's
    // late result is ignored.
    let old = running_id(&s);
    s.apply(Action::LoadPreset("default".into()));
    let new = running_id(&s);
    assert!(new > old && s.run.is_running());
    s.apply(Action::RunFailed {
        id: old,
        message: "late".into(),
    });
    assert_eq!(running_id(&s), new, "the old run's report changes nothing");
}
