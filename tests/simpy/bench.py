"""SimPy side of `cargo bench -p opal-engine --bench kernel`: same two workloads, same counts.
Prints `timeout_events_per_s <x>` and `store_round_trips_per_s <y>`."""
import time

import simpy


def ticker(env, horizon):
    while env.now < horizon:
        yield env.timeout(1)


def timeouts(procs=1000, horizon=1000):
    env = simpy.Environment()
    for _ in range(procs):
        env.process(ticker(env, horizon))
    t0 = time.perf_counter()
    env.run()
    return procs * horizon / (time.perf_counter() - t0)


def ping(env, out, inp, n):
    for i in range(n):
        yield out.put(i)
        yield inp.get()


def pong(env, inp, out, n):
    for _ in range(n):
        x = yield inp.get()
        yield out.put(x)


def round_trips(n=200_000):
    env = simpy.Environment()
    a, b = simpy.Store(env), simpy.Store(env)
    env.process(ping(env, a, b, n))
    env.process(pong(env, a, b, n))
    t0 = time.perf_counter()
    env.run()
    return n / (time.perf_counter() - t0)


print("timeout_events_per_s %.0f" % timeouts())
print("store_round_trips_per_s %.0f" % round_trips())
