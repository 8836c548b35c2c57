//! The kernel's bookkeeping: the event queue, the event slab, process slots and condition
//! records. Nothing here runs user code or drops user values, which is what makes it safe for
//! handles to borrow this state from their `Drop` (see `Environment::state`).
//!
//! Events live in a slab (`Vec` + free list) with generation counters and reference counts:
//! every handle, every heap entry and every condition holding an event counts as one reference,
//! and a slot is recycled when the count reaches zero. A recycled slot keeps its callback vector's
//! capacity, so the steady state (timeout → resume → timeout) allocates nothing.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};
use std::future::Future;
use std::pin::Pin;

use std::rc::{Rc, Weak};

use super::callback::{Callback, StoreTrigger};
use super::error::{Interrupt, SimError};

/// SimPy's `URGENT`: process initialisation and interruptions.
pub(crate) const URGENT: u8 = 0;
/// SimPy's `NORMAL`: everything else.
pub(crate) const NORMAL: u8 = 1;

/// A generation-checked index into the event slab.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct EventId {
    pub(crate) idx: u32,
    pub(crate) gen: u32,
}

/// A generation-checked index into the process slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Pid {
    pub(crate) idx: u32,
    pub(crate) gen: u32,
}

/// Index of a condition record (owned by exactly one condition event slot).
pub(crate) type CondIdx = u32;

/// Index of an interrupt's cause in the cause slab (owned by one `Callback::Interrupt`).
pub(crate) type CauseIdx = u32;

/// A generation-checked index into the store registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StoreId {
    idx: u32,
    gen: u32,
}

/// SimPy's event life cycle: pending → triggered (scheduled) → processed (callbacks ran).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EventState {
    Pending,
    Triggered,
    Processed,
}

struct Slot {
    gen: u32,
    refs: u32,
    state: EventState,
    cond: Option<CondIdx>,
    callbacks: Vec<Callback>,
}

/// A heap entry: SimPy's `(time, priority, eid, event)` key, compared as one `u128` so the
/// heap compares entries with a single integer comparison, and what it fires, in 24 bytes
/// (the heap's sifts move entries: a `u128` field made them 32). Times are never
/// negative, and the bits of a non-negative `f64` order exactly as the numbers do.
#[derive(Clone, Copy)]
struct Scheduled {
    /// The time's bits: the key's high half.
    time: u64,
    /// `priority << 56 | seq << 2 | kind`, the key's low half (seq < 2^54: centuries of
    /// events; `kind`, 0 event, 1 sleep, 2 put, 3 timeout, below it never decides an order,
    /// as no two entries share a seq).
    low: u64,
    /// The event's or the process's slot index and generation, `gen << 32 | idx`.
    id: u64,
}

/// What a queue entry fires.
#[derive(Clone, Copy)]
enum Queued {
    /// An event in the slab: its callbacks run.
    Event(EventId),
    /// A process's own sleep (see `Environment::sleep`): the process resumes, if it still
    /// waits on this entry.
    Wake(Pid),
    /// A lazy timeout (see `Timeout`): as a sleep, or its event fires if one was made.
    Timeout(Pid),
    /// A lazy put (see `StorePut`): its store's gets are triggered, then the process that
    /// made it resumes, if it waits on this entry. (A kind apart, so that sleeps and
    /// timeouts pay nothing for it.)
    Put(Pid),
}

/// What the next queue entry turned out to be (see `State::pop`).
pub(crate) enum Popped {
    /// An event, now processed, with its callbacks to run.
    Event(EventId, Vec<Callback>),
    /// Process `pid`'s sleep is over: its body, taken out to be polled (see
    /// `State::start_resume`).
    Wake(Pid, ProcFuture),
    /// A lazy put's entry: its store's trigger runs, then its process, if it waits on the
    /// put, is polled (made active, its body taken out).
    Put(StoreId, Option<(Pid, ProcFuture)>),
    /// An event, now processed, whose only callback resumed process `pid` (already made
    /// active, its body taken out): the queue's reference is released after the poll, where
    /// `finish_processing` would have released it.
    Resumed(EventId, Pid, ProcFuture),
    /// An event, now processed, whose only callback resumed a process that has finished
    /// meanwhile: only the queue's reference is left to release.
    Done(EventId),
    /// A sleep's entry whose process no longer waits on it (interrupted): it wakes nobody.
    Stale,
}

