//! One test per kernel rule (SPEC §1), each with hand-checked times.

use std::cell::RefCell;
use std::rc::Rc;

use engine::kernel::{
    get_with_timeout, AsEvent, Environment, Event, KernelError, Process, SimError, Store,
};

/// A shared `(time, label)` log.
#[derive(Clone, Default)]
struct Trace(Rc<RefCell<Vec<(f64, String)>>>);

impl Trace {
    fn log(&self, env: &Environment, label: impl Into<String>) {
        self.0.borrow_mut().push((env.now(), label.into()));
    }
    fn take(&self) -> Vec<(f64, String)> {
        std::mem::take(&mut self.0.borrow_mut())
    }
}

fn t(time: f64, label: &str) -> (f64, String) {
    (time, label.to_string())
}

#[test]
fn equal_time_events_run_in_scheduling_order() {
    let env = Environment::new();
    let trace = Trace::default();
    // Processes started in order c, a, b all wait 1.0: they wake in start order, not by name.
    for name in ["c", "a", "b"] {
        let (env, trace) = (env.clone(), trace.clone());
        env.clone().process(async move {
            env.timeout(1.0).await?;
            trace.log(&env, name);
            Ok::<_, SimError>(())
        });
    }
    env.run();
    assert_eq!(trace.take(), vec![t(1.0, "c"), t(1.0, "a"), t(1.0, "b")]);
}

#[test]
fn timeouts_fire_in_time_order() {
    let env = Environment::new();
    let trace = Trace::default();
    for (name, delay) in [("late", 3.0), ("early", 0.5), ("mid", 2.0)] {
        let (env, trace) = (env.clone(), trace.clone());
        env.clone().process(async move {
            env.timeout(delay).await?;
            trace.log(&env, name);
            Ok::<_, SimError>(())
        });
    }
    env.run();
    assert_eq!(
        trace.take(),
        vec![t(0.5, "early"), t(2.0, "mid"), t(3.0, "late")]
    );
}

#[test]
fn process_start_is_urgent_and_precedes_normal_events_of_the_same_instant() {
    let env = Environment::new();
    let trace = Trace::default();
    // At t=0 an event is succeeded (NORMAL) before the process is created (URGENT): the
    // process's first step still runs first.
    let ev: Event<()> = env.event();
    {
        let (env2, trace) = (env.clone(), trace.clone());
        let ev = ev.clone();
        env.process(async move {
            ev.await?;
            trace.log(&env2, "event waiter");
            Ok::<_, SimError>(())
        });
    }
    env.step(); // start the waiter
    ev.succeed(()).unwrap();
    {
        let (env2, trace) = (env.clone(), trace.clone());
        env.process(async move {
            trace.log(&env2, "new process starts");
            Ok::<_, SimError>(())
        });
    }
    env.run();
    assert_eq!(
        trace.take(),
        vec![t(0.0, "new process starts"), t(0.0, "event waiter")]
    );
}

#[test]
fn awaiting_a_processed_event_continues_without_the_queue() {
    let env = Environment::new();
    let trace = Trace::default();
    let ev: Event<u32> = env.event();
    ev.succeed(7).unwrap();
    env.run(); // processes `ev`
    assert!(ev.processed());
    let (env2, trace2, ev2) = (env.clone(), trace.clone(), ev.clone());
    env.process(async move {
        let v = ev2.await?;
        // No event was processed between start-up and here: the queue holds only the
        // timeout below once we schedule it.
        trace2.log(&env2, format!("got {v} with {} queued", env2.scheduled()));
        Ok::<_, SimError>(())
    });
    env.run();
    assert_eq!(trace.take(), vec![t(0.0, "got 7 with 0 queued")]);
}

#[test]
fn negative_or_nan_delay_is_an_error_value() {
    let env = Environment::new();
    let p = env.process({
        let env = env.clone();
        async move {
            let neg = env.timeout(-1.0).await;
            let nan = env.timeout(f64::NAN).await;
            (neg, nan.is_err())
        }
    });
    env.run();
    assert_eq!(p.value(), Some((Err(SimError::InvalidDelay(-1.0)), true)));
    assert!(matches!(
        env.try_timeout(-0.5),
        Err(SimError::InvalidDelay(_))
    ));
    assert_eq!(env.now(), 0.0);
    // The first bad delay is the run's fault, whatever the process did with it.
    assert_eq!(env.fault(), Some(SimError::InvalidDelay(-1.0)));
}

