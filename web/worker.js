// The simulation worker. The page's first worker starts with the page (index.html) and is
// told the URL of the app's JS bindings at once ('glue'), so it loads them while the page
// still downloads and compiles the wasm; 'init' brings the page's compiled wasm module and
// every later message goes to the engine's `worker_message`. One download and one compile
// serve the page and every worker.
let glue;
let engine;
const early = [];
self.onmessage = async ({ data }) => {
  if (data.kind === 'glue') {
    // Loaded now, awaited by 'init' (a failure surfaces there, once the page listens).
    glue = import(data.glue);
    glue.catch(() => {});
    return;
  }
  if (data.kind !== 'init') {
    if (engine) engine.worker_message(data);
    else early.push(data);
    return;
  }
  try {
    const bindings = await (glue ?? import(data.glue));
    bindings.initSync({ module: data.module });
    engine = bindings;
  } catch (e) {
    self.postMessage({ kind: 'broken', message: `the simulation worker could not start: ${e}` });
    return;
  }
  for (const m of early.splice(0)) engine.worker_message(m);
};