/// What a process waits on (SimPy `Process._target`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// An event; a `Callback::Resume` on it wakes the process.
    Event(EventId),
    /// Its own sleep, by the queue entry's sequence number ([`NEVER`] for one that is not
    /// queued): nothing but an interrupt or that entry wakes it.
    Sleep(u64),
}

/// The sleep number of a sleep that is never queued (an infinite delay): no entry has it.
pub(crate) const NEVER: u64 = u64::MAX;

/// A process id no process ever has: the owner of a put's entry that wakes nobody
/// (`Store::try_put`).
pub(crate) const NOBODY: Pid = Pid {
    idx: u32::MAX,
    gen: u32::MAX,
};

impl Scheduled {
    fn new(time: f64, priority: u8, seq: u64, what: Queued) -> Self {
        debug_assert!(time >= 0.0 && seq < 1 << 54);
        let (kind, idx, gen) = match what {
            Queued::Event(EventId { idx, gen }) => (0, idx, gen),
            Queued::Wake(Pid { idx, gen }) => (1, idx, gen),
            Queued::Put(Pid { idx, gen }) => (2, idx, gen),
            Queued::Timeout(Pid { idx, gen }) => (3, idx, gen),
        };
        Self {
            time: (time + 0.0).to_bits(),
            low: (priority as u64) << 56 | seq << 2 | kind,
            id: (gen as u64) << 32 | idx as u64,
        }
    }

    /// The order key: `time bits << 64 | low`.
    #[inline]
    fn key(&self) -> u128 {
        (self.time as u128) << 64 | self.low as u128
    }

    fn what(&self) -> Queued {
        let (idx, gen) = (self.id as u32, (self.id >> 32) as u32);
        match self.low & 3 {
            0 => Queued::Event(EventId { idx, gen }),
            1 => Queued::Wake(Pid { idx, gen }),
            2 => Queued::Put(Pid { idx, gen }),
            _ => Queued::Timeout(Pid { idx, gen }),
        }
    }

    fn seq(&self) -> u64 {
        (self.low & ((1 << 56) - 1)) >> 2
    }

    fn time(&self) -> f64 {
        f64::from_bits(self.time)
    }
}

