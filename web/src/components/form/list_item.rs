//! One entry of an editable list (stages, tiers): a titled box with move up, move down and
//! remove buttons.

use yew::prelude::*;

/// Props of [`ListItem`].
#[derive(Properties, PartialEq, Clone)]
pub struct ListItemProps {
    /// Heading of the entry, e.g. "Stage 2: Trace".
    pub title: AttrValue,
    /// Position in the list, from 0.
    pub index: usize,
    /// Length of the list.
    pub len: usize,
    /// Called with the position to move the entry to.
    pub on_move: Callback<usize>,
    /// Called to remove the entry.
    pub on_remove: Callback<()>,
    /// Buttons are inert (the JSON does not parse).
    #[prop_or_default]
    pub disabled: bool,
    /// `data-testid` of the box.
    #[prop_or_default]
    pub testid: Option<AttrValue>,
    /// Extra class, e.g. for a drop target.
    #[prop_or_default]
    pub class: Classes,
    /// Drag-over handler (for entries that accept a dropped file).
    #[prop_or_default]
    pub ondragover: Option<Callback<DragEvent>>,
    /// Drop handler.
    #[prop_or_default]
    pub ondrop: Option<Callback<DragEvent>>,
    /// The entry's fields.
    #[prop_or_default]
    pub children: Html,
}

/// A list entry with its controls.
#[function_component(ListItem)]
pub fn list_item(props: &ListItemProps) -> Html {
    let i = props.index;
    let up = props
        .on_move
        .reform(move |_: MouseEvent| i.saturating_sub(1));
    let down = props.on_move.reform(move |_: MouseEvent| i + 1);
    let remove = props.on_remove.reform(|_: MouseEvent| ());
    html! {
        <section class={classes!("list-item", props.class.clone())} aria-label={props.title.clone()}
            data-testid={props.testid.clone()} ondragover={props.ondragover.clone()} ondrop={props.ondrop.clone()}>
            <header class="list-item-head">
                <h4>{ &props.title }</h4>
                <span class="list-item-tools">
                    <button type="button" onclick={up} disabled={props.disabled || i == 0}
                        aria-label={format!("Move {} up", props.title)} title="Move up">{ "↑" }</button>
                    <button type="button" onclick={down} disabled={props.disabled || i + 1 >= props.len}
                        aria-label={format!("Move {} down", props.title)} title="Move down">{ "↓" }</button>
                    <button type="button" onclick={remove} disabled={props.disabled}
                        aria-label={format!("Remove {}", props.title)} title="Remove">{ "Remove" }</button>
                </span>
            </header>
            <div class="list-item-fields">{ props.children.clone() }</div>
        </section>
    }
}
