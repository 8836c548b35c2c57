"""A bounded store: puts wait while it is full; two consumers with different paces."""
import simpy


def log(env, label):
    print("%.6f %s" % (env.now, label))


def producer(env, store):
    for i in range(6):
        yield store.put(i)
        log(env, "put %d accepted (len=%d)" % (i, len(store.items)))


def consumer(env, name, store, pace):
    while True:
        yield env.timeout(pace)
        x = yield store.get()
        log(env, "%s got %d" % (name, x))


env = simpy.Environment()
s = simpy.Store(env, capacity=2)
env.process(producer(env, s))
env.process(consumer(env, "slow", s, 1.5))
env.process(consumer(env, "fast", s, 1.0))
env.run(until=8)
log(env, "end")