impl PartialEq for Scheduled {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl Eq for Scheduled {}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scheduled {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest key first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

/// The type-erased body of a process, owned by the kernel while the process is alive.
pub(crate) type ProcFuture = Pin<Box<dyn Future<Output = ()>>>;

pub(crate) struct ProcSlot {
    pub(crate) gen: u32,
    pub(crate) alive: bool,
    /// `None` while the body is being polled (taken out so no borrow is held during the poll).
    pub(crate) body: Option<ProcFuture>,
    /// The process's own completion event (one reference held while alive).
    pub(crate) done: EventId,
    /// What the process currently waits on (SimPy `Process._target`).
    pub(crate) target: Option<Wait>,
    /// An interrupt being delivered by the current poll, consumed by the awaited leaf.
    pub(crate) interrupt: Option<Interrupt>,
}

/// Bookkeeping of one any-of / all-of condition.
struct CondRecord {
    event: EventId,
    subs: Vec<EventId>,
    need: usize,
    count: usize,
    /// Which sub-events were processed when the condition was processed; `None` until then.
    fired: Option<Vec<bool>>,
}

/// All mutable kernel state, behind one `RefCell` in the environment.
pub(crate) struct State {
    pub(crate) now: f64,
    seq: u64,
    heap: BinaryHeap<Scheduled>,
    /// Scheduled events whose keys arrived in ascending order, oldest first: an event whose
    /// key is above the last one here is appended instead of pushed on the heap. Keys grow
    /// with the insertion id, so the common cases (events due now, a batch of equal
    /// delays) cost O(1); the next event is the smaller of the two fronts, so the order is
    /// SimPy's exactly.
    lane: VecDeque<Scheduled>,
    /// The heap's top was popped but is still in place: the next heap push overwrites it
    /// and sifts once, instead of a pop's sift and a push's (a process that wakes from a
    /// timed wait usually takes its next one before anything else pops).
    top_taken: bool,
    /// The highest key of a lazy timeout's or put's entry taken so far: such an entry has
    /// fired iff its key is at most this (see `entry_fired`).
    lazy_max: u128,
    /// Lazy timeouts whose event was made while their entry was queued, by the entry's
    /// sequence number: the entry fires the event (holding the queue's reference).
    lazy: BTreeMap<u64, EventId>,
    /// Lazy puts (entries standing for accepted store puts, see `StorePut`) whose
    /// entries are queued and whose events were not made, by sequence number: each entry
    /// runs its store's trigger when taken. Their entries are all due now and leave in
    /// this order, so the next one to leave is always the front.
    lazy_puts: VecDeque<(u64, StoreId)>,
    slots: Vec<Slot>,
    free_slots: Vec<u32>,
    pub(crate) procs: Vec<ProcSlot>,
    free_procs: Vec<u32>,
    conds: Vec<Option<CondRecord>>,
    free_conds: Vec<u32>,
    /// Causes of interrupts not yet delivered, so that callbacks stay plain data.
    causes: Vec<Option<Rc<str>>>,
    free_causes: Vec<u32>,
    /// Every live store, by `StoreId`: what a `TriggerGet`/`TriggerPut` callback reaches
    /// (`None` once the store is dropped; its generation then moves on).
    stores: Vec<(u32, Option<Weak<dyn StoreTrigger>>)>,
    free_stores: Vec<u32>,
    /// The process being polled (SimPy `Environment.active_process`).
    pub(crate) active: Option<Pid>,
    /// The first invalid delay asked for (see `Environment::fault`).
    pub(crate) first_fault: Option<SimError>,
}

impl State {
    pub(crate) fn new() -> Self {
        State {
            now: 0.0,
            seq: 0,
            heap: BinaryHeap::new(),
            lane: VecDeque::new(),
            top_taken: false,
            lazy_max: 0,
            lazy: BTreeMap::new(),
            lazy_puts: VecDeque::new(),
            slots: Vec::new(),
            free_slots: Vec::new(),
            procs: Vec::new(),
            free_procs: Vec::new(),
            conds: Vec::new(),
            free_conds: Vec::new(),
            causes: Vec::new(),
            free_causes: Vec::new(),
            stores: Vec::new(),
            free_stores: Vec::new(),
            active: None,
            first_fault: None,
        }
    }

    /// Keeps `error` as the run's fault unless one came first; hands it back.
    pub(crate) fn fault(&mut self, error: SimError) -> SimError {
        self.first_fault.get_or_insert_with(|| error.clone());
        error
    }

    /// When a wait of `delay` from now ends (∞ for an infinite delay: it never does), or the
    /// error a bad delay is (negative, NaN, or past the clock's range), kept as the fault.
    #[inline]
    pub(crate) fn due(&mut self, delay: f64) -> Result<f64, SimError> {
        if delay.is_nan() || delay < 0.0 {
            return Err(self.fault(SimError::InvalidDelay(delay)));
        }
        let at = self.now + delay;
        if !at.is_finite() && delay.is_finite() {
            let now = self.now;
            return Err(self.fault(SimError::TimeOverflow { now, delay }));
        }
        Ok(at)
    }

    // ----- event slab -------------------------------------------------------------------------

    /// A new pending event with one reference (the creating handle's).
    pub(crate) fn new_event(&mut self) -> EventId {
        if let Some(idx) = self.free_slots.pop() {
            let slot = &mut self.slots[idx as usize];
            slot.refs = 1;
            slot.state = EventState::Pending;
            EventId { idx, gen: slot.gen }
        } else {
            let idx = u32::try_from(self.slots.len()).expect("more than 2^32 live events");
            self.slots.push(Slot {
                gen: 0,
                refs: 1,
                state: EventState::Pending,
                cond: None,
                callbacks: Vec::new(),
            });
            EventId { idx, gen: 0 }
        }
    }