#[test]
fn a_delay_past_the_clocks_range_is_an_error_not_a_sleep_until_infinity() {
    let env = Environment::new();
    let p = env.process({
        let env = env.clone();
        async move {
            env.timeout(1e308).await?; // t = 1e308: still a number
            env.timeout(1e308).await // 1e308 + 1e308 overflows
        }
    });
    env.run();
    let overflow = SimError::TimeOverflow {
        now: 1e308,
        delay: 1e308,
    };
    assert_eq!(p.value(), Some(Err(overflow.clone())));
    assert_eq!(env.now(), 1e308, "the clock never reaches infinity");
    assert_eq!(env.fault(), Some(overflow));
    assert!(env.try_timeout(f64::MAX).is_err());
    // An infinite delay is still the idle sleep, not a fault.
    let fresh = Environment::new();
    drop(fresh.timeout(f64::INFINITY));
    assert_eq!(fresh.fault(), None);
}

#[test]
fn timeout_infinity_only_ends_by_interrupt() {
    let env = Environment::new();
    let sleeper = env.process({
        let env = env.clone();
        async move {
            match env.timeout(f64::INFINITY).await {
                Err(SimError::Interrupt(i)) => (env.now(), i.cause().map(str::to_string)),
                other => panic!("idle sleep ended without interrupt: {other:?}"),
            }
        }
    });
    env.run();
    // The infinite sleep is not in the queue, so run() returns at t=0 with nothing left.
    assert_eq!(env.now(), 0.0);
    assert_eq!(env.peek(), f64::INFINITY);
    assert!(sleeper.is_alive());
    env.process({
        let (env, sleeper) = (env.clone(), sleeper.clone());
        async move {
            env.timeout(4.0).await?;
            sleeper.interrupt_with("work").unwrap();
            Ok::<_, SimError>(())
        }
    });
    env.run();
    assert_eq!(sleeper.value(), Some((4.0, Some("work".to_string()))));
}

#[test]
fn double_succeed_is_an_error() {
    let env = Environment::new();
    let ev: Event<&str> = env.event();
    assert!(!ev.triggered());
    assert_eq!(ev.succeed("first"), Ok(()));
    assert!(ev.triggered());
    assert_eq!(ev.succeed("second"), Err(KernelError::AlreadyTriggered));
    assert_eq!(ev.value(), Some("first"));
}

#[test]
fn event_value_reaches_every_waiter() {
    let env = Environment::new();
    let ev: Event<u64> = env.event();
    let waiters: Vec<Process<Result<(f64, u64), SimError>>> = (0..3)
        .map(|_| {
            let (env, ev) = (env.clone(), ev.clone());
            env.clone()
                .process(async move { ev.await.map(|v| (env.now(), v)) })
        })
        .collect();
    env.process({
        let (env, ev) = (env.clone(), ev.clone());
        async move {
            env.timeout(2.5).await?;
            ev.succeed(99).unwrap();
            Ok::<_, SimError>(())
        }
    });
    env.run();
    for w in waiters {
        assert_eq!(w.value(), Some(Ok((2.5, 99))));
    }
}

#[test]
fn failed_event_carries_its_error_to_waiters() {
    let env = Environment::new();
    let ev: Event<Result<u32, String>> = env.event();
    let w = env.process(ev.clone()); // an event is itself a future a process can be

    ev.fail("disk full".into()).unwrap();
    assert_eq!(ev.fail("again".into()), Err(KernelError::AlreadyTriggered));
    env.run();
    assert_eq!(w.value(), Some(Ok(Err("disk full".to_string()))));
}

#[test]
fn interrupt_is_delivered_at_current_time_and_wait() {
    let env = Environment::new();
    let trace = Trace::default();
    let victim = env.process({
        let (env, trace) = (env.clone(), trace.clone());
        async move {
            if let Err(e) = env.timeout(10.0).await {
                trace.log(&env, format!("victim: {e}"));
            }
            // The abandoned 10 s timeout does not resume us later: we wait 1 s more.
            env.timeout(1.0).await?;
            trace.log(&env, "victim done");
            Ok::<_, SimError>(())
        }
    });
    env.process({
        let (env, trace) = (env.clone(), trace.clone());
        async move {
            env.timeout(3.0).await?;
            victim.interrupt_with("stop").unwrap();
            trace.log(&env, "interrupter");
            Ok::<_, SimError>(())
        }
    });
    env.run();
    // The abandoned timeout still pops at 10 (as in SimPy) with nobody waiting on it.
    assert_eq!(env.now(), 10.0);
    assert_eq!(
        trace.take(),
        vec![
            t(3.0, "interrupter"),
            t(3.0, "victim: interrupted: stop"),
            t(4.0, "victim done")
        ]
    );
}

