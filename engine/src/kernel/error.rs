//! Errors of the kernel: the interrupt a waiting process receives, and API misuse reported as values.

use std::fmt;
use std::rc::Rc;

/// Delivered to a process at its current wait by [`Process::interrupt`](super::Process::interrupt)
/// (SimPy's `simpy.Interrupt`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interrupt {
    cause: Option<Rc<str>>,
}

impl Interrupt {
    pub(crate) fn new(cause: Option<Rc<str>>) -> Self {
        Interrupt { cause }
    }

    /// The cause given by the interrupter, if any.
    pub fn cause(&self) -> Option<&str> {
        self.cause.as_deref()
    }
}

impl fmt::Display for Interrupt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.cause {
            Some(c) => write!(f, "interrupted: {c}"),
            None => write!(f, "interrupted"),
        }
    }
}

impl std::error::Error for Interrupt {}

/// Why a wait ended without its event: every kernel awaitable resolves to `Result<T, SimError>`.
#[derive(Clone, Debug, PartialEq)]
pub enum SimError {
    /// The waiting process was interrupted (SimPy's `except simpy.Interrupt`).
    Interrupt(Interrupt),
    /// A timeout was asked for a negative or NaN delay.
    InvalidDelay(f64),
    /// A finite delay whose end the clock cannot represent (`now + delay` overflows to ∞).
    TimeOverflow {
        /// The clock when the timeout was asked for.
        now: f64,
        /// The delay asked for.
        delay: f64,
    },
    /// A process found its model in a state time cannot go on from (e.g. a step that would
    /// take ∞ seconds), in its own words.
    Fault(Rc<str>),
}

impl SimError {
    /// True when this is an interrupt (the usual, expected way a wait ends early).
    pub fn is_interrupt(&self) -> bool {
        matches!(self, SimError::Interrupt(_))
    }
}

impl From<Interrupt> for SimError {
    fn from(i: Interrupt) -> Self {
        SimError::Interrupt(i)
    }
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Interrupt(i) => i.fmt(f),
            SimError::InvalidDelay(d) => write!(f, "invalid timeout delay {d} (must be >= 0)"),
            SimError::Fault(message) => f.write_str(message),
            SimError::TimeOverflow { now, delay } => write!(
                f,
                "a delay of {delay:e} s from t = {now} s lies beyond the clock's range"
            ),
        }
    }
}

impl std::error::Error for SimError {}

/// Misuse of the kernel API, reported as a value the caller may handle or ignore.
#[derive(Clone, Debug, PartialEq)]
pub enum KernelError {
    /// `succeed`/`fail` on an event that was already triggered (SimPy raises `RuntimeError`).
    AlreadyTriggered,
    /// Interrupting a process that has already finished.
    ProcessFinished,
    /// A process tried to interrupt itself.
    InterruptSelf,
    /// `run_until(t)` with `t` before the current time, or NaN.
    UntilInPast {
        /// The requested stop time.
        until: f64,
        /// The clock when the call was made.
        now: f64,
    },
    /// `run_until_event` ran out of events before the event was processed.
    EventNeverProcessed,
    /// A bounded store needs a capacity of at least 1.
    ZeroCapacity,
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelError::AlreadyTriggered => write!(f, "event has already been triggered"),
            KernelError::ProcessFinished => {
                write!(f, "process has terminated and cannot be interrupted")
            }
            KernelError::InterruptSelf => write!(f, "a process is not allowed to interrupt itself"),
            KernelError::UntilInPast { until, now } => {
                write!(
                    f,
                    "until ({until}) must not be before the current time ({now})"
                )
            }
            KernelError::EventNeverProcessed => {
                write!(
                    f,
                    "no scheduled events left but the until event was not processed"
                )
            }
            KernelError::ZeroCapacity => write!(f, "store capacity must be > 0"),
        }
    }
}

impl std::error::Error for KernelError {}
