//! The `router` and offload tier sections: parsing, defaults and validation paths.

use engine::offload::{OffloadConfig, TierConfig, TierScope};
use engine::router::policy::PrefixLoadConfig;
use engine::router::{PolicyConfig, RouterConfig};
use engine::validate::Problems;

fn router(json: &str) -> Result<RouterConfig, serde_json::Error> {
    serde_json::from_str(json)
}

fn paths(p: Problems) -> Vec<String> {
    p.into_vec().into_iter().map(|p| p.path).collect()
}

#[test]
fn an_empty_section_gets_the_documented_defaults() {
    let r = router("{}").unwrap();
    assert_eq!(r, RouterConfig::default());
    assert_eq!(r.policy.name(), "round_robin");
    assert_eq!(r.kv_event_interval, 1.0);
    assert!(!r.autoscaler.enabled);
    let mut p = Problems::new();
    r.validate("router", &mut p);
    assert!(p.is_empty(), "{p:?}");
}

#[test]
fn policy_parameters_parse_with_defaults_for_the_missing_ones() {
    let r = router(r#"{"policy": {"policy": "prefix_load", "w_prefix": 2.5}}"#).unwrap();
    assert_eq!(
        r.policy,
        PolicyConfig::PrefixLoad(PrefixLoadConfig {
            w_prefix: 2.5,
            w_load: 1.0
        })
    );
}

#[test]
fn unknown_policies_and_fields_are_parse_errors() {
    let e = router(r#"{"policy": {"policy": "fastest"}}"#).unwrap_err();
    assert!(e.to_string().contains("unknown variant `fastest`"), "{e}");
    let e = router(r#"{"policy": {"policy": "round_robin", "w_load": 1}}"#).unwrap_err();
    assert!(e.to_string().contains("unknown field `w_load`"), "{e}");
    let e = router(r#"{"policy": {"policy": "prefix_load", "w_lod": 1}}"#).unwrap_err();
    assert!(e.to_string().contains("unknown field `w_lod`"), "{e}");
    let e = router(r#"{"kv_event_intervals": 1}"#).unwrap_err();
    assert!(e.to_string().contains("unknown field"), "{e}");
    let e = router(r#"{"autoscaler": {"max_queue": 3}}"#).unwrap_err();
    assert!(e.to_string().contains("unknown field `max_queue`"), "{e}");
}

#[test]
fn bad_numbers_are_reported_with_their_paths() {
    let r = router(
        r#"{"policy": {"policy": "prefix_load", "w_prefix": -1},
            "kv_event_interval": 0,
            "autoscaler": {"min_workers": 0, "max_workers": 0, "scale_latency": -2,
                           "max_queue_threshold": 3, "scale_down_threshold": 3}}"#,
    )
    .unwrap();
    let mut p = Problems::new();
    r.validate("router", &mut p);
    assert_eq!(
        paths(p),
        vec![
            "router.policy.w_prefix",
            "router.kv_event_interval",
            "router.autoscaler.min_workers",
            "router.autoscaler.scale_latency",
            "router.autoscaler.scale_down_threshold",
        ]
    );
    // max_workers (0) >= min_workers (0) holds, so only min_workers is reported above;
    // with min 2 and max 1 the upper bound is the problem.
    let r = router(r#"{"autoscaler": {"min_workers": 2, "max_workers": 1}}"#).unwrap();
    let mut p = Problems::new();
    r.validate("router", &mut p);
    assert_eq!(paths(p), vec!["router.autoscaler.max_workers"]);
}

#[test]
fn both_prefix_load_weights_zero_is_rejected() {
    let cfg = PolicyConfig::PrefixLoad(PrefixLoadConfig {
        w_prefix: 0.0,
        w_load: 0.0,
    });
    let mut p = Problems::new();
    cfg.validate("router.policy", &mut p);
    assert_eq!(paths(p), vec!["router.policy.w_prefix"]);
}

#[test]
fn offload_is_off_by_default() {
    assert!(OffloadConfig::default().tiers.is_empty());
}

#[test]
fn spec_hierarchy_has_the_spec_tiers() {
    let o = OffloadConfig::spec_hierarchy();
    assert_eq!(o.chunk_size, 256);
    let t: Vec<(&str, f64, f64, u32, f64, TierScope)> = o
        .tiers
        .iter()
        .map(|t| {
            (
                t.name.as_str(),
                t.bandwidth_gbps,
                t.latency_s,
                t.concurrency,
                t.capacity_gb,
                t.scope,
            )
        })
        .collect();
    assert_eq!(
        t,
        vec![
            (
                "cpu_dram",
                50.0,
                200e-9,
                1_000_000,
                8.0,
                TierScope::PerWorker
            ),
            (
                "local_nvme",
                10.0,
                10e-6,
                1000,
                1024.0,
                TierScope::PerWorker
            ),
            (
                "distributed_fs",
                100.0,
                100e-6,
                1000,
                1e6,
                TierScope::Shared
            ),
        ]
    );
    let parsed: OffloadConfig = serde_json::from_str("{}").unwrap();
    assert_eq!(parsed, OffloadConfig::default());
}

#[test]
fn tier_capacity_in_chunks_follows_the_model() {
    // granite-3.3-8b: 2 · 40 layers · 8 kv heads · 128 head dim · 2 bytes = 163 840 bytes/token;
    // a 256-token chunk is 41 943 040 bytes; 8 GB = 8e9 bytes holds floor(190.73) = 190 chunks.
    let chunk_bytes = 256.0 * 163_840.0;
    assert_eq!(TierConfig::cpu_dram().capacity_chunks(chunk_bytes), 190);
    // 1024 GB / 41 943 040 = 24 414.06 → 24 414.
    assert_eq!(
        TierConfig::local_nvme().capacity_chunks(chunk_bytes),
        24_414
    );
}

#[test]
fn bad_tier_settings_are_reported_with_their_paths() {
    let o: OffloadConfig = serde_json::from_str(
        r#"{"chunk_size": 0,
            "tiers": [{"name": "dram"},
                      {"bandwidth_gbps": 0, "latency_s": -1, "concurrency": 0, "capacity_gb": -5}]}"#,
    )
    .unwrap();
    // A tier with only a name gets the CPU DRAM defaults.
    assert_eq!(o.tiers[0].bandwidth_gbps, 50.0);
    let mut p = Problems::new();
    o.validate("kv_cache", &mut p);
    assert_eq!(
        paths(p),
        vec![
            "kv_cache.chunk_size",
            "kv_cache.tiers[1].bandwidth_gbps",
            "kv_cache.tiers[1].latency_s",
            "kv_cache.tiers[1].concurrency",
            "kv_cache.tiers[1].capacity_gb",
        ]
    );
    let e =
        serde_json::from_str::<OffloadConfig>(r#"{"tiers": [{"scope": "global"}]}"#).unwrap_err();
    assert!(e.to_string().contains("unknown variant `global`"), "{e}");
}
