//! FIFO stores (SimPy `simpy.Store`): producer/consumer queues whose `put` and `get` are events.
//!
//! The trigger logic follows SimPy's `BaseResource` exactly, because it decides the order of
//! equal-time events: creating a put tries to accept the *oldest* pending put; creating a get
//! tries to serve the *oldest* pending get; when a put event is processed it tries the oldest
//! get once, and when a get event is processed it tries the oldest put once.
//!
//! Unlike SimPy, a get or put handle that is dropped (or whose waiting process is interrupted)
//! before it was served is cancelled, so an abandoned wait never swallows a later item; and an
//! item already handed to an abandoned get goes back to the front of the store.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::{Rc, Weak};
use std::task::{Context, Poll};

use super::callback::{Callback, StoreTrigger};
use super::environment::Environment;
use super::error::{KernelError, SimError};
use super::event::{AsEvent, EventRef};
use super::state::{EventId, EventState, StoreId, NOBODY, NORMAL};
use super::timeout::At;

/// A FIFO queue of items shared by processes. Cheap to clone; clones share the queue.
pub struct Store<T> {
    inner: Rc<StoreInner<T>>,
}

struct StoreInner<T> {
    env: Environment,
    capacity: usize,
    queues: RefCell<Queues<T>>,
    /// The store's registration, which its event callbacks name.
    id: StoreId,
}

struct Queues<T> {
    items: VecDeque<T>,
    /// Puts not yet accepted, with their items.
    put_queue: VecDeque<(EventId, T)>,
    /// Gets not yet served, with the cell their item will be delivered to.
    get_queue: VecDeque<(EventId, u32)>,
    /// Delivered items waiting for their getter, a slab indexed by cell number.
    cells: Vec<Option<T>>,
    free_cells: Vec<u32>,
}

