//! Trace and sessions files a stage names: whether each is loaded in this tab, and picking
//! one (file input or drop on the stage). The text lives in the app state only — never in
//! the scenario or its share link — so a link opened fresh asks for the file again.

use super::{field_id, FormCtx};
use crate::state::{Action, Level};
use serde_json::Value;
use std::rc::Rc;
use wasm_bindgen_futures::JsFuture;
use yew::prelude::*;

/// Largest data file read, bytes (traces are bigger than scenarios, but a tab has limits).
pub(crate) const MAX_DATA_BYTES: f64 = 256.0 * 1024.0 * 1024.0;

/// Reads a user-chosen file as text, refusing files over [`MAX_DATA_BYTES`].
pub(crate) async fn read_file(file: &web_sys::File) -> Result<String, String> {
    let name = file.name();
    if file.size() > MAX_DATA_BYTES {
        return Err(format!(
            "{name} is {:.0} MB; at most {:.0} MB can be read here",
            file.size() / 1e6,
            MAX_DATA_BYTES / 1e6
        ));
    }
    let text = JsFuture::from(file.text())
        .await
        .map_err(|_| format!("{name} could not be read"))?;
    text.as_string()
        .ok_or_else(|| format!("{name} did not read as text"))
}

/// Lines of data in a JSONL text (blank lines do not count).
pub(crate) fn record_count(text: &str) -> usize {
    text.lines().filter(|l| !l.trim().is_empty()).count()
}

/// What is wrong with `text` as the data file of the stage field at `path` (named `name`),
/// as a run would find it: the stage's generator reads it and names its first bad line.
/// None when it reads, or when the document does not parse (a run would say so first).
pub(crate) fn file_problem(doc: &Value, path: &str, name: &str, text: &str) -> Option<String> {
    let doc = super::edit::write(doc, path, Value::String(name.to_string())).ok()?;
    let scenario = opal::parse_scenario(&doc.to_string()).ok()?;
    let data: opal::scenario::ScenarioData =
        [(name.to_string(), text.to_string())].into_iter().collect();
    scenario
        .check_data(&data)
        .into_iter()
        .find(|p| p.path == path)
        .map(|p| p.message)
}

/// Reads `file`, checks it as the stage's data, and, when it reads, keeps its text under its
/// name and points the stage field at `path` to it; a file that does not read is refused
/// at once with the reason, not at the next Run.
pub(crate) fn pick(ctx: FormCtx, path: String, file: web_sys::File) {
    wasm_bindgen_futures::spawn_local(async move {
        let name = file.name();
        let read = read_file(&file).await.and_then(|text| {
            match file_problem(&ctx.doc, &path, &name, &text) {
                Some(why) => Err(format!("{name} was not loaded: {why}")),
                None => Ok(text),
            }
        });
        match read {
            Ok(text) => {
                let n = record_count(&text);
                ctx.on_action.emit(Action::SetDataFile {
                    name: name.clone(),
                    text: Rc::from(text),
                });
                if ctx.str(&path) != name {
                    ctx.set(&path, Value::String(name.clone()));
                }
                ctx.on_action.emit(Action::Notify {
                    level: Level::Info,
                    message: format!("Loaded {name} ({n} records)."),
                });
            }
            Err(message) => ctx.on_action.emit(Action::Notify {
                level: Level::Error,
                message,
            }),
        }
    });
}

/// Drag-over and drop handlers that give a dropped file to the stage field at `path`.
pub(crate) fn drop_handlers(
    ctx: &FormCtx,
    path: &str,
) -> (Callback<DragEvent>, Callback<DragEvent>) {
    let over = Callback::from(|e: DragEvent| e.prevent_default());
    let ctx = ctx.clone();
    let path = path.to_string();
    let drop = Callback::from(move |e: DragEvent| {
        // The page-level drop (open as scenario) sees defaultPrevented and stands back.
        e.prevent_default();
        if let Some(file) = e
            .data_transfer()
            .and_then(|d| d.files())
            .and_then(|f| f.get(0))
        {
            pick(ctx.clone(), path.clone(), file);
        }
    });
    (over, drop)
}

/// Props of [`DataFileField`].
#[derive(Properties, PartialEq, Clone)]
pub(crate) struct DataFileFieldProps {
    /// The form context.
    pub ctx: FormCtx,
    /// Path of the `trace_file` / `sessions_file` field.
    pub path: AttrValue,
}

/// The data file a stage names, whether it is loaded, and a picker.
#[function_component(DataFileField)]
pub(crate) fn data_file_field(props: &DataFileFieldProps) -> Html {
    let c = &props.ctx;
    let path = props.path.to_string();
    let name = c.str(&path);
    let loaded = c.data_files.get(&name);
    let id = field_id(&path);
    let onchange = {
        let ctx = c.clone();
        let path = path.clone();
        Callback::from(move |e: Event| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            if let Some(file) = input.files().and_then(|f| f.get(0)) {
                pick(ctx.clone(), path.clone(), file);
            }
            input.set_value("");
        })
    };
    let forget = {
        let (on_action, name) = (c.on_action.clone(), name.clone());
        Callback::from(move |_| on_action.emit(Action::RemoveDataFile(name.clone())))
    };
    let status = match (name.is_empty(), loaded) {
        (true, _) => {
            html! { <span class="data-status missing">{ "No file chosen: pick one or drop it on this stage." }</span> }
        }
        (false, Some(text)) => html! {
            <>
                <span class="data-status loaded">{ format!("✓ {name} loaded ({} records)", record_count(text)) }</span>
                <button type="button" class="link-button" onclick={forget} disabled={c.disabled}
                    aria-label={format!("Forget {name}")}>{ "Forget" }</button>
            </>
        },
        (false, None) => html! {
            <span class="data-status missing">{ format!("Pick {name} again: data files stay in the tab that loaded them, not in the scenario or its link.") }</span>
        },
    };
    let label = if path.ends_with("trace_file") {
        "Trace file"
    } else {
        "Sessions file"
    };
    html! {
        <div class="field data-file" data-testid={format!("{id}-status")}>
            { c.text(&path, label, "JSONL, one record per line; named here, read from your disk.") }
            <div class="data-file-row">
                { status }
                <label class="file-button">
                    { "Choose file…" }
                    <input type="file" class="visually-hidden" accept=".jsonl,.json,.txt" id={format!("{id}-pick")}
                        aria-label={format!("Choose the {}", label.to_ascii_lowercase())} disabled={c.disabled} {onchange} />
                </label>
            </div>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_non_blank_lines() {
        assert_eq!(record_count("{\"a\":1}\n\n{\"a\":2}\n  \n"), 2);
        assert_eq!(record_count(""), 0);
    }

    #[test]
    fn a_file_that_is_not_a_trace_is_refused_when_picked_with_its_first_bad_line() {
        use serde_json::json;
        let doc = json!({"workload": {"stages": [{"type": "Trace", "trace_file": ""}]}});
        let path = "workload.stages[0].trace_file";
        let good =
            r#"{"timestamp": 120, "input_length": 3634, "output_length": 1, "hash_ids": [10, 11]}"#;
        assert_eq!(file_problem(&doc, path, "good.jsonl", good), None);
        let why = file_problem(&doc, path, "small.bin", "\u{1}\u{2}PK\u{3}\u{4}binary")
            .expect("a binary file is not a trace");
        assert!(why.contains("line 1"), "{why}");
        // A document that does not parse is left to say so itself.
        assert_eq!(file_problem(&json!([1]), path, "x", "\u{1}"), None);
    }
}
