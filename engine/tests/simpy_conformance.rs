//! Conformance with SimPy itself: each scenario is written once in Python SimPy
//! (`tests/simpy/<name>.py`) and once here; both print `(time, label)` lines that must match
//! exactly, including the order of equal-time events.

use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;
use std::rc::Rc;

use engine::kernel::{
    get_with_timeout, AsEvent, Environment, Event, KernelError, Process, SimError, Store,
};

/// The shared trace both sides print: `"{time:.6} {label}"`, as Python's `"%.6f %s"`.
#[derive(Clone)]
struct Log {
    env: Environment,
    lines: Rc<RefCell<Vec<String>>>,
}

impl Log {
    fn new(env: &Environment) -> Self {
        Log {
            env: env.clone(),
            lines: Rc::default(),
        }
    }
    fn log(&self, label: impl AsRef<str>) {
        let line = format!("{:.6} {}", self.env.now(), label.as_ref());
        self.lines.borrow_mut().push(line);
    }
    fn lines(&self) -> Vec<String> {
        self.lines.borrow().clone()
    }
}

/// Runs `tests/simpy/<name>.py` and returns its output lines. Fails loudly (never skips)
/// when python3 or simpy is missing.
fn simpy_trace(name: &str) -> Vec<String> {
    let script: PathBuf = [env!("CARGO_MANIFEST_DIR"), "..", "tests", "simpy"]
        .iter()
        .collect::<PathBuf>()
        .join(format!("{name}.py"));
    let setup = "run the project's test setup: `pip install -r tests/simpy/requirements.txt`";
    let out = Command::new("python3")
        .arg(&script)
        .output()
        .unwrap_or_else(|e| panic!("cannot run python3 ({e}); {setup}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("No module named 'simpy'"),
        "SimPy is not installed; {setup}"
    );
    assert!(
        out.status.success(),
        "{} failed:\n{stderr}",
        script.display()
    );
    String::from_utf8(out.stdout)
        .expect("utf-8 output")
        .lines()
        .map(str::to_string)
        .collect()
}

fn assert_conforms(name: &str, ours: Vec<String>) {
    let theirs = simpy_trace(name);
    assert!(!theirs.is_empty(), "{name}.py printed nothing");
    assert_eq!(ours, theirs, "trace of {name} differs from SimPy");
}

// ----- worker_intake_scheduler ----------------------------------------------------------------

struct Worker {
    env: Environment,
    log: Log,
    queue: Store<(u32, u32)>,
    waiting: RefCell<Vec<(u32, u32)>>,
    running: RefCell<Vec<(u32, u32)>>,
    intake_idle: Cell<bool>,
    scheduler_busy: Cell<bool>,
    sched: RefCell<Option<Process<Result<(), SimError>>>>,
    intake: RefCell<Option<Process<Result<(), SimError>>>>,
}

impl Worker {
    fn start(env: &Environment, log: &Log) -> Rc<Worker> {
        let w = Rc::new(Worker {
            env: env.clone(),
            log: log.clone(),
            queue: Store::new(env),
            waiting: RefCell::default(),
            running: RefCell::default(),
            intake_idle: Cell::new(false),
            scheduler_busy: Cell::new(false),
            sched: RefCell::default(),
            intake: RefCell::default(),
        });
        *w.sched.borrow_mut() = Some(env.process(w.clone().scheduling_loop()));
        *w.intake.borrow_mut() = Some(env.process(w.clone().check_new_requests()));
        w
    }

    async fn queue_work(&self, req: (u32, u32)) -> Result<(), SimError> {
        self.queue.put(req).await?;
        if self.intake_idle.get() {
            // Ignorable: the intake may have finished.
            let _ = self.intake.borrow().as_ref().unwrap().interrupt();
        }
        Ok(())
    }

    async fn check_new_requests(self: Rc<Self>) -> Result<(), SimError> {
        loop {
            if !self.queue.is_empty() {
                let req = self.queue.get().await?;
                self.waiting.borrow_mut().push(req);
                self.log.log(format!("intake r{}", req.0));
                if !self.scheduler_busy.get() {
                    self.sched.borrow().as_ref().unwrap().interrupt().unwrap();
                }
            } else {
                self.intake_idle.set(true);
                let r = self.env.timeout(f64::INFINITY).await;
                if r.is_err() {
                    self.log.log("intake woken");
                }
                self.intake_idle.set(false);
            }
        }
    }

    async fn scheduling_loop(self: Rc<Self>) -> Result<(), SimError> {
        loop {
            if !self.waiting.borrow().is_empty() || !self.running.borrow().is_empty() {
                self.scheduler_busy.set(true);
                if let Err(SimError::Interrupt(_)) = self.step().await {
                    self.log.log("scheduler interrupted while busy");
                    continue;
                }
            } else {
                self.scheduler_busy.set(false);
                let r = self.env.timeout(f64::INFINITY).await;
                if r.is_err() {
                    self.log.log("scheduler woken");
                }
                self.scheduler_busy.set(true);
            }
        }
    }

    /// Inline sub-step (SimPy `yield from`): an interrupt reaches its timeout.
    async fn step(&self) -> Result<(), SimError> {
        let waiting: Vec<_> = self.waiting.borrow_mut().drain(..).collect();
        self.running.borrow_mut().extend(waiting);
        let batch = self.running.borrow().len();
        self.log.log(format!("step batch={batch}"));
        self.env.timeout(0.1 + 0.05 * batch as f64).await?;
        let mut still = Vec::new();
        for &(rid, left) in self.running.borrow().iter() {
            if left == 1 {
                self.log.log(format!("done r{rid}"));
            } else {
                still.push((rid, left - 1));
            }
        }
        *self.running.borrow_mut() = still;
        Ok(())
    }
}

#[test]
fn worker_intake_scheduler() {
    let env = Environment::new();
    let log = Log::new(&env);
    let w = Worker::start(&env, &log);
    env.process({
        let (env, log) = (env.clone(), log.clone());
        async move {
            let arrivals = [(0.0, 3), (0.1, 1), (0.0, 2), (1.0, 1), (2.0, 2)];
            for (rid, (gap, steps)) in arrivals.into_iter().enumerate() {
                env.timeout(gap).await?;
                log.log(format!("arrive r{rid}"));
                w.queue_work((rid as u32, steps)).await?;
            }
            Ok::<_, SimError>(())
        }
    });
    env.run_until(10.0).unwrap();
    log.log("end");
    env.shutdown();
    assert_conforms("worker_intake_scheduler", log.lines());
}

// ----- store_ping_pong ------------------------------------------------------------------------

#[test]
fn store_ping_pong() {
    let env = Environment::new();
    let log = Log::new(&env);
    let (a, b): (Store<u32>, Store<u32>) = (Store::new(&env), Store::new(&env));
    env.process({
        let (env, log, inp, out) = (env.clone(), log.clone(), a.clone(), b.clone());
        async move {
            loop {
                let x = inp.get().await?;
                log.log(format!("pong got {x}"));
                env.timeout(1.0).await?;
                out.put(x * 10).await?;
                log.log(format!("pong sent {}", x * 10));
            }
            #[allow(unreachable_code)]
            Ok::<_, SimError>(())
        }
    });
    env.process({
        let (env, log, out, inp) = (env.clone(), log.clone(), a.clone(), b.clone());
        async move {
            for i in 0..3 {
                out.put(i).await?;
                log.log(format!("ping sent {i}"));
                let x = inp.get().await?;
                log.log(format!("ping got {x}"));
                env.timeout(0.5).await?;
            }
            Ok::<_, SimError>(())
        }
    });
    env.run();
    log.log("end");
    assert_conforms("store_ping_pong", log.lines());
}

// ----- get_with_timeout_race ------------------------------------------------------------------

#[test]
fn get_with_timeout_race() {
    let env = Environment::new();
    let log = Log::new(&env);
    let s: Store<&'static str> = Store::new(&env);
    env.process({
        let (env, log, s) = (env.clone(), log.clone(), s.clone());
        async move {
            for _ in 0..7 {
                let v = get_with_timeout(&env, &s, 1.0).await?;
                log.log(format!("consumer {}", v.unwrap_or("None")));
            }
            Ok::<_, SimError>(())
        }
    });
    env.process({
        let (env, log, s) = (env.clone(), log.clone(), s.clone());
        async move {
            env.timeout(1.0).await?;
            s.put("tie").await?;
            log.log("put tie");
            env.timeout(1.5).await?;
            s.put("a").await?;
            log.log("put a");
            env.timeout(0.5).await?;
            s.try_put("b").unwrap();
            s.try_put("c").unwrap();
            log.log("put b c");
            Ok::<_, SimError>(())
        }
    });
    env.run();
    log.log(format!("end left={}", s.len()));
    assert_conforms("get_with_timeout_race", log.lines());
}

// ----- rag_any_of_cap and turns_condition_variable: a request server --------------------------

#[derive(Clone)]
struct Req {
    id: u32,
    turn: u32,
    dur: f64,
    has_completed: Event<u32>,
}

impl Req {
    fn mark_completed(&self) {
        if !self.has_completed.triggered() {
            self.has_completed.succeed(self.turn).unwrap();
        }
    }
}

/// Serves each request in its own process, for `dur` seconds.
fn start_server(env: &Environment, log: &Log, inbox: &Store<Req>, announce: bool) {
    let (env2, log, inbox) = (env.clone(), log.clone(), inbox.clone());
    env.process(async move {
        loop {
            let req = inbox.get().await?;
            let (env3, log) = (env2.clone(), log.clone());
            env2.process(async move {
                env3.timeout(req.dur).await?;
                if announce {
                    log.log(format!("served {}", req.id));
                }
                req.mark_completed();
                req.mark_completed(); // idempotent thanks to the triggered guard
                Ok::<_, SimError>(())
            });
        }
        #[allow(unreachable_code)]
        Ok::<_, SimError>(())
    });
}

#[test]
fn rag_any_of_cap() {
    let env = Environment::new();
    let log = Log::new(&env);
    let inbox: Store<Req> = Store::new(&env);
    start_server(&env, &log, &inbox, true);
    env.process({
        let (env, log, inbox) = (env.clone(), log.clone(), inbox.clone());
        async move {
            let cap = 2;
            let mut outstanding = BTreeSet::new();
            let mut inflight: Vec<Req> = Vec::new();
            for (i, dur) in [3.0, 1.0, 2.0, 1.0, 1.0, 0.5].into_iter().enumerate() {
                while cap > 0 && outstanding.len() >= cap {
                    let events: Vec<_> = inflight
                        .iter()
                        .filter(|r| outstanding.contains(&r.id))
                        .map(|r| r.has_completed.as_event())
                        .collect();
                    if events.is_empty() {
                        break;
                    }
                    env.any_of(events).await?;
                    for r in &inflight {
                        if r.has_completed.triggered() {
                            outstanding.remove(&r.id);
                        }
                    }
                    log.log(format!("woke outstanding={}", outstanding.len()));
                }
                let r = Req {
                    id: i as u32,
                    turn: 0,
                    dur,
                    has_completed: env.event(),
                };
                inflight.push(r.clone());
                outstanding.insert(r.id);
                inbox.put(r).await?;
                log.log(format!("sent {i}"));
            }
            Ok::<_, SimError>(())
        }
    });
    env.run();
    log.log("end");
    assert_conforms("rag_any_of_cap", log.lines());
}

#[test]
fn turns_condition_variable() {
    let env = Environment::new();
    let log = Log::new(&env);
    let inbox: Store<Req> = Store::new(&env);
    start_server(&env, &log, &inbox, false);
    for (sid, turns) in [(0u32, 3u32), (1, 2)] {
        let (env2, log, inbox) = (env.clone(), log.clone(), inbox.clone());
        env.process(async move {
            for t in 0..turns {
                let req = Req {
                    id: 0,
                    turn: t,
                    dur: 0.5 + 0.25 * t as f64 + 0.1 * sid as f64,
                    has_completed: env2.event(),
                };
                let done = req.has_completed.clone();
                inbox.put(req).await?;
                log.log(format!("s{sid} turn {t} sent"));
                let turn = done.await?;
                log.log(format!("s{sid} turn {t} done ({turn})"));
                env2.timeout(0.2).await?;
            }
            Ok::<_, SimError>(())
        });
    }
    env.run();
    log.log("end");
    assert_conforms("turns_condition_variable", log.lines());
}

// ----- stages_all_of --------------------------------------------------------------------------

async fn stage(env: Environment, log: Log, k: u32, n: u32) -> Result<u32, SimError> {
    let store: Store<u32> = Store::new(&env);
    let gen = env.process({
        let (env, log, store) = (env.clone(), log.clone(), store.clone());
        async move {
            for i in 0..n {
                env.timeout(0.3 * (k + 1) as f64).await?;
                store.put(i).await?;
                log.log(format!("stage {k} generated {i}"));
            }
            Ok::<_, SimError>(n)
        }
    });
    let col = env.process({
        let (env, log, store) = (env.clone(), log.clone(), store.clone());
        async move {
            for _ in 0..n {
                let x = store.get().await?;
                env.timeout(0.1).await?;
                log.log(format!("stage {k} collected {x}"));
            }
            Ok::<_, SimError>(n)
        }
    });
    env.all_of([gen.as_event(), col.as_event()]).await?;
    Ok(k * 100 + n)
}

#[test]
fn stages_all_of() {
    let env = Environment::new();
    let log = Log::new(&env);
    env.process({
        let (env, log) = (env.clone(), log.clone());
        async move {
            for k in 0..3 {
                log.log(format!("stage {k} start"));
                let v = env
                    .process(stage(env.clone(), log.clone(), k, 2 + k))
                    .await??;
                log.log(format!("stage {k} end value {v}"));
            }
            log.log("orchestration done");
            Ok::<_, SimError>(())
        }
    });
    env.run();
    log.log("end");
    assert_conforms("stages_all_of", log.lines());
}

// ----- equal_time_events ----------------------------------------------------------------------

fn sleeper(env: &Environment, log: &Log, name: &'static str, naps: u32) -> Process<()> {
    let (env2, log) = (env.clone(), log.clone());
    env.process(async move {
        let mut done = 0;
        while done < naps {
            match env2.timeout(1.0).await {
                Ok(()) => {
                    log.log(format!("{name} slept"));
                    done += 1;
                }
                Err(SimError::Interrupt(i)) => {
                    log.log(format!("{name} interrupted by {}", i.cause().unwrap()))
                }
                Err(e) => panic!("{e}"),
            }
        }
    })
}

#[test]
fn equal_time_events() {
    let env = Environment::new();
    let log = Log::new(&env);
    let ev: Event<&'static str> = env.event();
    for i in 0..6 {
        let (env2, log, ev) = (env.clone(), log.clone(), ev.clone());
        env.process(async move {
            if i % 2 == 1 {
                env2.timeout(0.0).await?;
                log.log(format!("w{i} zero timeout"));
                let v = ev.await?;
                log.log(format!("w{i} got {v}"));
            } else {
                let v = ev.await?;
                log.log(format!("w{i} got {v}"));
                env2.timeout(0.0).await?;
                log.log(format!("w{i} zero timeout"));
            }
            Ok::<_, SimError>(())
        });
    }
    env.process({
        let (env, log, ev) = (env.clone(), log.clone(), ev.clone());
        async move {
            env.timeout(0.0).await?;
            ev.succeed("go").unwrap();
            log.log("trigger succeeded");
            env.timeout(0.0).await?;
            log.log("trigger after zero");
            Ok::<_, SimError>(())
        }
    });
    let early = sleeper(&env, &log, "early", 2);
    type Targets = Rc<RefCell<Vec<(Process<()>, &'static str)>>>;
    let targets: Targets = Rc::default();
    env.process({
        let (env, log, targets) = (env.clone(), log.clone(), targets.clone());
        async move {
            env.timeout(1.0).await?;
            for (t, cause) in targets.borrow().iter() {
                t.interrupt_with(cause).unwrap();
                log.log(format!("interrupt sent {cause}"));
            }
            Ok::<_, SimError>(())
        }
    });
    let late = sleeper(&env, &log, "late", 1);
    targets
        .borrow_mut()
        .extend([(early, "x"), (late.clone(), "y"), (late, "z")]);
    env.run();
    log.log("end");
    assert_conforms("equal_time_events", log.lines());
}

// ----- bounded_store_blocking -----------------------------------------------------------------

#[test]
fn bounded_store_blocking() {
    let env = Environment::new();
    let log = Log::new(&env);
    let s: Store<u32> = Store::bounded(&env, 2).unwrap();
    env.process({
        let (log, s) = (log.clone(), s.clone());
        async move {
            for i in 0..6 {
                s.put(i).await?;
                log.log(format!("put {i} accepted (len={})", s.len()));
            }
            Ok::<_, SimError>(())
        }
    });
    for (name, pace) in [("slow", 1.5), ("fast", 1.0)] {
        let (env2, log, s) = (env.clone(), log.clone(), s.clone());
        env.process(async move {
            loop {
                env2.timeout(pace).await?;
                let x = s.get().await?;
                log.log(format!("{name} got {x}"));
            }
            #[allow(unreachable_code)]
            Ok::<_, SimError>(())
        });
    }
    env.run_until(8.0).unwrap();
    log.log("end");
    env.shutdown();
    assert_conforms("bounded_store_blocking", log.lines());
}

// ----- interrupt_waiting_on_process -----------------------------------------------------------

#[test]
fn interrupt_waiting_on_process() {
    let env = Environment::new();
    let log = Log::new(&env);
    let parent = env.process({
        let (env, log) = (env.clone(), log.clone());
        async move {
            let c = env.process({
                let (env, log) = (env.clone(), log.clone());
                async move {
                    env.timeout(5.0).await?;
                    log.log("child done");
                    Ok::<_, SimError>("c")
                }
            });
            let v = match (&mut c.clone()).await {
                Ok(v) => {
                    log.log(format!("parent got {}", v.clone()?));
                    v?
                }
                Err(SimError::Interrupt(i)) => {
                    log.log(format!("parent interrupted: {}", i.cause().unwrap()));
                    let v = c.await??;
                    log.log(format!("parent got {v} after all"));
                    v
                }
                Err(e) => return Err(e),
            };
            Ok::<_, SimError>(v)
        }
    });
    env.process({
        let (env, log, p) = (env.clone(), log.clone(), parent.clone());
        async move {
            env.timeout(2.0).await?;
            p.interrupt_with("hurry").unwrap();
            log.log("boss interrupted parent");
            let v = p.clone().await??;
            log.log(format!("boss saw parent finish with {v}"));
            if p.interrupt_with("again") == Err(KernelError::ProcessFinished) {
                log.log("interrupting finished parent refused");
            }
            Ok::<_, SimError>(())
        }
    });
    env.run();
    log.log("end");
    assert_conforms("interrupt_waiting_on_process", log.lines());
}

// ----- process_return_value -------------------------------------------------------------------

fn square(env: &Environment, log: &Log, x: u64, d: f64) -> Process<Result<u64, SimError>> {
    let (env2, log) = (env.clone(), log.clone());
    env.process(async move {
        env2.timeout(d).await?;
        log.log(format!("square {x}"));
        Ok(x * x)
    })
}

#[test]
fn process_return_value() {
    let env = Environment::new();
    let log = Log::new(&env);
    env.process({
        let (env, log) = (env.clone(), log.clone());
        async move {
            let parent = env.process({
                let (env, log) = (env.clone(), log.clone());
                async move {
                    let a = square(&env, &log, 3, 1.0).await??;
                    log.log(format!("a={a}"));
                    let quick = square(&env, &log, 4, 0.5);
                    env.timeout(2.0).await?;
                    let b = quick.await??; // finished long ago: continues at once
                    log.log(format!("b={b}"));
                    let c1 = square(&env, &log, 5, 1.5);
                    let c2 = square(&env, &log, 6, 0.25);
                    env.all_of([c1.as_event(), c2.as_event()]).await?;
                    let sum = a + b + c1.value().unwrap()? + c2.value().unwrap()?;
                    log.log(format!("sum={sum}"));
                    Ok::<_, SimError>(sum)
                }
            });
            let total = parent.await??;
            log.log(format!("total={total}"));
            Ok::<_, SimError>(())
        }
    });
    env.run();
    log.log("end");
    assert_conforms("process_return_value", log.lines());
}
