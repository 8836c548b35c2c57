//! Configuration of the KV offload tiers (SPEC §5).
//!
//! Sizes use decimal units, as storage vendors quote them: 1 GB = 10⁹ bytes and
//! 1 GB/s = 10⁹ bytes per second.

use crate::validate::{index, join, Problems};
use serde::{Deserialize, Serialize};

/// Bytes in one (decimal) gigabyte, the unit of tier bandwidth and capacity.
pub const BYTES_PER_GB: f64 = 1e9;

/// Who can read a tier's contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TierScope {
    /// Each worker has its own instance (e.g. its host's DRAM or local NVMe).
    PerWorker,
    /// One instance shared by all workers (e.g. a distributed file system).
    Shared,
}

/// One offload tier.
///
/// JSON starts from a preset and overrides fields: `{"preset": "local_nvme", "capacity_gb": 512}`.
/// Without `preset`, a `name` that is a preset name picks that preset (`{"name": "local_nvme"}`
/// gets NVMe numbers); any other tier starts from `cpu_dram`. Serialised tiers carry every
/// field and no `preset`, so a written document reads back identically.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "TierDocument")]
pub struct TierConfig {
    /// Display name, e.g. `"cpu_dram"`. Default: the preset's name.
    pub name: String,
    /// Bandwidth in GB/s (10⁹ bytes/s), shared by concurrent transfers. Default: the preset's
    /// (cpu_dram 50, local_nvme 10, distributed_fs 100).
    pub bandwidth_gbps: f64,
    /// Latency in seconds, paid once per transfer before data flows. Default: the preset's
    /// (cpu_dram 2e-7, local_nvme 1e-5, distributed_fs 1e-4).
    pub latency_s: f64,
    /// Transfers served at once (count); further transfers queue FIFO. Default: the preset's
    /// (cpu_dram 1 000 000, local_nvme and distributed_fs 1000).
    pub concurrency: u32,
    /// Capacity in GB (10⁹ bytes), per worker or in total depending on `scope`. Default: the
    /// preset's (cpu_dram 8, local_nvme 1024, distributed_fs 1 000 000).
    pub capacity_gb: f64,
    /// Per worker or shared by all workers. Default: the preset's (`shared` for distributed_fs,
    /// else `per_worker`).
    pub scope: TierScope,
}

impl Default for TierConfig {
    fn default() -> Self {
        Self::cpu_dram()
    }
}

/// The tier presets of SPEC §5, by name: `cpu_dram`, `local_nvme`, `distributed_fs`.
pub const TIER_PRESETS: [&str; 3] = ["cpu_dram", "local_nvme", "distributed_fs"];

/// A tier as written in JSON: a preset plus overrides (every field optional).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct TierDocument {
    preset: Option<String>,
    name: Option<String>,
    bandwidth_gbps: Option<f64>,
    latency_s: Option<f64>,
    concurrency: Option<u32>,
    capacity_gb: Option<f64>,
    scope: Option<TierScope>,
}

impl TryFrom<TierDocument> for TierConfig {
    type Error = String;

    fn try_from(doc: TierDocument) -> Result<Self, String> {
        let base = match (&doc.preset, &doc.name) {
            (Some(preset), _) => TierConfig::preset(preset).ok_or_else(|| {
                format!(
                    "unknown tier preset \"{preset}\"; choose one of {}",
                    TIER_PRESETS.join(", ")
                )
            })?,
            (None, Some(name)) => TierConfig::preset(name).unwrap_or_else(TierConfig::cpu_dram),
            (None, None) => TierConfig::cpu_dram(),
        };
        Ok(Self {
            name: doc.name.unwrap_or(base.name),
            bandwidth_gbps: doc.bandwidth_gbps.unwrap_or(base.bandwidth_gbps),
            latency_s: doc.latency_s.unwrap_or(base.latency_s),
            concurrency: doc.concurrency.unwrap_or(base.concurrency),
            capacity_gb: doc.capacity_gb.unwrap_or(base.capacity_gb),
            scope: doc.scope.unwrap_or(base.scope),
        })
    }
}

