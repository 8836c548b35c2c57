//! A titled section that folds away: the WAI-ARIA disclosure pattern, a button whose
//! `aria-expanded` says whether the content below it is shown.
//!
//! Not `<details>`: while any `<details>` in the document is closed, Chromium replaces a
//! textarea's selection with a pasted text many times slower (docs/robustness.md), and the
//! scenario's JSON is pasted into one. A folded section here renders no content at all.

use yew::prelude::*;

/// Props of [`Disclosure`].
#[derive(Properties, PartialEq, Clone)]
pub struct DisclosureProps {
    /// The button's text.
    pub title: AttrValue,
    /// Whether it is open at first, and again whenever this changes.
    #[prop_or(true)]
    pub open: bool,
    /// Classes of the section.
    #[prop_or_default]
    pub class: Classes,
    /// The section's `data-testid`.
    #[prop_or_default]
    pub testid: Option<AttrValue>,
    /// What folds away.
    #[prop_or_default]
    pub children: Html,
}

/// A section whose content a button shows and hides.
#[function_component(Disclosure)]
pub fn disclosure(props: &DisclosureProps) -> Html {
    let open = use_state_eq(|| props.open);
    {
        let open = open.clone();
        use_effect_with(props.open, move |&wanted| open.set(wanted));
    }
    let toggle = {
        let open = open.clone();
        Callback::from(move |_: MouseEvent| open.set(!*open))
    };
    html! {
        <section class={classes!("disclosure", props.class.clone())} data-testid={props.testid.clone()}>
            <button type="button" class="disclosure-title" aria-expanded={(*open).to_string()} onclick={toggle}>
                { &props.title }
            </button>
            if *open {
                { props.children.clone() }
            }
        </section>
    }
}
