//! Mounts the Opal web app on the page; in a simulation worker (the same wasm), only
//! answers the page's messages.

use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::JsValue;

fn main() {
    if opal_web::worker::in_worker() {
        return;
    }
    opal_web::panic_banner::install();
    // Before the first render: the worker instantiates the module, and runs a share link's
    // scenario, while the page draws.
    opal_web::worker::warm_up();
    let render = || {
        yew::Renderer::<opal_web::app::App>::new().render();
    };
    // The first render is one long task, and messages posted to a worker whose script has
    // not yet run wait on the page's thread until it is free: a share link's run waits
    // for the worker to have it (at most a moment), other pages yield once so the worker
    // gets its module while the page draws.
    if opal_web::app::open_page() {
        opal_web::worker::pool::when_listening(LISTEN_AT_MOST_MS, render);
    } else {
        gloo_timers::callback::Timeout::new(0, render).forget();
    }
}

/// How long a share link's first render waits for the worker to have its run, ms.
const LISTEN_AT_MOST_MS: u32 = 300;

/// A message from the page to this simulation worker (`web/worker.js` forwards them).
#[wasm_bindgen]
pub fn worker_message(data: JsValue) {
    opal_web::worker::runner::on_message(&data);
}

/// Runs every scenario text at once in the simulation workers; resolves with each run's
/// results JSON in order (see `opal_web::worker::batch`).
#[wasm_bindgen(js_name = runBatch)]
pub fn run_batch(scenarios: Vec<String>) -> js_sys::Promise {
    opal_web::worker::batch::run_batch(scenarios)
}

/// How many runs the page runs at once: one per core.
#[wasm_bindgen(js_name = parallelRuns)]
pub fn parallel_runs() -> usize {
    opal_web::worker::capacity()
}
