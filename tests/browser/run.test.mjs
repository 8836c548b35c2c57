// Runs in the tab: the same numbers as the native engine, byte-identical results JSON,
// compare against a pinned run, a responsive page on a 20,000-request run, share links that
// reproduce the run, and talk-mode playback.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import zlib from 'node:zlib';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { serveDist, launchBrowser, openPage, openTimedPage, drawnAt, clickToDrawn, rearmMark, artifacts } from './harness.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'opal-run-'));
// Figures a person reads after the run (time to first results, frame times).
const measured = {};

let server, browser;
before(async () => {
  server = await serveDist();
  browser = await launchBrowser();
  fs.mkdirSync(artifacts, { recursive: true });
});
after(async () => {
  await browser?.close();
  await server?.close();
  fs.writeFileSync(`${artifacts}/measurements.json`, `${JSON.stringify(measured, null, 2)}\n`);
  console.log('measured:', JSON.stringify(measured));
});

// 20,000 requests at 100/s on 8 workers: about 200 s of simulated time.
const BIG = {
  simulation: { seed: 7, num_workers: 8 },
  workload: { stages: [{ type: 'UniformReqRate', request_rate: 100, total_requests: 20000 }] },
};

/** Runs the native engine on `text`; returns its summary and the path of its results JSON. */
function native(text, name) {
  const scenario = path.join(tmp, `${name}.json`);
  const results = path.join(tmp, `${name}.results.json`);
  fs.writeFileSync(scenario, text);
  const out = spawnSync('cargo', ['run', '-q', '-p', 'opal-engine', '--example', 'summarize', '--', scenario, results],
    { cwd: repo, encoding: 'utf8' });
  assert.equal(out.status, 0, out.stderr);
  return { summary: JSON.parse(out.stdout), results };
}

const editor = (page) => page.locator('textarea.scenario-json');
const status = (page) => page.getByTestId('run-status');
// The results table's first cell: its first frame on screen is when results are shown.
const SUMMARY = '[data-testid="summary-0-successful_requests"]';

/** The exact value behind a summary cell (its data-value, Rust's round-trip form). */
async function value(page, testid) {
  return Number(await page.getByTestId(testid).getAttribute('data-value'));
}

async function tableNumbers(page, prefix = 'summary') {
  return {
    successful_requests: await value(page, `${prefix}-0-successful_requests`),
    mean_ttft_ms: await value(page, `${prefix}-0-ttft_mean_ms`),
    output_throughput: await value(page, `${prefix}-0-output_throughput`),
  };
}

async function run(page, n, timeout = 30_000) {
  await page.getByRole('button', { name: 'Run', exact: true }).click();
  await status(page).getByText(`Run ${n} finished`).waitFor({ timeout });
}

async function tab(page, name) {
  await page.getByRole('tab', { name }).click();
}

/** Opens the Timeline tab, waits for its bars, and moves the pointer down the column at
 * `across` of its width (to `depth` px at most) until a bar's tooltip shows; resolves to
 * { canvas, box, tooltip }. */
async function hoverTimeline(page, across, depth) {
  await tab(page, 'Timeline');
  const canvas = page.getByTestId('timeline').locator('canvas');
  await page.waitForFunction(() => Number(document.querySelector('[data-testid=timeline] canvas')
    ?.getAttribute('data-bars-drawn')) > 0);
  const box = await canvas.boundingBox();
  const tooltip = page.getByTestId('timeline').locator('.chart-tooltip');
  for (let dy = 26; dy < Math.min(depth, box.height) && !(await tooltip.count()); dy += 3) {
    await page.mouse.move(box.x + box.width * across, box.y + dy);
  }
  return { canvas, box, tooltip };
}

