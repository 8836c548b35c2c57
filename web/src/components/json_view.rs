//! The scenario as JSON text, editable directly; a parse error is shown with its line and
//! column and a button that puts the caret there. What was typed is never replaced.

use crate::state::ParseError;
use std::rc::Rc;
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

/// The JSON editor.
#[function_component(JsonView)]
pub fn json_view(props: &JsonViewProps) -> Html {
    let area_ref = use_node_ref();
    let oninput = props.on_edit.reform(|e: InputEvent| {
        let area: web_sys::HtmlTextAreaElement = e.target_unchecked_into();
        area.value()
    });
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
    html! {
        <div class="json-view">
            <label for="scenario-json">{ "Scenario JSON" }</label>
            <textarea id="scenario-json" class="scenario-json" spellcheck="false" ref={area_ref}
                value={props.text.to_string()} {oninput}
                aria-invalid={if invalid { "true" } else { "false" }}
                aria-describedby={invalid.then_some("json-error")} />
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
    fn caret_is_clamped_to_the_text() {
        assert_eq!(caret_offset("ab", 9, 9), 2);
        assert_eq!(caret_offset("ab", 0, 0), 0);
    }
}
