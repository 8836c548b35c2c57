//! Sweeps and searches against what queueing theory says: p99 TTFT never falls as the rate
//! rises (deterministic arrivals, all else fixed); the highest rate a hand-built
//! deterministic queue sustains is its service rate, however many requests the scenario
//! names; and a queue fed faster than it serves is overloaded at any length.

use opal::simulation::Simulation;
use opal::sweep::{SweepPlan, SweepPoint};

fn run_all(doc: &str) -> Vec<SweepPoint> {
    let s = opal::parse_scenario(doc).unwrap_or_else(|p| panic!("{p:?}"));
    let plan = SweepPlan::new(&s, Default::default()).unwrap();
    (0..plan.len()).map(|i| plan.run_point(i)).collect()
}

#[test]
fn p99_ttft_never_falls_as_the_rate_rises() {
    // Identical requests arriving evenly (UniformReqRate) at 0.5 to 6 req/s, served one at
    // a time (max_num_seqs 1) by one worker with calibrated step times: each takes the same
    // service time S, so by Lindley's recursion (W_k+1 = max(0, W_k + S − 1/λ)) every wait
    // is non-decreasing in λ, and so is p99 TTFT. (With batching this need not hold: a
    // batch's step time depends on how arrivals line up with steps.)
    let points = run_all(
        r#"{
        "simulation": { "num_workers": 1 },
        "worker": { "max_num_seqs": 1 },
        "workload": { "stages": [ { "type": "UniformReqRate", "request_rate": 1,
            "input_length": { "type": "constant", "value": 512 },
            "output_length": { "type": "constant", "value": 64 },
            "total_requests": 40 } ] },
        "sweep": { "vary": [ { "path": "workload.stages[0].request_rate",
                               "from": 0.5, "to": 6, "steps": 12 } ], "max_lengthen": 1 }
    }"#,
    );
    let p99: Vec<f64> = points
        .iter()
        .map(|p| p.metrics.as_ref().expect("ran").ttft.p99_ms)
        .collect();
    for w in p99.windows(2) {
        assert!(w[1] >= w[0], "p99 TTFT fell as the rate rose: {p99:?}");
    }
    // And the sweep reached overload: the last point queues far longer than the first.
    assert!(p99[11] > 5.0 * p99[0], "{p99:?}");
}

/// One worker serving one request at a time (max_num_seqs 1) in constant 0.1 s steps,
/// synchronous scheduling: a 10-token answer takes S = 1.0 s (prefill step with the first
/// token, nine decode steps), TTFT alone is 0.1 s. Requests arrive every 1/λ s, `n` of them.
/// Its capacity is 1/S = 1 req/s: below it nobody waits; above it request k waits
/// k·(S − 1/λ), without bound.
fn ddd1(n: u32, search: &str, extra: &str) -> String {
    format!(
        r#"{{
        "simulation": {{ "num_workers": 1 }},
        "worker": {{ "max_num_seqs": 1, "async_scheduling": false,
                    "timing": {{ "model": "constant", "constant_step_time": 0.1 }} }},
        "workload": {{ "stages": [ {{ "type": "UniformReqRate", "request_rate": 1,
            "input_length": {{ "type": "constant", "value": 100 }},
            "output_length": {{ "type": "constant", "value": 10 }},
            "total_requests": {n} }} ] }},
        "slo": {{ "ttft_ms": {{ "p": 99, "max": 2100 }} }},
        "sweep": {{ {extra} "search": {search} }}
    }}"#
    )
}

#[test]
fn max_rate_search_finds_the_service_rate_however_long_the_run() {
    // Within the search's tolerance below 1 req/s, whatever the request count: a short run
    // just above it has a small queue that meets 2.1 s, but its TTFT keeps growing. (200
    // requests are lengthened until 2,000 are measured.)
    for n in [200, 2000] {
        let points = run_all(&ddd1(
            n,
            r#"{ "type": "max_rate", "low": 0.5, "high": 4, "tolerance": 0.01 }"#,
            "",
        ));
        let found = points[0].search.as_ref().unwrap();
        let rate = found.value.expect("a rate meets the SLO");
        assert!(
            rate <= 1.0 && rate > 1.0 - 0.01,
            "{n} requests: found {rate}, capacity 1: {found:?}"
        );
        // Confirmed at 10x the requests, and the next rate tried above it misses there.
        let c = found.confirmation.as_ref().expect("confirmed");
        assert!(c.holds && c.next_misses == Some(true), "{c:?}");
        assert!(points[0].metrics.as_ref().unwrap().slo_met());
    }
}

