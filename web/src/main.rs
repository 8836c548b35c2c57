//! The Opal web app: edit a scenario, run it in the tab, read the results.

mod app;
// Chart components, wired into the results view by the app; until then most are unused.
#[allow(dead_code, unused_imports)]
mod charts;
mod panic_banner;

fn main() {
    panic_banner::install();
    yew::Renderer::<app::App>::new().render();
}
