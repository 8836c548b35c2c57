// The simulation worker. The page's first worker starts with the page (index.html) with the
// URL of the app's JS bindings in its own URL (`?glue=`), so it loads them while the page
// still downloads and compiles the wasm; 'init' brings the page's compiled wasm module (and
// the bindings' URL, for the workers started later) and every later message goes to the
// engine's `worker_message`. One download and one compile serve the page and every worker.
const early = new URL(self.location.href).searchParams.get('glue');
// Loaded now, awaited by 'init' (a failure surfaces there, once the page listens).
let glue = early ? import(early) : undefined;
glue?.catch(() => {});
let engine;
const queued = [];
self.onmessage = async ({ data }) => {
  if (data.kind !== 'init') {
    if (engine) engine.worker_message(data);
    else queued.push(data);
    return;
  }
  // The page's messages reach a worker only once its script has run and the page's thread
  // has had a moment to forward them; the page waits for this word before its first render
  // when a share link's run is among them (see `pool::when_listening`).
  self.postMessage({ kind: 'listening' });
  try {
    const bindings = await (glue ?? import(data.glue));
    bindings.initSync({ module: data.module });
    engine = bindings;
  } catch (e) {
    self.postMessage({ kind: 'broken', message: `the simulation worker could not start: ${e}` });
    return;
  }
  for (const m of queued.splice(0)) engine.worker_message(m);
};
