//! The reducer's race rules.

use super::*;

/// One worker, 2 requests; raced under round robin and least loaded.
const RACE: &str = r#"{
  "workload": {"stages": [{"type": "UniformReqRate", "request_rate": 1, "total_requests": 2}]},
  "race": {"entrants": [
    {"label": "rr", "patch": {"router": {"policy": {"policy": "round_robin"}}}},
    {"label": "ll", "patch": {"router": {"policy": {"policy": "least_loaded"}}}}
  ]}
}"#;

fn results(end_time: f64) -> EngineResults {
    let scenario = opal::parse_scenario(
        r#"{"workload": {"stages": [{"type": "UniformReqRate", "request_rate": 1, "total_requests": 2}]}}"#,
    )
    .unwrap();
    let mut sim = opal::simulation::Simulation::new(&scenario, &Default::default()).unwrap();
    sim.run();
    let mut r = sim.results();
    r.end_time = end_time;
    EngineResults::new(r)
}

fn raced() -> AppState {
    let mut s = AppState::new("{}");
    s.apply(Action::OpenLink(RACE.into()));
    s
}

#[test]
fn a_link_with_a_race_opens_the_race_with_every_entrant_running() {
    let s = raced();
    assert_eq!(s.view, View::Race);
    assert_eq!(s.run, RunStatus::Idle, "no plain run of the document");
    let race = s.race.as_ref().unwrap();
    let labels: Vec<&str> = race.lanes.iter().map(|l| &*l.label).collect();
    assert_eq!(labels, ["rr", "ll"]);
    assert!(race.is_running());
    // Each lane runs the document with its patch merged in, without the race.
    let lane =
        |i: usize| -> serde_json::Value { serde_json::from_str(&race.lanes[i].scenario).unwrap() };
    assert_eq!(lane(1)["router"]["policy"]["policy"], "least_loaded");
    assert_eq!(lane(0)["router"]["policy"]["policy"], "round_robin");
    assert!(lane(0).get("race").is_none());
    assert_eq!(lane(0)["workload"], lane(1)["workload"]);
}

#[test]
fn the_clock_ends_with_the_last_entrant_and_late_events_are_ignored() {
    let mut s = raced();
    let id = s.race.as_ref().unwrap().id;
    s.apply(Action::RaceFinished {
        id,
        seed: 0,
        lane: 1,
        results: results(7.0),
    });
    assert_eq!(s.race.as_ref().unwrap().end_s(), None, "lane 0 still runs");
    // An event of an earlier race changes nothing.
    s.apply(Action::RaceFinished {
        id: id + 1,
        seed: 0,
        lane: 0,
        results: results(1.0),
    });
    assert_eq!(s.race.as_ref().unwrap().end_s(), None);
    s.apply(Action::RaceFinished {
        id,
        seed: 0,
        lane: 0,
        results: results(5.0),
    });
    let race = s.race.as_ref().unwrap();
    assert!(!race.is_running());
    assert_eq!(race.end_s(), Some(7.0));
    // A progress report after the end does not bring the lane back.
    s.apply(Action::RaceProgress {
        id,
        seed: 0,
        lane: 0,
        progress: Progress::default(),
    });
    assert_eq!(s.race.as_ref().unwrap().end_s(), Some(7.0));
}

#[test]
fn a_failed_entrant_leaves_the_others_to_finish_the_race() {
    let mut s = raced();
    let id = s.race.as_ref().unwrap().id;
    s.apply(Action::RaceFailed {
        id,
        seed: 0,
        lane: 0,
        message: "boom".into(),
    });
    s.apply(Action::RaceFinished {
        id,
        seed: 0,
        lane: 1,
        results: results(3.0),
    });
    let race = s.race.as_ref().unwrap();
    assert_eq!(race.lanes[0].status, LaneStatus::Failed("boom".into()));
    assert_eq!(race.end_s(), Some(3.0));
}

#[test]
fn leaving_the_race_returns_to_the_editor_and_drops_it() {
    let mut s = raced();
    s.apply(Action::TalkPlayPause);
    s.apply(Action::LeaveRace);
    assert_eq!(s.view, View::Editor);
    assert_eq!(s.race, None);
    assert!(!s.talk.playing);
    // Talk mode's toggle leaves a race too.
    let mut s = raced();
    s.apply(Action::ToggleTalk);
    assert_eq!((s.view, s.race.is_none()), (View::Editor, true));
}

#[test]
fn a_scenario_without_a_race_or_with_problems_cannot_race() {
    let mut s = AppState::new("{}");
    s.apply(Action::StartRace);
    assert_eq!((s.view, s.race.is_none()), (View::Editor, true));
    assert!(s.notices[0].message.contains("no race section"));
    let mut s = AppState::new(&RACE.replace("least_loaded", "fastest"));
    s.apply(Action::StartRace);
    assert_eq!(s.race, None);
    assert_eq!(
        s.notices[0].message,
        "Fix 1 problem in the scenario before racing."
    );
}

#[test]
fn the_race_preset_opens_its_race_in_one_click() {
    let mut s = AppState::new("{}");
    s.apply(Action::LoadPreset("race_round_robin_vs_prefix".into()));
    assert_eq!(s.view, View::Race);
    let labels: Vec<String> = s
        .race
        .as_ref()
        .unwrap()
        .lanes
        .iter()
        .map(|l| l.label.to_string())
        .collect();
    assert_eq!(labels, ["round robin", "prefix-aware"]);
    // Any other preset only loads.
    let mut s = AppState::new("{}");
    s.apply(Action::LoadPreset("default".into()));
    assert_eq!((s.view, s.race.is_none()), (View::Editor, true));
}

#[test]
fn later_seeds_run_beside_the_race_and_never_hold_its_playback() {
    let mut s = AppState::new("{}");
    s.apply(Action::OpenLink(RACE.replace(
        r#""race": {"entrants""#,
        r#""simulation": {"seed": 5}, "race": {"seeds": 3, "entrants""#,
    )));
    let race = s.race.as_ref().unwrap();
    assert_eq!(race.lanes.len(), 2);
    assert_eq!(race.later.len(), 2, "seeds 6 and 7");
    let seed = |lane: &Lane| -> u64 {
        let v: serde_json::Value = serde_json::from_str(&lane.scenario).unwrap();
        v["simulation"]["seed"].as_u64().unwrap()
    };
    assert_eq!(seed(&race.lanes[1]), 5);
    assert_eq!(seed(&race.later[0][1]), 6);
    assert_eq!(seed(&race.later[1][0]), 7);
    assert_eq!(&*race.later[1][1].label, "ll");
    let id = race.id;
    for lane in 0..2 {
        s.apply(Action::RaceFinished {
            id,
            seed: 0,
            lane,
            results: results(4.0),
        });
    }
    // Seed 7's second entrant reports to its own lane, not the played one.
    s.apply(Action::RaceFailed {
        id,
        seed: 2,
        lane: 1,
        message: "boom".into(),
    });
    let race = s.race.as_ref().unwrap();
    assert!(
        !race.is_running(),
        "the played seed is done: playback can start"
    );
    assert_eq!(race.end_s(), Some(4.0));
    assert!(race.any_running(), "seeds 6 and 7 still run");
    assert_eq!(race.later[1][1].status, LaneStatus::Failed("boom".into()));
    assert!(matches!(race.later[1][0].status, LaneStatus::Running(_)));
    assert_eq!(race.seeds().count(), 3);
}
