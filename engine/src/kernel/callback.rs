//! What happens when an event is processed: a small enum instead of boxed closures, so that
//! registering a waiter never allocates (the callback vector of a recycled slot keeps its capacity).

use std::rc::{Rc, Weak};

use super::state::{CondIdx, Pid};

/// A resource (store) whose queues are re-examined when one of its events is processed,
/// as SimPy's `BaseResource._trigger_put` / `_trigger_get`.
pub(crate) trait StoreTrigger {
    /// Try to accept the oldest pending put.
    fn trigger_put(&self);
    /// Try to serve the oldest pending get.
    fn trigger_get(&self);
}

/// One entry of an event's callback list, run in registration order when the event is processed.
pub(crate) enum Callback {
    /// Resume process `Pid`, which waits on this event (SimPy `Process._resume`).
    Resume(Pid),
    /// Deliver an interrupt to `Pid` at its current wait (SimPy `Interruption._interrupt`).
    Interrupt(Pid, Option<Rc<str>>),
    /// A sub-event of condition `CondIdx` fired (SimPy `Condition._check`).
    Check(CondIdx),
    /// The condition itself is processed: record which sub-events fired (SimPy `_build_value`).
    BuildValue(CondIdx),
    /// A put was processed: a get may now proceed. `Weak` so a dropped store is never kept alive
    /// and so dropping the callback inside the kernel never runs a store item's destructor.
    TriggerGet(Weak<dyn StoreTrigger>),
    /// A get was processed: a blocked put may now proceed.
    TriggerPut(Weak<dyn StoreTrigger>),
}