test('the default scenario runs in the tab and gives the native engine\'s numbers and JSON', async () => {
  // A plain page runs the default scenario as it opens: no click.
  const { page, errors } = await openTimedPage(browser, server.url, {
    ready: 'header button.primary', results: SUMMARY,
  });
  await page.getByTestId('summary-0-successful_requests').waitFor();
  // Times on the page's clock, from navigation.
  measured.open_to_app_ready_ms = Math.round(await drawnAt(page, 'ready'));
  measured.open_to_first_results_ms = Math.round(await drawnAt(page, 'results'));
  await page.screenshot({ path: `${artifacts}/results.png`, fullPage: true });

  const text = await editor(page).inputValue();
  const want = native(text, 'default');
  assert.deepEqual(await tableNumbers(page), want.summary.stages[0]);
  assert.ok(want.summary.stages[0].successful_requests > 0);

  // The exported results JSON is byte for byte what the native engine writes.
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Results JSON' }).click(),
  ]);
  assert.equal(download.suggestedFilename(), 'results.json');
  const fromPage = fs.readFileSync(await download.path());
  assert.ok(fromPage.equals(fs.readFileSync(want.results)), 'wasm and native results JSON differ');

  const [csv] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Requests CSV' }).click(),
  ]);
  const rows = fs.readFileSync(await csv.path(), 'utf8').trim().split('\n');
  assert.equal(rows.length, want.summary.stages[0].successful_requests + 1, 'a header and one row per request');

  await tab(page, 'Charts');
  await page.getByTestId('charts').locator('svg').first().waitFor();
  await tab(page, 'Latency');
  await page.getByTestId('latency').locator('svg').first().waitFor();
  await tab(page, 'Routing');
  assert.ok(await page.getByTestId('routing').locator('tbody tr').count() > 0);
  // One row per worker, as in the native results.
  const workers = JSON.parse(fs.readFileSync(want.results, 'utf8')).workers.workers;
  assert.ok(workers.length > 0);
  assert.equal(await page.getByTestId('worker-table').locator('tbody tr').count(), workers.length);
  await page.screenshot({ path: `${artifacts}/routing.png` });
  assert.deepEqual(errors, []);
});

test('the summary shows where a real vLLM would likely land, as the CLI does', async () => {
  const { page, errors } = await openPage(browser, server.url);
  // The opening run is the default scenario on H100s, whose calibration has real runs.
  const summary = page.getByTestId('summary');
  await summary.getByRole('columnheader', { name: 'Likely on real vLLM' }).waitFor();
  await page.getByTestId('likely-note').getByText(/from 13 real vLLM runs/).waitFor();
  const cli = spawnSync('cargo', ['run', '-q', '-p', 'opal-cli', '--', 'run', 'examples/default.json'],
    { cwd: repo, encoding: 'utf8' });
  assert.equal(cli.status, 0, cli.stderr);
  const m = cli.stdout.match(/stage 0: mean TTFT ([\d.]+)–([\d.]+) ms, p99 TTFT ([\d.]+)–([\d.]+) ms, mean E2E ([\d.]+)–([\d.]+) ms, p99 E2E ([\d.]+)–([\d.]+) ms, mean ITL ([\d.]+)–([\d.]+) ms/);
  assert.ok(m, cli.stdout);
  const keys = ['ttft_mean_ms', 'ttft_p99_ms', 'e2e_mean_ms', 'e2e_p99_ms', 'itl_mean_ms'];
  for (const [k, key] of keys.entries()) {
    const [lo, hi] = (await page.getByTestId(`likely-0-${key}`).textContent()).split('–').map(Number);
    // The app writes two decimals, the CLI one.
    assert.ok(Math.abs(lo - Number(m[1 + 2 * k])) <= 0.051 && Math.abs(hi - Number(m[2 + 2 * k])) <= 0.051,
      `${key}: app ${lo}–${hi}, CLI ${m[1 + 2 * k]}–${m[2 + 2 * k]}`);
    const figure = await value(page, `summary-0-${key}`);
    assert.ok(lo < hi && lo > 0.5 * figure && hi < 3 * figure, `${key}: ${lo}–${hi} around ${figure}`);
  }
  await summary.screenshot({ path: `${artifacts}/summary-likely.png` });
  // No real run has measured the B200's calibration: no range is claimed for it.
  await editor(page).fill(JSON.stringify({ hardware: { gpu: 'B200' },
    workload: { stages: [{ type: 'UniformReqRate', request_rate: 5, total_requests: 20 }] } }, null, 2));
  await run(page, 2);
  await summary.getByRole('columnheader', { name: 'run 2 · round_robin' }).waitFor();
  assert.equal(await summary.getByRole('columnheader', { name: 'Likely on real vLLM' }).count(), 0);
  assert.equal(await page.getByTestId('likely-note').count(), 0);
  assert.deepEqual(errors, []);
});

