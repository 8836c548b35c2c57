//! Thousands of stages cost memory in proportion to what each holds, not to buffers sized
//! for long runs: each stage's inter-token-gap buffer once reserved its flush threshold
//! (16,384 gaps, 256 KB) at its first gap, so 16,000 one-request stages took 3.2 GB.
//! (A file of its own: the allocation counter is process-wide, and tests run in parallel.)

mod fuzz_common;
mod platform_common;

use engine::scenario::ScenarioData;
use engine::simulation::Simulation;

#[global_allocator]
static ALLOC: fuzz_common::CountingAlloc = fuzz_common::CountingAlloc;

#[test]
fn two_thousand_one_request_stages_keep_a_few_kilobytes_each() {
    let n = 2_000;
    let scenario = opal::parse_scenario(&platform_common::one_request_stages(n)).unwrap();
    let before = fuzz_common::reset_peak(usize::MAX / 2);
    let mut sim = Simulation::new(&scenario, &ScenarioData::new()).unwrap();
    sim.run();
    let r = sim.results();
    assert_eq!(r.stages.len(), n);
    assert!(r.stages.iter().all(|s| s.successful_requests == 1));
    // Each stage's gaps (nine, of one request) fit the buffer's first 1 KB; with its
    // config, generator, record and summary a stage stays under 16 KB, where one
    // threshold-sized buffer alone was 256 KB.
    let per_stage = (fuzz_common::peak_bytes() - before) / n;
    assert!(per_stage < 16 << 10, "{per_stage} B a stage");
}