    fn slot(&self, id: EventId) -> &Slot {
        let slot = &self.slots[id.idx as usize];
        debug_assert_eq!(slot.gen, id.gen, "stale event id");
        slot
    }

    fn slot_mut(&mut self, id: EventId) -> &mut Slot {
        let slot = &mut self.slots[id.idx as usize];
        debug_assert_eq!(slot.gen, id.gen, "stale event id");
        slot
    }

    pub(crate) fn state_of(&self, id: EventId) -> EventState {
        self.slot(id).state
    }

    pub(crate) fn is_processed(&self, id: EventId) -> bool {
        self.slot(id).state == EventState::Processed
    }

    pub(crate) fn retain(&mut self, id: EventId) {
        self.slot_mut(id).refs += 1;
    }

    /// Drops one reference; recycles the slot (and a condition's record) at zero.
    #[inline]
    pub(crate) fn release(&mut self, id: EventId) {
        // (Inline, the count: most releases leave other references, and the recycling's
        // register saves would cost more than the check.)
        let slot = self.slot_mut(id);
        slot.refs -= 1;
        if slot.refs == 0 {
            self.recycle(id);
        }
    }

    /// Frees the slot of `id`, whose last reference is gone.
    #[inline(never)]
    fn recycle(&mut self, id: EventId) {
        let slot = self.slot_mut(id);
        slot.gen = slot.gen.wrapping_add(1);
        slot.callbacks.clear();
        let cond = slot.cond.take();
        self.free_slots.push(id.idx);
        if let Some(cid) = cond {
            self.drop_condition(cid);
        }
    }

    pub(crate) fn add_callback(&mut self, id: EventId, cb: Callback) {
        self.slot_mut(id).callbacks.push(cb);
    }

    /// Removes the first callback matching `pred` (SimPy's `callbacks.remove(cb)`).
    pub(crate) fn remove_callback(&mut self, id: EventId, pred: impl Fn(&Callback) -> bool) {
        let cbs = &mut self.slot_mut(id).callbacks;
        if let Some(pos) = cbs.iter().position(pred) {
            cbs.remove(pos);
        }
    }

    // ----- event queue ------------------------------------------------------------------------

    /// Triggers `id` and queues it at `now + delay` (SimPy `Environment.schedule`).
    /// The heap holds a reference until the event is processed.
    pub(crate) fn schedule(&mut self, id: EventId, priority: u8, delay: f64) {
        let time = self.now + delay;
        let slot = self.slot_mut(id);
        debug_assert_eq!(slot.state, EventState::Pending);
        slot.state = EventState::Triggered;
        slot.refs += 1;
        self.enqueue(time, priority, Queued::Event(id));
    }

    /// Queues a wake-up of process `pid` at `now + delay` with NORMAL priority, exactly where
    /// a timeout created now would go; returns its sequence number (the sleep's identity).
    pub(crate) fn schedule_wake(&mut self, pid: Pid, delay: f64) -> u64 {
        let time = self.now + delay;
        self.enqueue(time, NORMAL, Queued::Wake(pid))
    }

    /// Queues the entry of a lazy timeout taken by process `pid` (see `Timeout`): ordered
    /// as [`schedule_wake`](Self::schedule_wake)'s, and so as the timeout's event.
    pub(crate) fn schedule_timeout(&mut self, pid: Pid, delay: f64) -> u64 {
        let time = self.now + delay;
        self.enqueue(time, NORMAL, Queued::Timeout(pid))
    }

    /// Queues the entry of a lazy put into `store`, made by process `pid`: a wake-up of
    /// `pid` now, exactly where the put's event would go, that triggers the store's gets
    /// first; returns its sequence number.
    pub(crate) fn schedule_put(&mut self, pid: Pid, store: StoreId) -> u64 {
        let time = self.now;
        let seq = self.enqueue(time, NORMAL, Queued::Put(pid));
        self.lazy_puts.push_back((seq, store));
        seq
    }