test('an llm-d decision is explained scorer by scorer, in the routing table and the timeline', async () => {
  const { page, errors } = await openPage(browser, server.url);
  const doc = { simulation: { seed: 5, num_workers: 3 }, router: { policy: { policy: 'llm_d' } },
    workload: { stages: [{ type: 'UniformReqRate', request_rate: 40, total_requests: 60,
      shared_prefix: { groups: 2, length: 512 } }] } };
  await editor(page).fill(JSON.stringify(doc, null, 2));
  await run(page, 2);
  await tab(page, 'Routing');
  const routing = page.getByTestId('routing');
  await routing.getByText('Its terms, in order: 3 × precise-prefix-cache-scorer + 2 × queue-scorer + '
    + '2 × kv-cache-utilization-scorer.').waitFor();
  // Every candidate of the listed decisions: its score is its weighted scorers' sum (each
  // figure shown to 3 decimals).
  const cells = await routing.locator('.candidate').allTextContents();
  assert.ok(cells.length >= 3 * 60, `${cells.length} candidates`);
  for (const cell of cells) {
    const m = cell.match(/^w\d+: (-?[\d.]+) = 3×(-?[\d.]+) \+ 2×(-?[\d.]+) \+ 2×(-?[\d.]+) \(/);
    assert.ok(m, cell);
    const [score, prefix, queue, kv] = m.slice(1).map(Number);
    assert.ok(Math.abs(score - (3 * prefix + 2 * queue + 2 * kv)) < 0.01, cell);
    assert.ok(queue >= 0 && queue <= 1 && kv >= 0 && kv <= 1, cell);
  }
  const { tooltip } = await hoverTimeline(page, 0.3, Infinity);
  assert.match(await tooltip.textContent(),
    /worker \d+: score [\d.]+, \d+ outstanding[^\n]*\n {4}= 3 × precise-prefix-cache-scorer [\d.]+ \+ 2 × queue-scorer [\d.]+ \+ 2 × kv-cache-utilization-scorer [\d.]+/);
  await page.screenshot({ path: `${artifacts}/timeline-llm-d.png` });
  assert.deepEqual(errors, []);
});

test('a pinned run is compared with the next one in the table and the charts', async () => {
  const { page, errors } = await openPage(browser, server.url);
  const doc = { simulation: { seed: 3, num_workers: 4 }, router: { policy: { policy: 'round_robin' } },
    workload: { stages: [{ type: 'UniformReqRate', request_rate: 20, total_requests: 300 }] } };
  await editor(page).fill(JSON.stringify(doc, null, 2));
  await run(page, 2);
  const first = await tableNumbers(page);
  await page.getByRole('button', { name: 'Pin this run' }).click();
  await page.getByText('Pinned: the next run will be compared with this one.').waitFor();

  doc.router.policy.policy = 'max_prefix';
  await editor(page).fill(JSON.stringify(doc, null, 2));
  await run(page, 3);
  const summary = page.getByTestId('summary');
  await summary.getByRole('columnheader', { name: 'run 3 · max_prefix' }).waitFor();
  await summary.getByRole('columnheader', { name: 'run 2 · round_robin (pinned)' }).waitFor();
  assert.deepEqual(await tableNumbers(page, 'pinned'), first, 'the pinned column keeps run 2');
  assert.ok(await summary.locator('tr.better, tr.worse').count() > 0, 'differences are coloured');
  await page.screenshot({ path: `${artifacts}/compare.png`, fullPage: true });

  await tab(page, 'Charts');
  const legend = page.getByTestId('charts').locator('svg').first();
  await legend.waitFor();
  const legendText = await legend.textContent();
  assert.match(legendText, /run 3 · max_prefix/);
  assert.match(legendText, /run 2 · round_robin \(pinned\)/);
  await page.screenshot({ path: `${artifacts}/compare-charts.png`, fullPage: true });

  await page.getByRole('button', { name: 'Unpin' }).click();
  assert.equal(await summary.getByRole('columnheader', { name: /pinned/ }).count(), 0);
  assert.deepEqual(errors, []);
});

// Long tasks are recorded for the note; only a generous bound (1 s: a frozen page) is
// asserted, so a busy machine does not fail the test.
const FROZEN_MS = 1000;

/** A fresh 1400×1000 page that records its console errors and, in `window.__longTasks`,
 * the duration of every long task. */
async function watchedPage() {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.addInitScript(() => {
    window.__longTasks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longTasks.push(Math.round(e.duration));
    }).observe({ type: 'longtask', buffered: true });
  });
  return { page, errors };
}

