// The simulation worker. The page sends the app's own compiled wasm module and the URL of
// its JS bindings ('init'); every later message goes to the engine's `worker_message`.
// One download serves both: the worker reuses the module the page already compiled.
let engine;
const early = [];
self.onmessage = async ({ data }) => {
  if (data.kind !== 'init') {
    if (engine) engine.worker_message(data);
    else early.push(data);
    return;
  }
  try {
    const bindings = await import(data.glue);
    bindings.initSync({ module: data.module });
    engine = bindings;
  } catch (e) {
    self.postMessage({ kind: 'broken', message: `the simulation worker could not start: ${e}` });
    return;
  }
  for (const m of early.splice(0)) engine.worker_message(m);
};
