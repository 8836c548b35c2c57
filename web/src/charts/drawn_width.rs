//! The width a chart is drawn at, so that its viewBox is in CSS pixels and its text is
//! drawn at the size the style sheet gives it, whatever the chart's width on the page; or
//! in larger pixels where a [`ChartScale`] says so (talk mode, read from the back of a
//! room).

use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{Element, ResizeObserver};
use yew::prelude::*;

/// How many CSS px a chart's pixel takes: above 1, its text, lines and marks are drawn that
/// much larger, in fewer pixels across. Charts without one in context draw at 1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChartScale(pub f64);

/// The width `node` is drawn at, in whole pixels of the [`ChartScale`] (rounded down, so
/// text is never drawn smaller than its CSS size), kept up to date as it changes;
/// `fallback` until the element is on the page (and outside a browser).
#[hook]
pub fn use_drawn_width(node: NodeRef, fallback: u32) -> u32 {
    let scale = use_context::<ChartScale>().map_or(1.0, |s| s.0.max(1.0));
    let width = use_state_eq(|| None::<f64>);
    {
        let width = width.setter();
        use_effect_with(node, move |node| {
            let watch = node.cast::<Element>().and_then(|element| {
                let measure = move |element: &Element| {
                    let w = element.get_bounding_client_rect().width();
                    if w >= 1.0 {
                        width.set(Some(w));
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
    width.map_or(fallback, |w| ((w / scale).floor() as u32).max(1))
}