test('a 20,000-request run keeps the page responsive (long tasks recorded), and its timeline draws', async () => {
  const { page, errors } = await watchedPage();
  await page.goto(server.url);
  await editor(page).fill(JSON.stringify(BIG, null, 2));
  // Only what the run causes counts: clear what loading the page did.
  await page.evaluate(() => { window.__longTasks = []; });
  const started = Date.now();
  await page.getByRole('button', { name: 'Run', exact: true }).click();
  await page.getByTestId('run-progress').waitFor();
  await status(page).getByText('Run 2 finished').waitFor({ timeout: 180_000 });
  await page.getByTestId('summary-0-successful_requests').waitFor();
  measured.big_run_wall_ms = Date.now() - started;
  assert.equal(await value(page, 'summary-0-successful_requests'), 20000);
  const duringRun = await page.evaluate(() => window.__longTasks.splice(0));
  measured.big_run_long_tasks_ms = duringRun;
  assert.deepEqual(duringRun.filter((d) => d > FROZEN_MS), [], `the page froze while running: ${duringRun}`);

  // Its results JSON leaves the wasm in several 4 MiB parts and is still byte for byte the
  // native engine's (a 1,000,000-request run's once downloaded as an empty file).
  const want = native(JSON.stringify(BIG), 'big');
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Results JSON' }).click(),
  ]);
  const fromPage = fs.readFileSync(await download.path());
  assert.ok(fromPage.length > 3 * 4 * 1024 * 1024, `${fromPage.length} bytes`);
  assert.ok(fromPage.equals(fs.readFileSync(want.results)), 'the exported JSON differs from the native engine\'s');
  await page.evaluate(() => { window.__longTasks = []; });

  // Hovering a bar names the request and why the router sent it where it went.
  const { canvas, box, tooltip } = await hoverTimeline(page, 0.4, 120);
  assert.match(await tooltip.textContent(), /^request \d+ · worker \d+[\s\S]*routed to worker \d+ at [\d.]+ s by /);
  await page.screenshot({ path: `${artifacts}/timeline.png` });
  await page.mouse.move(box.x - 20, box.y - 20);

  // Frame time of zooming and panning: wheel events, one per animation frame.
  const frames = await canvas.evaluate(async (el) => {
    const r = el.getBoundingClientRect();
    const times = [];
    let last = await new Promise(requestAnimationFrame);
    for (let i = 0; i < 60; i++) {
      const zoomIn = i < 30;
      el.dispatchEvent(new WheelEvent('wheel', { deltaY: zoomIn ? -120 : 120, clientX: r.left + r.width / 2,
        clientY: r.top + 100, bubbles: true, cancelable: true }));
      const now = await new Promise(requestAnimationFrame);
      times.push(now - last);
      last = now;
    }
    times.sort((a, b) => a - b);
    return { median: times[30], p90: times[54], max: times[59] };
  });
  measured.timeline_zoom_frame_ms_at_20k = frames;
  // Panning while zoomed in: one arrow key per animation frame.
  measured.timeline_pan_frame_ms_at_20k = await canvas.evaluate(async (el) => {
    el.focus();
    for (let i = 0; i < 4; i++) el.dispatchEvent(new KeyboardEvent('keydown', { key: '+', bubbles: true }));
    const times = [];
    let last = await new Promise(requestAnimationFrame);
    for (let i = 0; i < 60; i++) {
      el.dispatchEvent(new KeyboardEvent('keydown', { key: i < 30 ? 'ArrowRight' : 'ArrowLeft', bubbles: true }));
      const now = await new Promise(requestAnimationFrame);
      times.push(now - last);
      last = now;
    }
    times.sort((a, b) => a - b);
    return { median: times[30], p90: times[54], max: times[59] };
  });
  await page.screenshot({ path: `${artifacts}/timeline-zoomed.png` });

  const timelineTasks = await page.evaluate(() => window.__longTasks);
  measured.timeline_long_tasks_ms = timelineTasks;
  assert.deepEqual(timelineTasks.filter((d) => d > FROZEN_MS), [], `the timeline froze the page: ${timelineTasks}`);
  assert.deepEqual(errors, []);
});

