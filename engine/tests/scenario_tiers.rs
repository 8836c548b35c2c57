//! Offload tiers are written as a preset plus overrides.

use engine::offload::{OffloadConfig, TierConfig, TierScope};

fn tiers(json: &str) -> Vec<TierConfig> {
    serde_json::from_str::<OffloadConfig>(json).unwrap().tiers
}

#[test]
fn a_preset_fills_the_spec_numbers_and_fields_override_them() {
    let t = tiers(
        r#"{"tiers": [{"preset": "cpu_dram"}, {"preset": "local_nvme", "capacity_gb": 512},
                      {"preset": "distributed_fs", "name": "lustre"}]}"#,
    );
    assert_eq!(t[0], TierConfig::cpu_dram());
    // NVMe: 10 GB/s, 10 µs, 1000 at once; capacity overridden from 1024 to 512 GB.
    assert_eq!(
        t[1],
        TierConfig {
            capacity_gb: 512.0,
            ..TierConfig::local_nvme()
        }
    );
    assert_eq!(t[1].bandwidth_gbps, 10.0);
    assert_eq!(t[1].latency_s, 10e-6);
    assert_eq!(t[2].name, "lustre");
    assert_eq!(t[2].scope, TierScope::Shared);
    assert_eq!(t[2].capacity_gb, 1e6);
}

#[test]
fn a_tier_named_after_a_preset_gets_that_preset() {
    let t = tiers(r#"{"tiers": [{"name": "local_nvme"}, {"name": "Distributed_FS"}]}"#);
    assert_eq!(t[0], TierConfig::local_nvme());
    assert_eq!(t[1].bandwidth_gbps, 100.0);
    assert_eq!(t[1].name, "Distributed_FS");
    // Any other name starts from CPU DRAM, the documented default.
    assert_eq!(
        tiers(r#"{"tiers": [{"name": "ram"}]}"#)[0].bandwidth_gbps,
        50.0
    );
}

#[test]
fn unknown_presets_and_fields_are_reported_at_the_tier() {
    let p = opal::parse_scenario(
        r#"{"kv_cache": {"tiers": [{"preset": "cpu_dram"}, {"preset": "tape"}]}}"#,
    )
    .unwrap_err();
    assert_eq!(p[0].path, "kv_cache.tiers[1].preset");
    assert_eq!(
        p[0].message,
        "unknown tier preset \"tape\"; choose one of cpu_dram, local_nvme, distributed_fs"
    );
    let p = opal::parse_scenario(
        r#"{"kv_cache": {"tiers": [{"preset": "cpu_dram", "bandwith_gbps": 1}]}}"#,
    )
    .unwrap_err();
    assert!(
        p[0].message.contains("unknown field `bandwith_gbps`"),
        "{p:?}"
    );
}

#[test]
fn a_written_tier_reads_back_identically() {
    let custom = TierConfig {
        name: "my_ssd".into(),
        bandwidth_gbps: 7.0,
        latency_s: 8e-5,
        concurrency: 64,
        capacity_gb: 3840.0,
        scope: TierScope::PerWorker,
    };
    let o = OffloadConfig {
        tiers: vec![TierConfig::local_nvme(), custom],
        chunk_size: 256,
        ..Default::default()
    };
    let text = serde_json::to_string(&o).unwrap();
    assert!(!text.contains("preset"));
    assert_eq!(serde_json::from_str::<OffloadConfig>(&text).unwrap(), o);
}
