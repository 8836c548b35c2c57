//! Makes a panic in wasm visible on the page, not only in the console.

use std::panic;

/// Installs a panic hook that shows the message in a banner at the top of the page.
pub fn install() {
    panic::set_hook(Box::new(|info| {
        let message = format!("The simulator crashed: {info}");
        web_sys::console::error_1(&message.clone().into());
        show(&message);
    }));
}

fn show(message: &str) {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let banner = match document.get_element_by_id("panic-banner") {
        Some(el) => el,
        None => match document.create_element("div") {
            Ok(el) => {
                el.set_id("panic-banner");
                el.set_attribute("role", "alert").ok();
                if let Some(body) = document.body() {
                    body.prepend_with_node_1(&el).ok();
                }
                el
            }
            Err(_) => return,
        },
    };
    banner.set_text_content(Some(message));
}
