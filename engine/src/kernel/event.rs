//! One-shot events: the typed [`Event<T>`] a process succeeds, and the untyped [`EventRef`]
//! that every kind of event converts into for conditions.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use super::environment::Environment;
use super::error::{KernelError, SimError};
use super::state::{EventId, EventState};

/// An untyped, counted reference to any event, used to build conditions and to run until an
/// event. Holding one keeps the event's slot (and its "processed" state) alive.
pub struct EventRef {
    env: Environment,
    id: EventId,
}

impl EventRef {
    /// Takes one more reference on `id`.
    pub(crate) fn new(env: &Environment, id: EventId) -> Self {
        env.state().retain(id);
        EventRef {
            env: env.clone(),
            id,
        }
    }

    pub(crate) fn id(&self) -> EventId {
        self.id
    }

    /// True once the event has been triggered (scheduled to be processed).
    pub fn triggered(&self) -> bool {
        self.env.state().state_of(self.id) != EventState::Pending
    }

    /// True once the event's callbacks have run (waiters have been resumed).
    pub fn processed(&self) -> bool {
        self.env.state().is_processed(self.id)
    }
}

impl Clone for EventRef {
    fn clone(&self) -> Self {
        EventRef::new(&self.env, self.id)
    }
}

impl Drop for EventRef {
    fn drop(&mut self) {
        self.env.state().release(self.id);
    }
}

/// Anything that is an event: timeouts, typed events, processes, store puts/gets, conditions.
pub trait AsEvent {
    /// An untyped reference to this event, for [`Environment::any_of`] and friends.
    fn as_event(&self) -> EventRef;
}

impl AsEvent for EventRef {
    fn as_event(&self) -> EventRef {
        self.clone()
    }
}

/// A one-shot event carrying a value of type `T` (SimPy `env.event()`): `succeed` it once,
/// await it from any number of processes. Clones share the event.
pub struct Event<T> {
    env: Environment,
    id: EventId,
    value: Rc<RefCell<Option<T>>>,
    waiting: bool,
}

impl<T> Event<T> {
    pub(crate) fn from_parts(env: Environment, id: EventId) -> Self {
        Event {
            env,
            id,
            value: Rc::new(RefCell::new(None)),
            waiting: false,
        }
    }

    /// Triggers the event with `value`; waiters resume at the current time. A second call is
    /// [`KernelError::AlreadyTriggered`] (guard with [`triggered`](Self::triggered)).
    pub fn succeed(&self, value: T) -> Result<(), KernelError> {
        self.env.succeed_id(self.id)?;
        *self.value.borrow_mut() = Some(value);
        Ok(())
    }

    /// True once `succeed` (or `fail`) was called.
    pub fn triggered(&self) -> bool {
        self.env.state().state_of(self.id) != EventState::Pending
    }

    /// True once the event's waiters have been resumed.
    pub fn processed(&self) -> bool {
        self.env.state().is_processed(self.id)
    }

    /// The value, once triggered.
    pub fn value(&self) -> Option<T>
    where
        T: Clone,
    {
        self.value.borrow().clone()
    }

    /// Runs `f` on the value without cloning it, once triggered.
    pub fn with_value<R>(&self, f: impl FnOnce(&T) -> R) -> Option<R> {
        self.value.borrow().as_ref().map(f)
    }
}

impl<V, E> Event<Result<V, E>> {
    /// Triggers the event with an error value (SimPy `Event.fail`). Failure is a value here:
    /// waiters receive `Ok(Err(error))` and conditions count the event as fired.
    pub fn fail(&self, error: E) -> Result<(), KernelError> {
        self.succeed(Err(error))
    }
}

impl<T> Clone for Event<T> {
    fn clone(&self) -> Self {
        self.env.state().retain(self.id);
        Event {
            env: self.env.clone(),
            id: self.id,
            value: Rc::clone(&self.value),
            waiting: false,
        }
    }
}

impl<T> Drop for Event<T> {
    fn drop(&mut self) {
        self.env.state().release(self.id);
    }
}

impl<T> AsEvent for Event<T> {
    fn as_event(&self) -> EventRef {
        EventRef::new(&self.env, self.id)
    }
}

impl<T> std::fmt::Debug for Event<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Event(triggered: {})", self.triggered())
    }
}

/// Waits until the event is processed and yields a clone of its value.
impl<T: Clone> Future for Event<T> {
    type Output = Result<T, SimError>;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        match this.env.poll_wait(this.id, &mut this.waiting) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Err(i)) => Poll::Ready(Err(i.into())),
            Poll::Ready(Ok(())) => {
                Poll::Ready(Ok(this.value().expect("a processed event has a value")))
            }
        }
    }
}
