//! The `deployment` section: every mistake reported at its field path, and absent means
//! exactly one mixed pool.

use engine::validate::Problem;

fn problems(json: &str) -> Vec<Problem> {
    opal::parse_scenario(json).expect_err("the scenario should be rejected")
}

fn has(p: &[Problem], path: &str, words: &str) {
    assert!(
        p.iter()
            .any(|x| x.path == path && x.message.contains(words)),
        "no problem at {path} saying \"{words}\" in {p:#?}"
    );
}

#[test]
fn a_disaggregated_deployment_needs_both_roles() {
    let p = problems(r#"{"deployment": {"pools": [{"role": "prefill"}, {"role": "mixed"}]}}"#);
    has(&p, "deployment.pools", "needs a decode pool too");
    let p = problems(r#"{"deployment": {"pools": [{"role": "decode"}]}}"#);
    has(&p, "deployment.pools", "needs a prefill pool too");
    assert!(
        opal::parse_scenario(r#"{"deployment": {"pools": [{"name": "a"}, {"name": "b"}]}}"#)
            .is_ok()
    );
}

#[test]
fn pool_fields_are_checked_where_they_are_written() {
    let p = problems(
        r#"{"deployment": {
            "pools": [ {"role": "prefill", "num_workers": 0, "hardware": {"gpu": "GB300"}},
                       {"name": "prefill", "role": "decode",
                        "worker": {"block_size": 32, "max_num_seqs": 0}},
                       {"role": "decode", "worker": {"no_such_knob": 1}} ],
            "kv_transfer": {"bandwidth_gbps": 0, "latency_s": -1, "concurrency": 0},
            "decode_policy": {"policy": "prefix_load", "w_prefix": 0, "w_load": 0}
        }}"#,
    );
    has(&p, "deployment.pools[0].num_workers", "between 1 and");
    has(
        &p,
        "deployment.pools[0].hardware.gpu",
        "unknown GPU \"GB300\"",
    );
    has(&p, "deployment.pools[1].name", "names an earlier pool");
    has(
        &p,
        "deployment.pools[1].worker.block_size",
        "must equal worker.block_size (16)",
    );
    has(&p, "deployment.pools[1].worker.max_num_seqs", "");
    has(&p, "deployment.pools[2].worker", "no_such_knob");
    has(&p, "deployment.kv_transfer.bandwidth_gbps", "> 0");
    has(&p, "deployment.kv_transfer.latency_s", "between 0 and");
    has(&p, "deployment.kv_transfer.concurrency", ">= 1");
    has(&p, "deployment.decode_policy.w_prefix", "cannot both be 0");
}

#[test]
fn a_pool_whose_gpu_cannot_hold_the_model_is_named() {
    // Llama-3.1-70B's 131 GB of weights fit four H100s (the top-level tp) but not one.
    let p = problems(
        r#"{"model": {"name": "Llama-3.1-70B"}, "hardware": {"tp": 4},
            "deployment": {"pools": [{"role": "prefill"},
                                     {"role": "decode", "hardware": {"tp": 1}}]}}"#,
    );
    assert_eq!(p.len(), 1, "{p:#?}");
    has(
        &p,
        "deployment.pools[1].hardware",
        "in pool \"decode\": Llama-3.1-70B needs",
    );
}

#[test]
fn scaling_and_sizes_belong_to_the_pools() {
    let p = problems(
        r#"{"router": {"autoscaler": {"enabled": true}},
            "deployment": {"pools": [
                {"role": "prefill", "num_workers": 3,
                 "autoscaler": {"enabled": true, "max_workers": 2}},
                {"name": "d1", "role": "decode", "num_workers": 600},
                {"name": "d2", "role": "decode", "num_workers": 600}]}}"#,
    );
    has(
        &p,
        "router.autoscaler.enabled",
        "each pool scales on its own",
    );
    has(
        &p,
        "deployment.pools[0].autoscaler.max_workers",
        "the pool's num_workers (3)",
    );
    has(&p, "deployment.pools", "1203 workers in all; at most 1024");
}

#[test]
fn an_absent_deployment_writes_nothing_and_a_given_one_reads_back() {
    let s = opal::parse_scenario("{}").unwrap();
    assert!(!opal::document::to_json_pretty(&s).contains("deployment"));
    let doc = r#"{"deployment": {"pools": [
        {"name": "p", "role": "prefill", "num_workers": 2, "hardware": {"gpu": "H200"}},
        {"name": "d", "role": "decode", "num_workers": 2, "worker": {"max_num_seqs": 64}}],
        "kv_transfer": {"bandwidth_gbps": 25, "latency_s": 0.002, "concurrency": 8},
        "decode_policy": {"policy": "least_kv"}}}"#;
    let s = opal::parse_scenario(doc).unwrap();
    assert_eq!(
        opal::parse_scenario(&opal::document::to_json_pretty(&s)).unwrap(),
        s
    );
}
