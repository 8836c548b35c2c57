"""Return values flowing to parents: sequential awaits, an already-finished child, and
all-of over two children."""
import simpy


def log(env, label):
    print("%.6f %s" % (env.now, label))


def square(env, x, d):
    yield env.timeout(d)
    log(env, "square %d" % x)
    return x * x


def parent(env):
    a = yield env.process(square(env, 3, 1.0))
    log(env, "a=%d" % a)
    quick = env.process(square(env, 4, 0.5))
    yield env.timeout(2)
    b = yield quick  # finished long ago: continues at once
    log(env, "b=%d" % b)
    c1 = env.process(square(env, 5, 1.5))
    c2 = env.process(square(env, 6, 0.25))
    yield c1 & c2
    log(env, "sum=%d" % (a + b + c1.value + c2.value))
    return a + b + c1.value + c2.value


def grandparent(env):
    total = yield env.process(parent(env))
    log(env, "total=%d" % total)


env = simpy.Environment()
env.process(grandparent(env))
env.run()
log(env, "end")
