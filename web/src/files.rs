//! Files in and out of the page: read an imported file, download text, copy to the clipboard.
//!
//! Browser-only calls; errors come back as sentences for a notice, never as panics.

use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// Largest file we read as a scenario; bigger files are refused before reading.
pub const MAX_IMPORT_BYTES: usize = crate::share::MAX_SCENARIO_BYTES;

/// Reads a user-chosen file as text.
pub async fn read_text(file: &web_sys::File) -> Result<String, String> {
    let name = file.name();
    if file.size() > MAX_IMPORT_BYTES as f64 {
        return Err(format!(
            "{name} is {} bytes; a scenario file may be at most {MAX_IMPORT_BYTES}",
            file.size()
        ));
    }
    let text = JsFuture::from(file.text())
        .await
        .map_err(|e| format!("{name} could not be read ({})", js_message(&e)))?;
    text.as_string()
        .ok_or_else(|| format!("{name} did not read as text"))
}

/// Offers `text` to the user as a file download named `filename`.
pub fn download_text(filename: &str, mime: &str, text: &str) -> Result<(), String> {
    download_written(filename, mime, |out| out.write_all(text.as_bytes()))
}

/// Bytes handed to the browser at a time: a file leaves the wasm's memory in parts of this
/// size, so a large export never needs one allocation (or one JS string) of its size.
const PART_BYTES: usize = 4 << 20;

/// A file's bytes gathered as Blob parts outside the wasm's memory.
struct BlobParts {
    parts: js_sys::Array,
    buffer: Vec<u8>,
    written: u64,
}

impl BlobParts {
    fn flush_part(&mut self) {
        if !self.buffer.is_empty() {
            self.parts.push(&js_sys::Uint8Array::from(&self.buffer[..]));
            self.written += self.buffer.len() as u64;
            self.buffer.clear();
        }
    }
}

impl std::io::Write for BlobParts {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.buffer.extend_from_slice(bytes);
        if self.buffer.len() >= PART_BYTES {
            self.flush_part();
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Offers what `write` writes to the user as a file download named `filename`. The file
/// streams out of the wasm in parts; a file the browser did not take whole is an error,
/// never a short or empty download.
pub fn download_written(
    filename: &str,
    mime: &str,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), String> {
    let fail = |e: JsValue| format!("could not save {filename} ({})", js_message(&e));
    let window = web_sys::window().ok_or("no window")?;
    let document = window.document().ok_or("no document")?;
    let mut out = BlobParts {
        parts: js_sys::Array::new(),
        buffer: Vec::with_capacity(PART_BYTES + (64 << 10)),
        written: 0,
    };
    write(&mut out).map_err(|e| format!("could not save {filename} ({e})"))?;
    out.flush_part();
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let blob = web_sys::Blob::new_with_u8_array_sequence_and_options(&out.parts, &options)
        .map_err(fail)?;
    if blob.size() != out.written as f64 {
        return Err(format!(
            "could not save {filename}: the browser kept {} of its {} bytes",
            blob.size(),
            out.written
        ));
    }
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(fail)?;
    let link: web_sys::HtmlAnchorElement =
        document.create_element("a").map_err(fail)?.unchecked_into();
    link.set_href(&url);
    link.set_download(filename);
    let body = document.body().ok_or("no page body")?;
    body.append_child(&link).map_err(fail)?;
    link.click();
    link.remove();
    // Revoke later: revoking at once can cancel the download in some browsers.
    let revoke = Closure::once_into_js(move || {
        let _ = web_sys::Url::revoke_object_url(&url);
    });
    window
        .set_timeout_with_callback_and_timeout_and_arguments_0(revoke.unchecked_ref(), 10_000)
        .map_err(fail)?;
    Ok(())
}

/// Copies `text` to the clipboard. Fails (rather than throwing) where the Clipboard API is
/// missing (plain-http pages) or refused, so the caller can fall back to a selected text box.
pub async fn copy_text(text: &str) -> Result<(), String> {
    let navigator = web_sys::window().ok_or("no window")?.navigator();
    let clipboard = js_sys::Reflect::get(&navigator, &JsValue::from_str("clipboard"))
        .ok()
        .filter(|c| !c.is_undefined() && !c.is_null())
        .ok_or("this page has no clipboard access")?;
    let clipboard: web_sys::Clipboard = clipboard.unchecked_into();
    JsFuture::from(clipboard.write_text(text))
        .await
        .map(|_| ())
        .map_err(|e| js_message(&e))
}

/// The message of a JS error value, or its string form.
fn js_message(e: &JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map(|err| String::from(err.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| "unknown error".into())
}
