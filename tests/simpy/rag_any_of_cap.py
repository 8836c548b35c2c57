"""The seed's RAG pattern: cap in-flight requests, wake on any completion with AnyOf."""
import simpy


def log(env, label):
    print("%.6f %s" % (env.now, label))


class Req:
    def __init__(self, env, rid, dur):
        self.id = rid
        self.dur = dur
        self.has_completed = env.event()


def serve(env, req):
    yield env.timeout(req.dur)
    log(env, "served %d" % req.id)
    if not req.has_completed.triggered:
        req.has_completed.succeed(req)


def server(env, inbox):
    while True:
        req = yield inbox.get()
        env.process(serve(env, req))


def generator(env, inbox, cap):
    outstanding = set()
    inflight = []
    for i, dur in enumerate([3, 1, 2, 1, 1, 0.5]):
        while cap > 0 and len(outstanding) >= cap:
            events = [r.has_completed for r in inflight if r.id in outstanding]
            if not events:
                break
            yield simpy.AnyOf(env, events)
            for r in list(inflight):
                if r.has_completed.triggered and r.id in outstanding:
                    outstanding.discard(r.id)
            log(env, "woke outstanding=%d" % len(outstanding))
        r = Req(env, i, dur)
        inflight.append(r)
        outstanding.add(r.id)
        yield inbox.put(r)
        log(env, "sent %d" % i)


env = simpy.Environment()
inbox = simpy.Store(env)
env.process(server(env, inbox))
env.process(generator(env, inbox, 2))
env.run()
log(env, "end")
