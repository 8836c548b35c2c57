//! Several runs at once from JavaScript: the page's `wasmBindings.runBatch([scenario, …])`
//! (Trunk exposes the app's exports as `window.wasmBindings`). The runs go to the worker
//! pool together, in parallel up to its size; what a sweep or a script needs.

use super::pool::{submit, RunEvent};
use js_sys::{Array, Promise};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::JsValue;
use yew::Callback;

/// Runs every scenario text in `scenarios` at once; resolves with each run's results JSON
/// (as the app's "Results JSON" exports it), in the order given, or rejects with the first
/// failure's message.
pub fn run_batch(scenarios: Vec<String>) -> Promise {
    Promise::new(&mut |resolve, reject| {
        let n = scenarios.len();
        let out: Rc<RefCell<Vec<Option<String>>>> = Rc::new(RefCell::new(vec![None; n]));
        if n == 0 {
            let _ = resolve.call1(&JsValue::NULL, &Array::new());
            return;
        }
        for (i, scenario) in scenarios.iter().enumerate() {
            let (out, resolve, reject) = (out.clone(), resolve.clone(), reject.clone());
            let on_event = Callback::from(move |event| match event {
                RunEvent::Progress(_) => {}
                RunEvent::Finished { results, .. } => {
                    let mut out = out.borrow_mut();
                    out[i] = Some(results.to_json());
                    if out.iter().all(Option::is_some) {
                        let all: Array =
                            out.iter().flatten().map(|s| JsValue::from_str(s)).collect();
                        let _ = resolve.call1(&JsValue::NULL, &all);
                    }
                }
                RunEvent::Failed(message) => {
                    let _ = reject.call1(
                        &JsValue::NULL,
                        &JsValue::from_str(&format!("run {i}: {message}")),
                    );
                }
            });
            submit(scenario.clone(), Vec::new(), on_event);
        }
    })
}
