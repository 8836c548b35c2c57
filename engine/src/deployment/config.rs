//! The `deployment` section: worker pools with roles (prefill/decode disaggregation) and the
//! link that carries KV caches from prefill to decode workers.

use crate::hardware::HardwareConfig;
use crate::router::autoscaler::AutoscalerConfig;
use crate::router::PolicyConfig;
use crate::validate::{index, join, Problem, Problems};
use crate::worker::{SchedulerConfig, MAX_WORKERS};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What a pool's workers do with a request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PoolRole {
    /// Prefill and decode on the same worker (the classic, colocated deployment).
    #[default]
    Mixed,
    /// Prefill only: the worker computes the prompt, samples the first token, then hands
    /// the request's KV cache to a decode worker.
    Prefill,
    /// Decode only: the worker receives requests whose prompt KV comes from a prefill worker.
    Decode,
}

impl PoolRole {
    /// The role's configuration name.
    pub fn name(self) -> &'static str {
        match self {
            PoolRole::Mixed => "mixed",
            PoolRole::Prefill => "prefill",
            PoolRole::Decode => "decode",
        }
    }

    /// True for the roles new requests are routed to.
    pub fn takes_new_requests(self) -> bool {
        self != PoolRole::Decode
    }
}

/// One pool of identical workers (`deployment.pools[i]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PoolConfig {
    /// Display name, unique in the deployment. Default: the role's name.
    pub name: String,
    /// `mixed`, `prefill` or `decode`. Default `mixed`.
    pub role: PoolRole,
    /// Workers at the start (count, ≥ 1). Default 1.
    pub num_workers: u32,
    /// Fields replacing the top-level `hardware` section's for this pool (each key given
    /// replaces that key; the rest is inherited). Default: none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hardware: Option<Map<String, Value>>,
    /// Fields replacing the top-level `worker` section's for this pool, key by key.
    /// Default: none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worker: Option<Map<String, Value>>,
    /// This pool's autoscaler (`min_workers`/`max_workers` count this pool's workers).
    /// Default: none (the pool keeps its size).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub autoscaler: Option<AutoscalerConfig>,
}

impl Default for PoolConfig {
    fn default() -> Self {
        Self {
            name: String::new(),
            role: PoolRole::Mixed,
            num_workers: 1,
            hardware: None,
            worker: None,
            autoscaler: None,
        }
    }
}

impl PoolConfig {
    /// The pool's name: the given one, else its role's.
    pub fn display_name(&self) -> &str {
        if self.name.is_empty() {
            self.role.name()
        } else {
            &self.name
        }
    }

    /// The pool's `hardware` section: the top-level one with this pool's keys replaced.
    pub fn effective_hardware(&self, top: &HardwareConfig) -> Result<HardwareConfig, String> {
        overlay(top, self.hardware.as_ref())
    }

    /// The price of one of this pool's GPUs for an hour, given the top-level `hardware`
    /// section: its own `cost_per_gpu_hour` if it sets one, else its GPU's entry in
    /// `gpu_prices`, else the catalogue's. The top-level `cost_per_gpu_hour` prices the
    /// top-level GPU: a pool on that GPU inherits it, a pool on another does not.
    pub fn cost_per_gpu_hour(&self, top: &HardwareConfig) -> Option<f64> {
        let mut hw = self.effective_hardware(top).unwrap_or_else(|_| top.clone());
        if self.prices_another_gpu(top) {
            hw.cost_per_gpu_hour = None;
        }
        hw.cost_per_gpu_hour()
    }

    /// True when the top-level `cost_per_gpu_hour` would reach this pool, on a different GPU,
    /// through inheritance (the pool sets no price of its own).
    fn prices_another_gpu(&self, top: &HardwareConfig) -> bool {
        let own = self
            .hardware
            .as_ref()
            .is_some_and(|m| m.contains_key("cost_per_gpu_hour"));
        let gpu = self
            .hardware
            .as_ref()
            .and_then(|m| m.get("gpu"))
            .and_then(Value::as_str)
            .unwrap_or(&top.gpu);
        top.cost_per_gpu_hour.is_some() && !own && !gpu.eq_ignore_ascii_case(&top.gpu)
    }

    /// The pool's `worker` section: the top-level one with this pool's keys replaced.
    pub fn effective_worker(&self, top: &SchedulerConfig) -> Result<SchedulerConfig, String> {
        overlay(top, self.worker.as_ref())
    }
}

