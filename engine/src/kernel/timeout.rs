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