impl<T: 'static> Store<T> {
    /// An unbounded store (SimPy `Store(env)`).
    pub fn new(env: &Environment) -> Self {
        Self::build(env, usize::MAX)
    }

    /// A store holding at most `capacity` items; `put` waits while it is full.
    pub fn bounded(env: &Environment, capacity: usize) -> Result<Self, KernelError> {
        if capacity == 0 {
            return Err(KernelError::ZeroCapacity);
        }
        Ok(Self::build(env, capacity))
    }

    fn build(env: &Environment, capacity: usize) -> Self {
        let inner = Rc::new_cyclic(|weak: &Weak<StoreInner<T>>| StoreInner {
            id: env.state().register_store(weak.clone()),
            env: env.clone(),
            capacity,
            queues: RefCell::new(Queues {
                items: VecDeque::new(),
                put_queue: VecDeque::new(),
                get_queue: VecDeque::new(),
                cells: Vec::new(),
                free_cells: Vec::new(),
            }),
        });
        Store { inner }
    }

    /// Offers `item`; the returned event fires once the store accepted it (at once when there is
    /// room). Dropping a put that was not yet accepted withdraws it and drops the item.
    pub fn put(&self, item: T) -> StorePut<T> {
        let mut q = self.inner.queues.borrow_mut();
        // With no put ahead of it and room, `trigger_put` would accept this very put: the
        // item goes straight in (one move of it, not three), and the event is created
        // already triggered, in one look at the kernel.
        let accepted = q.put_queue.is_empty() && q.items.len() < self.inner.capacity;
        if accepted {
            q.items.push_back(item);
            drop(q);
            // Inside a process, almost always awaited at once by that process: a bare
            // queue entry that triggers the store's gets and wakes the process, with an
            // event made only if something else asks for one (as a lazy `Timeout`).
            let mut st = self.inner.env.state();
            if let Some(owner) = st.active {
                let seq = st.schedule_put(owner, self.inner.id);
                let time = st.now;
                drop(st);
                return StorePut {
                    store: Rc::clone(&self.inner),
                    at: Cell::new(At::Entry { time, seq, owner }),
                    waiting: false,
                    settled: true, // accepted: nothing to withdraw
                };
            }
            drop(st);
            let id = self.new_event(Some(Callback::TriggerGet(self.inner.id)), true);
            return StorePut {
                store: Rc::clone(&self.inner),
                at: Cell::new(At::Event(id)),
                waiting: false,
                settled: false,
            };
        }
        let id = self.new_event(Some(Callback::TriggerGet(self.inner.id)), false);
        q.put_queue.push_back((id, item));
        drop(q);
        self.inner.trigger_put();
        StorePut {
            store: Rc::clone(&self.inner),
            at: Cell::new(At::Event(id)),
            waiting: false,
            settled: false,
        }
    }

    /// Puts without waiting when the store has room (always, for an unbounded store), exactly as
    /// a SimPy `store.put(item)` that is not yielded; gives the item back when it is full.
    pub fn try_put(&self, item: T) -> Result<(), T> {
        {
            let mut q = self.inner.queues.borrow_mut();
            if !q.put_queue.is_empty() || q.items.len() >= self.inner.capacity {
                return Err(item);
            }
            q.items.push_back(item);
        }
        // What `put` and dropping its handle do for an accepted put: its entry fires (to
        // trigger a get) where the event would, as a lazy put's that no process sleeps on.
        self.inner.env.state().schedule_put(NOBODY, self.inner.id);
        Ok(())
    }

    /// Asks for the oldest item; the returned event fires once one was handed over. Dropping a
    /// get that was not yet served withdraws it.
    pub fn get(&self) -> StoreGet<T> {
        let mut q = self.inner.queues.borrow_mut();
        let cell = match q.free_cells.pop() {
            Some(c) => c,
            None => {
                q.cells.push(None);
                u32::try_from(q.cells.len() - 1).expect("more than 2^32 pending gets")
            }
        };
        // With no get ahead of it and an item there, `trigger_get` would serve this very
        // get: the item goes straight to its cell, and the event is created already
        // triggered.
        let served = q.get_queue.is_empty() && !q.items.is_empty();
        // A get's processing tries the oldest waiting put; an unbounded store accepts every
        // put at once, so none ever waits and that callback would never do anything.
        let cb = (self.inner.capacity != usize::MAX).then(|| Callback::TriggerPut(self.inner.id));
        let id = self.new_event(cb, served);
        if served {
            let item = q.items.pop_front();
            q.cells[cell as usize] = item;
            drop(q);
        } else {
            q.get_queue.push_back((id, cell));
            // With no item, `trigger_get` would find nothing to hand over.
            let item_waits = !q.items.is_empty();
            drop(q);
            if item_waits {
                self.inner.trigger_get();
            }
        }
        StoreGet {
            store: Rc::clone(&self.inner),
            id,
            cell,
            waiting: false,
            settled: false,
        }
    }

    /// Number of items in the store.
    pub fn len(&self) -> usize {
        self.inner.queues.borrow().items.len()
    }

    /// True when the store holds no item.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Maximum number of items (`usize::MAX` when unbounded).
    pub fn capacity(&self) -> usize {
        self.inner.capacity
    }

    /// A new event with callback `cb`, if any, triggered now (as `Event::succeed`) if
    /// `triggered`. (The store's queues may be borrowed: the kernel state runs no store code.)
    fn new_event(&self, cb: Option<Callback>, triggered: bool) -> EventId {
        let mut st = self.inner.env.state();
        let id = st.new_event();
        if let Some(cb) = cb {
            st.add_callback(id, cb);
        }
        if triggered {
            st.schedule(id, NORMAL, 0.0);
        }
        id
    }
}

impl<T> Clone for Store<T> {
    fn clone(&self) -> Self {
        Store {
            inner: Rc::clone(&self.inner),
        }
    }
}

impl<T: 'static> StoreTrigger for StoreInner<T> {
    fn trigger_put(&self) {
        let accepted = {
            let mut q = self.queues.borrow_mut();
            if !q.put_queue.is_empty() && q.items.len() < self.capacity {
                let (id, item) = q.put_queue.pop_front().expect("non-empty");
                q.items.push_back(item);
                Some(id)
            } else {
                None
            }
        };
        if let Some(id) = accepted {
            self.env.state().schedule(id, NORMAL, 0.0); // (a queued put is pending)
        }
    }

    fn trigger_get(&self) {
        let served = {
            let mut q = self.queues.borrow_mut();
            if !q.items.is_empty() && !q.get_queue.is_empty() {
                let (id, cell) = q.get_queue.pop_front().expect("non-empty");
                let item = q.items.pop_front();
                q.cells[cell as usize] = item;
                Some(id)
            } else {
                None
            }
        };
        if let Some(id) = served {
            self.env.state().schedule(id, NORMAL, 0.0); // (a queued get is pending)
        }
    }
}