/// `base` with the keys of `over` replaced (shallow: a key given replaces the whole value).
fn overlay<T>(base: &T, over: Option<&Map<String, Value>>) -> Result<T, String>
where
    T: Serialize + serde::de::DeserializeOwned + Clone,
{
    let Some(over) = over else {
        return Ok(base.clone());
    };
    let mut tree = serde_json::to_value(base).map_err(|e| e.to_string())?;
    if let Value::Object(m) = &mut tree {
        for (k, v) in over {
            m.insert(k.clone(), v.clone());
        }
    }
    crate::tracked::read(&tree).map_err(|e| e.to_string())
}

/// The link KV caches cross from a prefill worker to a decode worker (RDMA/NVLink).
///
/// Each prefill worker sends over its own link (its NIC): transfers share its bandwidth
/// (processor sharing), at most `concurrency` at a time, each paying `latency_s` once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct KvTransferConfig {
    /// Bandwidth in GB/s (10⁹ bytes/s), shared by one prefill worker's transfers. Default 50
    /// (a 400 Gb/s RDMA NIC).
    pub bandwidth_gbps: f64,
    /// Seconds paid once per transfer before data flows (handshake, notification).
    /// Default 0.001.
    pub latency_s: f64,
    /// Transfers one prefill worker sends at once (count); more queue FIFO. Default 64.
    pub concurrency: u32,
}

impl Default for KvTransferConfig {
    fn default() -> Self {
        Self {
            bandwidth_gbps: 50.0,
            latency_s: 0.001,
            concurrency: 64,
        }
    }
}

impl KvTransferConfig {
    /// Bandwidth in bytes per second.
    pub fn bandwidth_bytes_per_s(&self) -> f64 {
        self.bandwidth_gbps * crate::offload::BYTES_PER_GB
    }
}

/// Most pools one deployment may declare.
pub const MAX_POOLS: usize = 16;

/// Worker pools and the KV link between them (`deployment`). Absent: one mixed pool of
/// `simulation.num_workers` workers with the top-level `hardware` and `worker`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DeploymentConfig {
    /// A label for the deployment, e.g. `"1P:3D"` (shown by sweeps and comparisons).
    /// Default none.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The pools (1 to 16). With any `prefill` or `decode` pool, there must be at least
    /// one of each. Default: one mixed pool of one worker.
    pub pools: Vec<PoolConfig>,
    /// The prefill→decode KV link. Default 50 GB/s, 1 ms, 64 at once.
    pub kv_transfer: KvTransferConfig,
    /// How a prefilled request's decode worker is chosen among the decode pools' workers
    /// (any routing policy; `max_prefix` uses the decode workers' prefix caches).
    /// Default `least_loaded`.
    pub decode_policy: PolicyConfig,
}

impl Default for DeploymentConfig {
    fn default() -> Self {
        Self {
            name: String::new(),
            pools: vec![PoolConfig::default()],
            kv_transfer: KvTransferConfig::default(),
            decode_policy: PolicyConfig::LeastLoaded(Default::default()),
        }
    }
}

impl DeploymentConfig {
    /// What is odd about the pools but does not stop a run, under `path` (normally
    /// `deployment`), given the top-level `hardware` section: a top-level
    /// `cost_per_gpu_hour` that does not price a pool on another GPU.
    pub fn warnings(&self, path: &str, hardware: &HardwareConfig) -> Vec<Problem> {
        let Some(top) = hardware.cost_per_gpu_hour else {
            return Vec::new();
        };
        let pools = join(path, "pools");
        self.pools
            .iter()
            .enumerate()
            .filter(|(_, pool)| pool.prices_another_gpu(hardware))
            .map(|(i, pool)| {
                let at = join(&index(&pools, i), "hardware");
                let hw = pool
                    .effective_hardware(hardware)
                    .unwrap_or_else(|_| hardware.clone());
                let listed = hw
                    .gpu_prices
                    .keys()
                    .any(|name| name.eq_ignore_ascii_case(&hw.gpu));
                let price = match pool.cost_per_gpu_hour(hardware) {
                    Some(p) if listed => format!("at its gpu_prices entry, ${p}"),
                    Some(p) => format!("at the catalogue's ${p}"),
                    None => "unpriced (no cost per million tokens)".into(),
                };
                Problem::new(
                    at.clone(),
                    format!(
                        "hardware.cost_per_gpu_hour (${top}) prices the top-level {}, not \
                         this pool's {}: the pool's GPUs are priced {price}; set \
                         {at}.cost_per_gpu_hour to price them yourself",
                        hardware.gpu, hw.gpu
                    ),
                )
            })
            .collect()
    }

    /// Reads a `deployment` section from a JSON tree (types only; see [`Self::validate`]).
    pub fn from_tree(tree: &Value) -> Result<Self, String> {
        crate::tracked::read(tree).map_err(|e| e.to_string())
    }

