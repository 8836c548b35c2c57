//! Mounts the Opal web app on the page.

fn main() {
    opal_web::panic_banner::install();
    yew::Renderer::<opal_web::app::App>::new().render();
}
