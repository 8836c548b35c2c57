//! Timeouts: the way simulated time passes (SimPy `env.timeout`).

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::environment::Environment;
use super::error::SimError;
use super::event::{AsEvent, EventRef};
use super::state::{EventId, EventState, Pid, NEVER};

/// An event that fires a fixed delay after its creation. Await it (`env.timeout(dt).await?`)
/// or put it in a condition. Re-awaiting it after an interrupt waits for the same instant.
pub struct Timeout {
    env: Environment,
    /// Where the timeout is, or the error a bad delay (negative, NaN, or past the clock's
    /// range) resolves to.
    at: Result<Cell<At>, SimError>,
    waiting: bool,
}

/// What stands for a valid timeout (or an accepted store put) in the kernel.
#[derive(Clone, Copy)]
pub(crate) enum At {
    /// A bare queue entry numbered `seq` ([`NEVER`] for an infinite delay: none), due at
    /// `time`, that wakes `owner`, the process that took the timeout, if it sleeps on it:
    /// the common case, awaited at once by its owner, creates and releases no event. Its
    /// event is made (see `State::materialize`) as soon as anything else asks for it.
    Entry { time: f64, seq: u64, owner: Pid },
    /// An event in the slab, holding one reference.
    Event(EventId),
}

impl Timeout {
    pub(crate) fn from_parts(env: Environment, id: EventId) -> Self {
        Timeout {
            env,
            at: Ok(Cell::new(At::Event(id))),
            waiting: false,
        }
    }

    pub(crate) fn entry(env: Environment, time: f64, seq: u64, owner: Pid) -> Self {
        Timeout {
            env,
            at: Ok(Cell::new(At::Entry { time, seq, owner })),
            waiting: false,
        }
    }

    pub(crate) fn invalid(env: Environment, error: SimError) -> Self {
        Timeout {
            env,
            at: Err(error),
            waiting: false,
        }
    }

    /// The timeout's event, made now if it is still a bare entry.
    fn event(&self, at: &Cell<At>) -> EventId {
        match at.get() {
            At::Event(id) => id,
            At::Entry { time, seq, .. } => {
                let id = self.env.state().materialize(time, seq, None);
                at.set(At::Event(id));
                id
            }
        }
    }

    /// True once the timeout has fired and its waiters were resumed.
    pub fn processed(&self) -> bool {
        match &self.at {
            Ok(at) => match at.get() {
                At::Event(id) => self.env.state().is_processed(id),
                At::Entry { time, seq, .. } => self.env.state().entry_fired(time, seq),
            },
            Err(_) => false,
        }
    }

    /// True when the delay was finite and valid, i.e. the timeout will fire on its own.
    pub fn triggered(&self) -> bool {
        match &self.at {
            Ok(at) => match at.get() {
                At::Event(id) => self.env.state().state_of(id) != EventState::Pending,
                At::Entry { seq, .. } => seq != NEVER,
            },
            Err(_) => false,
        }
    }
}

impl Drop for Timeout {
    fn drop(&mut self) {
        // (A bare entry needs nothing: it fires unheard, as an abandoned timeout does.)
        if let Ok(at) = &self.at {
            if let At::Event(id) = at.get() {
                self.env.state().release(id);
            }
        }
    }
}

impl AsEvent for Timeout {
    /// An invalid timeout becomes an event that never fires; use
    /// [`Environment::try_timeout`] to catch bad delays before building a condition.
    fn as_event(&self) -> EventRef {
        match &self.at {
            Ok(at) => EventRef::new(&self.env, self.event(at)),
            Err(_) => self.env.event::<()>().as_event(),
        }
    }
}

impl Future for Timeout {
    type Output = Result<(), SimError>;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let at = match &this.at {
            Err(e) => return Poll::Ready(Err(e.clone())),
            Ok(at) => at,
        };
        if let At::Entry { time, seq, owner } = at.get() {
            if let Some(poll) = this.env.poll_entry(time, seq, owner, &mut this.waiting) {
                return poll.map_err(SimError::from);
            }
        }
        // Another process awaits it: it needs the event.
        let id = this.event(at);
        this.env
            .poll_wait(id, &mut this.waiting)
            .map_err(SimError::from)
    }
}

/// A process's own timed wait ([`Environment::sleep`]): one entry in the queue, no event.
/// Await it once, in the process that took it.
pub(crate) struct Sleep<'a> {
    env: &'a Environment,
    /// The entry's sequence number, or the error a bad delay resolves to.
    seq: Result<u64, SimError>,
    waiting: bool,
    done: bool,
}

impl<'a> Sleep<'a> {
    pub(crate) fn new(env: &'a Environment, seq: Result<u64, SimError>) -> Self {
        Sleep {
            env,
            seq,
            waiting: false,
            done: false,
        }
    }
}

impl Future for Sleep<'_> {
    type Output = Result<(), SimError>;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        assert!(!this.done, "a sleep is awaited once");
        let poll = match &this.seq {
            Err(e) => Poll::Ready(Err(e.clone())),
            &Ok(seq) => this
                .env
                .poll_sleep(seq, &mut this.waiting)
                .map_err(SimError::from),
        };
        this.done = poll.is_ready();
        poll
    }
}

#[cfg(test)]
mod tests {
    use crate::kernel::{AsEvent, Environment, SimError, Timeout};
    use std::cell::RefCell;
    use std::rc::Rc;

