//! The sweep section's checks, point order, shards and their merge.

use super::*;
use engine::scenario::Scenario;

/// A small, quick scenario: one worker, constant 10 ms steps, 8 identical requests.
fn doc(sweep: &str) -> String {
    format!(
        r#"{{
        "simulation": {{ "num_workers": 1 }},
        "worker": {{ "timing": {{ "model": "constant" }} }},
        "workload": {{ "stages": [ {{ "type": "UniformReqRate", "request_rate": 2,
            "input_length": {{ "type": "constant", "value": 64 }},
            "output_length": {{ "type": "constant", "value": 4 }},
            "total_requests": 8 }} ] }},
        "slo": {{ "ttft_ms": {{ "p": 99, "max": 500 }} }},
        "sweep": {sweep}
    }}"#
    )
}

fn problems(sweep: &str) -> Vec<String> {
    check::parse(&doc(sweep))
        .err()
        .unwrap_or_default()
        .iter()
        .map(|p| p.to_string())
        .collect()
}

#[test]
fn every_value_that_breaks_the_scenario_is_reported_at_its_place() {
    let p = problems(
        r#"{ "vary": [ { "path": "router.policy",
                        "values": [ {"policy": "round_robin"}, {"policy": "fastest"} ] },
                      { "path": "simulation.num_workers", "from": 1, "to": 0, "steps": 2 } ] }"#,
    );
    assert_eq!(p.len(), 2, "{p:?}");
    assert!(
        p[0].starts_with(
            "sweep.vary[0].values[1]: with this value the scenario is invalid: router.policy"
        ),
        "{p:?}"
    );
    assert!(
        p[1].starts_with("sweep.vary[1].to: with this value"),
        "{p:?}"
    );
    assert!(
        p[1].contains("simulation.num_workers: must be between 1 and"),
        "{p:?}"
    );
}

#[test]
fn absurd_sizes_are_refused_before_anything_is_made() {
    // 4 billion steps would be 137 GB of values; a tolerance of 1e-300 would halve forever.
    let p = problems(
        r#"{ "vary": [ { "path": "workload.stages[0].request_rate", "from": 1, "to": 2,
                        "steps": 4294967295 } ],
            "search": { "type": "max_rate", "low": 1, "high": 64, "tolerance": 1e-300 } }"#,
    );
    assert!(
        p[0].starts_with("sweep.vary: 4294967295 points; at most 10000"),
        "{p:?}"
    );
    assert!(
        p[1].starts_with("sweep.search.tolerance: at least (high - low) / 2^20"),
        "{p:?}"
    );
    // 63 / 2^20 is the finest tolerance allowed: 20 halvings.
    assert!(problems(
        r#"{ "search": { "type": "max_rate", "low": 1, "high": 64, "tolerance": 0.0000601 } }"#
    )
    .is_empty());
}

#[test]
fn the_sections_own_mistakes_name_their_fields() {
    let p = problems(
        r#"{ "vary": [ { "path": "workload.stages[0]..rate", "values": [] },
                      { "path": "seed", "from": 1, "to": 2 } ],
            "search": { "type": "max_rate", "low": 5, "high": 1, "tolerance": 0 } }"#,
    );
    let paths: Vec<&str> = p.iter().map(|p| p.split(": ").next().unwrap()).collect();
    assert_eq!(
        paths,
        [
            "sweep.vary[0].path",
            "sweep.vary[0].values",
            "sweep.vary[1]",
            "sweep.search.tolerance",
            "sweep.search.high"
        ],
        "{p:?}"
    );
    let no_slo = doc(r#"{ "search": { "type": "min_workers", "max": 4 } }"#)
        .replace(r#""slo": { "ttft_ms": { "p": 99, "max": 500 } },"#, "");
    let p = check::parse(&no_slo).unwrap_err();
    assert_eq!(p[0].path, "sweep.search");
}

#[test]
fn points_take_every_combination_the_last_axis_fastest() {
    let s = crate::parse_scenario(&doc(
        r#"{ "vary": [ { "path": "workload.stages[0].request_rate", "from": 1, "to": 2, "steps": 3 },
                      { "path": "router.policy", "values": [ {"policy": "round_robin"},
                                                             {"policy": "least_loaded"} ] } ] }"#,
    ))
    .unwrap();
    let plan = SweepPlan::new(&s, Default::default()).unwrap();
    assert_eq!(plan.len(), 6);
    // Rates 1, 1.5, 2 (whole numbers written as integers, so counts read as counts).
    assert_eq!(plan.header().axes.len(), 2);
    let cfg = s.sweep.as_ref().unwrap();
    assert_eq!(cfg.point_values(0)[0], serde_json::json!(1));
    assert_eq!(cfg.point_values(3)[0], serde_json::json!(1.5));
    assert_eq!(cfg.point_values(3)[1]["policy"], "least_loaded");
    assert_eq!(cfg.point_values(5)[0], serde_json::json!(2));
    let at = plan.scenario(2).unwrap();
    assert_eq!(at.sweep, None);
    assert_eq!(at.router.policy.name(), "round_robin");
}

