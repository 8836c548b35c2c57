//! A token-length distribution sub-form: its type select and that type's parameters.

use super::{edit, field_id, FormCtx};
use serde_json::Value;
use yew::prelude::*;

const LABELS: [(&str, &str); 4] = [
    ("constant", "Constant"),
    ("uniform", "Uniform"),
    ("normal", "Normal"),
    ("lognormal", "Lognormal (heavy tail)"),
];

/// The fields of the length distribution at `path`, titled `label`.
pub(crate) fn length_fields(
    c: &FormCtx,
    path: &str,
    label: &'static str,
    unit: &'static str,
) -> Html {
    let ty = c.str(&format!("{path}.type"));
    let on_type = {
        let c = c.clone();
        let path = path.to_string();
        Callback::from(move |t: String| {
            let old = c.get(&path).unwrap_or(Value::Null);
            c.set(&path, edit::switch_length_type(&old, &t));
        })
    };
    let f = |k: &str| format!("{path}.{k}");
    let known = edit::LENGTH_TYPES.contains(&ty.as_str());
    html! {
        <fieldset class="length-dist" id={field_id(path)}>
            <legend>{ label }</legend>
            { c.select(&f("type"), "Distribution", "Samples are rounded and clamped to [min, max].", &LABELS, Some(on_type)) }
            if ty == "constant" {
                { c.number(&f("value"), "Value").count().unit(unit).html() }
            }
            if ty == "uniform" {
                { c.number(&f("min"), "Min").count().unit(unit).html() }
                { c.number(&f("max"), "Max").count().unit(unit).html() }
            }
            if ty == "normal" {
                { c.number(&f("mean"), "Mean").unit(unit).html() }
                { c.number(&f("std"), "Std dev").unit(unit).html() }
                { c.number(&f("min"), "Min").count().unit(unit).html() }
                { c.number(&f("max"), "Max").count().unit(unit).html() }
            }
            if ty == "lognormal" {
                { c.number(&f("mean"), "Mean").unit(unit).hint("Before clamping.").html() }
                { c.number(&f("cv"), "CV").step(0.1).hint("Std dev / mean.").html() }
                { c.number(&f("min"), "Min").count().unit(unit).html() }
                { c.number(&f("max"), "Max").count().unit(unit).html() }
            }
            if !known {
                <p class="field-hint">{ format!("Unknown type \"{ty}\": choose one above.") }</p>
            }
            { c.problems_under(path, &[]) }
        </fieldset>
    }
}
