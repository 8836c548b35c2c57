//! Saving a chart as a file: SVG charts as `.svg`, the canvas timeline as `.png`.
//!
//! Colours come from CSS variables, which a standalone file cannot see, so the SVG is cloned
//! and every element gets its computed colours and fonts inlined before serialising.

use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Element, HtmlAnchorElement, HtmlCanvasElement};
use yew::prelude::*;

/// Computed style properties copied onto the exported SVG's elements.
const INLINED: [&str; 10] = [
    "color",
    "fill",
    "fill-opacity",
    "stroke",
    "stroke-width",
    "stroke-dasharray",
    "opacity",
    "font-family",
    "font-size",
    "text-anchor",
];

/// Downloads the `<svg>` element as `file_name` with its current colours inlined.
pub fn download_svg(svg: &Element, file_name: &str) -> Result<(), JsValue> {
    let window = web_sys::window().ok_or("no window")?;
    let clone: Element = svg.clone_node_with_deep(true)?.dyn_into()?;
    let originals = svg.query_selector_all("*")?;
    let copies = clone.query_selector_all("*")?;
    let pairs = std::iter::once((svg.clone(), clone.clone())).chain(
        (0..originals.length().min(copies.length())).filter_map(|i| {
            let a = originals.item(i)?.dyn_into::<Element>().ok()?;
            let b = copies.item(i)?.dyn_into::<Element>().ok()?;
            Some((a, b))
        }),
    );
    for (original, copy) in pairs {
        let Some(style) = window.get_computed_style(&original)? else {
            continue;
        };
        let inline: String = INLINED
            .iter()
            .filter_map(|p| {
                let v = style.get_property_value(p).ok()?;
                (!v.is_empty()).then(|| format!("{p}:{v};"))
            })
            .collect();
        copy.set_attribute("style", &inline)?;
    }
    clone.set_attribute("xmlns", "http://www.w3.org/2000/svg")?;
    let text = web_sys::XmlSerializer::new()?.serialize_to_string(&clone)?;
    crate::files::download_text(file_name, "image/svg+xml", &text).map_err(JsValue::from)
}

/// Downloads the canvas's current pixels as a PNG named `file_name`.
pub fn download_png(canvas: &HtmlCanvasElement, file_name: &str) -> Result<(), JsValue> {
    let url = canvas.to_data_url_with_type("image/png")?;
    click_download(&url, file_name)
}

/// Clicks a temporary `<a download>` pointing at `url`.
fn click_download(url: &str, file_name: &str) -> Result<(), JsValue> {
    let document = web_sys::window()
        .and_then(|w| w.document())
        .ok_or("no document")?;
    let a: HtmlAnchorElement = document.create_element("a")?.dyn_into()?;
    a.set_href(url);
    a.set_download(file_name);
    let body = document.body().ok_or("no body")?;
    body.append_child(&a)?;
    a.click();
    body.remove_child(&a)?;
    Ok(())
}

/// What an [`ExportButton`] saves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportKind {
    /// The referenced element is an `<svg>`.
    Svg,
    /// The referenced element is a `<canvas>`.
    Png,
}

/// Props of [`ExportButton`].
#[derive(Properties, PartialEq)]
pub struct ExportButtonProps {
    /// The `<svg>` or `<canvas>` to save.
    pub target: NodeRef,
    /// Download name without extension, e.g. `"ttft-cdf"`.
    pub file_name: AttrValue,
    /// SVG or PNG.
    pub kind: ExportKind,
}

/// A small "Save" button that downloads the chart it points at.
#[function_component(ExportButton)]
pub fn export_button(props: &ExportButtonProps) -> Html {
    let onclick = {
        let target = props.target.clone();
        let kind = props.kind;
        let name = props.file_name.clone();
        Callback::from(move |_: MouseEvent| {
            let result = match kind {
                ExportKind::Svg => target
                    .cast::<Element>()
                    .map(|svg| download_svg(&svg, &format!("{name}.svg"))),
                ExportKind::Png => target
                    .cast::<HtmlCanvasElement>()
                    .map(|c| download_png(&c, &format!("{name}.png"))),
            };
            if let Some(Err(e)) = result {
                web_sys::console::error_2(&"chart export failed".into(), &e);
            }
        })
    };
    let label = match props.kind {
        ExportKind::Svg => "Save SVG",
        ExportKind::Png => "Save PNG",
    };
    html! { <button type="button" class="chart-export" {onclick}>{ label }</button> }
}