#[test]
fn shards_merge_into_exactly_the_whole_sweep() {
    let s = crate::parse_scenario(&doc(
        r#"{ "vary": [ { "path": "workload.stages[0].request_rate", "from": 1, "to": 40, "steps": 5 } ] }"#,
    ))
    .unwrap();
    let plan = SweepPlan::new(&s, Default::default()).unwrap();
    let points: Vec<SweepPoint> = (0..plan.len()).map(|i| plan.run_point(i)).collect();
    assert!(points
        .iter()
        .all(|p| p.error.is_none() && p.metrics.is_some()));
    let whole = SweepResults {
        header: plan.header(),
        shard: None,
        points: points.clone(),
    }
    .to_json();
    let shard = |k, n| {
        let shard = Shard { k, n };
        SweepResults {
            header: plan.header(),
            shard: Some(shard),
            points: points
                .iter()
                .filter(|p| shard.holds(p.index))
                .cloned()
                .collect(),
        }
        .to_json()
    };
    let (a, b, c) = (shard(1, 3), shard(2, 3), shard(3, 3));
    assert_eq!(merge_shards(&[&c, &a, &b]).unwrap(), whole);
    assert_eq!(merge_shards(&[&a, &b]).unwrap_err(), "shard 3/3 is missing");
    assert_eq!(
        merge_shards(&[&a, &a, &b]).unwrap_err(),
        "shard 1/3 is given twice"
    );
    assert!(serde_json::from_str::<serde_json::Value>(&whole).is_ok());
    // Six shards of five points: the sixth holds none and still merges.
    let six: Vec<String> = (1..=6).map(|k| shard(k, 6)).collect();
    assert!(serde_json::from_str::<serde_json::Value>(&six[5]).is_ok());
    let texts: Vec<&str> = six.iter().map(String::as_str).collect();
    assert_eq!(merge_shards(&texts).unwrap(), whole);
}

