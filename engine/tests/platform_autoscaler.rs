//! The autoscaler through a whole run: a burst scales the cluster up at the expected
//! seconds, one scale-up at a time, up to `max_workers`; a quiet stage scales it back down
//! to `min_workers` after the cooldown; draining workers get nothing new.

mod platform_common;

use engine::simulation::SimulationResults;
use platform_common::run;

/// One worker to start; scale up above 2 outstanding (5 s to start a worker, at most 3);
/// scale down after 10 quiet seconds (no worker above 1), never below 1. 0.1 s steps.
///
/// Stage 0, the burst: a request every 0.25 s for 15 s, each decoding 100 tokens (≥ 10 s).
/// Stage 1, the quiet: a request every 2 s for 40 s, each done in 0.3 s.
const SCENARIO: &str = r#"{
    "simulation": { "num_workers": 1 },
    "worker": { "timing": { "model": "constant", "constant_step_time": 0.1 } },
    "router": { "policy": { "policy": "least_loaded" },
        "autoscaler": { "enabled": true, "max_queue_threshold": 2, "scale_down_threshold": 1,
                        "max_workers": 3, "min_workers": 1, "scale_latency": 5,
                        "cooldown": 10 } },
    "workload": { "stages": [
        { "type": "UniformReqRate", "request_rate": 4, "total_requests": 60,
          "input_length": { "type": "constant", "value": 50 },
          "output_length": { "type": "constant", "value": 100 } },
        { "type": "UniformReqRate", "request_rate": 0.5, "total_requests": 20,
          "input_length": { "type": "constant", "value": 50 },
          "output_length": { "type": "constant", "value": 3 } } ] }
}"#;

/// Requests outstanding on `worker` at the autoscaler tick `t` (routed, not yet back).
fn outstanding(r: &SimulationResults, worker: u32, t: f64) -> usize {
    r.requests
        .iter()
        .filter(|q| q.worker == Some(worker) && q.router_in <= t && q.completion > t)
        .count()
}

#[test]
fn a_burst_scales_up_and_a_quiet_period_scales_back_down() {
    let r = run(SCENARIO, &[]);
    let active = &r.series.active_workers;
    println!("active workers per second: {active:?}");

    // Scale-up. At the tick t = 1, worker 0 holds the requests of 0.25, 0.5, 0.75 (3 > 2):
    // a worker is ordered and joins at 1 + 5 = 6. Until then nothing else is ordered (one
    // in flight). The new worker joins at t = 6 just before that second's tick (its
    // start was scheduled at t = 1, the tick at t = 5), so the tick at 6 already sees no
    // scale-up in flight and worker 0 holding ~20 requests: the next worker joins at 11.
    // From then on the cluster is at max_workers = 3.
    assert!(active[..6].iter().all(|&n| n == 1), "{active:?}");
    assert!(active[6..11].iter().all(|&n| n == 2), "{active:?}");
    assert_eq!(active[11], 3);
    assert!(active.iter().all(|&n| n <= 3), "capped at max_workers");
    // The new workers take new requests at once: least loaded prefers the empty worker.
    let first_on = |w: u32| {
        r.requests
            .iter()
            .find(|q| q.worker == Some(w))
            .map(|q| q.router_in)
            .unwrap()
    };
    assert!(
        (6.0..6.5).contains(&first_on(1)),
        "worker 1 first used at {}",
        first_on(1)
    );
    assert!(
        (11.0..11.5).contains(&first_on(2)),
        "worker 2 first used at {}",
        first_on(2)
    );

    // Scale-down. The last tick with a worker above 1 outstanding is `busy`; from the next
    // tick on the load is low, so after the 10 s cooldown one worker drains, and after
    // another 10 s (a fresh quiet period) the next, leaving min_workers = 1.
    let ticks = r.end_time.floor() as usize;
    let busy = (1..=ticks)
        .filter(|&k| (0..3).any(|w| outstanding(&r, w, k as f64) > 1))
        .max()
        .unwrap();
    let (d1, d2) = (busy + 1 + 10, busy + 1 + 20);
    assert!(
        d2 < active.len(),
        "the quiet stage lasts past both scale-downs"
    );
    assert_eq!(active[d1], 3, "{active:?}");
    assert_eq!(
        active[d1 + 1],
        2,
        "first scale-down at t = {d1}: {active:?}"
    );
    assert_eq!(active[d2], 2, "{active:?}");
    assert_eq!(
        active[d2 + 1],
        1,
        "second scale-down at t = {d2}: {active:?}"
    );
    assert_eq!(*active.last().unwrap(), 1, "never below min_workers");

    // The quiet stage's requests all went to worker 0 (ties → lowest id), so 1 and 2 were
    // empty; the newest of the least loaded drains first: worker 2 at d1, then worker 1.
    // A draining worker is never offered to the policy again.
    for d in &r.decisions {
        let offered: Vec<u32> = d.decision.candidates.iter().map(|c| c.worker).collect();
        let drained = |w: u32, at: usize| d.time >= at as f64 && offered.contains(&w);
        assert!(
            !drained(2, d1),
            "worker 2 offered at {} after draining",
            d.time
        );
        assert!(
            !drained(1, d2),
            "worker 1 offered at {} after draining",
            d.time
        );
        assert!(offered.contains(&d.decision.worker));
    }
    let s = &r.stages;
    assert_eq!(s[0].successful_requests + s[1].successful_requests, 80);
}
