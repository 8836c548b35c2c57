//! Property test: whatever a share link or a dropped file holds, the engine rejects it with
//! problems or runs it to an end within a budget of CPU time and memory, and the run's
//! books agree. Inputs are random documents, mutated examples (some with every number at
//! an extreme), mangled text and mangled or random data files, from seeded streams; each
//! run gets small `simulation.max_*` limits, so the property is that limits hold and nothing
//! grows without events. `cargo run --release -p opal-engine --example fuzz` runs the same
//! cases for as long as asked.

mod fuzz_common;

use fuzz_common::{case, run_case, Budget, Tally};
use std::sync::mpsc;
use std::time::Duration;

#[global_allocator]
static ALLOC: fuzz_common::CountingAlloc = fuzz_common::CountingAlloc;

/// Cases per `make test`: about 20 s of CPU unoptimised.
const CASES: u64 = 300;

/// What one case may cost, unoptimised. The heaviest generated case (case 119: 600 prompts
/// of up to 94 k tokens, 30 M prompt tokens chunked through four workers with prefix
/// lookups every step) takes ~6 s here and 0.3 s optimised; a runaway case takes unbounded.
const BUDGET: Budget = Budget {
    cpu: Duration::from_secs(15),
    bytes: 256 << 20,
};

#[test]
fn every_input_is_rejected_or_finishes_within_its_budget() {
    // Each case is written here before it runs, so a crash leaves it behind.
    let current = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("run_budget-case.json");
    let mut tally = Tally::default();
    for i in 0..CASES {
        let c = case(2026, i);
        std::fs::write(&current, &c.text).unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || tx.send(run_case(&c, BUDGET)));
        // A case that never returns is stuck inside one event (no budget check can run).
        match rx.recv_timeout(BUDGET.cpu * 6) {
            Ok(Ok((outcome, cost))) => tally.add(&outcome, cost),
            Ok(Err(why)) => panic!("case {i}: {why}; the input is in {}", current.display()),
            Err(_) => panic!("case {i} hangs; the input is in {}", current.display()),
        }
    }
    // The mix must exercise runs, not only the parser.
    assert!(tally.ran >= CASES / 6, "{tally}");
    assert!(tally.rejected >= CASES / 6, "{tally}");
    eprintln!("{tally}");
}