    /// True when some pool hands requests from prefill to decode workers.
    pub fn is_disaggregated(&self) -> bool {
        self.pools.iter().any(|p| p.role != PoolRole::Mixed)
    }

    /// Workers at the start, over every pool.
    pub fn num_workers(&self) -> u64 {
        self.pools.iter().map(|p| p.num_workers as u64).sum()
    }

    /// Records every problem under `path` (normally `deployment`), given the top-level
    /// `hardware` and `worker` sections the pools start from.
    pub fn validate(
        &self,
        path: &str,
        hardware: &HardwareConfig,
        worker: &SchedulerConfig,
        p: &mut Problems,
    ) {
        let pools = join(path, "pools");
        if self.pools.is_empty() || self.pools.len() > MAX_POOLS {
            p.push(&pools, format!("must list 1 to {MAX_POOLS} pools"));
        }
        for (i, pool) in self.pools.iter().enumerate() {
            let at = index(&pools, i);
            if pool.num_workers == 0 || pool.num_workers > MAX_WORKERS {
                p.push(
                    join(&at, "num_workers"),
                    format!("must be between 1 and {MAX_WORKERS}"),
                );
            }
            if self.pools[..i]
                .iter()
                .any(|q| q.display_name() == pool.display_name())
            {
                p.push(
                    join(&at, "name"),
                    format!(
                        "\"{}\" names an earlier pool too; give each pool its own name",
                        pool.display_name()
                    ),
                );
            }
            match pool.effective_hardware(hardware) {
                Ok(h) if pool.hardware.is_some() => h.validate(&join(&at, "hardware"), p),
                Ok(_) => {}
                Err(e) => p.push(join(&at, "hardware"), e),
            }
            match pool.effective_worker(worker) {
                Ok(w) if pool.worker.is_some() => {
                    w.validate(&join(&at, "worker"), p);
                    if w.block_size != worker.block_size {
                        p.push(
                            join(&at, "worker.block_size"),
                            format!(
                                "must equal worker.block_size ({}): KV caches move between \
                                 pools block by block",
                                worker.block_size
                            ),
                        );
                    }
                }
                Ok(_) => {}
                Err(e) => p.push(join(&at, "worker"), e),
            }
            if let Some(a) = &pool.autoscaler {
                let ap = join(&at, "autoscaler");
                a.validate(&ap, p);
                if a.max_workers > MAX_WORKERS {
                    p.push(
                        join(&ap, "max_workers"),
                        format!("must be at most {MAX_WORKERS}"),
                    );
                }
                if a.enabled && a.max_workers < pool.num_workers {
                    p.push(
                        join(&ap, "max_workers"),
                        format!(
                            "must be >= the pool's num_workers ({}), its size at the start",
                            pool.num_workers
                        ),
                    );
                }
                if a.enabled && a.min_workers > pool.num_workers {
                    p.push(
                        join(&ap, "min_workers"),
                        format!(
                            "must be <= the pool's num_workers ({}), its size at the start",
                            pool.num_workers
                        ),
                    );
                }
            }
        }
        let total = self.num_workers();
        if total > MAX_WORKERS as u64 {
            p.push(
                &pools,
                format!("the pools start {total} workers in all; at most {MAX_WORKERS}"),
            );
        }
        let has = |r: PoolRole| self.pools.iter().any(|q| q.role == r);
        if self.is_disaggregated() && !(has(PoolRole::Prefill) && has(PoolRole::Decode)) {
            let missing = if has(PoolRole::Prefill) {
                "decode"
            } else {
                "prefill"
            };
            p.push(
                &pools,
                format!(
                    "a disaggregated deployment needs a {missing} pool too: prefill workers \
                     hand every request to a decode worker"
                ),
            );
        }
        let link = join(path, "kv_transfer");
        let bw = self.kv_transfer.bandwidth_gbps;
        if !(bw.is_finite() && bw > 0.0) {
            p.push(
                join(&link, "bandwidth_gbps"),
                "must be a finite number > 0 (GB/s)",
            );
        }
        let lat = self.kv_transfer.latency_s;
        if !(lat.is_finite() && (0.0..=crate::timing::MAX_STEP_SECONDS).contains(&lat)) {
            p.push(
                join(&link, "latency_s"),
                format!(
                    "must be between 0 and {} s",
                    crate::timing::MAX_STEP_SECONDS
                ),
            );
        }
        if self.kv_transfer.concurrency == 0 {
            p.push(join(&link, "concurrency"), "must be >= 1");
        }
        self.decode_policy.validate(&join(path, "decode_policy"), p);
    }
}