impl TierConfig {
    /// The preset called `name` (case-insensitive; see [`TIER_PRESETS`]).
    pub fn preset(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "cpu_dram" => Some(Self::cpu_dram()),
            "local_nvme" => Some(Self::local_nvme()),
            "distributed_fs" => Some(Self::distributed_fs()),
            _ => None,
        }
    }

    /// Host DRAM of each worker: 50 GB/s, 200 ns, 10⁶ concurrent, 8 GB.
    pub fn cpu_dram() -> Self {
        Self {
            name: "cpu_dram".into(),
            bandwidth_gbps: 50.0,
            latency_s: 200e-9,
            concurrency: 1_000_000,
            capacity_gb: 8.0,
            scope: TierScope::PerWorker,
        }
    }

    /// Local NVMe of each worker: 10 GB/s, 10 µs, 1000 concurrent, 1024 GB.
    pub fn local_nvme() -> Self {
        Self {
            name: "local_nvme".into(),
            bandwidth_gbps: 10.0,
            latency_s: 10e-6,
            concurrency: 1000,
            capacity_gb: 1024.0,
            scope: TierScope::PerWorker,
        }
    }

    /// A distributed file system shared by all workers: 100 GB/s, 100 µs, 1000 concurrent, 1 PB.
    pub fn distributed_fs() -> Self {
        Self {
            name: "distributed_fs".into(),
            bandwidth_gbps: 100.0,
            latency_s: 100e-6,
            concurrency: 1000,
            capacity_gb: 1e6,
            scope: TierScope::Shared,
        }
    }

    /// Bandwidth in bytes per second.
    pub fn bandwidth_bytes_per_s(&self) -> f64 {
        self.bandwidth_gbps * BYTES_PER_GB
    }

    /// How many chunks of `chunk_bytes` bytes fit (0 when `chunk_bytes` is not positive).
    pub fn capacity_chunks(&self, chunk_bytes: f64) -> u64 {
        if chunk_bytes > 0.0 && self.capacity_gb.is_finite() {
            (self.capacity_gb * BYTES_PER_GB / chunk_bytes).floor() as u64
        } else {
            0
        }
    }

    /// Records every problem under `path` (e.g. `kv_cache.tiers[1]`).
    pub fn validate(&self, path: &str, problems: &mut Problems) {
        problems.positive(path, "bandwidth_gbps", self.bandwidth_gbps);
        problems.non_negative(path, "latency_s", self.latency_s);
        if self.concurrency == 0 {
            problems.push(join(path, "concurrency"), "must be >= 1");
        }
        problems.positive(path, "capacity_gb", self.capacity_gb);
    }
}

/// The ordered offload tiers and their hash granularity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OffloadConfig {
    /// Tiers in lookup order, fastest first. Default: none (offloading off, as vLLM without a
    /// KV connector); [`OffloadConfig::spec_hierarchy`] gives CPU DRAM, local NVMe, distributed FS.
    pub tiers: Vec<TierConfig>,
    /// Tokens per offloaded chunk (the tiers' hash granularity). Default 256.
    pub chunk_size: u32,
    /// When KV reaches the tiers. Default `as_computed`.
    pub store: StoreWhen,
}

/// When a worker writes KV to the offload tiers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StoreWhen {
    /// Every chunk as soon as all its tokens are computed, prompt and generated tokens alike,
    /// as vLLM's offloading connector saves blocks step by step.
    #[default]
    AsComputed,
    /// A request's prompt once the request completes (the original Opal).
    OnCompletion,
}

impl Default for OffloadConfig {
    fn default() -> Self {
        Self::disabled()
    }
}

impl OffloadConfig {
    /// The three-tier hierarchy of SPEC §5: CPU DRAM → local NVMe → distributed FS (shared).
    pub fn spec_hierarchy() -> Self {
        Self {
            tiers: vec![
                TierConfig::cpu_dram(),
                TierConfig::local_nvme(),
                TierConfig::distributed_fs(),
            ],
            chunk_size: 256,
            store: StoreWhen::AsComputed,
        }
    }
}

/// Most tiers a scenario may configure (tier numbers travel as `u8` in KV events).
pub const MAX_TIERS: usize = 16;

impl OffloadConfig {
    /// No offload tiers at all.
    pub fn disabled() -> Self {
        Self {
            tiers: Vec::new(),
            chunk_size: 256,
            store: StoreWhen::AsComputed,
        }
    }

    /// The tiers' scopes, in order (what the router's global KV view needs to know).
    pub fn scopes(&self) -> Vec<TierScope> {
        self.tiers.iter().map(|t| t.scope).collect()
    }

    /// Records every problem under `path` (e.g. `kv_cache`): `kv_cache.tiers[1].bandwidth_gbps`.
    pub fn validate(&self, path: &str, problems: &mut Problems) {
        if self.chunk_size == 0 {
            problems.push(join(path, "chunk_size"), "must be >= 1");
        }
        if self.tiers.len() > MAX_TIERS {
            problems.push(
                join(path, "tiers"),
                format!("at most {MAX_TIERS} tiers are supported"),
            );
        }
        let tiers = join(path, "tiers");
        for (i, tier) in self.tiers.iter().enumerate() {
            tier.validate(&index(&tiers, i), problems);
        }
    }
}