// Opal's reference run: the Opal config in engine/benches/opal_reference.json (4 workers,
// round robin, 10,000 requests at 20 req/s, prompts in [32, 16384], outputs in [32, 128]),
// imported by the native CLI so it runs under Opal's own formula and figures, as the
// end_to_end bench runs it. Opal's 104 s is a recorded figure from another machine and
// version; the ratio is recorded for the note, not asserted (speed is for benches).
test('Opal\'s 10,000-request reference run runs in the tab (speed recorded)', async () => {
  const imported = spawnSync('cargo', ['run', '-q', '-p', 'opal-cli', '--', 'import-opal',
    'engine/benches/opal_reference.json'], { cwd: repo, encoding: 'utf8' });
  assert.equal(imported.status, 0, imported.stderr);
  const { page, errors } = await openTimedPage(browser, server.url, { results: SUMMARY });
  await editor(page).fill(imported.stdout);
  await rearmMark(page, 'results', SUMMARY); // time from Run's click to the new table
  await run(page, 2, 120_000);
  const wall = Math.round(await clickToDrawn(page, 'results'));
  measured.opal_reference_run_wall_ms = wall;
  measured.opal_reference_ratio_to_recorded_opal_104s = Math.round(104_000 / wall);
  assert.equal(await value(page, 'summary-0-successful_requests'), 10000);
  assert.deepEqual(errors, []);
});

// The page's runs go to a pool of simulation workers, one per core; a sweep submits many
// at once through `wasmBindings.runBatch`. Runs side by side give each one the bytes it
// gives alone and natively.
test('runs go to parallel workers and give the same results JSON as alone and natively', async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  // Count the workers the page starts.
  await page.addInitScript(() => {
    const Real = window.Worker;
    window.__workersStarted = 0;
    window.Worker = class extends Real {
      constructor(...args) { super(...args); window.__workersStarted += 1; }
    };
  });
  await page.goto(server.url);
  await page.getByRole('button', { name: 'Run', exact: true }).waitFor();
  const docs = [21, 22, 23].map((seed) => ({ simulation: { seed, num_workers: 4 },
    router: { policy: { policy: seed === 22 ? 'max_prefix' : 'round_robin' } },
    workload: { stages: [{ type: 'UniformReqRate', request_rate: 40, total_requests: 1500 }] } }));
  const texts = docs.map((d) => JSON.stringify(d, null, 2));
  // Both ways timed warm: a first batch starts the workers (and is checked below too).
  const first = await page.evaluate((texts) => window.wasmBindings.runBatch(texts), texts);
  const together = await page.evaluate(async (texts) => {
    const t0 = performance.now();
    const results = await window.wasmBindings.runBatch(texts);
    return { results, ms: performance.now() - t0, lanes: window.wasmBindings.parallelRuns(),
      cores: navigator.hardwareConcurrency, started: window.__workersStarted };
  }, texts);
  assert.equal(together.lanes, Math.min(together.cores, 16));
  assert.equal(together.started, Math.min(texts.length, together.lanes), 'one worker per run, up to one per core');
  const alone = [];
  let aloneMs = 0;
  for (const text of texts) {
    const one = await page.evaluate(async (text) => {
      const t0 = performance.now();
      const [json] = await window.wasmBindings.runBatch([text]);
      return { json, ms: performance.now() - t0 };
    }, text);
    alone.push(one.json);
    aloneMs += one.ms;
  }
  measured.parallel_runs = { runs: texts.length, workers: together.started,
    together_ms: Math.round(together.ms), one_after_another_ms: Math.round(aloneMs) };
  texts.forEach((text, i) => {
    assert.equal(together.results[i], alone[i], `run ${i} differs side by side and alone`);
    assert.equal(first[i], alone[i], `run ${i} differs in a fresh worker`);
    const want = native(text, `parallel-${i}`);
    assert.equal(together.results[i], fs.readFileSync(want.results, 'utf8'), `run ${i} differs from native`);
  });
  assert.notEqual(together.results[0], together.results[1], 'different scenarios, different results');
  assert.deepEqual(errors, []);
});