    /// Whether the lazy timeout's or put's entry numbered `seq`, due at `time`, has been
    /// taken from the queue (`false` for [`NEVER`]). Entries leave in key order, and a new
    /// entry's key exceeds that of every entry taken before it was queued (it is due no
    /// earlier, and is NORMAL with a later sequence number, which decides before the kind
    /// does), so comparing with the highest key taken is exact.
    pub(crate) fn entry_fired(&self, time: f64, seq: u64) -> bool {
        let pid = Pid { idx: 0, gen: 0 };
        seq != NEVER && Scheduled::new(time, NORMAL, seq, Queued::Wake(pid)).key() <= self.lazy_max
    }

    /// The event of a lazy timeout or put (the entry numbered `seq`, due at `time`) that
    /// something other than its own process's await needs, with one reference (the
    /// caller's). It is processed already if the entry has fired, fired by the entry
    /// otherwise, and left pending if the entry is never queued.
    /// A lazy put's entry (`put_into` its store) hands its store trigger to the event, as
    /// the event's first callback.
    pub(crate) fn materialize(
        &mut self,
        time: f64,
        seq: u64,
        put_into: Option<StoreId>,
    ) -> EventId {
        let id = self.new_event();
        if seq == NEVER {
            return id;
        }
        let fired = self.entry_fired(time, seq);
        let slot = self.slot_mut(id);
        if fired {
            slot.state = EventState::Processed;
        } else {
            slot.state = EventState::Triggered;
            slot.refs += 1; // the entry's, as a queued event's
            self.lazy.insert(seq, id);
            if let Some(store) = put_into {
                if let Some(pos) = self.lazy_puts.iter().position(|&(s, _)| s == seq) {
                    self.lazy_puts.remove(pos);
                }
                self.add_callback(id, Callback::TriggerGet(store));
            }
        }
        id
    }

    /// Puts an entry in the queue with the next sequence number, which it returns.
    fn enqueue(&mut self, time: f64, priority: u8, what: Queued) -> u64 {
        let seq = self.seq;
        self.seq += 1;
        let entry = Scheduled::new(time, priority, seq, what);
        match self.lane.back() {
            Some(last) if last.key() > entry.key() => {
                if self.top_taken {
                    self.top_taken = false;
                    *self.heap.peek_mut().expect("a taken top is in the heap") = entry;
                } else {
                    self.heap.push(entry);
                }
            }
            _ => self.lane.push_back(entry),
        }
        seq
    }

    /// Removes the heap's taken top, if any, so that the heap's top is the next entry.
    #[inline]
    fn settle(&mut self) {
        // (Inline, the check: before most pops a new entry has already replaced the top.)
        if self.top_taken {
            self.drop_taken_top();
        }
    }

    #[inline(never)]
    fn drop_taken_top(&mut self) {
        self.top_taken = false;
        self.heap.pop();
    }

    /// The next scheduled event's entry (the smaller key of the two fronts) and whether it
    /// is the lane's.
    fn next_entry(&self) -> Option<(Scheduled, bool)> {
        debug_assert!(!self.top_taken);
        match (self.lane.front(), self.heap.peek()) {
            (Some(l), Some(h)) if h.key() < l.key() => Some((*h, false)),
            (Some(l), _) => Some((*l, true)),
            (None, h) => h.map(|h| (*h, false)),
        }
    }

    /// Time of the next scheduled event, `f64::INFINITY` when none.
    pub(crate) fn peek(&mut self) -> f64 {
        self.settle();
        self.next_entry().map_or(f64::INFINITY, |(e, _)| e.time())
    }

    /// Pops the next entry and advances the clock; an event is marked processed and hands
    /// out its callbacks.
    pub(crate) fn pop(&mut self) -> Option<Popped> {
        self.settle();
        let (next, in_lane) = self.next_entry()?;
        Some(self.take_entry(next, in_lane))
    }

    /// Like [`pop`](Self::pop), but only an entry due at or before `until`; `None` leaves the
    /// queue as it was.
    pub(crate) fn pop_until(&mut self, until: f64) -> Option<Popped> {
        self.settle();
        let (next, in_lane) = self.next_entry()?;
        if next.time() > until {
            return None;
        }
        Some(self.take_entry(next, in_lane))
    }