#[test]
fn interrupt_cancels_pending_store_get() {
    let env = Environment::new();
    let store: Store<&str> = Store::new(&env);
    let getter = env.process({
        let store = store.clone();
        async move { store.get().await }
    });
    env.process({
        let (env, store, getter) = (env.clone(), store.clone(), getter.clone());
        async move {
            env.timeout(1.0).await?;
            getter.interrupt().unwrap();
            env.timeout(1.0).await?;
            store.put("late item").await
        }
    });
    env.run();
    assert!(matches!(getter.value(), Some(Err(SimError::Interrupt(_)))));
    // The abandoned get did not swallow the item put at t=2.
    assert_eq!(store.len(), 1);
}

#[test]
fn interrupted_get_returns_an_already_delivered_item_to_the_store() {
    let env = Environment::new();
    let store: Store<u32> = Store::new(&env);
    let getter = env.process({
        let store = store.clone();
        async move { store.get().await }
    });
    env.process({
        let (env, store, getter) = (env.clone(), store.clone(), getter.clone());
        async move {
            env.timeout(1.0).await?;
            // The put hands the item to the waiting get (get is triggered, not yet processed);
            // the URGENT interrupt reaches the getter first.
            store.try_put(5).unwrap();
            getter.interrupt().unwrap();
            Ok::<_, SimError>(())
        }
    });
    env.run();
    assert!(matches!(getter.value(), Some(Err(SimError::Interrupt(_)))));
    assert_eq!(store.len(), 1, "the delivered item went back to the store");
}

#[test]
fn interrupting_a_finished_process_is_an_ignorable_error() {
    let env = Environment::new();
    let p = env.process(async { 1 });
    env.run();
    assert_eq!(p.interrupt(), Err(KernelError::ProcessFinished));
}

#[test]
fn a_process_cannot_interrupt_itself() {
    let env = Environment::new();
    type SelfHandle = Rc<RefCell<Option<Process<Result<(), KernelError>>>>>;
    let slot: SelfHandle = Rc::default();
    let p = env.process({
        let slot = slot.clone();
        async move { slot.borrow().as_ref().unwrap().interrupt() }
    });
    *slot.borrow_mut() = Some(p.clone());
    env.run();
    assert_eq!(p.value(), Some(Err(KernelError::InterruptSelf)));
    slot.borrow_mut().take();
}

#[test]
fn process_return_value_and_error_reach_the_parent() {
    let env = Environment::new();
    let parent = env.process({
        let env = env.clone();
        async move {
            let ok = env.process({
                let env = env.clone();
                async move {
                    env.timeout(2.0).await?;
                    Ok::<u32, SimError>(21 * 2)
                }
            });
            let failing = env.process(async { Err::<u32, String>("bad config".into()) });
            let a = ok.await?;
            let b = failing.await?;
            Ok::<_, SimError>((env.now(), a, b))
        }
    });
    env.run();
    assert_eq!(
        parent.value(),
        Some(Ok((2.0, Ok(42), Err("bad config".to_string()))))
    );
}

async fn batch(env: Environment, trace: Trace) -> Result<(), SimError> {
    trace.log(&env, "step begins");
    env.timeout(5.0).await?;
    trace.log(&env, "step ends");
    Ok(())
}

#[test]
fn interrupt_reaches_an_inline_sub_step() {
    let env = Environment::new();
    let trace = Trace::default();
    let p = env.process({
        let (env, trace) = (env.clone(), trace.clone());
        async move {
            let r = batch(env.clone(), trace.clone()).await; // SimPy's `yield from`
            trace.log(&env, format!("inline result interrupted={}", r.is_err()));
        }
    });
    env.process({
        let env = env.clone();
        async move {
            env.timeout(1.0).await?;
            p.interrupt().unwrap();
            Ok::<_, SimError>(())
        }
    });
    env.run();
    assert_eq!(
        trace.take(),
        vec![
            t(0.0, "step begins"),
            t(1.0, "inline result interrupted=true")
        ]
    );
}

#[test]
fn interrupt_does_not_reach_a_separate_child_process() {
    let env = Environment::new();
    let trace = Trace::default();
    let p = env.process({
        let (env, trace) = (env.clone(), trace.clone());
        async move {
            let r = env.process(batch(env.clone(), trace.clone())).await;
            trace.log(&env, format!("parent interrupted={}", r.is_err()));
        }
    });
    env.process({
        let env = env.clone();
        async move {
            env.timeout(1.0).await?;
            p.interrupt().unwrap();
            Ok::<_, SimError>(())
        }
    });
    env.run();
    // The parent gives up at t=1; its child carries on to t=0+5.
    assert_eq!(
        trace.take(),
        vec![
            t(0.0, "step begins"),
            t(1.0, "parent interrupted=true"),
            t(5.0, "step ends")
        ]
    );
}

