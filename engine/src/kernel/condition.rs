//! Any-of / all-of conditions over events known only at run time (SimPy `AnyOf` / `AllOf`).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::environment::Environment;
use super::error::SimError;
use super::event::{AsEvent, EventRef};
use super::state::{EventId, EventState};

/// A condition event built by [`Environment::any_of`] or [`Environment::all_of`]. Awaiting it
/// yields [`Fired`]: which of the given events had been processed when the condition was.
pub struct Condition {
    env: Environment,
    id: EventId,
    waiting: bool,
}

impl Condition {
    pub(crate) fn from_parts(env: Environment, id: EventId) -> Self {
        Condition {
            env,
            id,
            waiting: false,
        }
    }

    /// True once enough sub-events fired for the condition to be triggered.
    pub fn triggered(&self) -> bool {
        self.env.state().state_of(self.id) != EventState::Pending
    }
}

impl Drop for Condition {
    fn drop(&mut self) {
        self.env.state().release(self.id);
    }
}

impl AsEvent for Condition {
    fn as_event(&self) -> EventRef {
        EventRef::new(&self.env, self.id)
    }
}

impl Future for Condition {
    type Output = Result<Fired, SimError>;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        match this.env.poll_wait(this.id, &mut this.waiting) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Err(i)) => Poll::Ready(Err(i.into())),
            Poll::Ready(Ok(())) => Poll::Ready(Ok(Fired(this.env.state().fired(this.id)))),
        }
    }
}

/// Which events of a condition had fired, by their position in the list given to
/// `any_of` / `all_of` (SimPy's `ConditionValue`, keyed by position).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fired(Vec<bool>);

impl Fired {
    /// True if the event at `index` had fired.
    pub fn contains(&self, index: usize) -> bool {
        self.0.get(index).copied().unwrap_or(false)
    }

    /// Positions of the events that fired, ascending.
    pub fn indices(&self) -> impl Iterator<Item = usize> + '_ {
        self.0
            .iter()
            .enumerate()
            .filter(|(_, f)| **f)
            .map(|(i, _)| i)
    }

    /// How many events fired.
    pub fn count(&self) -> usize {
        self.0.iter().filter(|f| **f).count()
    }
}
