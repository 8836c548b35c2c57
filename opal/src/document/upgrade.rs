//! Documents written before a field moved: their fields taken to where they are read now,
//! so that an old share link or file gives the run it gave.
//!
//! - A custom GPU's calibration was `hardware.custom.calibration` until 2026-12-07; it is
//!   the calibrated timing model's figures, `worker.timing.calibration`, so the hardware
//!   section holds a GPU's datasheet alone. A deployment pool's overrides move the same way,
//!   each pool keeping the calibration it had (its own GPU's, or the custom one's).

use engine::validate::{index, join, Problem};
use serde_json::{Map, Value};

const CALIBRATION: &str = "calibration";

/// Moves every field of `tree` (a document's JSON tree) written where it no longer lives.
pub(super) fn upgrade(tree: &mut Value, problems: &mut Vec<Problem>) {
    let Value::Object(top) = tree else { return };
    let (top_custom, top_old) = take_calibration(top);
    // The default GPU is a catalogue one; a custom section beside one was ignored whole.
    let top_custom = top_custom.unwrap_or(false);
    let top_old = top_old.filter(|_| top_custom);
    let top_timing = timing(top).cloned();
    if let Some(cal) = &top_old {
        if !place(top, None, cal.clone(), "", problems) {
            return;
        }
    }
    let top_timing_now = timing(top).cloned();
    let pools = top
        .get_mut("deployment")
        .and_then(|d| d.get_mut("pools"))
        .and_then(Value::as_array_mut);
    for (i, pool) in pools.into_iter().flatten().enumerate() {
        let Value::Object(pool) = pool else { continue };
        let path = index("deployment.pools", i);
        let (custom, own) = take_calibration(pool);
        // Before: a pool on the custom GPU had its custom section's calibration (its own if
        // it replaced `custom`, else the top's); on a catalogue GPU, the catalogue's.
        let custom = custom.unwrap_or(top_custom);
        let replaces_custom = pool
            .get("hardware")
            .and_then(Value::as_object)
            .is_some_and(|h| h.contains_key("custom"));
        let before = match (custom, replaces_custom) {
            (false, _) => None,
            (true, true) => own,
            (true, false) => top_old.clone(),
        };
        // After: the pool's own timing section if it replaces it, else the top's.
        let own_timing = pool.get("worker").and_then(|w| w.get("timing")).cloned();
        let after = own_timing
            .as_ref()
            .or(top_timing_now.as_ref())
            .and_then(|t| t.get(CALIBRATION))
            .cloned();
        if before == after {
            continue;
        }
        // The pool's timing section (shallow overrides replace it whole) from what it saw.
        let base = own_timing.or_else(|| top_timing.clone());
        let mut section = base
            .and_then(|t| t.as_object().cloned())
            .unwrap_or_default();
        section.remove(CALIBRATION);
        if let Some(cal) = before {
            section.insert(CALIBRATION.into(), cal);
        }
        place(pool, Some(section), Value::Null, &path, problems);
    }
}

/// Takes `hardware.custom.calibration` out of `o` (a document, or a pool's overrides):
/// whether `o` names the custom GPU (`None` where it names no GPU), and the calibration.
fn take_calibration(o: &mut Map<String, Value>) -> (Option<bool>, Option<Value>) {
    let Some(Value::Object(hardware)) = o.get_mut("hardware") else {
        return (None, None);
    };
    let custom = match hardware.get("gpu") {
        Some(Value::String(gpu)) => Some(gpu.eq_ignore_ascii_case("custom")),
        Some(_) => Some(false),
        None => None,
    };
    let cal = match hardware.get_mut("custom") {
        Some(Value::Object(spec)) => spec.remove(CALIBRATION),
        _ => None,
    };
    (custom, cal)
}

/// `o`'s `worker.timing` section, if it has one.
fn timing(o: &Map<String, Value>) -> Option<&Value> {
    o.get("worker")?.get("timing")
}

/// Puts `calibration` at `worker.timing.calibration` of `o`, or, given `section`, makes it
/// `o`'s whole `worker.timing`. Says whether it could (a worker or timing section of the
/// wrong type is reported where it stands).
fn place(
    o: &mut Map<String, Value>,
    section: Option<Map<String, Value>>,
    calibration: Value,
    path: &str,
    problems: &mut Vec<Problem>,
) -> bool {
    let worker = o
        .entry("worker")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(worker) = worker.as_object_mut() else {
        return false;
    };
    if let Some(section) = section {
        worker.insert("timing".into(), Value::Object(section));
        return true;
    }
    let timing = worker
        .entry("timing")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(timing) = timing.as_object_mut() else {
        return false;
    };
    if timing.contains_key(CALIBRATION) {
        problems.push(Problem::new(
            join(path, "hardware.custom.calibration"),
            "a calibration is given here and at worker.timing.calibration; the calibrated \
             model's figures live at worker.timing.calibration now: keep that one",
        ));
        return false;
    }
    timing.insert(CALIBRATION.into(), calibration);
    true
}
