//! A token-length distribution sub-form: its type select and that type's parameters.

use super::{edit, field_id, num, FormCtx, Num};
use serde_json::Value;
use yew::prelude::*;

const LABELS: [(&str, &str); 4] = [
    ("constant", "Constant"),
    ("uniform", "Uniform"),
    ("normal", "Normal"),
    ("lognormal", "Lognormal (heavy tail)"),
];

/// Each type's parameters, in the length's unit except the lognormal's CV.
const CONSTANT: [Num; 1] = [num("value", "Value").whole().in_unit()];
const UNIFORM: [Num; 2] = [
    num("min", "Min").whole().in_unit(),
    num("max", "Max").whole().in_unit(),
];
const NORMAL: [Num; 4] = [
    num("mean", "Mean").in_unit(),
    num("std", "Std dev").in_unit(),
    num("min", "Min").whole().in_unit(),
    num("max", "Max").whole().in_unit(),
];
const LOGNORMAL: [Num; 4] = [
    num("mean", "Mean").in_unit().hint("Before clamping."),
    num("cv", "CV").step(0.1).hint("Std dev / mean."),
    num("min", "Min").whole().in_unit(),
    num("max", "Max").whole().in_unit(),
];

/// The fields of the length distribution at `path`, titled `label`.
pub fn length_fields(c: &FormCtx, path: &str, label: &'static str, unit: &'static str) -> Html {
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
                { c.numbers_in(path, Some(unit), &CONSTANT) }
            }
            if ty == "uniform" {
                { c.numbers_in(path, Some(unit), &UNIFORM) }
            }
            if ty == "normal" {
                { c.numbers_in(path, Some(unit), &NORMAL) }
            }
            if ty == "lognormal" {
                { c.numbers_in(path, Some(unit), &LOGNORMAL) }
            }
            if !known {
                <p class="field-hint">{ format!("Unknown type \"{ty}\": choose one above.") }</p>
            }
            { c.problems_under(path, &[]) }
        </fieldset>
    }
}
