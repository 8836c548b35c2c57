"""Completion events as condition variables: each session sends turn i+1 only after turn i."""
import simpy


def log(env, label):
    print("%.6f %s" % (env.now, label))


class Req:
    def __init__(self, env, sid, turn):
        self.sid = sid
        self.turn = turn
        self.has_completed = env.event()

    def mark_completed(self):
        if not self.has_completed.triggered:
            self.has_completed.succeed(self)


def serve(env, req):
    yield env.timeout(0.5 + 0.25 * req.turn + 0.1 * req.sid)
    req.mark_completed()
    req.mark_completed()  # idempotent thanks to the triggered guard


def server(env, inbox):
    while True:
        req = yield inbox.get()
        env.process(serve(env, req))


def session(env, inbox, sid, turns):
    for t in range(turns):
        req = Req(env, sid, t)
        yield inbox.put(req)
        log(env, "s%d turn %d sent" % (sid, t))
        done = yield req.has_completed
        log(env, "s%d turn %d done (%d)" % (sid, t, done.turn))
        yield env.timeout(0.2)


env = simpy.Environment()
inbox = simpy.Store(env)
env.process(server(env, inbox))
env.process(session(env, inbox, 0, 3))
env.process(session(env, inbox, 1, 2))
env.run()
log(env, "end")
