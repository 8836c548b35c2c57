"""Many events at the same instant: zero timeouts, event succeed, interrupts (URGENT) racing
timeouts (NORMAL), and two interrupts queued for one process."""
import simpy


def log(env, label):
    print("%.6f %s" % (env.now, label))


def waiter(env, i, ev):
    if i % 2:
        yield env.timeout(0)
        log(env, "w%d zero timeout" % i)
        v = yield ev
        log(env, "w%d got %s" % (i, v))
    else:
        v = yield ev
        log(env, "w%d got %s" % (i, v))
        yield env.timeout(0)
        log(env, "w%d zero timeout" % i)


def trigger(env, ev):
    yield env.timeout(0)
    ev.succeed("go")
    log(env, "trigger succeeded")
    yield env.timeout(0)
    log(env, "trigger after zero")


def sleeper(env, name, delay, naps):
    done = 0
    while done < naps:
        try:
            yield env.timeout(delay)
            log(env, "%s slept" % name)
            done += 1
        except simpy.Interrupt as i:
            log(env, "%s interrupted by %s" % (name, i.cause))


def interrupter(env, targets):
    yield env.timeout(1)
    for t, cause in targets:
        t.interrupt(cause)
        log(env, "interrupt sent %s" % cause)


env = simpy.Environment()
ev = env.event()
for i in range(6):
    env.process(waiter(env, i, ev))
env.process(trigger(env, ev))
early = env.process(sleeper(env, "early", 1, 2))  # its timeout at t=1 precedes the interrupter's
late_target = []
intr = env.process(interrupter(env, late_target))
late = env.process(sleeper(env, "late", 1, 1))  # its timeout at t=1 follows the interrupter's
late_target.extend([(early, "x"), (late, "y"), (late, "z")])
env.run()
log(env, "end")
