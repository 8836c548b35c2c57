"""Sequential stages; each stage ends on all-of(generation, collection) of its two processes."""
import simpy


def log(env, label):
    print("%.6f %s" % (env.now, label))


def generation(env, k, n, store):
    for i in range(n):
        yield env.timeout(0.3 * (k + 1))
        yield store.put(i)
        log(env, "stage %d generated %d" % (k, i))
    return n


def collection(env, k, n, store):
    for _ in range(n):
        x = yield store.get()
        yield env.timeout(0.1)
        log(env, "stage %d collected %d" % (k, x))
    return n


def stage(env, k, n):
    store = simpy.Store(env)
    gen = env.process(generation(env, k, n, store))
    col = env.process(collection(env, k, n, store))
    yield gen & col
    return k * 100 + n


def orchestrator(env):
    for k in range(3):
        log(env, "stage %d start" % k)
        v = yield env.process(stage(env, k, 2 + k))
        log(env, "stage %d end value %d" % (k, v))
    log(env, "orchestration done")


env = simpy.Environment()
env.process(orchestrator(env))
env.run()
log(env, "end")
