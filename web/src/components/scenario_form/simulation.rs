//! The `simulation` section: seed, time bound, cluster size.

use super::SectionProps;
use crate::components::form::{FieldGroup, Toggle};
use serde_json::{json, Value};
use yew::prelude::*;

/// Bound a run gets when the user turns off "until the workload is done", seconds.
const DEFAULT_BOUND_S: f64 = 600.0;

/// Seed, simulation time and number of workers.
#[function_component(SimulationSection)]
pub fn simulation_section(props: &SectionProps) -> Html {
    let c = &props.ctx;
    let unbounded = c
        .get("simulation.simulation_time")
        .is_none_or(|v| v.is_null());
    let on_unbounded = c.setter("simulation.simulation_time", |until_done: bool| {
        if until_done {
            Value::Null
        } else {
            json!(DEFAULT_BOUND_S)
        }
    });
    html! {
        <FieldGroup title="Simulation" description="What makes a run repeatable, and how long it lasts." disabled={c.disabled}>
            { c.number("simulation.seed", "Seed").whole()
                .hint("Same scenario and seed, same run, on any machine.").html() }
            <Toggle id="simulation-until-done" label="Run until the workload is done"
                checked={unbounded} on_change={on_unbounded} disabled={c.disabled}
                hint="Off: stop the whole run at a fixed simulated time." />
            if !unbounded {
                { c.number("simulation.simulation_time", "Simulation time").unit("s")
                    .hint("Stop the whole run at this simulated time.").html() }
            }
            { c.number("simulation.num_workers", "Workers").count()
                .hint("Workers at the start; the autoscaler may change it.").html() }
        </FieldGroup>
    }
}