impl<T> Drop for StoreInner<T> {
    fn drop(&mut self) {
        self.env.state().unregister_store(self.id);
    }
}

impl<T> StoreInner<T> {
    /// Withdraws a get that is no longer awaited. An item already delivered to it goes back to
    /// the front of the store (it was the oldest) and the next getter is tried.
    fn cancel_get(&self, id: EventId, cell: u32) -> Option<T> {
        let mut q = self.queues.borrow_mut();
        let delivered = q.cells[cell as usize].take();
        q.free_cells.push(cell);
        if delivered.is_none() {
            if let Some(pos) = q.get_queue.iter().position(|(g, _)| *g == id) {
                q.get_queue.remove(pos);
            }
        }
        delivered
    }

    /// Withdraws a put that is no longer awaited; returns its item if it was never accepted.
    fn cancel_put(&self, id: EventId) -> Option<T> {
        let mut q = self.queues.borrow_mut();
        let pos = q.put_queue.iter().position(|(p, _)| *p == id)?;
        q.put_queue.remove(pos).map(|(_, item)| item)
    }
}

/// A pending or finished `store.put(item)`: await it to wait until the store accepted the item.
pub struct StorePut<T: 'static> {
    store: Rc<StoreInner<T>>,
    /// The put's event, or the bare entry standing for an accepted put made inside a process.
    at: Cell<At>,
    waiting: bool,
    settled: bool,
}

impl<T: 'static> StorePut<T> {
    /// True once the store accepted the item.
    pub fn triggered(&self) -> bool {
        match self.at.get() {
            At::Event(id) => self.store.env.state().state_of(id) != EventState::Pending,
            At::Entry { .. } => true,
        }
    }

    /// The put's event, made now if it is still a bare entry.
    fn event(&self) -> EventId {
        match self.at.get() {
            At::Event(id) => id,
            At::Entry { time, seq, .. } => {
                let id = self
                    .store
                    .env
                    .state()
                    .materialize(time, seq, Some(self.store.id));
                self.at.set(At::Event(id));
                id
            }
        }
    }

    fn settle(&mut self) {
        if !self.settled {
            self.settled = true;
            let withdrawn = self.store.cancel_put(self.event());
            drop(withdrawn); // outside every borrow
        }
    }
}

impl<T: 'static> Drop for StorePut<T> {
    fn drop(&mut self) {
        self.settle();
        // (A bare entry needs nothing: it still triggers the store's gets when it fires.)
        if let At::Event(id) = self.at.get() {
            self.store.env.state().release(id);
        }
    }
}

impl<T: 'static> AsEvent for StorePut<T> {
    fn as_event(&self) -> EventRef {
        EventRef::new(&self.store.env, self.event())
    }
}

impl<T: 'static> Future for StorePut<T> {
    type Output = Result<(), SimError>;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let mut poll = None;
        if let At::Entry { time, seq, owner } = this.at.get() {
            poll = this
                .store
                .env
                .poll_entry(time, seq, owner, &mut this.waiting);
        }
        // Another process awaits it: it needs the event.
        let poll = match poll {
            Some(poll) => poll,
            None => {
                let id = this.event();
                this.store.env.poll_wait(id, &mut this.waiting)
            }
        };
        match poll {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(())) => {
                this.settled = true;
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(i)) => {
                this.settle();
                Poll::Ready(Err(i.into()))
            }
        }
    }
}

/// A pending or finished `store.get()`: await it for the item, or use it in a condition and
/// [`try_take`](Self::try_take) afterwards.
pub struct StoreGet<T: 'static> {
    store: Rc<StoreInner<T>>,
    id: EventId,
    cell: u32,
    waiting: bool,
    /// The get was withdrawn or its item taken; the cell is released.
    settled: bool,
}

impl<T: 'static> StoreGet<T> {
    /// True once an item was handed to this get (it may not be processed yet).
    pub fn triggered(&self) -> bool {
        self.store.env.state().state_of(self.id) != EventState::Pending
    }

    /// Takes the delivered item, if any; otherwise withdraws the get so it can never consume a
    /// later item. Either way the get is finished afterwards.
    pub fn try_take(&mut self) -> Option<T> {
        if self.settled {
            return None;
        }
        self.settled = true;
        self.store.cancel_get(self.id, self.cell)
    }

    /// Withdraws the get; an item it already received returns to the front of the store.
    fn settle(&mut self) {
        if self.settled {
            return;
        }
        self.settled = true;
        if let Some(item) = self.store.cancel_get(self.id, self.cell) {
            self.store.queues.borrow_mut().items.push_front(item);
            self.store.trigger_get();
        }
    }
}

