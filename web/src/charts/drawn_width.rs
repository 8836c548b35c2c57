//! The width a chart is drawn at, so that its viewBox is in CSS pixels and its text is
//! drawn at the size the style sheet gives it, whatever the chart's width on the page.

use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{Element, ResizeObserver};
use yew::prelude::*;

/// The width `node` is drawn at, in whole CSS px (rounded down, so text is never drawn
/// smaller than its CSS size), kept up to date as it changes; `fallback`
/// until the element is on the page (and outside a browser).
#[hook]
pub fn use_drawn_width(node: NodeRef, fallback: u32) -> u32 {
    let width = use_state_eq(|| None::<u32>);
    {
        let width = width.setter();
        use_effect_with(node, move |node| {
            let watch = node.cast::<Element>().and_then(|element| {
                let measure = move |element: &Element| {
                    let w = element.get_bounding_client_rect().width().floor();
                    if w >= 1.0 {
                        width.set(Some(w as u32));
                    }
                };
                measure(&element);
                let target = element.clone();
                let on_resize =
                    Closure::<dyn FnMut(js_sys::Array)>::new(move |_: js_sys::Array| {
                        measure(&target)
                    });
                let observer = ResizeObserver::new(on_resize.as_ref().unchecked_ref()).ok()?;
                observer.observe(&element);
                Some((observer, on_resize))
            });
            move || {
                if let Some((observer, _on_resize)) = watch {
                    observer.disconnect();
                }
            }
        });
    }
    width.unwrap_or(fallback)
}
