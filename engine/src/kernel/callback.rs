//! What happens when an event is processed: a small `Copy` enum instead of boxed closures, so
//! that registering a waiter never allocates (the callback vector of a recycled slot keeps its
//! capacity) and clearing a processed event's list drops nothing.

use super::state::{CauseIdx, CondIdx, Pid, StoreId};

/// A resource (store) whose queues are re-examined when one of its events is processed,
/// as SimPy's `BaseResource._trigger_put` / `_trigger_get`.
pub(crate) trait StoreTrigger {
    /// Try to accept the oldest pending put.
    fn trigger_put(&self);
    /// Try to serve the oldest pending get.
    fn trigger_get(&self);
}

/// One entry of an event's callback list, run in registration order when the event is processed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Callback {
    /// Resume process `Pid`, which waits on this event (SimPy `Process._resume`).
    Resume(Pid),
    /// Deliver an interrupt to `Pid` at its current wait (SimPy `Interruption._interrupt`),
    /// with the cause kept in the kernel's cause slab.
    Interrupt(Pid, CauseIdx),
    /// A sub-event of condition `CondIdx` fired (SimPy `Condition._check`).
    Check(CondIdx),
    /// The condition itself is processed: record which sub-events fired (SimPy `_build_value`).
    BuildValue(CondIdx),
    /// A put was processed: a get may now proceed. The store is named by its registration
    /// (a generation-checked index), so a dropped store is never kept alive and the callback
    /// is plain data.
    TriggerGet(StoreId),
    /// A get was processed: a blocked put may now proceed.
    TriggerPut(StoreId),
}
