//! The `workload` section: stages run one after another; add, remove, reorder.

use super::stage::StageCard;
use super::{edit, SectionProps};
use crate::components::form::FieldGroup;
use serde_json::Value;
use yew::prelude::*;

/// The list of stages.
#[function_component(WorkloadSection)]
pub fn workload_section(props: &SectionProps) -> Html {
    let c = &props.ctx;
    let stages: Vec<Value> = c
        .get("workload.stages")
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default();
    let set_stages = {
        let c = c.clone();
        move |list: Vec<Value>| c.set("workload.stages", Value::Array(list))
    };
    let on_add = {
        let stages = stages.clone();
        let set_stages = set_stages.clone();
        Callback::from(move |_: MouseEvent| {
            let mut list = stages.clone();
            list.push(edit::stage_default("ExponentialReqRate"));
            set_stages(list);
        })
    };
    let n = stages.len();
    html! {
        <FieldGroup title="Workload" description="Stages run one after another; each needs a bound unless it replays a file." disabled={c.disabled}>
            { c.problems_under("workload.stages", &[]) }
            { for (0..n).map(|i| {
                let on_move = {
                    let stages = stages.clone();
                    let set_stages = set_stages.clone();
                    Callback::from(move |to: usize| set_stages(edit::moved(&stages, i, to)))
                };
                let on_remove = {
                    let stages = stages.clone();
                    let set_stages = set_stages.clone();
                    Callback::from(move |()| {
                        let mut list = stages.clone();
                        list.remove(i);
                        set_stages(list);
                    })
                };
                html! { <StageCard key={i} ctx={c.clone()} index={i} len={n} {on_move} {on_remove} /> }
            }) }
            <div class="list-add">
                <button type="button" onclick={on_add}>{ "+ Add stage" }</button>
            </div>
        </FieldGroup>
    }
}
