//! The `workload` section: stages run one after another; add, remove, reorder.

use super::stage::StageCard;
use super::{edit, SectionProps};
use crate::components::form::FieldGroup;
use crate::components::list_tail::list_tail;
use serde_json::Value;
use std::rc::Rc;
use yew::prelude::*;

/// Stage cards drawn at first, and drawn more at a time: a long list (a link or a paste may
/// hold thousands of stages, each card a few hundred elements) is drawn as asked for, and
/// a pasted document's first cards draw within a few frames.
const STAGES_SHOWN: usize = 20;

/// The list of stages.
#[function_component(WorkloadSection)]
pub fn workload_section(props: &SectionProps) -> Html {
    let c = &props.ctx;
    // One list shared by every card's callbacks (a copy each made n cards cost n² values).
    let stages: Rc<Vec<Value>> = Rc::new(
        c.get("workload.stages")
            .and_then(|v| v.as_array().cloned())
            .unwrap_or_default(),
    );
    let shown = use_state(|| STAGES_SHOWN);
    let set_stages = {
        let c = c.clone();
        move |list: Vec<Value>| c.set("workload.stages", Value::Array(list))
    };
    let on_add = {
        let stages = stages.clone();
        let set_stages = set_stages.clone();
        Callback::from(move |_: MouseEvent| {
            let mut list = (*stages).clone();
            list.push(edit::stage_default("ExponentialReqRate"));
            set_stages(list);
        })
    };
    let n = stages.len();
    // One stage past the drawn ones is drawn too: it is the one "+ Add stage" just added.
    let drawn = if n <= *shown + 1 { n } else { *shown };
    let show_more = {
        let shown = shown.clone();
        Callback::from(move |_: MouseEvent| shown.set(drawn + STAGES_SHOWN))
    };
    html! {
        <FieldGroup title="Workload" description="Stages run one after another; each needs a bound unless it replays a file." disabled={c.disabled}>
            { c.problems_under("workload.stages", &[]) }
            { for (0..drawn).map(|i| {
                let on_move = {
                    let stages = stages.clone();
                    let set_stages = set_stages.clone();
                    Callback::from(move |to: usize| set_stages(edit::moved(&stages, i, to)))
                };
                let on_remove = {
                    let stages = stages.clone();
                    let set_stages = set_stages.clone();
                    Callback::from(move |()| {
                        let mut list = (*stages).clone();
                        list.remove(i);
                        set_stages(list);
                    })
                };
                html! { <StageCard key={i} ctx={c.clone()} index={i} len={n} {on_move} {on_remove} /> }
            }) }
            if drawn < n {
                { list_tail("stages-hidden",
                    format!("Stages {} to {n} are not drawn here (the JSON and the problems list have them all). ", drawn + 1),
                    STAGES_SHOWN.min(n - drawn), show_more) }
            }
            <div class="list-add">
                <button type="button" onclick={on_add}>{ "+ Add stage" }</button>
            </div>
        </FieldGroup>
    }
}
