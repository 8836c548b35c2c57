//! Timeouts: the way simulated time passes (SimPy `env.timeout`).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::environment::Environment;
use super::error::SimError;
use super::event::{AsEvent, EventRef};
use super::state::{EventId, EventState};

/// An event that fires a fixed delay after its creation. Await it (`env.timeout(dt).await?`)
/// or put it in a condition. Re-awaiting it after an interrupt waits for the same instant.
pub struct Timeout {
    env: Environment,
    /// The error a bad delay (negative, NaN, or past the clock's range) resolves to.
    id: Result<EventId, SimError>,
    waiting: bool,
}

impl Timeout {
    pub(crate) fn from_parts(env: Environment, id: EventId) -> Self {
        Timeout {
            env,
            id: Ok(id),
            waiting: false,
        }
    }

    pub(crate) fn invalid(env: Environment, error: SimError) -> Self {
        Timeout {
            env,
            id: Err(error),
            waiting: false,
        }
    }

    /// True once the timeout has fired and its waiters were resumed.
    pub fn processed(&self) -> bool {
        match self.id {
            Ok(id) => self.env.state().is_processed(id),
            Err(_) => false,
        }
    }

    /// True when the delay was finite and valid, i.e. the timeout will fire on its own.
    pub fn triggered(&self) -> bool {
        match self.id {
            Ok(id) => self.env.state().state_of(id) != EventState::Pending,
            Err(_) => false,
        }
    }
}

impl Drop for Timeout {
    fn drop(&mut self) {
        if let Ok(id) = self.id {
            self.env.state().release(id);
        }
    }
}

impl AsEvent for Timeout {
    /// An invalid timeout becomes an event that never fires; use
    /// [`Environment::try_timeout`] to catch bad delays before building a condition.
    fn as_event(&self) -> EventRef {
        match self.id {
            Ok(id) => EventRef::new(&self.env, id),
            Err(_) => self.env.event::<()>().as_event(),
        }
    }
}

impl Future for Timeout {
    type Output = Result<(), SimError>;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        match &this.id {
            Err(e) => Poll::Ready(Err(e.clone())),
            &Ok(id) => this
                .env
                .poll_wait(id, &mut this.waiting)
                .map_err(SimError::from),
        }
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
    use crate::kernel::{Environment, SimError};
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
}