test('Stop ends a run part-way and shows the results it reached', async () => {
  const { page, errors } = await openPage(browser, server.url);
  await editor(page).fill(JSON.stringify(BIG, null, 2));
  await page.getByRole('button', { name: 'Run', exact: true }).click();
  await page.getByTestId('run-progress').waitFor();
  await page.keyboard.press('Escape');
  await status(page).getByText(/Run 2 stopped at .* s simulated; the results below cover what it reached/).waitFor();
  // The table shows the part that ran: fewer than the 20,000 requests, some unfinished.
  await page.getByTestId('summary-0-successful_requests').waitFor();
  const done = await value(page, 'summary-0-successful_requests');
  assert.ok(done < 20000, `${done} requests completed before Stop`);
  assert.deepEqual(errors, []);
});

test('a share link opened in a fresh page runs the scenario and gives the same numbers', async () => {
  const { page, errors } = await openPage(browser, server.url);
  const doc = { simulation: { seed: 11, num_workers: 3 },
    workload: { stages: [{ type: 'UniformReqRate', request_rate: 10, total_requests: 200 }] } };
  await editor(page).fill(JSON.stringify(doc, null, 2));
  await run(page, 2);
  const here = await tableNumbers(page);
  await page.getByRole('button', { name: 'Share', exact: true }).click();
  const link = await page.getByTestId('share-link').inputValue();

  const fresh = await openTimedPage(browser, link, { results: SUMMARY });
  await status(fresh.page).getByText('Run 1 finished').waitFor({ timeout: 30_000 });
  measured.share_link_open_to_results_ms = Math.round(await drawnAt(fresh.page, 'results'));
  assert.deepEqual(await tableNumbers(fresh.page), here);
  assert.deepEqual([...errors, ...fresh.errors], []);
});

test('talk mode plays the finished run back on a canvas', async () => {
  const { page, errors } = await openPage(browser, server.url);
  const doc = { simulation: { seed: 5, num_workers: 4 },
    workload: { stages: [{ type: 'UniformReqRate', request_rate: 40, total_requests: 2000 }] } };
  await editor(page).fill(JSON.stringify(doc, null, 2));
  await run(page, 2);
  await page.locator('body').click({ position: { x: 5, y: 5 } });
  await page.keyboard.press('t');
  const canvas = page.getByTestId('talk-canvas');
  await canvas.waitFor();
  const position = async () => Number(await canvas.getAttribute('data-position'));
  // It plays by itself; faster for the test.
  await page.keyboard.press('+'); // 2×
  await page.keyboard.press('+'); // 4×
  await page.waitForFunction(() => Number(document.querySelector('[data-testid=talk-canvas]')
    .getAttribute('data-position')) > 8);
  const a = await position();
  await page.waitForTimeout(300);
  assert.ok(await position() > a, 'playback time advances');
  await page.screenshot({ path: `${artifacts}/talk-playback.png` });
  await page.keyboard.press(' ');
  assert.deepEqual(errors, []);
});