#[test]
fn a_point_run_elsewhere_in_slices_and_through_bytes_equals_the_point_run_here() {
    // What the app does: each probe's text read afresh (in a worker), run in slices of
    // events, its results sent as bytes; the search steps on the page.
    let text = doc(
        r#"{ "vary": [ { "path": "router.policy", "values": [ {"policy": "round_robin"} ] } ],
            "search": { "type": "max_rate", "low": 1, "high": 400, "tolerance": 1 } }"#,
    )
    .replace(r#""max": 500"#, r#""max": 15"#)
    // Enough requests for the runs to be judged once lengthened (2,000 measured).
    .replace(r#""total_requests": 8"#, r#""total_requests": 250"#);
    let s = crate::parse_scenario(&text).unwrap();
    let plan = SweepPlan::new(&s, Default::default()).unwrap();
    let mut point = plan.begin_point(0);
    let mut runs = 0;
    let elsewhere = loop {
        match point.next(&plan) {
            PointStep::Run(run) => {
                let scenario = crate::parse_scenario(&run.text).unwrap();
                let mut sim = Simulation::new(&scenario, &Default::default()).unwrap();
                while !sim.advance(7).finished {}
                let bytes = sim.results().to_bytes();
                let results = SimulationResults::from_bytes(&bytes).unwrap();
                point.record(Ok(&results));
                runs += 1;
            }
            PointStep::Done(p) => break *p,
        }
    };
    let here = plan.run_point(0);
    assert_eq!(elsewhere, here);
    let search = here.search.as_ref().unwrap();
    // Low, high, then halvings of 399 down to 1: ceil(log2(399)) = 9 of them; each probe
    // a run or more (lengthened until settled), then the confirmation's two.
    assert!(search.probes.len() >= 11, "{search:?}");
    assert!(runs >= search.probes.len() + 2, "{runs} runs");
    assert!(search.confirmation.is_some(), "{search:?}");
    assert!(
        search.value.is_some_and(|v| v > 1.0 && v < 400.0),
        "{search:?}"
    );
}

// The bill: what the GPUs cost, pool by pool, for the seconds they were provisioned.

/// A finished run of `doc` and its scenario.
fn ran(doc: &str) -> (Scenario, engine::simulation::SimulationResults) {
    let scenario = crate::parse_scenario(doc).expect("valid scenario");
    let mut sim =
        engine::simulation::Simulation::new(&scenario, &engine::scenario::ScenarioData::default())
            .expect("builds");
    sim.run();
    (scenario, sim.results())
}

/// A one-request workload on constant 10 ms steps, with `rest` spliced into the document.
fn one_request(rest: &str) -> String {
    format!(
        r#"{{ {rest},
        "worker": {{ "timing": {{ "model": "constant" }} }},
        "workload": {{ "stages": [ {{ "type": "UniformReqRate", "request_rate": 1,
            "total_requests": 1 }} ] }} }}"#
    )
}

fn close(a: f64, b: f64) -> bool {
    (a / b - 1.0).abs() < 1e-12
}

#[test]
fn fixed_workers_are_billed_workers_by_tp_by_price_for_the_span() {
    let (s, r) = ran(&one_request(
        r#""simulation": { "num_workers": 3 },
           "hardware": { "tp": 2, "cost_per_gpu_hour": 4.0 }"#,
    ));
    // Half an hour: 3 workers × 2 GPUs × 1800 s = 10,800 GPU-seconds, at $4 per GPU-hour
    // $12; over a million tokens, $12 per million.
    let bill = Bill::new(&s, &r, 100.0, 1900.0);
    assert_eq!((bill.workers(), bill.gpus()), (3, 6));
    assert_eq!(bill.gpu_seconds(), 10_800.0);
    assert_eq!(bill.dollars_per_hour(), Some(24.0));
    assert!(close(
        bill.per_million(1_000_000.0 / bill.span()).unwrap(),
        12.0
    ));
    // Half the tokens: twice the price per million. None: no price per token.
    assert!(close(
        bill.per_million(500_000.0 / bill.span()).unwrap(),
        24.0
    ));
    assert_eq!(bill.per_million(0.0), None);
}

#[test]
fn scaled_workers_are_billed_from_their_request_to_their_release() {
    let (s, mut r) = ran(&one_request(
        r#""simulation": { "num_workers": 2 },
           "hardware": { "cost_per_gpu_hour": 3.0 },
           "router": { "autoscaler": { "enabled": true, "max_workers": 4 } }"#,
    ));
    let lease = |worker, requested: f64, released: f64| engine::router::ScalingRecord {
        pool: 0,
        worker: Some(worker),
        requested,
        started: requested + 30.0,
        released,
    };
    r.scaling = vec![
        // Asked for before the span (at 20 s), released at 80 s: 30 s of it.
        lease(2, 20.0, 80.0),
        // Asked for at 100 s (provisioning from then on is paid), kept: 350 − 100 = 250 s.
        lease(3, 100.0, f64::NAN),
        // There from the start, drained and released at 250 s: 250 − 50 = 200 s.
        lease(1, f64::NAN, 250.0),
    ];
    let bill = Bill::new(&s, &r, 50.0, 350.0);
    // Worker 0 stays the whole 300 s: 300 + 30 + 250 + 200 = 780 GPU-seconds, at $3 per
    // GPU-hour $0.65; over 300 s, $7.80 an hour; over a million tokens, $0.65 per million.
    assert_eq!(bill.gpu_seconds(), 780.0);
    assert!(close(bill.dollars_per_hour().unwrap(), 7.8));
    assert!(close(
        bill.per_million(1_000_000.0 / bill.span()).unwrap(),
        0.65
    ));
}

