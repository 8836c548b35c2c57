//! What the run's loops share, as narrow handles: the router's, the workers' and the
//! workload stages' loops each take the handles they use (the clock, the books, the
//! offload tiers and their links, the prefill→decode links, the model), never the
//! simulation that assembles them.

pub(crate) mod recorder;

use crate::kernel::Environment;
use crate::model::Model;
use crate::offload::transfer::LinkDriver;
use crate::offload::{OffloadTiers, StoreWhen, TierScope, TransferLink};
use recorder::Recorder;
use std::cell::{Ref, RefCell, RefMut};
use std::collections::BTreeMap;
use std::rc::Rc;

/// The run's books (statistics, stage bookkeeping, the request cap), shared by every loop.
pub(crate) type Books = Rc<RefCell<Recorder>>;

/// A tier link's key: (tier, owning worker), `None` for a shared tier's single link.
type LinkKey = (u8, Option<u32>);

/// The offload tiers behind the GPU prefix caches, and the links into them.
pub(crate) struct Tiers {
    env: Environment,
    tiers: RefCell<OffloadTiers>,
    links: RefCell<BTreeMap<LinkKey, Rc<LinkDriver>>>,
}

impl Tiers {
    pub(crate) fn new(env: Environment, tiers: OffloadTiers) -> Self {
        Self {
            env,
            tiers: RefCell::new(tiers),
            links: RefCell::new(BTreeMap::new()),
        }
    }

    /// The tiers, to read.
    pub(crate) fn borrow(&self) -> Ref<'_, OffloadTiers> {
        self.tiers.borrow()
    }

    /// The tiers, to change.
    pub(crate) fn borrow_mut(&self) -> RefMut<'_, OffloadTiers> {
        self.tiers.borrow_mut()
    }

    /// The chunk size when workers store KV to the tiers as it is computed (`None` without
    /// tiers, or when they store completed prompts).
    pub(crate) fn store_as_computed(&self) -> Option<u32> {
        let tiers = self.tiers.borrow();
        (!tiers.is_empty() && tiers.store_when() == StoreWhen::AsComputed)
            .then(|| tiers.chunk_size())
    }

    /// The link worker `worker` reads tier `tier` through (started on first use).
    pub(crate) fn link(&self, tier: u8, worker: u32) -> Option<Rc<LinkDriver>> {
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
}

/// Each prefill worker's link to the decode workers, all alike (started on first use).
pub(crate) struct KvLinks {
    env: Environment,
    /// What every link is, before it carries anything.
    link: TransferLink,
    links: RefCell<BTreeMap<u32, Rc<LinkDriver>>>,
}

impl KvLinks {
    pub(crate) fn new(env: Environment, link: TransferLink) -> Self {
        Self {
            env,
            link,
            links: RefCell::new(BTreeMap::new()),
        }
    }

    /// The link prefill worker `worker` sends KV caches over (started on first use).
    pub(crate) fn link(&self, worker: u32) -> Rc<LinkDriver> {
        let mut links = self.links.borrow_mut();
        let driver = links
            .entry(worker)
            .or_insert_with(|| LinkDriver::start(&self.env, self.link.clone()));
        Rc::clone(driver)
    }
}

/// What every worker of a run shares (and the router, which starts and stops them).
pub(crate) struct WorkerShared {
    pub env: Environment,
    pub model: Model,
    /// How often workers flush KV events to the router, seconds; `None` when the routing
    /// policy does not read the global KV view, so no events are recorded at all.
    pub kv_event_interval: Option<f64>,
    pub tiers: Tiers,
    pub kv_links: KvLinks,
    pub books: Books,
    /// The original Opal's batching rules every worker follows (all off: vLLM's).
    pub opal_batch: crate::worker::OpalBatch,
}
