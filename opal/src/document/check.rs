//! A document checked whole: the scenario's own checks (each section and those across
//! sections, [`Scenario::validate`]), and then every scenario the document makes, which
//! must be valid in turn: each value a sweep sets (and each end of its search) and each
//! entrant a race patches in. A made scenario is checked whole too (a sweep's point keeps
//! the race; an entrant's patch may bring a sweep).
//!
//! These checks parse the documents they make, so they live here, above the engine's
//! document: [`parse`] is what reads a document someone wrote (the CLI, the app, and
//! [`crate::check_scenario`]).

use engine::scenario::path;
use engine::scenario::race::merge_patch;
use engine::scenario::sweep::{number, Search, SweepConfig};
use engine::scenario::{Scenario, ScenarioData};
use engine::validate::{index, join, Problem, Problems};
use serde_json::Value;

/// Parses a scenario document and checks it whole, returning every problem found, each
/// with its field path: every duplicate key and type error at its field, else every
/// problem of its sections, else of the scenarios its sweep and race make, else the work
/// estimate's.
pub fn parse(text: &str) -> Result<Scenario, Vec<Problem>> {
    let scenario = super::read::read(text)?;
    let problems = check(&scenario);
    if problems.is_empty() {
        Ok(scenario)
    } else {
        Err(problems)
    }
}

/// Parses a document and checks it whole together with its data files: every problem at
/// once.
pub fn parse_with_data(text: &str, data: &ScenarioData) -> Result<Scenario, Vec<Problem>> {
    let scenario = parse(text)?;
    let problems = scenario.check_data(data);
    if problems.is_empty() {
        Ok(scenario)
    } else {
        Err(problems)
    }
}

/// Every problem in the scenario, each with its field path: its sections' (see
/// [`Scenario::validate`]), then, once those are sound, each sweep value's and each race
/// entrant's, then the work estimate's.
pub fn check(scenario: &Scenario) -> Vec<Problem> {
    let mut p = scenario.section_problems();
    // Each value a sweep sets must make a valid scenario (checked once the rest is sound).
    if p.is_empty() {
        check_points(scenario, &mut p);
    }
    // Likewise each entrant of a race.
    if p.is_empty() {
        check_entrants(scenario, &mut p);
    }
    scenario.with_work_problems(p)
}

/// A scenario this document made, parsed and checked whole; its problems as one sentence.
pub(crate) fn derived(text: &str) -> Result<Scenario, String> {
    parse(text).map_err(|p| describe(&p))
}

/// Problems as one sentence.
pub(crate) fn describe(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(Problem::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// The scenario as a JSON tree, without its sweep (a point is one plain run).
pub(crate) fn sweep_base(scenario: &Scenario) -> Value {
    let mut base = scenario.clone();
    base.sweep = None;
    super::to_tree(&base)
}

/// The scenario with each axis set to its value in `values`, and `extra` set last.
pub(crate) fn point_scenario(
    base: &Value,
    config: &SweepConfig,
    values: &[Value],
    extra: Option<(&str, Value)>,
) -> Result<Scenario, String> {
    derived(&point_text(base, config, values, extra)?)
}

/// The JSON text of [`point_scenario`]'s scenario.
pub(crate) fn point_text(
    base: &Value,
    config: &SweepConfig,
    values: &[Value],
    extra: Option<(&str, Value)>,
) -> Result<String, String> {
    let mut tree = base.clone();
    let sets = config
        .vary
        .iter()
        .map(|a| a.path.as_str())
        .zip(values.iter().cloned())
        .chain(extra);
    for (path, value) in sets {
        path::set(&mut tree, path, value).map_err(|m| format!("{path}: {m}"))?;
    }
    Ok(tree.to_string())
}

/// Each race entrant's label and scenario, in lane order (empty without a `race`
/// section); an entrant whose patch makes an invalid scenario gives the problems as one
/// sentence.
pub(crate) fn entrants(scenario: &Scenario) -> Vec<(String, Result<Scenario, String>)> {
    let Some(race) = &scenario.race else {
        return Vec::new();
    };
    let base = race_base(scenario);
    race.entrants
        .iter()
        .map(|e| (e.label.trim().to_string(), entrant(&base, &e.patch)))
        .collect()
}

/// The scenario as a JSON tree without its race and sweep: what every entrant starts from.
fn race_base(scenario: &Scenario) -> Value {
    let mut base = sweep_base(scenario);
    if let Some(fields) = base.as_object_mut() {
        fields.remove("race");
    }
    base
}

fn entrant(base: &Value, patch: &Value) -> Result<Scenario, String> {
    let mut tree = base.clone();
    merge_patch(&mut tree, patch);
    derived(&tree.to_string())
}

/// Whether each entrant's patch makes a valid scenario: each problem at its patch.
fn check_entrants(scenario: &Scenario, p: &mut Problems) {
    for (i, (_, s)) in entrants(scenario).into_iter().enumerate() {
        if let Err(m) = s {
            p.push(
                join(&index("race.entrants", i), "patch"),
                format!("with this patch the scenario is invalid: {m}"),
            );
        }
    }
}

/// Whether every value of every axis (and each end of a search) makes a valid scenario:
/// each problem at the value's place in `sweep`, saying what it broke.
fn check_points(scenario: &Scenario, p: &mut Problems) {
    let Some(config) = &scenario.sweep else {
        return;
    };
    let base = sweep_base(scenario);
    let alone = SweepConfig::default();
    let try_value = |at: String, path: &str, v: Value, p: &mut Problems| {
        if let Err(m) = point_scenario(&base, &alone, &[], Some((path, v))) {
            p.push(at, format!("with this value the scenario is invalid: {m}"));
        }
    };
    for (k, axis) in config.vary.iter().enumerate() {
        let at = index("sweep.vary", k);
        match &axis.values {
            Some(values) => {
                for (j, v) in values.iter().enumerate() {
                    try_value(index(&join(&at, "values"), j), &axis.path, v.clone(), p);
                }
            }
            None => {
                for (f, x) in [("from", axis.from), ("to", axis.to)] {
                    if let Some(x) = x {
                        try_value(join(&at, f), &axis.path, number(x), p);
                    }
                }
            }
        }
    }
    match &config.search {
        Some(_) if scenario.slo.is_none() => {
            p.push(
                "sweep.search",
                "a search looks for the SLO's edge: add an slo section",
            );
        }
        Some(Search::MaxRate {
            path, low, high, ..
        }) => {
            for (f, x) in [("low", low), ("high", high)] {
                try_value(join("sweep.search", f), path, number(*x), p);
            }
        }
        Some(Search::MinWorkers { .. }) | None => {}
    }
}