#[test]
fn min_workers_search_finds_the_fewest_that_keep_up() {
    // 200 requests at 3.5 req/s with round robin: each of w workers gets every w-th request, i.e. λ/w. It
    // keeps up when λ/w ≤ 1/S = 1: w = 4. With 3 workers (1.17 req/s each) the queue
    // grows without bound, so however loose the TTFT bound, 3 fall behind.
    let at = |bound: u32| {
        let doc = ddd1(200, r#"{ "type": "min_workers", "min": 1, "max": 8 }"#, "")
            .replace("\"max\": 2100", &format!("\"max\": {bound}"))
            .replace("\"request_rate\": 1,", "\"request_rate\": 3.5,");
        run_all(&doc)[0].search.as_ref().unwrap().value
    };
    assert_eq!(at(500), Some(4.0));
    assert_eq!(at(10_000), Some(4.0));
}

#[test]
fn a_queue_fed_faster_than_it_serves_is_overloaded_at_any_length() {
    // Poisson arrivals at 2 req/s into the 1 req/s server: overloaded from a hundred
    // requests on; at 0.5 req/s it keeps up (ρ = 0.5: the M/D/1 queue is stable).
    for n in [100, 1000, 10_000] {
        for (rate, overloaded) in [(2.0, true), (0.5, false)] {
            let doc = ddd1(n, "null", "")
                .replace("UniformReqRate", "ExponentialReqRate")
                .replace(
                    "\"request_rate\": 1,",
                    &format!("\"request_rate\": {rate},"),
                )
                .replace(r#""sweep": {  "search": null }"#, r#""measurement": {}"#);
            let s = opal::parse_scenario(&doc).unwrap_or_else(|p| panic!("{p:?}"));
            let mut sim = Simulation::new(&s, &Default::default()).unwrap();
            sim.run();
            let r = sim.results();
            assert_eq!(
                r.windows[0].overload.is_some(),
                overloaded,
                "{n} requests at {rate} req/s: {:?}",
                r.windows[0]
            );
            assert_eq!(r.slo.as_ref().unwrap().overall.overloaded, overloaded);
        }
    }
}

#[test]
fn a_policy_axis_with_a_search_compares_policies_point_by_point() {
    let points = run_all(&ddd1(
        200,
        r#"{ "type": "min_workers", "max": 6 }"#,
        r#""vary": [ { "path": "router.policy", "values": [ { "policy": "round_robin" },
                                                           { "policy": "least_loaded" } ] } ],"#,
    ));
    assert_eq!(points.len(), 2);
    assert!(points
        .iter()
        .all(|p| p.search.as_ref().unwrap().value.is_some()));
}

#[test]
fn the_knee_is_the_last_rate_meeting_the_slo_on_each_curve() {
    // The queue above sustains 1 req/s: 0.5 and 0.9 meet the 2.1 s bound, 1.5 and 2.0 are
    // overloaded, under either policy (one worker: routing changes nothing).
    let doc = ddd1(40, "null", "")
        .replace(
            r#""search": null"#,
            r#""vary": [ { "path": "workload.stages[0].request_rate", "values": [0.5, 0.9, 1.5, 2.0] },
                         { "path": "router.policy", "values": [ { "policy": "round_robin" },
                                                                { "policy": "least_loaded" } ] } ]"#,
        );
    let s = opal::parse_scenario(&doc).unwrap_or_else(|p| panic!("{p:?}"));
    let plan = SweepPlan::new(&s, Default::default()).unwrap();
    let results = opal::sweep::SweepResults {
        header: plan.header(),
        shard: None,
        points: (0..plan.len()).map(|i| plan.run_point(i)).collect(),
    };
    // Points: rate-major, policy fastest; rate 0.9 is points 2 (round robin) and 3.
    assert_eq!(
        results.knees(),
        [
            ("round_robin".to_string(), Some(2)),
            ("least_loaded".to_string(), Some(3))
        ]
    );
}

#[test]
fn a_sweep_over_gpu_types_prices_each_at_your_rate_else_the_catalogue() {
    // Two workers of one GPU each: a point's cost per million output tokens is
    // 2 GPUs × its price per hour ÷ (output tokens/s × 3600) × 10⁶.
    let points = run_all(
        r#"{
        "simulation": { "num_workers": 2 },
        "hardware": { "gpu_prices": { "H100-SXM": 2.0, "L40S": 0.5 } },
        "workload": { "stages": [ { "type": "UniformReqRate", "request_rate": 4,
            "total_requests": 20 } ] },
        "sweep": { "vary": [ { "path": "hardware.gpu",
                               "values": ["H100-SXM", "L40S", "H200"] } ] }
    }"#,
    );
    let prices: Vec<Option<f64>> = points
        .iter()
        .map(|p| p.metrics.as_ref().expect("ran").cost_per_gpu_hour)
        .collect();
    // H200 has no entry of yours: the catalogue's 3.8.
    assert_eq!(prices, [Some(2.0), Some(0.5), Some(3.8)]);
    for p in &points {
        let m = p.metrics.as_ref().unwrap();
        let expected = 2.0 * m.cost_per_gpu_hour.unwrap() / (m.output_tps * 3600.0) * 1e6;
        let cost = m.cost_per_million_output_tokens.unwrap();
        assert!(
            (cost / expected - 1.0).abs() < 1e-12,
            "{cost} vs {expected}"
        );
    }
}
