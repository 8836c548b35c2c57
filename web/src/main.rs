//! The Opal web app: edit a scenario, run it in the tab, read the results.

mod app;
mod panic_banner;

fn main() {
    panic_banner::install();
    yew::Renderer::<app::App>::new().render();
}