#[test]
fn store_is_fifo() {
    let env = Environment::new();
    let store: Store<u32> = Store::new(&env);
    for i in [3, 1, 2] {
        store.try_put(i).unwrap();
    }
    let got = env.process({
        let store = store.clone();
        async move {
            let mut v = Vec::new();
            for _ in 0..3 {
                v.push(store.get().await?);
            }
            Ok::<_, SimError>(v)
        }
    });
    env.run();
    assert_eq!(got.value(), Some(Ok(vec![3, 1, 2])));
}

#[test]
fn bounded_store_put_waits_while_full() {
    let env = Environment::new();
    let store: Store<u32> = Store::bounded(&env, 1).unwrap();
    let trace = Trace::default();
    env.process({
        let (env, store, trace) = (env.clone(), store.clone(), trace.clone());
        async move {
            for i in 0..2 {
                store.put(i).await?;
                trace.log(&env, format!("put {i}"));
            }
            Ok::<_, SimError>(())
        }
    });
    env.process({
        let (env, store, trace) = (env.clone(), store.clone(), trace.clone());
        async move {
            env.timeout(4.0).await?;
            let x = store.get().await?;
            trace.log(&env, format!("got {x}"));
            Ok::<_, SimError>(())
        }
    });
    env.run();
    // put 1 waits until the consumer frees the single place at t=4.
    assert_eq!(
        trace.take(),
        vec![t(0.0, "put 0"), t(4.0, "got 0"), t(4.0, "put 1")]
    );
    assert_eq!(
        Store::<u8>::bounded(&env, 0).err(),
        Some(KernelError::ZeroCapacity)
    );
}

#[test]
fn try_put_gives_the_item_back_when_full() {
    let env = Environment::new();
    let store: Store<&str> = Store::bounded(&env, 2).unwrap();
    assert_eq!(store.try_put("a"), Ok(()));
    assert_eq!(store.try_put("b"), Ok(()));
    assert_eq!(store.try_put("c"), Err("c"));
    assert_eq!(store.len(), 2);
}

#[test]
fn get_with_timeout_loses_the_race_without_losing_the_item() {
    let env = Environment::new();
    let store: Store<u32> = Store::new(&env);
    let consumer = env.process({
        let (env, store) = (env.clone(), store.clone());
        async move {
            let first = get_with_timeout(&env, &store, 1.0).await?; // nothing until t=1
            let t1 = env.now();
            let second = get_with_timeout(&env, &store, 5.0).await?; // item arrives at t=2
            Ok::<_, SimError>((first, t1, second, env.now()))
        }
    });
    env.process({
        let (env, store) = (env.clone(), store.clone());
        async move {
            env.timeout(2.0).await?;
            store.put(8).await
        }
    });
    env.run();
    assert_eq!(consumer.value(), Some(Ok((None, 1.0, Some(8), 2.0))));
    assert!(store.is_empty());
}

#[test]
fn any_of_reports_which_events_fired() {
    let env = Environment::new();
    let p = env.process({
        let env = env.clone();
        async move {
            let slow = env.timeout(3.0);
            let fast = env.timeout(1.0);
            let never: Event<()> = env.event();
            let fired = env
                .any_of([slow.as_event(), fast.as_event(), never.as_event()])
                .await?;
            Ok::<_, SimError>((env.now(), fired.indices().collect::<Vec<_>>()))
        }
    });
    env.run();
    assert_eq!(p.value(), Some(Ok((1.0, vec![1]))));
}

#[test]
fn all_of_waits_for_every_event() {
    let env = Environment::new();
    let p = env.process({
        let env = env.clone();
        async move {
            let a = env.timeout(3.0);
            let b = env.process({
                let env = env.clone();
                async move { env.timeout(2.0).await }
            });
            let fired = env.all_of([a.as_event(), b.as_event()]).await?;
            Ok::<_, SimError>((env.now(), fired.count()))
        }
    });
    env.run();
    assert_eq!(p.value(), Some(Ok((3.0, 2))));
}

