//! The Opal web app: edit a scenario, run it in the tab, read the results.

mod app;
mod base64url;

mod json_path;
mod panic_banner;
mod share;
mod shortcuts;
mod state;

fn main() {
    panic_banner::install();
    yew::Renderer::<app::App>::new().render();
}
