//! The race section's checks, the merge patch, and what entrants share.

use super::*;
use engine::scenario::ScenarioData;
use engine::simulation::Simulation;
use serde_json::json;

/// Two workers, constant 10 ms steps, 12 requests sharing one 256-token prefix.
fn doc(race: &str) -> String {
    format!(
        r#"{{
        "simulation": {{ "num_workers": 2, "seed": 3 }},
        "worker": {{ "timing": {{ "model": "constant" }}, "enable_prefix_caching": true }},
        "workload": {{ "stages": [ {{ "type": "ExponentialReqRate", "request_rate": 4,
            "input_length": {{ "type": "constant", "value": 64 }},
            "output_length": {{ "type": "constant", "value": 4 }},
            "shared_prefix": {{ "groups": 1, "length": 256 }},
            "total_requests": 12 }} ] }},
        "race": {race}
    }}"#
    )
}

fn problems(race: &str) -> Vec<String> {
    crate::document::check::parse(&doc(race))
        .err()
        .unwrap_or_default()
        .iter()
        .map(|p| p.to_string())
        .collect()
}

const RR: &str = r#"{ "label": "round robin", "patch": { "router": { "policy": { "policy": "round_robin" } } } }"#;
const LL: &str = r#"{ "label": "least loaded", "patch": { "router": { "policy": { "policy": "least_loaded" } } } }"#;

#[test]
fn merge_patch_follows_rfc_7386() {
    // The examples of RFC 7386, Appendix A.
    let cases = [
        (json!({"a": "b"}), json!({"a": "c"}), json!({"a": "c"})),
        (
            json!({"a": "b"}),
            json!({"b": "c"}),
            json!({"a": "b", "b": "c"}),
        ),
        (json!({"a": "b"}), json!({"a": null}), json!({})),
        (
            json!({"a": "b", "b": "c"}),
            json!({"a": null}),
            json!({"b": "c"}),
        ),
        (json!({"a": ["b"]}), json!({"a": "c"}), json!({"a": "c"})),
        (json!({"a": "c"}), json!({"a": ["b"]}), json!({"a": ["b"]})),
        (
            json!({"a": {"b": "c"}}),
            json!({"a": {"b": "d", "c": null}}),
            json!({"a": {"b": "d"}}),
        ),
        (
            json!({"a": [{"b": "c"}]}),
            json!({"a": [1]}),
            json!({"a": [1]}),
        ),
        (json!(["a", "b"]), json!(["c", "d"]), json!(["c", "d"])),
        (json!({"a": "b"}), json!(["c"]), json!(["c"])),
        (json!({"a": "foo"}), json!(null), json!(null)),
        (json!({"a": "foo"}), json!("bar"), json!("bar")),
        (
            json!({"e": null}),
            json!({"a": 1}),
            json!({"e": null, "a": 1}),
        ),
        (
            json!([1, 2]),
            json!({"a": "b", "c": null}),
            json!({"a": "b"}),
        ),
        (
            json!({}),
            json!({"a": {"bb": {"ccc": null}}}),
            json!({"a": {"bb": {}}}),
        ),
    ];
    for (mut target, patch, want) in cases {
        merge_patch(&mut target, &patch);
        assert_eq!(target, want, "patch {patch}");
    }
}

#[test]
fn a_race_needs_two_to_four_named_entrants() {
    assert_eq!(
        problems(&format!(r#"{{ "entrants": [ {RR} ] }}"#)),
        ["race.entrants: a race has 2 to 4 entrants, not 1"]
    );
    assert_eq!(
        problems(&format!(
            r#"{{ "entrants": [ {RR}, {LL}, {RR}, {LL}, {RR} ] }}"#
        )),
        [
            "race.entrants: a race has 2 to 4 entrants, not 5",
            "race.entrants[2].label: another entrant has this name",
            "race.entrants[3].label: another entrant has this name",
            "race.entrants[4].label: another entrant has this name",
        ]
    );
    assert_eq!(
        problems(
            r#"{ "entrants": [ { "label": " ", "patch": {} },
                               { "label": "x", "patch": [1] },
                               { "label": "y", "patch": { "race": {} } } ] }"#
        ),
        [
            "race.entrants[0].label: give the entrant a name",
            "race.entrants[1].patch: must be an object (a JSON merge patch over the scenario)",
            "race.entrants[2].patch: a patch cannot hold a race",
        ]
    );
    assert!(problems(&format!(r#"{{ "entrants": [ {RR}, {LL} ] }}"#)).is_empty());
}

#[test]
fn a_patch_that_breaks_the_scenario_is_reported_at_its_entrant() {
    let p = problems(&format!(
        r#"{{ "entrants": [ {RR},
            {{ "label": "fastest", "patch": {{ "router": {{ "policy": {{ "policy": "fastest" }} }} }} }},
            {{ "label": "none", "patch": {{ "simulation": {{ "num_workers": 0 }} }} }} ] }}"#
    ));
    assert_eq!(p.len(), 2, "{p:?}");
    assert!(
        p[0].starts_with(
            "race.entrants[1].patch: with this patch the scenario is invalid: router.policy"
        ),
        "{}",
        p[0]
    );
    assert!(
        p[1].starts_with(
            "race.entrants[2].patch: with this patch the scenario is invalid: simulation.num_workers"
        ),
        "{}",
        p[1]
    );
}