    /// Sleeps and timeouts of equal delays taken in turn wake in the order they were
    /// taken (SimPy orders equal times by scheduling order), each at its own time.
    #[test]
    fn a_sleep_is_ordered_as_a_timeout_taken_at_the_same_moment() {
        let env = Environment::new();
        let log = Rc::new(RefCell::new(Vec::new()));
        for (name, delays) in [("a", [1.0, 2.0]), ("b", [1.0, 1.5]), ("c", [3.0, 0.0])] {
            let (env2, log) = (env.clone(), Rc::clone(&log));
            env.process(async move {
                for (k, d) in delays.into_iter().enumerate() {
                    // Alternate the two waits: the order must not tell them apart.
                    if (k + name.len()) % 2 == 0 {
                        env2.sleep(d).await?;
                    } else {
                        env2.timeout(d).await?;
                    }
                    log.borrow_mut().push((name, env2.now()));
                }
                Ok::<_, SimError>(())
            });
        }
        env.run();
        // a and b wake at 1 (a queued first), b at 2.5; at 3, c (queued at 0) before a
        // (queued at 1), then c's zero wait (queued at 3, after a's entry).
        assert_eq!(
            *log.borrow(),
            [
                ("a", 1.0),
                ("b", 1.0),
                ("b", 2.5),
                ("c", 3.0),
                ("a", 3.0),
                ("c", 3.0)
            ]
        );
        assert_eq!(env.live_events(), 0);
    }

    /// An interrupt ends a sleep at once; its entry still fires at the old time (an event
    /// processed, as SimPy's abandoned timeout is) without waking the process again.
    #[test]
    fn an_interrupted_sleep_ends_at_once_and_its_entry_wakes_nobody() {
        let env = Environment::new();
        let woke = Rc::new(RefCell::new(Vec::new()));
        let sleeper = env.process({
            let (env, woke) = (env.clone(), Rc::clone(&woke));
            async move {
                let first = env.sleep(5.0).await;
                woke.borrow_mut().push((env.now(), first.is_err()));
                env.sleep(10.0).await?;
                woke.borrow_mut().push((env.now(), false));
                Ok::<_, SimError>(())
            }
        });
        env.process({
            let env = env.clone();
            async move {
                env.timeout(1.0).await?;
                sleeper.interrupt().unwrap();
                Ok::<_, SimError>(())
            }
        });
        let mut steps = 0;
        while env.step() {
            steps += 1;
        }
        // Interrupted at 1, slept again until 11; the first sleep's entry fired at 5.
        assert_eq!(*woke.borrow(), [(1.0, true), (11.0, false)]);
        assert_eq!(env.now(), 11.0);
        // Two inits, the timeout, the interruption, the second process's end, the stale
        // entry at 5, the sleep's end at 11 and the sleeper's end.
        assert_eq!(steps, 8);
    }

    /// A timeout taken and awaited by its own process is a bare queue entry; whatever else
    /// asks for its event (a condition, another process, `processed`) sees exactly what
    /// an eager event would show, at the same instants and in the same order.
    #[test]
    fn a_lazy_timeout_behaves_as_its_event_whoever_asks() {
        let env = Environment::new();
        let log = Rc::new(RefCell::new(Vec::new()));
        let shared = Rc::new(RefCell::new(None));
        // `early` wakes at 1 just before `owner`'s first timeout fires (queued earlier).
        env.process({
            let (env, log, shared) = (env.clone(), Rc::clone(&log), Rc::clone(&shared));
            async move {
                env.timeout(1.0).await?;
                let t: &Option<Timeout> = &shared.borrow();
                log.borrow_mut()
                    .push(("early", env.now(), t.as_ref().unwrap().processed()));
                Ok::<_, SimError>(())
            }
        });
        env.process({
            let (env, log, shared) = (env.clone(), Rc::clone(&log), Rc::clone(&shared));
            async move {
                *shared.borrow_mut() = Some(env.timeout(1.0)); // fires at 1, unawaited
                let mut mine = env.timeout(3.0);
                let fired = env.timeout(1.0); // fires at 1, after the shared one
                let mut wait = env.timeout(1.0);
                (&mut wait).await?;
                let both = fired.processed() && shared.borrow().as_ref().unwrap().processed();
                log.borrow_mut()
                    .push(("owner", env.now(), both && wait.processed()));
                // Made after its entry fired: an event already processed.
                env.any_of([fired.as_event()]).await?;
                log.borrow_mut().push(("cond", env.now(), mine.processed()));
                let ev = mine.as_event(); // made before its entry fires
                (&mut mine).await?;
                log.borrow_mut()
                    .push(("mine", env.now(), ev.processed() && mine.processed()));
                Ok::<_, SimError>(())
            }
        });
        // Another process awaits a timeout the owner took.
        let handoff: Rc<RefCell<Option<Timeout>>> = Rc::new(RefCell::new(None));
        env.process({
            let (env, handoff) = (env.clone(), Rc::clone(&handoff));
            async move {
                *handoff.borrow_mut() = Some(env.timeout(2.0));
                Ok::<_, SimError>(())
            }
        });
        env.process({
            let (env, log, handoff) = (env.clone(), Rc::clone(&log), Rc::clone(&handoff));
            async move {
                env.timeout(0.5).await?;
                let t = handoff.borrow_mut().take().unwrap();
                t.await?;
                log.borrow_mut().push(("other", env.now(), true));
                Ok::<_, SimError>(())
            }
        });
        env.run();
        assert_eq!(
            *log.borrow(),
            [
                ("early", 1.0, false),
                ("owner", 1.0, true),
                ("cond", 1.0, false),
                ("other", 2.0, true),
                ("mine", 3.0, true)
            ]
        );
        drop(shared.borrow_mut().take());
        assert_eq!(env.live_events(), 0);
    }
}