    /// Takes `next`, the next entry (the lane's front when `in_lane`, else the heap's top),
    /// out of the queue: see [`pop`](Self::pop).
    #[inline]
    fn take_entry(&mut self, next: Scheduled, in_lane: bool) -> Popped {
        if in_lane {
            self.lane.pop_front();
        } else {
            self.top_taken = true;
        }
        self.now = next.time();
        match next.what() {
            Queued::Event(id) => self.fire(id),
            Queued::Wake(pid) => {
                // An interrupted sleep's entry still fires, as SimPy's timeout does, but
                // wakes nobody.
                match self.wake_body(pid, next.seq()) {
                    Some(body) => {
                        self.active = Some(pid);
                        Popped::Wake(pid, body)
                    }
                    None => Popped::Stale,
                }
            }
            Queued::Timeout(pid) => self.take_timeout(pid, next),
            Queued::Put(pid) => self.take_put(pid, next),
        }
    }

    /// Takes a lazy timeout's entry `next`, for process `pid`. (Out of line, as the put's:
    /// the driver's loop, inlined in the simulation's, stays as small as without them.)
    #[inline(never)]
    fn take_timeout(&mut self, pid: Pid, next: Scheduled) -> Popped {
        let seq = next.seq();
        self.lazy_max = self.lazy_max.max(next.key());
        match self.wake_body(pid, seq) {
            Some(body) => {
                self.active = Some(pid);
                Popped::Wake(pid, body)
            }
            // Its event, if made meanwhile, fires here.
            None => self.fire_lazy(seq),
        }
    }

    /// Takes a lazy put's entry `next`, made by process `pid`.
    #[inline(never)]
    fn take_put(&mut self, pid: Pid, next: Scheduled) -> Popped {
        let seq = next.seq();
        self.lazy_max = self.lazy_max.max(next.key());
        // The put's store trigger, its event's first callback, unless the event
        // was made meanwhile and took it over.
        let store = match self.lazy_puts.front() {
            Some(&(s, store)) if s == seq => store,
            _ => return self.fire_lazy(seq),
        };
        self.lazy_puts.pop_front();
        let body = self.wake_body(pid, seq);
        if body.is_some() {
            self.active = Some(pid);
        }
        Popped::Put(store, body.map(|b| (pid, b)))
    }

    /// The body of process `pid`, taken out to be polled, if it still sleeps on the entry
    /// numbered `seq`.
    #[inline(always)]
    fn wake_body(&mut self, pid: Pid, seq: u64) -> Option<ProcFuture> {
        match self.proc_mut(pid) {
            Some(p) if p.target == Some(Wait::Sleep(seq)) => {
                // (An interrupt ends the sleep before it is delivered: none pends.)
                debug_assert!(p.interrupt.is_none());
                p.target = None;
                p.body.take()
            }
            _ => None,
        }
    }

    /// A wake or put entry numbered `seq` woke nobody: it fires its lazy timeout's or put's
    /// event, if one was made.
    #[inline(never)]
    fn fire_lazy(&mut self, seq: u64) -> Popped {
        match self.lazy.remove(&seq) {
            Some(id) => self.fire(id),
            None => Popped::Stale,
        }
    }

    /// Processes event `id`, whose queue entry was just taken: see [`pop`](Self::pop).
    #[inline(always)]
    fn fire(&mut self, id: EventId) -> Popped {
        let slot = self.slot_mut(id);
        slot.state = EventState::Processed;
        // The common case, an event awaited by one process: resume it here, in this
        // borrow, keeping the callback vector in its slot.
        if let [Callback::Resume(pid)] = slot.callbacks[..] {
            slot.callbacks.clear();
            return match self.start_resume(pid, None) {
                Some(body) => Popped::Resumed(id, pid, body),
                None => Popped::Done(id),
            };
        }
        Popped::Event(id, std::mem::take(&mut slot.callbacks))
    }

