"""Opal's get_with_timeout losing and winning its race, including an exact tie; no item lost."""
import simpy


def log(env, label):
    print("%.6f %s" % (env.now, label))


def get_with_timeout(env, store, timeout):
    with store.get() as get_req:
        timeout_event = env.timeout(timeout)
        result = yield get_req | timeout_event
        if get_req in result:
            return get_req.value
        else:
            return None


def consumer(env, store):
    for _ in range(7):
        v = yield from get_with_timeout(env, store, 1.0)
        log(env, "consumer %s" % v)


def producer(env, store):
    yield env.timeout(1.0)
    yield store.put("tie")
    log(env, "put tie")
    yield env.timeout(1.5)
    yield store.put("a")
    log(env, "put a")
    yield env.timeout(0.5)
    store.put("b")
    store.put("c")
    log(env, "put b c")


env = simpy.Environment()
s = simpy.Store(env)
env.process(consumer(env, s))
env.process(producer(env, s))
env.run()
log(env, "end left=%d" % len(s.items))