#[test]
fn empty_condition_fires_at_once() {
    let env = Environment::new();
    let p = env.process({
        let env = env.clone();
        async move {
            let fired = env.all_of(Vec::new()).await?;
            Ok::<_, SimError>((env.now(), fired.count()))
        }
    });
    env.run();
    assert_eq!(p.value(), Some(Ok((0.0, 0))));
}

fn ticker(env: &Environment, trace: &Trace, period: f64, n: usize) {
    let (env2, trace) = (env.clone(), trace.clone());
    env.process(async move {
        for _ in 0..n {
            env2.timeout(period).await?;
            trace.log(&env2, "tick");
        }
        Ok::<_, SimError>(())
    });
}

#[test]
fn run_until_stops_before_events_at_that_time() {
    let env = Environment::new();
    let trace = Trace::default();
    ticker(&env, &trace, 1.0, 5);
    env.run_until(3.0).unwrap();
    // Ticks at 1 and 2 ran; the tick at exactly 3 is still queued.
    assert_eq!(trace.take(), vec![t(1.0, "tick"), t(2.0, "tick")]);
    assert_eq!(env.now(), 3.0);
    assert_eq!(env.peek(), 3.0);
    assert_eq!(
        env.run_until(2.0),
        Err(KernelError::UntilInPast {
            until: 2.0,
            now: 3.0
        })
    );
}

#[test]
fn run_until_event_stops_once_the_event_is_processed() {
    let env = Environment::new();
    let trace = Trace::default();
    ticker(&env, &trace, 1.0, 10);
    let stop = env.timeout(2.5);
    env.run_until_event(&stop).unwrap();
    assert_eq!(env.now(), 2.5);
    assert_eq!(trace.take().len(), 2); // ticks at 1 and 2
    let never: Event<()> = env.event();
    assert_eq!(
        env.run_until_event(&never),
        Err(KernelError::EventNeverProcessed)
    );
}

#[test]
fn run_step_n_processes_at_most_n_events() {
    let env = Environment::new();
    let trace = Trace::default();
    ticker(&env, &trace, 1.0, 3);
    // Events: start-up, then 3 timeouts, then the process's own completion = 5 in all.
    assert_eq!(env.step_n(2), 2);
    assert_eq!(trace.take(), vec![t(1.0, "tick")]);
    assert_eq!(env.step_n(100), 3);
    assert_eq!(env.step_n(100), 0);
}

#[test]
fn peek_reports_the_next_event_time_or_infinity() {
    let env = Environment::new();
    assert_eq!(env.peek(), f64::INFINITY);
    let _a = env.timeout(7.0);
    let _b = env.timeout(2.0);
    assert_eq!(env.peek(), 2.0);
}

#[test]
fn event_slots_are_recycled_in_the_steady_state() {
    let env = Environment::new();
    let store: Store<u32> = Store::new(&env);
    let trace = Trace::default();
    ticker(&env, &trace, 1.0, 1000);
    env.process({
        let (env, store) = (env.clone(), store.clone());
        async move {
            for i in 0..1000 {
                store.put(i).await?;
                get_with_timeout(&env, &store, 0.5).await?;
                get_with_timeout(&env, &store, 0.5).await?;
            }
            Ok::<_, SimError>(())
        }
    });
    env.step_n(50);
    let early = env.live_events();
    env.run();
    // Thousands of events went through; the slab never grew beyond a handful of live ones.
    assert!(early < 16, "live events mid-run: {early}");
    assert_eq!(env.live_events(), 0);
}

#[test]
fn shutdown_drops_unfinished_processes() {
    let env = Environment::new();
    let store: Store<u32> = Store::new(&env);
    env.process({
        let store = store.clone();
        async move { store.get().await }
    });
    env.run();
    env.shutdown();
    // The idle getter and its pending get are gone: nothing holds an event any more.
    assert_eq!(env.live_events(), 0);
    assert_eq!(store.try_put(1), Ok(()));
    env.run();
    assert_eq!(store.len(), 1, "no withdrawn get consumed the item");
}

#[test]
fn reawaiting_a_timeout_after_an_interrupt_waits_for_its_original_instant() {
    let env = Environment::new();
    let p = env.process({
        let env = env.clone();
        async move {
            let mut t = env.timeout(6.0);
            let first = (&mut t).await;
            let at = env.now();
            (&mut t).await.unwrap();
            (first.is_err(), at, env.now())
        }
    });
    env.process({
        let (env, p) = (env.clone(), p.clone());
        async move {
            env.timeout(2.0).await?;
            p.interrupt().unwrap();
            Ok::<_, SimError>(())
        }
    });
    env.run();
    assert_eq!(p.value(), Some((true, 2.0, 6.0)));
}
