//! Simulations off the page's thread: a pool of Web Workers ([`pool`], on the page), each
//! running the app's own wasm ([`runner`], in the worker), talking in [`protocol`] messages.

pub mod batch;
pub mod pool;
pub mod protocol;
pub mod runner;

pub use pool::{capacity, submit, warm_up, RunEvent, RunTicket};

/// Whether this instance runs in a worker (no window): then `main` mounts nothing and the
/// instance only answers [`runner::on_message`].
pub fn in_worker() -> bool {
    web_sys::window().is_none()
}
