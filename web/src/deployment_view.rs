//! What the app shows of a run's deployment: which pool each worker belongs to (for lane
//! labels and per-worker tables) and each request's KV transfer.
//!
//! Pure (no browser calls), tested natively.

use crate::charts::format::format_value;
use crate::charts::Unit;
use opal::deployment::{DeploymentConfig, PoolRole, TransferRecord};
use opal::hardware::HardwareConfig;
use opal::simulation::DeploymentReport;
use std::rc::Rc;

/// Each worker's pool, by worker id, for a run with a `deployment` section.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WorkerPools {
    /// Pool names in the deployment's order.
    pub names: Rc<[String]>,
    /// Worker id → index into `names` (`None`: a worker whose pool the results do not say).
    pub of_worker: Rc<[Option<usize>]>,
}

impl WorkerPools {
    /// The pool name of `worker`, if known.
    pub fn name(&self, worker: u32) -> Option<&str> {
        let k = (*self.of_worker.get(worker as usize)?)?;
        self.names.get(k).map(String::as_str)
    }

    /// A lane or table label: `prefill · worker 0`, or `worker 0` when the pool is unknown.
    pub fn label(&self, worker: u32) -> String {
        match self.name(worker) {
            Some(pool) => format!("{pool} · worker {worker}"),
            None => format!("worker {worker}"),
        }
    }
}

/// The pools of a run's workers, from its scenario document (JSON) and its transfers;
/// `None` without a `deployment` section.
///
/// The engine starts each pool's workers in the deployment's order, numbering them on, so the
/// first `num_workers` ids are pool 0's, and so on. A worker an autoscaler added later is
/// placed by the role its transfers show it in (`prefill_worker` or `decode_worker`), when only
/// one pool has that role; otherwise its pool is left unknown.
pub fn worker_pools(
    scenario: &str,
    workers: u32,
    transfers: &[TransferRecord],
) -> Option<WorkerPools> {
    let doc: serde_json::Value = serde_json::from_str(scenario).ok()?;
    let config: DeploymentConfig = DeploymentConfig::from_tree(doc.get("deployment")?).ok()?;
    let pools = &config.pools;
    let mut of_worker: Vec<Option<usize>> = pools
        .iter()
        .enumerate()
        .flat_map(|(k, p)| std::iter::repeat_n(Some(k), p.num_workers as usize))
        .collect();
    let initial = of_worker.len();
    of_worker.resize(initial.max(workers as usize), None);
    let only = |role: PoolRole| {
        let mut it = pools.iter().enumerate().filter(|(_, p)| p.role == role);
        match (it.next(), it.next()) {
            (Some((k, _)), None) => Some(k),
            _ => None,
        }
    };
    let (prefill, decode) = (only(PoolRole::Prefill), only(PoolRole::Decode));
    let mut place = |w: u32, pool: Option<usize>| {
        if let Some(slot) = of_worker
            .get_mut(w as usize)
            .filter(|_| w as usize >= initial)
        {
            *slot = slot.or(pool);
        }
    };
    for t in transfers {
        place(t.prefill_worker, prefill);
        if let Some(d) = t.decode_worker {
            place(d, decode);
        }
    }
    Some(WorkerPools {
        names: pools.iter().map(|p| p.display_name().to_string()).collect(),
        of_worker: Rc::from(of_worker),
    })
}

/// The pools of a run's workers from its deployment report alone (talk mode has no
/// scenario): each pool's workers numbered on in the deployment's order, as the engine
/// starts them. A run whose autoscaler added workers may misplace the late ones.
pub fn worker_pools_of_report(report: &DeploymentReport) -> WorkerPools {
    WorkerPools {
        names: report.pools.iter().map(|p| p.name.clone()).collect(),
        of_worker: report
            .pools
            .iter()
            .enumerate()
            .flat_map(|(k, p)| std::iter::repeat_n(Some(k), p.workers as usize))
            .collect(),
    }
}

/// Each pool's GPU and tensor parallelism as its workers run, e.g. `H100-SXM, TP 2`: the
/// top-level `hardware` with the pool's keys replaced. Empty without a `deployment`.
pub fn pool_hardware(scenario: &str) -> Vec<String> {
    let Ok(doc) = serde_json::from_str::<serde_json::Value>(scenario) else {
        return Vec::new();
    };
    let Some(config) = doc
        .get("deployment")
        .and_then(|d| DeploymentConfig::from_tree(d).ok())
    else {
        return Vec::new();
    };
    let top: HardwareConfig = doc
        .get("hardware")
        .and_then(|h| HardwareConfig::from_tree(h).ok())
        .unwrap_or_default();
    config
        .pools
        .iter()
        .map(|p| match p.effective_hardware(&top) {
            Ok(h) if h.dp > 1 => format!("{}, TP {} × DP {}", h.gpu, h.tp, h.dp),
            Ok(h) => format!("{}, TP {}", h.gpu, h.tp),
            Err(e) => e,
        })
        .collect()
}