#[test]
fn an_autoscaled_worker_is_billed_from_the_second_it_was_asked_for() {
    // 200 requests at 100 per second, each 200 tokens of 10 ms steps: at the autoscaler's
    // first look (t = 1 s) worker 0 holds ~100, past the threshold of 1, so one worker is
    // asked for then and starts 1 s later; with max_workers 2 and a long cool-down it stays.
    let (s, r) = ran(r#"{
        "simulation": { "num_workers": 1 },
        "hardware": { "cost_per_gpu_hour": 2.0 },
        "worker": { "timing": { "model": "constant" } },
        "router": { "autoscaler": { "enabled": true, "max_queue_threshold": 1,
            "scale_down_threshold": 0, "max_workers": 2, "scale_latency": 1,
            "cooldown": 100000 } },
        "workload": { "stages": [ { "type": "UniformReqRate", "request_rate": 100,
            "input_length": { "type": "constant", "value": 64 },
            "output_length": { "type": "constant", "value": 200 },
            "total_requests": 200 } ] }
    }"#);
    assert_eq!(r.scaling.len(), 1, "{:?}", r.scaling);
    let up = &r.scaling[0];
    assert_eq!((up.worker, up.requested, up.started), (Some(1), 1.0, 2.0));
    assert!(up.released.is_nan());
    // From 0 to the end: worker 0 the whole run, worker 1 from 1 s on.
    let end = r.end_time;
    let bill = Bill::new(&s, &r, 0.0, end);
    assert_eq!(bill.gpu_seconds(), end + (end - 1.0));
    let tokens = 200 * 200;
    let dollars = (2.0 * end - 1.0) / 3600.0 * 2.0;
    assert!(close(
        bill.per_million(tokens as f64 / bill.span()).unwrap(),
        dollars / tokens as f64 * 1e6
    ));
    // Before, both workers were billed for the whole run.
    assert!(bill.gpu_seconds() < 2.0 * end);
}

#[test]
fn each_pool_is_priced_at_its_own_gpu() {
    // The top-level price is the H100's; the prefill pool's H200 has no price of its own,
    // the decode pool is on the top-level H100, a third pool sets its own price.
    let doc = one_request(
        r#""hardware": { "gpu": "H100-SXM", "cost_per_gpu_hour": 2.0 },
           "deployment": { "pools": [
             { "name": "p", "role": "prefill", "hardware": { "gpu": "H200" } },
             { "name": "d", "role": "decode", "num_workers": 2 },
             { "name": "d2", "role": "decode", "hardware": { "gpu": "H200", "tp": 2,
               "cost_per_gpu_hour": 5.0 } } ] }"#,
    );
    let (s, r) = ran(&doc);
    let d = s.deployment.as_ref().unwrap();
    let prices: Vec<Option<f64>> = d
        .pools
        .iter()
        .map(|p| p.cost_per_gpu_hour(&s.hardware))
        .collect();
    // H200: the catalogue's 3.8 (not the H100's 2); H100: the top-level 2; its own 5.
    assert_eq!(prices, [Some(3.8), Some(2.0), Some(5.0)]);
    // 1 × 3.8 + 2 × 2 + 2 GPUs × 5 = $17.80 an hour; 2 hours over 2 million tokens.
    let bill = Bill::new(&s, &r, 0.0, 7200.0);
    assert!(close(bill.dollars_per_hour().unwrap(), 17.8));
    assert!(close(
        bill.per_million(2_000_000.0 / bill.span()).unwrap(),
        17.8
    ));
    // Your gpu_prices entry for the H200 prices the prefill pool.
    let mut s2 = s.clone();
    s2.hardware.gpu_prices = [("H200".to_string(), 3.5)].into();
    assert_eq!(
        s2.deployment.as_ref().unwrap().pools[0].cost_per_gpu_hour(&s2.hardware),
        Some(3.5)
    );
    // The top-level price not reaching the H200 pool is said, at the pool.
    let w = s.warnings();
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].path, "deployment.pools[0].hardware");
    assert!(w[0].message.contains("not this pool's H200"), "{}", w[0]);
    assert!(w[0].message.contains("the catalogue's $3.8"), "{}", w[0]);
    // Without a top-level price there is nothing to say.
    let mut s3 = s.clone();
    s3.hardware.cost_per_gpu_hour = None;
    assert!(s3.warnings().is_empty());
}

