"""The seed's vLLM worker pattern: an intake loop and a scheduler loop that sleep on
timeout(inf) and wake each other by interrupt only when idle (two guard booleans)."""
import simpy


def log(env, label):
    print("%.6f %s" % (env.now, label))


class Worker:
    def __init__(self, env):
        self.env = env
        self.queue = simpy.Store(env)
        self.waiting = []
        self.running = []
        self.intake_idle = False
        self.scheduler_busy = False
        self.sched = env.process(self.scheduling_loop())
        self.intake = env.process(self.check_new_requests())

    def queue_work(self, req):
        yield self.queue.put(req)
        if self.intake_idle:
            try:
                self.intake.interrupt()
            except RuntimeError:
                pass

    def check_new_requests(self):
        while True:
            if len(self.queue.items) > 0:
                req = yield self.queue.get()
                self.waiting.append(req)
                log(self.env, "intake r%d" % req[0])
                if not self.scheduler_busy:
                    self.sched.interrupt()
            else:
                self.intake_idle = True
                try:
                    yield self.env.timeout(float("inf"))
                except simpy.Interrupt:
                    log(self.env, "intake woken")
                finally:
                    self.intake_idle = False

    def scheduling_loop(self):
        while True:
            if self.waiting or self.running:
                self.scheduler_busy = True
                try:
                    yield from self.step()
                except simpy.Interrupt:
                    log(self.env, "scheduler interrupted while busy")
                    continue
            else:
                self.scheduler_busy = False
                try:
                    yield self.env.timeout(float("inf"))
                except simpy.Interrupt:
                    log(self.env, "scheduler woken")
                    continue
                finally:
                    self.scheduler_busy = True

    def step(self):
        self.running.extend(self.waiting)
        self.waiting.clear()
        batch = len(self.running)
        log(self.env, "step batch=%d" % batch)
        yield self.env.timeout(0.1 + 0.05 * batch)
        still = []
        for rid, left in self.running:
            if left == 1:
                log(self.env, "done r%d" % rid)
            else:
                still.append((rid, left - 1))
        self.running = still


def producer(env, worker):
    arrivals = [(0.0, 3), (0.1, 1), (0.0, 2), (1.0, 1), (2.0, 2)]
    for rid, (gap, steps) in enumerate(arrivals):
        yield env.timeout(gap)
        log(env, "arrive r%d" % rid)
        yield from worker.queue_work((rid, steps))


env = simpy.Environment()
w = Worker(env)
env.process(producer(env, w))
env.run(until=10)
log(env, "end")
