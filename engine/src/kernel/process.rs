//! Process handles: a running coroutine that is also an event carrying its return value.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use super::environment::Environment;
use super::error::{KernelError, SimError};
use super::event::{AsEvent, EventRef};
use super::state::{EventId, EventState, Pid};

/// Handle to a process started with [`Environment::process`]. Awaiting it (from another
/// process) waits for the body to return and yields a clone of the return value; an error
/// value the body returns is carried to the waiter unchanged.
pub struct Process<T> {
    env: Environment,
    pid: Pid,
    done: EventId,
    output: Rc<RefCell<Option<T>>>,
    waiting: bool,
}

impl<T> Process<T> {
    pub(crate) fn from_parts(
        env: Environment,
        pid: Pid,
        done: EventId,
        output: Rc<RefCell<Option<T>>>,
    ) -> Self {
        Process {
            env,
            pid,
            done,
            output,
            waiting: false,
        }
    }

    /// The process's completion event.
    pub(crate) fn done_id(&self) -> EventId {
        self.done
    }

    /// True until the body has returned (SimPy `Process.is_alive`).
    pub fn is_alive(&self) -> bool {
        self.env.state().state_of(self.done) == EventState::Pending
    }

    /// The return value, once the body has returned.
    pub fn value(&self) -> Option<T>
    where
        T: Clone,
    {
        self.output.borrow().clone()
    }

    /// Moves the return value out (for values that are not `Clone`); later calls get `None`.
    pub fn take_value(&self) -> Option<T> {
        self.output.borrow_mut().take()
    }

    /// Delivers an [`Interrupt`](super::Interrupt) with no cause to the process at its current
    /// wait, at the current time. Interrupting a finished process is
    /// [`KernelError::ProcessFinished`], which callers may ignore.
    pub fn interrupt(&self) -> Result<(), KernelError> {
        self.env.interrupt(self.pid, self.done, None)
    }

    /// Like [`interrupt`](Self::interrupt), with a cause the process can read.
    pub fn interrupt_with(&self, cause: &str) -> Result<(), KernelError> {
        self.env
            .interrupt(self.pid, self.done, Some(Rc::from(cause)))
    }
}

impl<T> Clone for Process<T> {
    fn clone(&self) -> Self {
        self.env.state().retain(self.done);
        Process {
            env: self.env.clone(),
            pid: self.pid,
            done: self.done,
            output: Rc::clone(&self.output),
            waiting: false,
        }
    }
}

impl<T> Drop for Process<T> {
    fn drop(&mut self) {
        self.env.state().release(self.done);
    }
}

impl<T> AsEvent for Process<T> {
    fn as_event(&self) -> EventRef {
        EventRef::new(&self.env, self.done)
    }
}

impl<T: Clone> Future for Process<T> {
    type Output = Result<T, SimError>;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        match this.env.poll_wait(this.done, &mut this.waiting) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Err(i)) => Poll::Ready(Err(i.into())),
            Poll::Ready(Ok(())) => Poll::Ready(Ok(this
                .value()
                .expect("a finished process has its return value"))),
        }
    }
}
