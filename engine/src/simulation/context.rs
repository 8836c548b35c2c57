//! What every process of one run shares: the clock, the resolved configuration, the
//! offload tiers and their links, and the statistics sink.

use super::recorder::Recorder;
use crate::deployment::pool::Pool;
use crate::deployment::KvTransferConfig;
use crate::kernel::Environment;
use crate::model::Model;
use crate::offload::transfer::LinkDriver;
use crate::offload::{OffloadTiers, TierScope, TransferLink};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// A tier link's key: (tier, owning worker), `None` for a shared tier's single link.
type LinkKey = (u8, Option<u32>);

/// Shared by the router, the workers and the workload stages of one run.
pub(crate) struct Context {
    pub env: Environment,
    pub model: Model,
    /// The worker pools (one mixed pool without a deployment section).
    pub pools: Vec<Pool>,
    /// The prefill→decode KV link of each prefill worker.
    pub kv_transfer: KvTransferConfig,
    /// How often workers flush KV events to the router, seconds; `None` when the routing
    /// policy does not read the global KV view, so no events are recorded at all.
    pub kv_event_interval: Option<f64>,
    pub tiers: RefCell<OffloadTiers>,
    links: RefCell<BTreeMap<LinkKey, Rc<LinkDriver>>>,
    /// Each prefill worker's KV link, by worker id (started on first use).
    kv_links: RefCell<BTreeMap<u32, Rc<LinkDriver>>>,
    pub recorder: RefCell<Recorder>,
}

impl Context {
    /// A context for one run, which may issue at most `max_requests` requests.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        env: Environment,
        model: Model,
        pools: Vec<Pool>,
        kv_transfer: KvTransferConfig,
        kv_event_interval: Option<f64>,
        tiers: OffloadTiers,
        max_requests: u64,
    ) -> Self {
        Self {
            env,
            model,
            pools,
            kv_transfer,
            kv_event_interval,
            tiers: RefCell::new(tiers),
            links: RefCell::new(BTreeMap::new()),
            kv_links: RefCell::new(BTreeMap::new()),
            recorder: RefCell::new(Recorder::new(max_requests)),
        }
    }

    /// The chunk size when workers store KV to the tiers as it is computed (`None` without
    /// tiers, or when they store completed prompts).
    pub fn store_as_computed(&self) -> Option<u32> {
        let tiers = self.tiers.borrow();
        (!tiers.is_empty() && tiers.store_when() == crate::offload::StoreWhen::AsComputed)
            .then(|| tiers.chunk_size())
    }

    /// The link worker `worker` reads tier `tier` through (started on first use).
    pub fn link(&self, tier: u8, worker: u32) -> Option<Rc<LinkDriver>> {
        let tiers = self.tiers.borrow();
        let config = tiers.config(tier)?;
        let owner = match config.scope {
            TierScope::PerWorker => Some(worker),
            TierScope::Shared => None,
        };
        let mut links = self.links.borrow_mut();
        let driver = links
            .entry((tier, owner))
            .or_insert_with(|| LinkDriver::start(&self.env, TransferLink::for_tier(config)));
        Some(Rc::clone(driver))
    }

    /// The link prefill worker `worker` sends KV caches over (started on first use).
    pub fn kv_link(&self, worker: u32) -> Rc<LinkDriver> {
        let mut links = self.kv_links.borrow_mut();
        let driver = links.entry(worker).or_insert_with(|| {
            let c = &self.kv_transfer;
            LinkDriver::start(
                &self.env,
                TransferLink::new(c.bandwidth_bytes_per_s(), c.latency_s, c.concurrency),
            )
        });
        Rc::clone(driver)
    }
}
