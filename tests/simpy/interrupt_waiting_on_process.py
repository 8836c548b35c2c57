"""Interrupting a parent that waits on a child process: the child keeps running and the
parent can wait on it again."""
import simpy


def log(env, label):
    print("%.6f %s" % (env.now, label))


def child(env):
    yield env.timeout(5)
    log(env, "child done")
    return "c"


def parent(env):
    c = env.process(child(env))
    try:
        v = yield c
        log(env, "parent got %s" % v)
    except simpy.Interrupt as i:
        log(env, "parent interrupted: %s" % i.cause)
        v = yield c
        log(env, "parent got %s after all" % v)
    return v


def boss(env, p):
    yield env.timeout(2)
    p.interrupt("hurry")
    log(env, "boss interrupted parent")
    yield p
    log(env, "boss saw parent finish with %s" % p.value)
    try:
        p.interrupt("again")
    except RuntimeError:
        log(env, "interrupting finished parent refused")


env = simpy.Environment()
p = env.process(parent(env))
env.process(boss(env, p))
env.run()
log(env, "end")
