//! The line under a long list drawn a part at a time (stage cards, stage tables, sweep
//! rows): which items are not drawn and where they all are, and a button drawing more.

use yew::prelude::*;

/// The line: `says` which items are left out, the button draws `more` of them.
pub fn list_tail(
    testid: &'static str,
    says: String,
    more: usize,
    on_more: Callback<MouseEvent>,
) -> Html {
    html! {
        <p class="note" data-testid={testid}>
            { says }
            <button type="button" onclick={on_more}>{ format!("Show {more} more") }</button>
        </p>
    }
}