    /// Makes `pid` the active process, with `interrupt` to deliver at its current wait, and
    /// takes its body out to be polled; `None` if it has finished.
    #[inline]
    pub(crate) fn start_resume(
        &mut self,
        pid: Pid,
        interrupt: Option<Interrupt>,
    ) -> Option<ProcFuture> {
        let p = self.proc_mut(pid)?;
        p.target = None;
        p.interrupt = interrupt;
        let body = p
            .body
            .take()
            .expect("process resumed while running (kernel bug)");
        self.active = Some(pid);
        Some(body)
    }

    /// Gives the (now empty) callback vector back to its slot to keep its capacity, and drops
    /// the heap's reference.
    pub(crate) fn finish_processing(&mut self, id: EventId, mut callbacks: Vec<Callback>) {
        callbacks.clear();
        let slot = self.slot_mut(id);
        if slot.callbacks.capacity() < callbacks.capacity() {
            slot.callbacks = callbacks;
        }
        self.release(id);
    }

    pub(crate) fn scheduled_count(&self) -> usize {
        self.heap.len() - usize::from(self.top_taken) + self.lane.len()
    }

    pub(crate) fn live_events(&self) -> usize {
        self.slots.len() - self.free_slots.len()
    }

    // ----- processes --------------------------------------------------------------------------

    /// Registers a process body whose first poll happens when `init` is processed.
    pub(crate) fn new_process(&mut self, body: ProcFuture, done: EventId, init: EventId) -> Pid {
        let slot = ProcSlot {
            gen: 0,
            alive: true,
            body: Some(body),
            done,
            target: Some(Wait::Event(init)),
            interrupt: None,
        };
        if let Some(idx) = self.free_procs.pop() {
            let gen = self.procs[idx as usize].gen;
            self.procs[idx as usize] = ProcSlot { gen, ..slot };
            Pid { idx, gen }
        } else {
            let idx = u32::try_from(self.procs.len()).expect("more than 2^32 live processes");
            self.procs.push(slot);
            Pid { idx, gen: 0 }
        }
    }

    /// The slot of a live process, `None` if it has finished (or the id is stale).
    pub(crate) fn proc_mut(&mut self, pid: Pid) -> Option<&mut ProcSlot> {
        self.procs
            .get_mut(pid.idx as usize)
            .filter(|p| p.gen == pid.gen && p.alive)
    }

    /// Marks a process finished and frees its slot; returns its completion event.
    pub(crate) fn retire_process(&mut self, pid: Pid) -> EventId {
        let p = &mut self.procs[pid.idx as usize];
        p.alive = false;
        p.gen = p.gen.wrapping_add(1);
        p.target = None;
        p.interrupt = None;
        self.free_procs.push(pid.idx);
        p.done
    }

    // ----- interrupt causes and stores -------------------------------------------------------

    /// Keeps `cause` until its interrupt is delivered.
    pub(crate) fn keep_cause(&mut self, cause: Option<Rc<str>>) -> CauseIdx {
        match self.free_causes.pop() {
            Some(i) => {
                self.causes[i as usize] = cause;
                i
            }
            None => {
                self.causes.push(cause);
                u32::try_from(self.causes.len() - 1).expect("more than 2^32 interrupts")
            }
        }
    }

    /// Takes back the cause kept by [`keep_cause`](Self::keep_cause).
    pub(crate) fn take_cause(&mut self, i: CauseIdx) -> Option<Rc<str>> {
        self.free_causes.push(i);
        self.causes[i as usize].take()
    }

    /// Registers a store for its callbacks to reach.
    pub(crate) fn register_store(&mut self, store: Weak<dyn StoreTrigger>) -> StoreId {
        if let Some(idx) = self.free_stores.pop() {
            let entry = &mut self.stores[idx as usize];
            entry.1 = Some(store);
            StoreId { idx, gen: entry.0 }
        } else {
            let idx = u32::try_from(self.stores.len()).expect("more than 2^32 stores");
            self.stores.push((0, Some(store)));
            StoreId { idx, gen: 0 }
        }
    }

