//! vLLM's priority scheduling on a whole platform: one overloaded worker serving a 1 : 1 mix
//! of interactive (priority 0) and batch (priority 1) requests.

mod platform_common;

use engine::simulation::SimulationResults;
use platform_common::run;

fn overloaded(policy: &str, seed: u64) -> SimulationResults {
    // Each 1,500-token prompt costs ≈ 50 ms of prefill (2 · 8.2 G · 1,500 / (0.5 · 989.5
    // TFLOP/s)) and its 100–200 decodes share steps with the rest: at 8 req/s a queue builds
    // and decoding sequences outgrow the 1,200 blocks of 16 tokens (≈ 11 sequences of
    // ≈ 1,700 tokens), so some are preempted.
    let json = format!(
        r#"{{
        "simulation": {{ "num_workers": 1, "seed": {seed} }},
        "model": {{ "name": "granite-3.3-8b-instruct", "max_model_len": 4096 }},
        "worker": {{ "num_gpu_blocks_override": 1200, "scheduling_policy": "{policy}" }},
        "workload": {{ "stages": [ {{ "type": "ExponentialReqRate", "request_rate": 8,
            "total_requests": 300,
            "priority": {{ "values": [0, 1], "weights": [1, 1] }},
            "input_length": {{ "type": "uniform", "min": 1400, "max": 1600 }},
            "output_length": {{ "type": "uniform", "min": 100, "max": 200 }} }} ] }}
    }}"#
    );
    run(&json, &[])
}

/// Mean TTFT (s) and preemptions of the requests of priority `p`.
fn by_priority(r: &SimulationResults, p: i32) -> (f64, u32, usize) {
    let group: Vec<_> = r.requests.iter().filter(|q| q.priority == p).collect();
    let ttft = group.iter().map(|q| q.ttft()).sum::<f64>() / group.len() as f64;
    (ttft, group.iter().map(|q| q.preemptions).sum(), group.len())
}

#[test]
fn priority_serves_interactive_requests_first_and_preempts_batch_ones() {
    // Not one lucky seed: the margins hold for each seed tried.
    for seed in [3, 4, 5] {
        compare(seed);
    }
}

fn compare(seed: u64) {
    let fcfs = overloaded("fcfs", seed);
    let prio = overloaded("priority", seed);
    let (f0, fpre0, n0) = by_priority(&fcfs, 0);
    let (f1, fpre1, n1) = by_priority(&fcfs, 1);
    let (p0, pre0, _) = by_priority(&prio, 0);
    let (p1, pre1, _) = by_priority(&prio, 1);
    println!("seed {seed}: fcfs: TTFT p0 {f0:.2} s ({fpre0} preemptions), p1 {f1:.2} s ({fpre1}); priority: p0 {p0:.2} s ({pre0} preemptions), p1 {p1:.2} s ({pre1})");
    // The mix draws both kinds, about half each (the same requests in both runs).
    assert!(n0 > 100 && n1 > 100, "{n0} / {n1}");
    // FCFS treats them alike; priority puts the interactive ones ahead of the queue…
    assert!((f0 / f1 - 1.0).abs() < 0.3, "fcfs {f0} vs {f1}");
    assert!(p0 < 0.25 * p1, "priority {p0} vs {p1}");
    assert!(p0 < 0.5 * f0);
    // … and makes the batch ones the preemption victims (seed 5: 10 vs 45).
    assert!(pre1 > 0 && pre0 * 4 < pre1, "{pre0} vs {pre1}");
}
