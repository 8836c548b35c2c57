//! The fidelity suite: real vLLM runs replayed through the simulator, predicted against
//! measured.
//!
//! Each [`Run`] is a real benchmark of vLLM v0.15.1 on H100 GPUs (see `fidelity/README.md`
//! for the sources): the server's configuration, every request the client sent (arrival time,
//! prompt length, prompt pool), and the latencies the client measured. [`replay`] builds the
//! same server and workload as a scenario and runs it; [`report::render`] prints predicted
//! against measured with absolute percentage errors, per run and as medians.

pub mod external;
pub mod fit;
pub mod replay;
pub mod report;
pub mod run;

pub use replay::{replay, Prediction};
pub use report::{
    band_coverage, error_band, median_errors, render, render_band, Comparison, METRICS,
};
pub use run::{builtin_runs, Run};

/// Replays every run with `patch` merged over each run's scenario (`{}` keeps the
/// simulator's defaults), in run order, on every core.
pub fn compare_all(runs: &[Run], patch: &serde_json::Value) -> Vec<Comparison> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut out: Vec<Option<Comparison>> = vec![None; runs.len()];
    let slots = std::sync::Mutex::new(&mut out);
    std::thread::scope(|s| {
        for _ in 0..threads.min(runs.len()) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(run) = runs.get(i) else { break };
                let c = Comparison {
                    run: run.clone(),
                    predicted: replay(run, patch),
                };
                slots.lock().expect("no panic holds the lock")[i] = Some(c);
            });
        }
    });
    out.into_iter()
        .map(|c| c.expect("every run replayed"))
        .collect()
}