    /// Forgets a dropped store: callbacks still naming it reach nothing.
    pub(crate) fn unregister_store(&mut self, id: StoreId) {
        let entry = &mut self.stores[id.idx as usize];
        debug_assert_eq!(entry.0, id.gen, "stale store id");
        entry.0 = entry.0.wrapping_add(1);
        entry.1 = None;
        self.free_stores.push(id.idx);
    }

    /// The store `id` names, if it is still alive. (Upgrading runs no store code; the caller
    /// drops the handle outside the borrow, as it may be the store's last.)
    pub(crate) fn store(&self, id: StoreId) -> Option<Rc<dyn StoreTrigger>> {
        match &self.stores[id.idx as usize] {
            (gen, Some(weak)) if *gen == id.gen => weak.upgrade(),
            _ => None,
        }
    }

    // ----- conditions -------------------------------------------------------------------------

    /// Creates a condition event over `subs` (each already retained for the condition) that
    /// fires when `need` of them are processed. Mirrors `simpy.events.Condition.__init__`.
    pub(crate) fn new_condition(&mut self, subs: Vec<EventId>, need: usize) -> EventId {
        let event = self.new_event();
        let empty = subs.is_empty();
        let record = CondRecord {
            event,
            subs,
            need,
            count: 0,
            fired: None,
        };
        let cid = match self.free_conds.pop() {
            Some(cid) => {
                self.conds[cid as usize] = Some(record);
                cid
            }
            None => {
                self.conds.push(Some(record));
                u32::try_from(self.conds.len() - 1).expect("more than 2^32 conditions")
            }
        };
        self.slot_mut(event).cond = Some(cid);
        if empty {
            // SimPy succeeds an empty condition at once, with an empty value.
            self.cond_mut(cid).fired = Some(Vec::new());
            self.schedule(event, NORMAL, 0.0);
            return event;
        }
        let n = self.cond_mut(cid).subs.len();
        for i in 0..n {
            let sub = self.cond_mut(cid).subs[i];
            if self.is_processed(sub) {
                self.check(cid);
            } else {
                self.add_callback(sub, Callback::Check(cid));
            }
        }
        self.add_callback(event, Callback::BuildValue(cid));
        event
    }

    fn cond_mut(&mut self, cid: CondIdx) -> &mut CondRecord {
        self.conds[cid as usize].as_mut().expect("live condition")
    }

    /// A sub-event fired (SimPy `Condition._check`).
    pub(crate) fn check(&mut self, cid: CondIdx) {
        let event = self.cond_mut(cid).event;
        if self.state_of(event) != EventState::Pending {
            return;
        }
        let rec = self.cond_mut(cid);
        rec.count += 1;
        if rec.count >= rec.need {
            self.schedule(event, NORMAL, 0.0);
        }
    }

    /// The condition is being processed: detach from sub-events still pending, record which
    /// ones were processed, and let go of them (SimPy `Condition._build_value`).
    pub(crate) fn build_value(&mut self, cid: CondIdx) {
        let subs = std::mem::take(&mut self.cond_mut(cid).subs);
        let fired = subs.iter().map(|&s| self.is_processed(s)).collect();
        self.detach_subs(cid, &subs);
        self.cond_mut(cid).fired = Some(fired);
    }

    /// Which sub-events had fired when the condition was processed.
    pub(crate) fn fired(&self, event: EventId) -> Vec<bool> {
        let cid = self.slot(event).cond.expect("condition event");
        let rec = self.conds[cid as usize].as_ref().expect("live condition");
        rec.fired.clone().unwrap_or_default()
    }

    fn detach_subs(&mut self, cid: CondIdx, subs: &[EventId]) {
        for &s in subs {
            if !self.is_processed(s) {
                self.remove_callback(s, |c| matches!(c, Callback::Check(x) if *x == cid));
            }
            self.release(s);
        }
    }

    fn drop_condition(&mut self, cid: CondIdx) {
        let subs = std::mem::take(&mut self.cond_mut(cid).subs);
        self.detach_subs(cid, &subs);
        self.conds[cid as usize] = None;
        self.free_conds.push(cid);
    }
}
