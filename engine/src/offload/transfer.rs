//! A tier link's driver process: sleeps until the link's next event (a latency paid, a
//! transfer done) or until a new transfer arrives, then advances the pure
//! [`TransferLink`] and fires the finished transfers' events.

use super::TransferLink;
use crate::kernel::{Environment, Event, Process, SimError};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

/// One tier link (per worker for a per-worker tier, one for a shared tier) as a process.
pub(crate) struct LinkDriver {
    env: Environment,
    link: RefCell<TransferLink>,
    waiters: RefCell<BTreeMap<u64, Event<()>>>,
    next_id: Cell<u64>,
    process: RefCell<Option<Process<Result<(), SimError>>>>,
}

impl LinkDriver {
    /// Starts the driver process for `link`.
    pub(crate) fn start(env: &Environment, link: TransferLink) -> Rc<Self> {
        let driver = Rc::new(Self {
            env: env.clone(),
            link: RefCell::new(link),
            waiters: RefCell::new(BTreeMap::new()),
            next_id: Cell::new(0),
            process: RefCell::new(None),
        });
        let process = env.process(Rc::clone(&driver).run());
        *driver.process.borrow_mut() = Some(process);
        driver
    }

    /// Starts moving `bytes` now; the event fires when the last byte has arrived.
    pub(crate) fn transfer(&self, bytes: f64) -> Event<()> {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        let done = self.env.event();
        self.link.borrow_mut().start(self.env.now(), id, bytes);
        self.waiters.borrow_mut().insert(id, done.clone());
        // Re-plan: the newcomer changes every transfer's share of the bandwidth. The
        // driver only ever waits on its own timeout, so the interrupt cannot cut anything short.
        if let Some(p) = self.process.borrow().as_ref() {
            p.interrupt().ok();
        }
        done
    }

    async fn run(self: Rc<Self>) -> Result<(), SimError> {
        loop {
            let next = self.link.borrow().next_event_time();
            let wait = next.map_or(f64::INFINITY, |t| (t - self.env.now()).max(0.0));
            match self.env.timeout(wait).await {
                Ok(()) | Err(SimError::Interrupt(_)) => {}
                Err(e) => return Err(e),
            }
            let finished = self.link.borrow_mut().advance_to(self.env.now());
            for c in finished {
                if let Some(done) = self.waiters.borrow_mut().remove(&c.id) {
                    done.succeed(()).ok();
                }
            }
        }
    }
}
