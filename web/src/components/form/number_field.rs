//! A number input that keeps what the user typed, even while it is not a valid number.

use super::{described_by, notes};
use yew::prelude::*;

/// Props of [`NumberField`].
#[derive(Properties, PartialEq, Clone)]
pub struct NumberFieldProps {
    /// DOM id; the label points at it.
    pub id: AttrValue,
    /// What the field is, in words.
    pub label: AttrValue,
    /// The document's current value (`None` when the field is absent: the default applies).
    pub value: Option<f64>,
    /// Called with each valid number typed.
    pub on_change: Callback<f64>,
    /// Unit shown after the input, e.g. "req/s".
    #[prop_or_default]
    pub unit: Option<AttrValue>,
    /// One-line hint under the input.
    #[prop_or_default]
    pub hint: Option<AttrValue>,
    /// The engine's problem for this field's path.
    #[prop_or_default]
    pub error: Option<AttrValue>,
    /// Smallest accepted value.
    #[prop_or_default]
    pub min: Option<f64>,
    /// Largest accepted value.
    #[prop_or_default]
    pub max: Option<f64>,
    /// Arrow-key step (1 when absent).
    #[prop_or_default]
    pub step: Option<f64>,
    /// Accept whole numbers only.
    #[prop_or_default]
    pub integer: bool,
    /// Read-only for now (e.g. while the JSON does not parse).
    #[prop_or_default]
    pub disabled: bool,
    /// Told what is wrong with the typed text while it is not a valid value (the document
    /// keeps the last valid one), and `None` once it is again or the field goes.
    #[prop_or_default]
    pub on_draft: Option<Callback<Option<String>>>,
}

/// Limits a typed number must respect.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Limits {
    /// Smallest accepted.
    pub min: Option<f64>,
    /// Largest accepted.
    pub max: Option<f64>,
    /// Whole numbers only.
    pub integer: bool,
}

/// Reads what was typed, or says what is wrong with it.
pub(crate) fn parse_number(text: &str, limits: Limits) -> Result<f64, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("enter a number".into());
    }
    // Rust also parses "inf" and "NaN"; a scenario has no use for them.
    let x: f64 = t
        .parse()
        .ok()
        .filter(|x: &f64| x.is_finite())
        .ok_or_else(|| format!("{} is not a number", quoted(t)))?;
    if limits.integer && x.fract() != 0.0 {
        return Err("must be a whole number".into());
    }
    if let Some(min) = limits.min.filter(|&m| x < m) {
        return Err(format!("must be at least {min}"));
    }
    if let Some(max) = limits.max.filter(|&m| x > m) {
        return Err(format!("must be at most {max}"));
    }
    Ok(x)
}

/// `text` in quotes, cut short (with its length) past a field's width: a pasted page of
/// text must not become a page of error message.
fn quoted(text: &str) -> String {
    const SHOWN: usize = 20;
    let n = text.chars().count();
    if n <= SHOWN + 4 {
        return format!("'{text}'");
    }
    let head: String = text.chars().take(SHOWN).collect();
    format!("'{head}…' ({n} characters)")
}

/// The value one `step` up or down from `x`, on the step grid, within the limits.
pub(crate) fn step_number(x: f64, step: f64, up: bool, limits: Limits) -> f64 {
    let step = if step.is_finite() && step > 0.0 {
        step
    } else {
        1.0
    };
    let n = (x / step).round() + if up { 1.0 } else { -1.0 };
    // Print with the step's decimals so 0.1 + 0.2 shows as 0.3, not 0.30000000000000004.
    let decimals = format!("{step}")
        .split_once('.')
        .map_or(0, |(_, d)| d.len());
    let mut y: f64 = format!("{:.*}", decimals, n * step).parse().unwrap_or(x);
    if let Some(min) = limits.min {
        y = y.max(min);
    }
    if let Some(max) = limits.max {
        y = y.min(max);
    }
    y
}

fn show(value: Option<f64>) -> String {
    value.map(|x| x.to_string()).unwrap_or_default()
}

