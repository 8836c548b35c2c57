//! The environment: virtual clock, event queue, and the single-threaded executor that drives
//! processes (SimPy's `Environment` plus `Process._resume`).

use std::cell::{RefCell, RefMut};
use std::future::Future;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use super::callback::Callback;
use super::condition::Condition;
use super::error::{Interrupt, KernelError, SimError};
use super::event::{AsEvent, Event, EventRef};
use super::process::Process;
use super::state::{
    EventId, EventState, Pid, Popped, ProcFuture, State, StoreId, Wait, NEVER, NORMAL, URGENT,
};
use super::timeout::{Sleep, Timeout};

/// Handle to a simulation: a virtual clock and an event queue ordered by
/// (time, priority, scheduling order). Cheap to clone; all clones share one simulation.
#[derive(Clone)]
pub struct Environment {
    state: Rc<RefCell<State>>,
}

impl Default for Environment {
    fn default() -> Self {
        Self::new()
    }
}

impl Environment {
    /// A new simulation at time 0 with nothing scheduled.
    pub fn new() -> Self {
        Environment {
            state: Rc::new(RefCell::new(State::new())),
        }
    }

    /// Borrows the kernel state. Every borrow is short and never spans user code (polls, store
    /// item drops), so a handle's `Drop` may always borrow; a failure here is a kernel bug.
    pub(crate) fn state(&self) -> RefMut<'_, State> {
        self.state
            .try_borrow_mut()
            .expect("kernel state borrowed re-entrantly (kernel bug)")
    }

    /// The current simulation time in seconds.
    pub fn now(&self) -> f64 {
        self.state().now
    }

    /// Time of the next scheduled event, `f64::INFINITY` when nothing is scheduled.
    pub fn peek(&self) -> f64 {
        self.state().peek()
    }

    /// Time of the next scheduled event (as [`peek`](Self::peek)), or `None` once the run
    /// has a [`fault`](Self::fault): a driver's check before each event, in one look.
    pub fn peek_unfaulted(&self) -> Option<f64> {
        let mut st = self.state();
        st.first_fault.is_none().then(|| st.peek())
    }

    /// Number of events waiting in the queue.
    pub fn scheduled(&self) -> usize {
        self.state().scheduled_count()
    }

    /// Number of event slots in use (handles, queued events, conditions); for leak checks.
    pub fn live_events(&self) -> usize {
        self.state().live_events()
    }

    // ----- creating events --------------------------------------------------------------------

    /// A new one-shot event that some process will `succeed` (SimPy `env.event()`).
    pub fn event<T>(&self) -> Event<T> {
        let id = self.state().new_event();
        Event::from_parts(self.clone(), id)
    }

    /// An event that fires `delay` seconds from now (SimPy `env.timeout`). `f64::INFINITY` is an
    /// idle sleep that only an interrupt ends: it is never queued, so it neither sits in the
    /// heap nor keeps [`run`](Self::run) going. A negative or NaN delay, or a finite one whose
    /// end the clock cannot represent, makes a timeout whose await returns the error; the
    /// first such error is also kept as the run's [`fault`](Self::fault), so a driver learns
    /// of it even when the process that asked ignores it.
    pub fn timeout(&self, delay: f64) -> Timeout {
        let mut st = self.state();
        // Taken inside a process, the timeout is almost always awaited at once by that
        // process: it starts as a bare queue entry that wakes the process (as a sleep's),
        // ordered exactly as the event would be, and gets an event only if something else
        // asks for one (see `Timeout`).
        let Some(pid) = st.active else {
            drop(st);
            return match self.try_timeout(delay) {
                Ok(t) => t,
                Err(e) => Timeout::invalid(self.clone(), e),
            };
        };
        let at = match st.due(delay) {
            Ok(at) => at,
            Err(e) => {
                drop(st);
                return Timeout::invalid(self.clone(), e);
            }
        };
        let seq = if at.is_finite() {
            st.schedule_timeout(pid, delay)
        } else {
            NEVER
        };
        drop(st);
        Timeout::entry(self.clone(), at, seq, pid)
    }

    /// Like [`timeout`](Self::timeout) but reports an invalid delay at once, for building
    /// conditions.
    pub fn try_timeout(&self, delay: f64) -> Result<Timeout, SimError> {
        let mut st = self.state();
        let at = st.due(delay)?;
        let id = st.new_event();
        if at.is_finite() {
            st.schedule(id, NORMAL, delay);
        }
        drop(st);
        Ok(Timeout::from_parts(self.clone(), id))
    }

    /// The active process's own timed wait, for `env.sleep(delay).await?` inside a process:
    /// queued and ordered exactly as [`timeout`](Self::timeout)`(delay)` would be (so the
    /// run is the same event for event), but with no event to create, await and release —
    /// when it fires, the kernel resumes the process directly. Nothing else can wait on it;
    /// an interrupt ends it like a timeout's await, and its entry then fires unheard.
    pub(crate) fn sleep(&self, delay: f64) -> Sleep<'_> {
        let mut st = self.state();
        let at = match st.due(delay) {
            Ok(at) => at,
            Err(e) => return Sleep::new(self, Err(e)),
        };
        let pid = st.active.expect("a sleep is taken inside a process");
        let seq = if at.is_finite() {
            st.schedule_wake(pid, delay)
        } else {
            NEVER
        };
        drop(st);
        Sleep::new(self, Ok(seq))
    }

    /// Records `error` as the run's fault (unless one came first) and hands it back: for a
    /// process that finds a time it cannot wait for, e.g. a step time of ∞.
    pub fn fail(&self, error: SimError) -> SimError {
        self.state().fault(error)
    }

    /// The first invalid delay any process asked for (see [`timeout`](Self::timeout)), if any:
    /// a run that hits one cannot be trusted to go on.
    pub fn fault(&self) -> Option<SimError> {
        self.state().first_fault.clone()
    }

    /// Starts `body` as a new process; its first poll happens at the current time, before other
    /// events of this instant (SimPy's URGENT `Initialize`). The handle is an event carrying the
    /// body's return value.
    pub fn process<T: 'static>(&self, body: impl Future<Output = T> + 'static) -> Process<T> {
        let output = Rc::new(RefCell::new(None));
        let slot = Rc::clone(&output);
        let wrapped = Box::pin(async move {
            let value = body.await;
            *slot.borrow_mut() = Some(value);
        });
        let mut st = self.state();
        let done = st.new_event(); // reference held by the process slot
        st.retain(done); // reference held by the returned handle
        let init = st.new_event();
        let pid = st.new_process(wrapped, done, init);
        st.add_callback(init, Callback::Resume(pid));
        st.schedule(init, URGENT, 0.0);
        st.release(init); // only the heap holds it
        drop(st);
        Process::from_parts(self.clone(), pid, done, output)
    }

    /// A condition that fires when any of `events` has been processed (SimPy `AnyOf`).
    pub fn any_of(&self, events: impl IntoIterator<Item = EventRef>) -> Condition {
        self.condition(events, true)
    }

    /// A condition that fires when all of `events` have been processed (SimPy `AllOf`).
    pub fn all_of(&self, events: impl IntoIterator<Item = EventRef>) -> Condition {
        self.condition(events, false)
    }

    fn condition(&self, events: impl IntoIterator<Item = EventRef>, any: bool) -> Condition {
        let refs: Vec<EventRef> = events.into_iter().collect();
        let mut st = self.state();
        let subs: Vec<EventId> = refs
            .iter()
            .map(|r| {
                st.retain(r.id());
                r.id()
            })
            .collect();
        let need = if any { 1 } else { subs.len() };
        let id = st.new_condition(subs, need);
        drop(st);
        drop(refs); // releases the caller's references outside the borrow
        Condition::from_parts(self.clone(), id)
    }

    // ----- running ----------------------------------------------------------------------------

    /// Processes the next event; `false` when nothing is scheduled (SimPy `step`).
    pub fn step(&self) -> bool {
        let popped = self.state().pop();
        match popped {
            None => false,
            Some(popped) => {
                self.process_popped(popped);
                true
            }
        }
    }

    /// Processes the next event if `process` is still running, no [`fault`](Self::fault)
    /// was recorded and the event is due at or before `until`; `false`, with nothing done,
    /// otherwise. A driver's checks and step in one look at the kernel.
    pub(crate) fn step_while_alive<T>(&self, process: &Process<T>, until: f64) -> bool {
        let popped = {
            let mut st = self.state();
            if st.first_fault.is_some() || st.state_of(process.done_id()) != EventState::Pending {
                return false;
            }
            st.pop_until(until)
        };
        match popped {
            None => false,
            Some(popped) => {
                self.process_popped(popped);
                true
            }
        }
    }

    /// Runs what a popped entry fires.
    #[inline]
    fn process_popped(&self, popped: Popped) {
        match popped {
            Popped::Event(id, mut callbacks) => {
                for cb in callbacks.drain(..) {
                    self.run_callback(cb);
                }
                self.state().finish_processing(id, callbacks);
            }
            Popped::Wake(pid, body) => self.poll_body(pid, body, None),
            Popped::Put(store, resumed) => {
                self.trigger_get(store);
                if let Some((pid, body)) = resumed {
                    self.poll_body(pid, body, None);
                }
            }
            Popped::Resumed(id, pid, body) => self.poll_body(pid, body, Some(id)),
            Popped::Done(id) => self.state().release(id),
            Popped::Stale => {}
        }
    }

    /// Processes at most `n` events; returns how many were processed (the browser runs the
    /// simulation in slices).
    pub fn step_n(&self, n: usize) -> usize {
        let mut done = 0;
        while done < n && self.step() {
            done += 1;
        }
        done
    }

    /// Runs until no events are left.
    pub fn run(&self) {
        while self.step() {}
    }

    /// Processes every event before `until`, then sets the clock to `until`
    /// (SimPy `run(until=t)`; events at exactly `until` stay queued).
    pub fn run_until(&self, until: f64) -> Result<(), KernelError> {
        let now = self.now();
        if until.is_nan() || until < now {
            return Err(KernelError::UntilInPast { until, now });
        }
        while self.peek() < until {
            self.step();
        }
        if until.is_finite() {
            self.state().now = until;
        }
        Ok(())
    }

    /// Runs until `event` has been processed (SimPy `run(until=event)`); an error if the queue
    /// runs dry first.
    pub fn run_until_event(&self, event: &impl AsEvent) -> Result<(), KernelError> {
        let id = event.as_event().id();
        loop {
            if self.state().is_processed(id) {
                return Ok(());
            }
            if !self.step() {
                return Err(KernelError::EventNeverProcessed);
            }
        }
    }

    /// Drops every unfinished process. Processes hold the environment and the environment holds
    /// them, so a run's memory is only returned once they are gone; call this when a run is over.
    pub fn shutdown(&self) {
        let bodies: Vec<_> = {
            let mut st = self.state();
            let pids: Vec<Pid> = st
                .procs
                .iter()
                .enumerate()
                .filter(|(_, p)| p.alive)
                .map(|(i, p)| Pid {
                    idx: i as u32,
                    gen: p.gen,
                })
                .collect();
            pids.into_iter()
                .filter_map(|pid| {
                    let body = st.proc_mut(pid).and_then(|p| p.body.take());
                    let done = st.retire_process(pid);
                    st.release(done);
                    body
                })
                .collect()
        };
        drop(bodies); // user destructors run outside the borrow
    }

    // ----- executor ---------------------------------------------------------------------------

    fn run_callback(&self, cb: Callback) {
        match cb {
            Callback::Resume(pid) => self.resume(pid, None),
            Callback::Interrupt(pid, cause) => {
                let mut st = self.state();
                let cause = st.take_cause(cause);
                let Some(p) = st.proc_mut(pid) else {
                    drop(st);
                    return; // finished meanwhile: SimPy ignores the interruption too
                };
                if let Some(Wait::Event(target)) = p.target.take() {
                    st.remove_callback(target, |c| matches!(c, Callback::Resume(q) if *q == pid));
                }
                drop(st);
                self.resume(pid, Some(Interrupt::new(cause)));
            }
            Callback::Check(cid) => self.state().check(cid),
            Callback::BuildValue(cid) => self.state().build_value(cid),
            Callback::TriggerGet(store) => self.trigger_get(store),
            Callback::TriggerPut(store) => {
                let store = self.state().store(store);
                if let Some(store) = store {
                    store.trigger_put();
                }
            }
        }
    }

    /// Triggers the gets of `store` (unless it was dropped): a put event's
    /// `Callback::TriggerGet`, or a lazy put's entry (see `Popped::Put`). (Out of line: the
    /// driver's loop stays small.)
    #[inline(never)]
    fn trigger_get(&self, store: StoreId) {
        let store = self.state().store(store);
        if let Some(store) = store {
            store.trigger_get();
        }
    }

    /// Polls process `pid` once, with `interrupt` to deliver at its current wait.
    fn resume(&self, pid: Pid, interrupt: Option<Interrupt>) {
        let body = self.state().start_resume(pid, interrupt);
        if let Some(body) = body {
            self.poll_body(pid, body, None);
        }
    }

    /// Polls the body of process `pid`, taken out by `State::start_resume`, and puts it
    /// back (or retires the process when it has returned); then releases `event`'s queue
    /// reference, if given (the event whose processing resumed it, see `Popped::Resumed`).
    fn poll_body(&self, pid: Pid, mut body: ProcFuture, event: Option<EventId>) {
        let poll = body.as_mut().poll(&mut Context::from_waker(Waker::noop()));
        let mut st = self.state();
        st.active = None;
        if poll.is_pending() {
            let p = st.proc_mut(pid).expect("live process");
            assert!(
                p.target.is_some(),
                "a process awaited something that is not a kernel event"
            );
            debug_assert!(p.interrupt.is_none(), "interrupt not consumed");
            p.body = Some(body);
            if let Some(id) = event {
                st.release(id);
            }
            return;
        }
        let done = st.retire_process(pid);
        st.schedule(done, NORMAL, 0.0);
        st.release(done);
        drop(st);
        drop(body); // the finished body's locals drop outside the borrow
        if let Some(id) = event {
            self.state().release(id);
        }
    }

    /// The wait protocol every leaf awaitable follows, mirroring SimPy's `_resume` loop:
    /// an already-processed event continues at once; otherwise the active process registers
    /// itself and suspends. On the resuming poll, a pending interrupt wins.
    #[inline(always)]
    pub(crate) fn poll_wait(&self, id: EventId, waiting: &mut bool) -> Poll<Result<(), Interrupt>> {
        let mut st = self.state();
        if *waiting {
            let pid = st
                .active
                .expect("kernel events are awaited inside a process");
            if let Some(i) = st.proc_mut(pid).and_then(|p| p.interrupt.take()) {
                *waiting = false;
                return Poll::Ready(Err(i));
            }
            if st.is_processed(id) {
                *waiting = false;
                return Poll::Ready(Ok(()));
            }
            return Poll::Pending;
        }
        if st.is_processed(id) {
            return Poll::Ready(Ok(()));
        }
        let pid = st
            .active
            .expect("kernel events can only be awaited inside env.process");
        let p = st.proc_mut(pid).expect("active process is alive");
        assert!(
            p.target.is_none(),
            "a process waits on one event at a time; combine events with any_of/all_of"
        );
        p.target = Some(Wait::Event(id));
        st.add_callback(id, Callback::Resume(pid));
        *waiting = true;
        Poll::Pending
    }

    /// The wait protocol of a [`Sleep`] numbered `seq`: the first poll registers the sleep
    /// as the active process's target and suspends; the resuming poll comes from the sleep's
    /// entry firing or from an interrupt, which wins.
    pub(crate) fn poll_sleep(&self, seq: u64, waiting: &mut bool) -> Poll<Result<(), Interrupt>> {
        let mut st = self.state();
        let pid = st.active.expect("a sleep is awaited inside a process");
        let p = st.proc_mut(pid).expect("active process is alive");
        if *waiting {
            *waiting = false;
            return Poll::Ready(p.interrupt.take().map_or(Ok(()), Err));
        }
        assert!(
            p.target.is_none(),
            "a process waits on one event at a time; combine events with any_of/all_of"
        );
        p.target = Some(Wait::Sleep(seq));
        *waiting = true;
        Poll::Pending
    }

    /// The wait protocol of a lazy timeout's entry numbered `seq`, due at `at`, taken by
    /// process `owner`: `None` when the awaiting process is another one, which needs the
    /// event. Otherwise as [`poll_sleep`](Self::poll_sleep), except that an entry that has
    /// fired already continues at once, as a processed event does.
    #[inline(always)]
    pub(crate) fn poll_entry(
        &self,
        at: f64,
        seq: u64,
        owner: Pid,
        waiting: &mut bool,
    ) -> Option<Poll<Result<(), Interrupt>>> {
        let mut st = self.state();
        let pid = st
            .active
            .expect("kernel events are awaited inside a process");
        if *waiting {
            *waiting = false;
            let p = st.proc_mut(pid).expect("active process is alive");
            return Some(Poll::Ready(p.interrupt.take().map_or(Ok(()), Err)));
        }
        if pid != owner {
            return None;
        }
        if st.entry_fired(at, seq) {
            return Some(Poll::Ready(Ok(())));
        }
        let p = st.proc_mut(pid).expect("active process is alive");
        assert!(
            p.target.is_none(),
            "a process waits on one event at a time; combine events with any_of/all_of"
        );
        p.target = Some(Wait::Sleep(seq));
        *waiting = true;
        Some(Poll::Pending)
    }

    /// Triggers `id` now with NORMAL priority (SimPy `Event.succeed`).
    pub(crate) fn succeed_id(&self, id: EventId) -> Result<(), KernelError> {
        let mut st = self.state();
        if st.state_of(id) != EventState::Pending {
            return Err(KernelError::AlreadyTriggered);
        }
        st.schedule(id, NORMAL, 0.0);
        Ok(())
    }

    /// Schedules an interruption of `pid` (SimPy `Interruption.__init__`).
    pub(crate) fn interrupt(
        &self,
        pid: Pid,
        done: EventId,
        cause: Option<Rc<str>>,
    ) -> Result<(), KernelError> {
        let mut st = self.state();
        if st.state_of(done) != EventState::Pending {
            return Err(KernelError::ProcessFinished);
        }
        if st.active == Some(pid) {
            return Err(KernelError::InterruptSelf);
        }
        let id = st.new_event();
        let cause = st.keep_cause(cause);
        st.add_callback(id, Callback::Interrupt(pid, cause));
        st.schedule(id, URGENT, 0.0);
        st.release(id);
        Ok(())
    }

    /// Whether two handles belong to the same simulation.
    pub fn same(&self, other: &Environment) -> bool {
        Rc::ptr_eq(&self.state, &other.state)
    }
}