/// Request id → index of its transfer in `transfers` (requests without one: `None`).
pub fn transfer_index(transfers: &[TransferRecord], requests: usize) -> Rc<[Option<u32>]> {
    let mut index = vec![None; requests];
    for (i, t) in transfers.iter().enumerate() {
        if let Some(slot) = index.get_mut(t.request as usize) {
            *slot = Some(i as u32);
        }
    }
    Rc::from(index)
}

/// Bytes in decimal units, as link bandwidths are given: `1.31 GB`, `420 MB`.
pub fn bytes(b: u64) -> String {
    let b = b as f64;
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else {
        format!("{:.1} kB", b / 1e3)
    }
}

/// A transfer in words, for tooltips: `KV transfer worker 0 → worker 2: 1.31 GB in 27.2 ms
/// (waited 1.00 ms for room)`.
pub fn describe_transfer(t: &TransferRecord, pools: Option<&WorkerPools>) -> String {
    let label = |w: u32| match pools {
        Some(p) => p.label(w),
        None => format!("worker {w}"),
    };
    let to = t
        .decode_worker
        .map(label)
        .unwrap_or_else(|| "no decode worker yet".into());
    let mut s = format!("KV transfer {} → {to}", label(t.prefill_worker));
    if t.end.is_finite() {
        s.push_str(&format!(
            ": {} in {}",
            bytes(t.bytes),
            format_value(t.end - t.start, Unit::Seconds),
        ));
        let wait = t.start - t.handoff;
        if wait > 0.0 {
            s.push_str(&format!(
                " (waited {} for room)",
                format_value(wait, Unit::Seconds)
            ));
        }
    } else {
        s.push_str(": not finished");
    }
    if t.cached_tokens > 0 {
        s.push_str(&format!(
            "; {} prompt tokens already cached there",
            t.cached_tokens
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r#"{"deployment": {"pools": [
        {"name": "p", "role": "prefill", "num_workers": 2},
        {"name": "d", "role": "decode", "num_workers": 1}]}}"#;

    fn transfer(request: u64, from: u32, to: u32) -> TransferRecord {
        let mut t = TransferRecord::new(request, from, 1.0);
        t.decode_worker = Some(to);
        t
    }

    #[test]
    fn initial_workers_follow_the_pools_order_and_late_ones_their_role() {
        // Workers 0, 1 start in "p", 2 in "d"; 3 and 4 were added later: 3 decoded a request
        // (the only decode pool), 4 never showed up in a transfer.
        let t = [transfer(0, 1, 3), transfer(1, 0, 2)];
        let p = worker_pools(DOC, 5, &t).unwrap();
        assert_eq!(&*p.names, &["p".to_string(), "d".to_string()]);
        assert_eq!(&*p.of_worker, &[Some(0), Some(0), Some(1), Some(1), None]);
        assert_eq!(p.label(2), "d · worker 2");
        assert_eq!(p.label(4), "worker 4");
    }

    #[test]
    fn no_deployment_no_pools() {
        assert_eq!(worker_pools(r#"{"simulation": {}}"#, 2, &[]), None);
    }

    #[test]
    fn a_pool_overrides_the_top_level_gpu_key_by_key() {
        let doc = r#"{"hardware": {"gpu": "H100-SXM", "tp": 2}, "deployment": {"pools": [
            {"role": "prefill"}, {"role": "decode", "hardware": {"gpu": "A100-80GB"}}]}}"#;
        assert_eq!(
            pool_hardware(doc),
            vec!["H100-SXM, TP 2".to_string(), "A100-80GB, TP 2".to_string()]
        );
    }

    #[test]
    fn transfers_are_indexed_by_request() {
        let t = [transfer(2, 0, 1), transfer(0, 0, 1)];
        assert_eq!(&*transfer_index(&t, 3), &[Some(1), None, Some(0)]);
    }

    #[test]
    fn a_transfer_reads_as_route_size_time_and_wait() {
        // 2 GB over 50 GB/s = 40 ms, plus 1 ms latency; it waited 2 ms for blocks.
        let mut t = transfer(0, 0, 2);
        (t.start, t.end, t.bytes) = (1.002, 1.043, 2_000_000_000);
        let p = worker_pools(DOC, 3, &[]).unwrap();
        assert_eq!(
            describe_transfer(&t, Some(&p)),
            "KV transfer p · worker 0 → d · worker 2: 2.00 GB in 41.0 ms (waited 2.00 ms for room)"
        );
    }
}
