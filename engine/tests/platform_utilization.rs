//! Busy time versus roofline utilisation: a GPU decoding one sequence is busy all the time
//! but nowhere near its peak FLOP/s.

mod platform_common;

use platform_common::run;

#[test]
fn a_lone_decode_is_busy_but_memory_bound_at_the_configured_efficiency() {
    // One granite-3.3-8b request on an H100 (roofline, η_c = 0.5, η_m = 0.8, no overhead):
    // 16 prompt tokens, then 2,000 decodes. Each decode step reads the ≈ 16 GB of weights:
    // t = B / (0.8 · BW), so the step achieves exactly 80 % of peak bandwidth, while its
    // 2 · 8.2 G FLOPs over t ≈ 6 ms are ≈ 0.3 % of 989.5 TFLOP/s.
    let r = run(
        r#"{
        "simulation": { "num_workers": 1 },
        "model": { "name": "granite-3.3-8b-instruct" },
        "worker": { "timing": { "model": "roofline" } },
        "workload": { "stages": [ { "type": "UniformReqRate", "request_rate": 1,
            "total_requests": 1,
            "input_length": { "type": "constant", "value": 16 },
            "output_length": { "type": "constant", "value": 2000 } } ] }
    }"#,
        &[],
    );
    let w = &r.workers.workers[0];
    // Busy from the arrival (at 1 s) to the end: all but the first second.
    let busy_share = (r.end_time - 1.0) / r.end_time;
    assert!(
        (w.busy - busy_share).abs() < 1e-6,
        "{} vs {busy_share}",
        w.busy
    );
    assert!((w.memory_utilization / w.busy - 0.8).abs() < 1e-3, "{w:?}");
    assert!(w.compute_utilization < 0.01 * w.busy, "{w:?}");
    // Every busy second of the series says the same.
    let c = &r.series.workers[0];
    for k in 2..c.busy_fraction.len() - 1 {
        assert_eq!(c.busy_fraction[k], 1.0);
        assert!((c.memory_utilization[k] - 0.8).abs() < 1e-3);
    }
}
