"""Two processes bouncing items through two stores."""
import simpy


def log(env, label):
    print("%.6f %s" % (env.now, label))


def ping(env, out, inp):
    for i in range(3):
        yield out.put(i)
        log(env, "ping sent %d" % i)
        x = yield inp.get()
        log(env, "ping got %d" % x)
        yield env.timeout(0.5)


def pong(env, inp, out):
    while True:
        x = yield inp.get()
        log(env, "pong got %d" % x)
        yield env.timeout(1)
        yield out.put(x * 10)
        log(env, "pong sent %d" % (x * 10))


env = simpy.Environment()
a = simpy.Store(env)
b = simpy.Store(env)
env.process(pong(env, a, b))
env.process(ping(env, a, b))
env.run()
log(env, "end")
