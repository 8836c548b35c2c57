//! Kernel throughput next to SimPy on the same machine:
//! (a) 1,000 processes each looping on `timeout(1)` for 1,000 simulated seconds (1M events);
//! (b) 200,000 store round trips between two processes.
//! Run with `cargo bench -p opal-engine --bench kernel`.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use engine::kernel::{Environment, SimError, Store};

const PROCS: usize = 1_000;
const HORIZON: f64 = 1_000.0;
const ROUND_TRIPS: usize = 200_000;

/// Timeout events per second of wall time.
fn timeouts() -> f64 {
    let env = Environment::new();
    for _ in 0..PROCS {
        let env2 = env.clone();
        env.process(async move {
            while env2.now() < HORIZON {
                env2.timeout(1.0).await?;
            }
            Ok::<_, SimError>(())
        });
    }
    let t0 = Instant::now();
    env.run();
    let secs = t0.elapsed().as_secs_f64();
    assert_eq!(env.now(), HORIZON);
    (PROCS as f64 * HORIZON) / secs
}

/// Store round trips (put → get → put back → get) per second of wall time.
fn round_trips() -> f64 {
    let env = Environment::new();
    let (a, b): (Store<usize>, Store<usize>) = (Store::new(&env), Store::new(&env));
    env.process({
        let (out, inp) = (a.clone(), b.clone());
        async move {
            for i in 0..ROUND_TRIPS {
                out.put(i).await?;
                inp.get().await?;
            }
            Ok::<_, SimError>(())
        }
    });
    env.process({
        let (inp, out) = (a.clone(), b.clone());
        async move {
            for _ in 0..ROUND_TRIPS {
                let x = inp.get().await?;
                out.put(x).await?;
            }
            Ok::<_, SimError>(())
        }
    });
    let t0 = Instant::now();
    env.run();
    let secs = t0.elapsed().as_secs_f64();
    assert_eq!(env.live_events(), 0);
    ROUND_TRIPS as f64 / secs
}

/// Runs `tests/simpy/bench.py`; `None` (with the reason printed) if SimPy cannot be measured.
fn simpy() -> Option<(f64, f64)> {
    let script: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "..",
        "tests",
        "simpy",
        "bench.py",
    ]
    .iter()
    .collect();
    let out = match Command::new("python3").arg(&script).output() {
        Ok(out) if out.status.success() => out,
        Ok(out) => {
            println!(
                "SimPy was not measured: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
            return None;
        }
        Err(e) => {
            println!("SimPy was not measured: cannot run python3 ({e})");
            return None;
        }
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let field = |name: &str| -> Option<f64> {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse().ok())
    };
    Some((
        field("timeout_events_per_s")?,
        field("store_round_trips_per_s")?,
    ))
}

fn main() {
    // Best of three, to keep the figure about the kernel and not the shared machine.
    let best = |f: fn() -> f64| (0..3).map(|_| f()).fold(0.0, f64::max);
    let ours_t = best(timeouts);
    let ours_r = best(round_trips);
    println!("kernel: {ours_t:>12.0} timeout events/s   {ours_r:>12.0} store round trips/s");
    if let Some((simpy_t, simpy_r)) = simpy() {
        println!("simpy:  {simpy_t:>12.0} timeout events/s   {simpy_r:>12.0} store round trips/s");
        println!(
            "ratio:  {:>12.1}x                    {:>12.1}x",
            ours_t / simpy_t,
            ours_r / simpy_r
        );
    }
}
