//! Making a run longer (its stages' requests and durations multiplied) and reseeding it,
//! on the scenario's JSON tree.

use engine::scenario::Scenario;
use serde_json::Value;

/// Multiplies every stage's `total_requests` and `time_duration_sec`, and a global
/// `simulation.simulation_time`, by `scale`.
pub(super) fn lengthen(tree: &mut Value, scale: u32) {
    if scale <= 1 {
        return;
    }
    if let Some(stages) = tree
        .pointer_mut("/workload/stages")
        .and_then(Value::as_array_mut)
    {
        for stage in stages {
            if let Some(n) = stage.get("total_requests").and_then(Value::as_u64) {
                stage["total_requests"] = Value::from(n.saturating_mul(u64::from(scale)));
            }
            scale_seconds(stage, "time_duration_sec", scale);
        }
    }
    if let Some(sim) = tree.get_mut("simulation") {
        scale_seconds(sim, "simulation_time", scale);
    }
}

fn scale_seconds(object: &mut Value, field: &str, scale: u32) {
    if let Some(t) = object.get(field).and_then(Value::as_f64) {
        object[field] = engine::scenario::sweep::number(t * f64::from(scale));
    }
}

/// Moves `simulation.seed` on by `k`.
pub(super) fn reseed(tree: &mut Value, k: u32) {
    if k == 0 {
        return;
    }
    if let Some(seed) = tree.pointer("/simulation/seed").and_then(Value::as_u64) {
        tree["simulation"]["seed"] = Value::from(seed.wrapping_add(u64::from(k)));
    }
}

/// Whether `scenario` (made at `now` times its stages' lengths) can be made at `scale`
/// times: some stage names a request count or a duration, and the longer run stays within
/// the scenario's limits.
pub(super) fn can_lengthen(scenario: &Scenario, scale: u32, now: u32) -> bool {
    let stretchable = scenario
        .workload
        .stages
        .iter()
        .any(|s| s.total_requests.is_some() || s.time_duration_sec.is_some());
    if !stretchable || scale <= now || scale % now != 0 {
        return false;
    }
    let mut tree = crate::document::to_tree(scenario);
    lengthen(&mut tree, scale / now);
    crate::document::check::parse(&tree.to_string()).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stages_grow_and_the_seed_moves_on() {
        let mut t = json!({
            "simulation": {"seed": 7, "simulation_time": 30.5},
            "workload": {"stages": [
                {"type": "UniformReqRate", "request_rate": 5, "total_requests": 100},
                {"type": "UniformReqRate", "request_rate": 5, "time_duration_sec": 1.5}
            ]}
        });
        lengthen(&mut t, 4);
        reseed(&mut t, 2);
        assert_eq!(t["workload"]["stages"][0]["total_requests"], 400);
        assert_eq!(t["workload"]["stages"][1]["time_duration_sec"], 6);
        assert_eq!(t["simulation"]["simulation_time"], 122);
        assert_eq!(t["simulation"]["seed"], 9);
    }
}
