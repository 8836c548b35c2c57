//! The scenario as JSON text, editable directly; a parse error is shown with its line and
//! column and a button that puts the caret there. What was typed is never replaced.

use crate::state::ParseError;
use gloo_timers::callback::Timeout;
use std::rc::Rc;
use wasm_bindgen::JsCast;
use yew::prelude::*;

/// Props of [`JsonView`].
#[derive(Properties, PartialEq, Clone)]
pub struct JsonViewProps {
    /// The text, exactly as typed.
    pub text: Rc<str>,
    /// Where it stops being JSON, if it does.
    pub parse_error: Option<ParseError>,
    /// Called with the whole text on every edit.
    pub on_edit: Callback<String>,
}

/// The caret position (in UTF-16 code units, as a textarea counts) of 1-based `line` and
/// `column`, where the column counts bytes as serde_json does. Clamped to the text.
pub fn caret_offset(text: &str, line: usize, column: usize) -> u32 {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let mut byte = (line_start + column.saturating_sub(1)).min(text.len());
    while !text.is_char_boundary(byte) {
        byte -= 1;
    }
    text[..byte].encode_utf16().count() as u32
}

/// Characters past which the text is read only once typing pauses: checking a document
/// this long takes a good part of a frame, and the browser's own edit of it about as long.
const LONG_TEXT: u32 = 100_000;
/// How long typing must pause before a long text is read.
const LONG_TEXT_PAUSE_MS: u32 = 300;

/// Bytes past which a document is not put in the textarea whole: Chromium lays out a
/// textarea's whole text, which takes seconds for a few megabytes. Its first lines are shown,
/// read-only, and a paste replaces it.
const LARGE_DOC: usize = 1 << 20;
/// How much of a large document is shown, bytes (whole lines).
const PREVIEW_BYTES: usize = 64 << 10;

/// The start of `text` a large document shows: whole lines, up to [`PREVIEW_BYTES`].
pub fn preview(text: &str) -> &str {
    if text.len() <= PREVIEW_BYTES {
        return text;
    }
    let mut end = PREVIEW_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    match text[..end].rfind('\n') {
        Some(i) => &text[..=i],
        None => &text[..end],
    }
}

/// `text` with its UTF-16 range `from..to` (a textarea's selection) replaced by `with`.
pub fn spliced(text: &str, from: u32, to: u32, with: &str) -> String {
    let byte_at = |units: u32| {
        let mut seen = 0;
        for (i, c) in text.char_indices() {
            if seen >= units {
                return i;
            }
            seen += c.len_utf16() as u32;
        }
        text.len()
    };
    let (a, b) = (byte_at(from.min(to)), byte_at(from.max(to)));
    [&text[..a], with, &text[b..]].concat()
}