impl<T: 'static> Drop for StoreGet<T> {
    fn drop(&mut self) {
        self.settle();
        self.store.env.state().release(self.id);
    }
}

impl<T: 'static> AsEvent for StoreGet<T> {
    fn as_event(&self) -> EventRef {
        EventRef::new(&self.store.env, self.id)
    }
}

impl<T: 'static> Future for StoreGet<T> {
    type Output = Result<T, SimError>;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        match this.store.env.poll_wait(this.id, &mut this.waiting) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(())) => Poll::Ready(Ok(this
                .try_take()
                .expect("a processed get holds its item (polled after completion?)"))),
            Poll::Ready(Err(i)) => {
                this.settle();
                Poll::Ready(Err(i.into()))
            }
        }
    }
}

/// Waits at most `timeout` seconds for an item (Opal's `get_with_timeout`): races a get against
/// a timeout with any-of, and withdraws the get if the timeout wins, so the item that arrives
/// later stays in the store. An item handed over in the same instant as the timeout is returned,
/// never lost.
pub async fn get_with_timeout<T: 'static>(
    env: &Environment,
    store: &Store<T>,
    timeout: f64,
) -> Result<Option<T>, SimError> {
    let mut get = store.get();
    let timer = env.try_timeout(timeout)?;
    env.any_of([get.as_event(), timer.as_event()]).await?;
    Ok(get.try_take())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::Condition;

    /// Runs a mix of awaited, dropped, handed-over and condition-watched puts; with `eager`,
    /// every put gets its event at once (exactly the event a put had before puts were lazy).
    fn scenario(eager: bool) -> Vec<(&'static str, f64, u32)> {
        let env = Environment::new();
        let store: Store<u32> = Store::new(&env);
        let log = Rc::new(RefCell::new(Vec::new()));
        let handoff: Rc<RefCell<Option<StorePut<u32>>>> = Rc::new(RefCell::new(None));
        let put = move |s: &Store<u32>, v| {
            let p = s.put(v);
            if eager {
                drop(p.as_event());
            }
            p
        };
        env.process({
            let (env, store, log) = (env.clone(), store.clone(), Rc::clone(&log));
            async move {
                for _ in 0..6 {
                    let v = store.get().await?;
                    log.borrow_mut().push(("got", env.now(), v));
                }
                Ok::<_, SimError>(())
            }
        });
        env.process({
            let (env, store, log, handoff) = (
                env.clone(),
                store.clone(),
                Rc::clone(&log),
                Rc::clone(&handoff),
            );
            async move {
                drop(put(&store, 1)); // never awaited: still triggers the getter
                let p2 = put(&store, 2);
                env.timeout(1.0).await?;
                let seen = p2.triggered() && p2.as_event().processed();
                log.borrow_mut().push(("p2", env.now(), seen as u32));
                let p3 = put(&store, 3);
                let c: Condition = env.any_of([p3.as_event()]);
                c.await?;
                log.borrow_mut().push(("p3", env.now(), 3));
                *handoff.borrow_mut() = Some(put(&store, 4));
                put(&store, 5).await?;
                log.borrow_mut().push(("p5", env.now(), 5));
                put(&store, 6).await?;
                log.borrow_mut().push(("p6", env.now(), 6));
                Ok::<_, SimError>(())
            }
        });
        env.process({
            let (env, log, handoff) = (env.clone(), Rc::clone(&log), Rc::clone(&handoff));
            async move {
                env.timeout(2.0).await?;
                let p4 = handoff.borrow_mut().take().expect("handed over at 1");
                p4.await?;
                log.borrow_mut().push(("p4", env.now(), 4));
                Ok::<_, SimError>(())
            }
        });
        env.run();
        assert_eq!(env.live_events(), 0);
        let out = log.borrow().clone();
        out
    }

    /// A put made and awaited inside a process is a bare queue entry; every other use gets
    /// its event. Either way the run is the same, event for event.
    #[test]
    fn a_lazy_put_runs_as_its_event_would() {
        let lazy = scenario(false);
        assert_eq!(lazy, scenario(true));
        assert_eq!(lazy.iter().filter(|e| e.0 == "got").count(), 6);
    }
}
