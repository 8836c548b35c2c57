//! Form fields that edit the scenario document: each has a label, an optional unit and
//! one-line hint, and shows its inline error, wired for screen readers.

mod field_group;
mod list_item;
mod number_field;
mod select_field;
mod text_field;
mod toggle;

pub use field_group::{FieldGroup, FieldGroupProps};
pub use list_item::{ListItem, ListItemProps};
pub use number_field::{NumberField, NumberFieldProps};
pub use select_field::{SelectField, SelectFieldProps, SelectOption};
pub use text_field::{TextField, TextFieldProps};
pub use toggle::{Toggle, ToggleProps};

use yew::prelude::*;

/// The ids a field's hint and error get, derived from the field's own id.
fn note_ids(id: &str) -> (String, String) {
    (format!("{id}-hint"), format!("{id}-error"))
}

/// `aria-describedby` for a field: its hint and its error, whichever are shown.
fn described_by(id: &str, hint: bool, error: bool) -> Option<AttrValue> {
    let (hint_id, error_id) = note_ids(id);
    let ids: Vec<String> = [(hint, hint_id), (error, error_id)]
        .into_iter()
        .filter_map(|(shown, id)| shown.then_some(id))
        .collect();
    (!ids.is_empty()).then(|| ids.join(" ").into())
}

/// The hint and error lines under a field.
fn notes(id: &str, hint: Option<&AttrValue>, error: Option<&str>) -> Html {
    let (hint_id, error_id) = note_ids(id);
    html! {
        <>
            if let Some(hint) = hint {
                <small class="field-hint" id={hint_id}>{ hint }</small>
            }
            if let Some(error) = error {
                <small class="field-error" id={error_id} role="alert">{ error.to_string() }</small>
            }
        </>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn described_by_lists_only_what_is_shown() {
        assert_eq!(described_by("seed", false, false), None);
        assert_eq!(
            described_by("seed", true, false).as_deref(),
            Some("seed-hint")
        );
        assert_eq!(
            described_by("seed", true, true).as_deref(),
            Some("seed-hint seed-error")
        );
        assert_eq!(
            described_by("seed", false, true).as_deref(),
            Some("seed-error")
        );
    }
}