/// The JSON editor.
///
/// The textarea is left to the browser between edits: a multi-line insertion (a paste
/// through automation, an input method) fires an input event per line, and parsing and
/// checking the whole document at each made such an edit quadratic. Every input event only
/// marks the text dirty; it is read and sent once the browser's task ends (a long text once
/// typing pauses), or at once when the textarea loses focus, so a Run or Share clicked next
/// sees what was typed.
#[function_component(JsonView)]
pub fn json_view(props: &JsonViewProps) -> Html {
    let area_ref = use_node_ref();
    // The text this editor last showed or sent; an edit back to it is no edit.
    let shown = use_mut_ref(|| Rc::<str>::from(""));
    let pending = use_mut_ref(|| None::<Timeout>);
    {
        let (area_ref, shown) = (area_ref.clone(), shown.clone());
        use_effect_with(props.text.clone(), move |text| {
            if let Some(area) = area_ref.cast::<web_sys::HtmlTextAreaElement>() {
                if *shown.borrow() != *text {
                    area.set_value(if text.len() > LARGE_DOC {
                        preview(text)
                    } else {
                        text
                    });
                }
            }
            *shown.borrow_mut() = text.clone();
        });
    }
    let flush = {
        let (area_ref, shown, pending) = (area_ref.clone(), shown.clone(), pending.clone());
        let on_edit = props.on_edit.clone();
        Rc::new(move || {
            pending.borrow_mut().take();
            // A large document's preview is not the document.
            let Some(area) = area_ref
                .cast::<web_sys::HtmlTextAreaElement>()
                .filter(|a| !a.read_only())
            else {
                return;
            };
            let text = area.value();
            if *shown.borrow().as_ref() != *text {
                *shown.borrow_mut() = Rc::from(text.as_str());
                on_edit.emit(text);
            }
        })
    };
    let oninput = {
        let (flush, pending, area_ref) = (flush.clone(), pending.clone(), area_ref.clone());
        Callback::from(move |_: InputEvent| {
            let long = area_ref
                .cast::<web_sys::HtmlTextAreaElement>()
                .is_some_and(|a| a.text_length() > LONG_TEXT);
            let mut pending = pending.borrow_mut();
            if long || pending.is_none() {
                let flush = flush.clone();
                let wait = if long { LONG_TEXT_PAUSE_MS } else { 0 };
                *pending = Some(Timeout::new(wait, move || flush()));
            }
        })
    };
    let onblur = Callback::from(move |_: FocusEvent| flush());
    let large = props.text.len() > LARGE_DOC;
    // A paste that makes the document large, or replaces a large one, does not go through
    // the textarea: the document is sent as it will be, and the textarea shows its start.
    let onpaste = {
        let (area_ref, pending, on_edit) =
            (area_ref.clone(), pending.clone(), props.on_edit.clone());
        Callback::from(move |e: Event| {
            let pasted = e
                .dyn_ref::<web_sys::ClipboardEvent>()
                .and_then(|c| c.clipboard_data())
                .and_then(|d| d.get_data("text").ok());
            let (Some(pasted), Some(area)) =
                (pasted, area_ref.cast::<web_sys::HtmlTextAreaElement>())
            else {
                return;
            };
            if !large && pasted.len() + area.text_length() as usize <= LARGE_DOC {
                return;
            }
            e.prevent_default();
            pending.borrow_mut().take();
            let text = if large {
                pasted
            } else {
                let (from, to) = (area.selection_start(), area.selection_end());
                let at = |p: Result<Option<u32>, _>| p.ok().flatten().unwrap_or(0);
                spliced(&area.value(), at(from), at(to), &pasted)
            };
            on_edit.emit(text);
        })
    };
    let go_to_error = {
        let area_ref = area_ref.clone();
        let text = props.text.clone();
        let error = props.parse_error.clone();
        Callback::from(move |_: MouseEvent| {
            let (Some(area), Some(e)) = (area_ref.cast::<web_sys::HtmlTextAreaElement>(), &error)
            else {
                return;
            };
            let at = if e.at_end {
                text.encode_utf16().count() as u32
            } else {
                caret_offset(&text, e.line, e.column)
            };
            let _ = area.focus();
            let _ = area.set_selection_range(at, at);
        })
    };
    let invalid = props.parse_error.is_some();
    let described = match (large, invalid) {
        (true, true) => Some("json-large json-error"),
        (true, false) => Some("json-large"),
        (false, true) => Some("json-error"),
        (false, false) => None,
    };
    html! {
        <div class="json-view">
            <label for="scenario-json">{ "Scenario JSON" }</label>
            <textarea id="scenario-json" class="scenario-json" spellcheck="false" ref={area_ref}
                {oninput} {onblur} {onpaste} readonly={large}
                aria-invalid={if invalid { "true" } else { "false" }}
                aria-describedby={described} />
            if large {
                <p class="note" id="json-large" data-testid="json-large">
                    { format!("This document is {:.1} MB: its first {} lines are shown, read-only \
                        (a browser's text box takes seconds to lay out this much). Edit it with the \
                        form, or paste a whole document here to replace it; Export saves it.",
                        props.text.len() as f64 / 1e6, preview(&props.text).lines().count()) }
                </p>
            }
            if let Some(e) = &props.parse_error {
                <p class="json-error" id="json-error" data-testid="json-error">
                    { format!("Line {}, column {}: {}. ", e.line, e.column, e.message) }
                    <button class="link" onclick={go_to_error}>{ "Show me" }</button>
                </p>
            }
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caret_lands_on_the_reported_line_and_column() {
        let text = "{\n  \"a\": x\n}";
        // Line 2 starts at byte 2; column 8 is the 8th byte of "  \"a\": x", the 'x'.
        let at = caret_offset(text, 2, 8) as usize;
        assert_eq!(&text[at..at + 1], "x");
    }

    #[test]
    fn caret_counts_utf16_units_before_it() {
        // "é" is 2 bytes and 1 UTF-16 unit; "𝄞" is 4 bytes and 2 units.
        let text = "{\"é𝄞\": ?}";
        // Bytes before '?': { " é(2) 𝄞(4) " : space = 11, so it is column 12.
        // UTF-16 units before it: 1 + 1 + 1 + 2 + 1 + 1 + 1 = 8.
        assert_eq!(caret_offset(text, 1, 12), 8);
    }

    #[test]
    fn a_large_document_shows_whole_lines_from_its_start() {
        let line = "x".repeat(99) + "\n";
        let text = line.repeat(2_000); // 200,000 bytes
        let shown = preview(&text);
        // 64 KiB is 655 lines and 36 bytes: the 655 whole lines.
        assert_eq!(shown.len(), 65_500);
        assert!(shown.ends_with('\n'));
        assert_eq!(preview("{}"), "{}");
    }

    #[test]
    fn a_paste_replaces_the_selection_counted_in_utf16_units() {
        // "é" is one UTF-16 unit and two bytes; "𝄞" two units and four bytes.
        assert_eq!(spliced("aé𝄞b", 1, 4, "XY"), "aXYb");
        assert_eq!(spliced("ab", 1, 1, "_"), "a_b");
        assert_eq!(spliced("ab", 9, 0, "_"), "_");
    }

    #[test]
    fn caret_is_clamped_to_the_text() {
        assert_eq!(caret_offset("ab", 9, 9), 2);
        assert_eq!(caret_offset("ab", 0, 0), 0);
    }
}