/// A labelled number input bound to one document value.
#[function_component(NumberField)]
pub fn number_field(props: &NumberFieldProps) -> Html {
    let limits = Limits {
        min: props.min,
        max: props.max,
        integer: props.integer,
    };
    let draft = use_state(|| show(props.value));
    {
        // The document changed elsewhere (JSON edit, import): show its value, unless the
        // draft already says the same number.
        let draft = draft.clone();
        use_effect_with(props.value, move |value| {
            if parse_number(&draft, Limits::default()).ok() != *value {
                draft.set(show(*value));
            }
        });
    }
    let emit = {
        let on_change = props.on_change.clone();
        let value = props.value;
        move |x: f64| {
            if Some(x) != value {
                on_change.emit(x);
            }
        }
    };
    let oninput = {
        let draft = draft.clone();
        let emit = emit.clone();
        Callback::from(move |e: InputEvent| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            let text = input.value();
            if let Ok(x) = parse_number(&text, limits) {
                emit(x);
            }
            draft.set(text);
        })
    };
    let onkeydown = {
        let draft = draft.clone();
        let step = props.step.unwrap_or(1.0);
        Callback::from(move |e: KeyboardEvent| {
            let up = match e.key().as_str() {
                "ArrowUp" => true,
                "ArrowDown" => false,
                _ => return,
            };
            e.prevent_default();
            let from = parse_number(&draft, Limits::default()).unwrap_or(0.0);
            let x = step_number(from, step, up, limits);
            draft.set(x.to_string());
            emit(x);
        })
    };
    // Left blank where the document has no value: the default applies, nothing is wrong.
    let local = if draft.trim().is_empty() && props.value.is_none() {
        None
    } else {
        parse_number(&draft, limits).err()
    };
    {
        // Told on each change; an invalid draft is withdrawn when it changes or the field
        // unmounts, so the app's list holds exactly the fields showing one.
        let on_draft = props.on_draft.clone();
        use_effect_with(local.clone(), move |local| {
            let shown = local.is_some();
            if let (Some(tell), true) = (&on_draft, shown) {
                tell.emit(local.clone());
            }
            move || {
                if let (Some(tell), true) = (on_draft, shown) {
                    tell.emit(None);
                }
            }
        });
    }
    let error = local.or_else(|| props.error.as_ref().map(|e| e.to_string()));
    let id = props.id.to_string();
    html! {
        <div class={classes!("field", "number-field", error.is_some().then_some("invalid"))}>
            <label for={props.id.clone()}>{ &props.label }</label>
            <span class="field-control">
                <input
                    id={props.id.clone()}
                    type="text"
                    inputmode={if props.integer { "numeric" } else { "decimal" }}
                    autocomplete="off"
                    value={(*draft).clone()}
                    disabled={props.disabled}
                    aria-invalid={if error.is_some() { "true" } else { "false" }}
                    aria-describedby={described_by(&id, props.hint.is_some(), error.is_some())}
                    {oninput}
                    {onkeydown}
                />
                if let Some(unit) = &props.unit {
                    <span class="field-unit">{ unit }</span>
                }
            </span>
            { notes(&id, props.hint.as_ref(), error.as_deref()) }
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANY: Limits = Limits {
        min: None,
        max: None,
        integer: false,
    };

    #[test]
    fn reads_numbers_people_type() {
        assert_eq!(parse_number(" 42 ", ANY), Ok(42.0));
        assert_eq!(parse_number("0.5", ANY), Ok(0.5));
        assert_eq!(parse_number("1e3", ANY), Ok(1000.0));
        assert_eq!(parse_number("-2", ANY), Ok(-2.0));
    }

    #[test]
    fn says_why_text_is_not_a_number() {
        assert_eq!(parse_number("", ANY), Err("enter a number".into()));
        assert_eq!(parse_number("1e", ANY), Err("'1e' is not a number".into()));
        assert_eq!(
            parse_number("inf", ANY),
            Err("'inf' is not a number".into())
        );
        assert_eq!(
            parse_number("NaN", ANY),
            Err("'NaN' is not a number".into())
        );
        // A long paste is quoted in part.
        let long = "9".repeat(10_000);
        assert_eq!(
            parse_number(&long, ANY),
            Err(format!(
                "'{}…' (10000 characters) is not a number",
                "9".repeat(20)
            ))
        );
    }

    #[test]
    fn enforces_limits_and_whole_numbers() {
        let seeds = Limits {
            min: Some(0.0),
            max: Some(100.0),
            integer: true,
        };
        assert_eq!(
            parse_number("2.5", seeds),
            Err("must be a whole number".into())
        );
        assert_eq!(parse_number("-1", seeds), Err("must be at least 0".into()));
        assert_eq!(
            parse_number("101", seeds),
            Err("must be at most 100".into())
        );
        assert_eq!(parse_number("100", seeds), Ok(100.0));
    }

    #[test]
    fn arrow_steps_land_on_the_step_grid() {
        // 0.2 + 0.1 is 0.30000000000000004 in floats; the field shows 0.3.
        assert_eq!(step_number(0.2, 0.1, true, ANY), 0.3);
        // 7 is between grid points 5 and 10 of step 5: round to 5, then one step up.
        assert_eq!(step_number(7.0, 5.0, true, ANY), 10.0);
        assert_eq!(step_number(3.0, 1.0, false, ANY), 2.0);
    }

    #[test]
    fn arrow_steps_stop_at_the_limits() {
        let limits = Limits {
            min: Some(0.0),
            max: Some(1.0),
            integer: false,
        };
        assert_eq!(step_number(0.0, 0.25, false, limits), 0.0);
        assert_eq!(step_number(1.0, 0.25, true, limits), 1.0);
    }
}