#[test]
fn good_tokens_are_billed_the_same_dollars_over_fewer_tokens() {
    // One worker of 10 ms steps: 5 requests of 4 tokens (E2E ~40 ms, meets 500 ms), then 5 of
    // 100 tokens (E2E over a second, misses). Of 520 output tokens 20 met the SLO, so the
    // same bill costs 520 / 20 = 26 times as much per million good tokens.
    let stage = |n: u32, out: u32| {
        format!(
            r#"{{ "type": "UniformReqRate", "request_rate": 1, "total_requests": {n},
                "input_length": {{ "type": "constant", "value": 64 }},
                "output_length": {{ "type": "constant", "value": {out} }} }}"#
        )
    };
    let doc = format!(
        r#"{{ "worker": {{ "timing": {{ "model": "constant" }} }},
            "slo": {{ "e2e_ms": {{ "max": 500 }} }},
            "workload": {{ "stages": [ {}, {} ] }} }}"#,
        stage(5, 4),
        stage(5, 100)
    );
    let (s, r) = ran(&doc);
    let m = PointMetrics::new(&s, &r);
    assert_eq!(m.slo.as_ref().map(|s| s.attained), Some(5));
    let (all, good) = (
        m.cost_per_million_output_tokens.unwrap(),
        m.cost_per_million_good_tokens.unwrap(),
    );
    assert!(close(good, all * 26.0), "{good} vs {all}");
    // An SLO nobody meets: no good tokens, no price per good token; without an SLO, none.
    let (s, r) = ran(&doc.replace(r#""max": 500"#, r#""max": 1"#));
    assert_eq!(PointMetrics::new(&s, &r).cost_per_million_good_tokens, None);
    let (s, r) = ran(&doc.replace(r#""slo": { "e2e_ms": { "max": 500 } },"#, ""));
    assert!(s.slo.is_none());
    assert_eq!(PointMetrics::new(&s, &r).cost_per_million_good_tokens, None);
}

#[test]
fn a_policy_with_parameters_is_labelled_apart_from_its_defaults() {
    let label = |v: &str| SweepResults::label(&serde_json::from_str(v).unwrap());
    assert_eq!(label(r#"{"policy": "llm_d"}"#), "llm_d");
    assert_eq!(
        label(r#"{"policy": "llm_d", "prefix_mode": "approximate"}"#),
        "llm_d (prefix_mode approximate)"
    );
    assert_eq!(
        label(r#"{"policy": "prefix_load", "w_prefix": 2, "w_load": 1}"#),
        "prefix_load (w_load 1, w_prefix 2)"
    );
    // A deployment is named by its name; its pools are not plain parameters.
    assert_eq!(
        label(r#"{"name": "1P:3D", "pools": [{"name": "prefill"}]}"#),
        "1P:3D"
    );
    assert_eq!(
        label(r#"{"gpu": "B200", "tp": 8}"#),
        r#"{"gpu":"B200","tp":8}"#
    );
}