#[test]
fn entrants_run_the_same_arrivals_and_differ_only_by_their_patch() {
    let scenario =
        crate::parse_scenario(&doc(&format!(r#"{{ "entrants": [ {RR}, {LL} ] }}"#))).unwrap();
    let entrants = entrants(&scenario);
    assert_eq!(entrants.len(), 2);
    assert_eq!(entrants[0].0, "round robin");
    let runs: Vec<_> = entrants
        .iter()
        .map(|(_, s)| {
            let s = s.as_ref().unwrap();
            assert_eq!(s.race, None, "an entrant is a plain run");
            let mut sim = Simulation::new(s, &ScenarioData::default()).unwrap();
            sim.run();
            sim.results()
        })
        .collect();
    let arrivals = |i: usize| -> Vec<f64> { runs[i].requests.iter().map(|r| r.created).collect() };
    assert_eq!(arrivals(0).len(), 12);
    assert_eq!(arrivals(0), arrivals(1));
    // Round robin alternates workers 0, 1, 0, 1, … whatever the load.
    let workers: Vec<Option<u32>> = runs[0].requests.iter().map(|r| r.worker).collect();
    let alternating: Vec<Option<u32>> = (0..12).map(|i| Some(i % 2)).collect();
    assert_eq!(workers, alternating);
    // The race section changes nothing in a plain run of the document itself.
    let mut plain = scenario.clone();
    plain.race = None;
    let mut sim = Simulation::new(&scenario, &ScenarioData::default()).unwrap();
    sim.run();
    let mut bare = Simulation::new(&plain, &ScenarioData::default()).unwrap();
    bare.run();
    assert_eq!(sim.results().requests, bare.results().requests);
}

#[test]
fn seeds_default_to_one_and_are_checked_at_their_path() {
    let race = |seeds: &str| format!(r#"{{ "entrants": [ {RR}, {LL} ]{seeds} }}"#);
    let s = crate::parse_scenario(&doc(&race(""))).unwrap();
    assert_eq!(super::seeds(&s), 1);
    assert!(
        !crate::document::to_json_pretty(&s).contains("\"seeds\""),
        "the default is not written out"
    );
    let s = crate::parse_scenario(&doc(&race(r#", "seeds": 3"#))).unwrap();
    assert_eq!(super::seeds(&s), 3);
    assert_eq!(
        problems(&race(r#", "seeds": 0"#)),
        ["race.seeds: a race runs at 1 to 8 seeds, not 0"]
    );
    assert_eq!(
        problems(&race(r#", "seeds": 9"#)),
        ["race.seeds: a race runs at 1 to 8 seeds, not 9"]
    );
    assert!(problems(&race(r#", "seeds": 8"#)).is_empty());
}

#[test]
fn a_later_seed_moves_every_entrant_s_seed_and_keeps_its_patch() {
    // The document's seed is 3; a patch may set its own (7), which is moved the same way.
    let seven = r#"{ "label": "seven", "patch": { "simulation": { "seed": 7 } } }"#;
    let s = crate::parse_scenario(&doc(&format!(
        r#"{{ "entrants": [ {LL}, {seven} ], "seeds": 3 }}"#
    )))
    .unwrap();
    let seeds_at = |k: u32| -> Vec<u64> {
        entrants_at_seed(&s, k)
            .into_iter()
            .map(|(_, e)| e.unwrap().simulation.seed)
            .collect()
    };
    assert_eq!(seeds_at(0), [3, 7]);
    assert_eq!(seeds_at(2), [5, 9]);
    let at2 = entrants_at_seed(&s, 2);
    assert_eq!(at2[0].0, "least loaded");
    assert_eq!(
        at2[0].1.as_ref().unwrap().router,
        entrants(&s)[0].1.as_ref().unwrap().router
    );
}
