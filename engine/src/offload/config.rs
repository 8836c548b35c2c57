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

/// One offload tier. Defaults are the CPU DRAM tier of SPEC §5.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TierConfig {
    /// Display name, e.g. `"cpu_dram"`. Default `"cpu_dram"`.
    pub name: String,
    /// Bandwidth in GB/s (10⁹ bytes/s), shared by concurrent transfers. Default 50.
    pub bandwidth_gbps: f64,
    /// Latency in seconds, paid once per transfer before data flows. Default 2e-7 (200 ns).
    pub latency_s: f64,
    /// Transfers served at once (count); further transfers queue FIFO. Default 1 000 000.
    pub concurrency: u32,
    /// Capacity in GB (10⁹ bytes), per worker or in total depending on `scope`. Default 8.
    pub capacity_gb: f64,
    /// Per worker or shared by all workers. Default `per_worker`.
    pub scope: TierScope,
}

impl Default for TierConfig {
    fn default() -> Self {
        Self::cpu_dram()
    }
}

impl TierConfig {
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