// Past 2^23 requests a run once lost every result: its records' vector, doubling inside
// the worker's 4 GB, did not fit (issue 31). 8,400,000 one-token requests on 16 workers,
// the cheapest requests there are.
test('a run of 8,400,000 requests finishes in the tab with every request counted, the page responsive', async () => {
  const n = 8_400_000;
  const doc = { simulation: { num_workers: 16 }, workload: { stages: [{ type: 'UniformReqRate',
    request_rate: 20000, total_requests: n, input_length: { type: 'uniform', min: 16, max: 32 },
    output_length: { type: 'uniform', min: 1, max: 1 } }] } };
  const { page, errors } = await watchedPage();
  const started = Date.now();
  await page.goto(`${server.url}#s=v1.${zlib.deflateSync(JSON.stringify(doc)).toString('base64url')}`);
  await status(page).getByText('Run 1 finished').waitFor({ timeout: 400_000 });
  measured.run_8_4m_requests_wall_ms = Date.now() - started;
  assert.equal(await value(page, 'summary-0-successful_requests'), n);
  assert.match(await page.locator('.run-facts').textContent(), /^8400000 requests, /);
  // The results were read between frames, not in one task.
  const tasks = await page.evaluate(() => window.__longTasks.splice(0));
  measured.run_8_4m_long_tasks_ms = tasks.filter((d) => d > 100);
  assert.deepEqual(tasks.filter((d) => d > FROZEN_MS), [], `the page froze: ${tasks}`);
  // The timeline draws a documented sample of under a million of them.
  await tab(page, 'Timeline');
  assert.match(await page.getByTestId('timeline-sample').textContent(),
    /^Drawing 993,750 of 8,400,000 requests: every request of the first and last 250,000, and 1 in 16 of those between\.$/);
  await tab(page, 'Latency');
  assert.match(await page.getByTestId('latency-sample').textContent(), /^Drawn from 1 in 9 requests \(933,334 of 8,400,000\)/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('chart text is drawn at 12 px or more at 1440 wide, and every y label fits', async () => {
  // Each chart's viewBox is its drawn width, so its labels keep their CSS size.
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  await page.goto(server.url);
  await status(page).getByText('Run 1 finished').waitFor();
  for (const name of ['Charts', 'Latency']) {
    await page.getByRole('tab', { name, exact: true }).click();
    await page.locator('svg.chart-svg text').first().waitFor();
    const charts = await page.$$eval('svg.chart-svg', (svgs) => svgs.map((svg) => {
      const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
      const left = svg.getBoundingClientRect().left;
      const texts = [...svg.querySelectorAll('text')];
      return {
        label: svg.getAttribute('aria-label').slice(0, 40),
        smallest: Math.min(...texts.map((t) => parseFloat(getComputedStyle(t).fontSize) * scale)),
        // How far the leftmost text starts inside the chart (negative: cut off).
        leftmost: Math.min(...texts.map((t) => t.getBoundingClientRect().left - left)),
      };
    }));
    assert.ok(charts.length >= 8, `${name}: ${charts.length} charts`);
    for (const c of charts) {
      assert.ok(c.smallest >= 11.95, `${name} / ${c.label}: text drawn at ${c.smallest.toFixed(1)} px`);
      assert.ok(c.leftmost >= 0, `${name} / ${c.label}: a label starts ${c.leftmost.toFixed(1)} px outside`);
    }
  }
  await page.close();
});

test('on a 360 px phone no results tab widens the page: wide tables scroll inside it', async () => {
  const page = await browser.newPage({ viewport: { width: 360, height: 740 } });
  await page.goto(server.url);
  await status(page).getByText('Run 1 finished').waitFor();
  for (const name of ['Summary', 'Charts', 'Latency', 'Timeline', 'Routing']) {
    await page.getByRole('tab', { name, exact: true }).click();
    await page.getByRole('tabpanel').first().waitFor();
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.equal(width, 360, `${name}: the page is ${width} px wide`);
  }
  // The routing table is wider than the phone: it scrolls in its own box.
  const box = page.locator('.table-scroll', { has: page.locator('table.routing-table') }).first();
  assert.ok(await box.evaluate((e) => e.scrollWidth > e.clientWidth), 'the routing table scrolls');
  await page.close();
});

test('talk mode on a 360 px phone shows its whole stage on the first screen', async () => {
  const page = await browser.newPage({ viewport: { width: 360, height: 740 } });
  await page.goto(server.url);
  await status(page).getByText('Run 1 finished').waitFor();
  await page.keyboard.press('t');
  const canvas = page.getByTestId('talk-canvas');
  await canvas.waitFor();
  const box = await canvas.boundingBox();
  assert.ok(box.x >= 0 && box.x + box.width <= 360, `canvas x ${box.x}..${box.x + box.width}`);
  assert.ok(box.y + box.height <= 740, `canvas ends at ${box.y + box.height} px, below the screen`);
  assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), 360);
  await page.close();
});

test('a 10,000-character value keeps its field and error the width of the form', async () => {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  await page.goto(server.url);
  await status(page).getByText('Run 1 finished').waitFor();
  await page.locator('#simulation-seed').fill('9'.repeat(10_000));
  await page.getByText("'99999999999999999999…' (10000 characters) is not a number").waitFor();
  assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), 1440);
  const input = await page.locator('#simulation-seed').boundingBox();
  assert.ok(input.width < 600, `the field is ${input.width} px wide`);
  await page.close();
});
