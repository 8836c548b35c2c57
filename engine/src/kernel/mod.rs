//! The simulation kernel: SimPy's semantics as async Rust on a small single-threaded executor.
//!
//! Every long-lived loop of the simulator (router, worker intake and scheduler, workload stages)
//! is a *process*: an `async` block started once with [`Environment::process`]. A process
//! suspends by awaiting a kernel event — a [`Timeout`], an [`Event`], another [`Process`], a
//! store [`get`](Store::get)/[`put`](Store::put), or an [`any_of`](Environment::any_of) /
//! [`all_of`](Environment::all_of) [`Condition`] — and resumes when that event is processed.
//! Every await resolves to `Result<T, SimError>`, so domain code writes `env.timeout(dt).await?`
//! and handles [`SimError::Interrupt`] where SimPy code writes `except simpy.Interrupt`.
//!
//! ```
//! use engine::kernel::{Environment, SimError, Store};
//!
//! let env = Environment::new();
//! let jobs: Store<u32> = Store::new(&env);
//!
//! // A consumer that takes two jobs, each needing 1.5 s of work, and returns the sum.
//! let worker = env.process({
//!     let (env, jobs) = (env.clone(), jobs.clone());
//!     async move {
//!         let mut total = 0;
//!         for _ in 0..2 {
//!             total += jobs.get().await?;
//!             env.timeout(1.5).await?;
//!         }
//!         Ok::<_, SimError>(total)
//!     }
//! });
//! // A producer that hands over a job at t = 0 and t = 1.
//! env.process({
//!     let (env, jobs) = (env.clone(), jobs.clone());
//!     async move {
//!         jobs.put(40).await?;
//!         env.timeout(1.0).await?;
//!         jobs.put(2).await
//!     }
//! });
//! env.run();
//! // Job 1 is done at 1.5; job 2 (arrived at 1.0) starts then and is done at 3.0.
//! assert_eq!(env.now(), 3.0);
//! assert_eq!(worker.value(), Some(Ok(42)));
//! ```
//!
//! # Scheduling (identical to SimPy, so traces match SimPy exactly)
//!
//! The queue is ordered by `(time, priority, scheduling order)`. Process start-up and
//! interruptions are URGENT (priority 0), everything else NORMAL (1): a timeout is queued at
//! `now + delay` when created, `Event::succeed` queues the event now, a finished process queues
//! its own event now, and stores trigger puts and gets as SimPy's `BaseResource` does. A process
//! awaiting an event that was already processed continues at once without a trip through the
//! queue. Ties are broken by scheduling order, never by address or hash.
//!
//! # Inline sub-steps versus separate processes
//!
//! Awaiting an `async fn` inline is SimPy's `yield from`: it runs in the *same* process, so an
//! interrupt reaches whatever the sub-step is waiting on. `env.process(sub_step())` starts a
//! *separate* process: interrupting the parent abandons only the parent's wait on the child,
//! and the child keeps running. The worker's scheduler step is inline for this reason.
//!
//! ```
//! use engine::kernel::{Environment, SimError};
//!
//! async fn step(env: engine::kernel::Environment) -> Result<(), SimError> {
//!     env.timeout(10.0).await // the batch takes 10 s
//! }
//!
//! let env = Environment::new();
//! let inline = env.process({
//!     let env = env.clone();
//!     async move { step(env.clone()).await.map(|_| env.now()) }
//! });
//! let parent = env.process({
//!     let env = env.clone();
//!     async move { env.process(step(env.clone())).await.map(|_| env.now()) }
//! });
//! env.process({
//!     let (env, inline, parent) = (env.clone(), inline.clone(), parent.clone());
//!     async move {
//!         env.timeout(1.0).await?;
//!         inline.interrupt().unwrap(); // reaches the inline step's timeout
//!         parent.interrupt().unwrap(); // reaches the parent, not its child
//!         Ok::<_, SimError>(())
//!     }
//! });
//! env.run();
//! assert!(matches!(inline.value(), Some(Err(SimError::Interrupt(_)))));
//! assert!(matches!(parent.value(), Some(Err(SimError::Interrupt(_)))));
//! assert_eq!(env.now(), 10.0); // the separate child still ran its 10 s
//! ```
//!
//! # Deliberate differences from SimPy
//!
//! - `timeout(f64::INFINITY)` is never queued (SimPy queues it at time ∞, so `run()` would end
//!   at `now = ∞`); only an interrupt ends it.
//! - A finite delay whose end overflows the clock (`now + delay == ∞`) is an error, like a
//!   negative or NaN one, rather than a sleep until ∞; the environment keeps the first such
//!   error as its [`fault`](Environment::fault) for the driver to report.
//! - An abandoned store get (dropped handle, interrupted waiter, lost `get_with_timeout` race)
//!   is withdrawn and never swallows a later item; an item already handed to it goes back to the
//!   front of the store. SimPy only does this inside `with store.get()`.
//! - `Event::fail` is a value (`Event<Result<V, E>>`), not an exception: conditions count a
//!   failed event as fired, and nothing aborts the run.
//! - `run_until_event` runs all callbacks of the event before stopping.
//!
//! # Internals
//!
//! Events live in a slab with generation counters and reference counts, the queue is a binary
//! heap of small `Copy` entries beside a FIFO lane for entries whose keys arrive in order
//! (events due now, batches of equal delays), and callbacks are a small enum rather than boxed closures.
//! Typed payloads (event values, process outputs, store items) stay in typed cells owned by the
//! handles and stores, so the hot path — timeout, resume, next timeout — allocates nothing in the
//! steady state. A process's own timed wait inside the crate (the worker's step) is a *sleep*: a
//! queue entry that names the process instead of an event, ordered exactly as the timeout it
//! replaces, so the hottest wait creates, awaits and releases no event. Timeouts and accepted
//! store puts made inside a process start the same way (*lazy*: almost always their own
//! process awaits them at once) and get their event only when something else asks for it;
//! a `try_put`'s entry only triggers the store's gets. Processes are boxed
//! futures polled with a no-op waker: the kernel itself knows
//! which process waits on which event, so wakers carry no information.
//!
//! Processes and the environment reference each other; [`Environment::shutdown`] drops the
//! unfinished processes of a run that is over.

mod callback;
mod condition;
mod environment;
mod error;
mod event;
mod process;
mod state;
mod store;
mod timeout;

pub use condition::{Condition, Fired};
pub use environment::Environment;
pub use error::{Interrupt, KernelError, SimError};
pub use event::{AsEvent, Event, EventRef};
pub use process::Process;
pub use store::{get_with_timeout, Store, StoreGet, StorePut};
pub use timeout::Timeout;
