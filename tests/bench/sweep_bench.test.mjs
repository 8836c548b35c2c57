// Wall time of a 24-point sweep of the default scenario (fixtures/default_sweep24.json: the
// default scenario with its request rate swept from 5 to 120 req/s) in headless Chromium on
// the Web Worker pool, and natively with `opal sweep --threads 2` and `--threads 1` (release
// build). Each figure is the best of three runs; all are written to
// tests/artifacts/sweep-wall-time.json, which docs/performance.md's figures come from.
// A benchmark, not a test: it asserts nothing about speed, so `make bench` runs it
// (scripts/bench.sh), not `make test`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { openPage, artifacts, browser, server, useBrowser } from '../browser/harness.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const fixture = path.join(repo, 'tests/browser/fixtures/default_sweep24.json');
const RUNS = 3;

useBrowser();

test('a 24-point sweep of the default scenario: Chromium on the worker pool, and native', async () => {
  const { page, errors } = await openPage(browser, server.url);
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.getByRole('heading', { name: 'Opal' }).waitFor();
  await page.locator('textarea.scenario-json').fill(fs.readFileSync(fixture, 'utf8'));
  const panel = page.getByTestId('sweep-panel');
  await panel.getByText('Sweep: 24 runs').waitFor();
  const workers = await page.evaluate(() => navigator.hardwareConcurrency);
  const browserSeconds = [];
  for (let i = 0; i < RUNS; i++) {
    await panel.getByTestId('run-sweep').click();
    // The panel times the sweep itself (performance.now from Run to the last point).
    const done = panel.getByText(/^24 of 24 points in [\d.]+ s/);
    await done.waitFor({ timeout: 300_000 });
    browserSeconds.push(Number(await panel.getByTestId('sweep-status').getAttribute('data-seconds')));
  }
  await panel.getByTestId('sweep-curves').screenshot({ path: `${artifacts}/sweep-default-24.png` });
  assert.deepEqual(errors, []);

  const build = spawnSync('cargo', ['build', '--release', '-q', '-p', 'opal-cli'], { cwd: repo, encoding: 'utf8' });
  assert.equal(build.status, 0, build.stderr);
  const target = process.env.CARGO_TARGET_DIR ?? path.join(repo, 'target');
  const opal = path.join(target, 'release', 'opal');
  const native = (threads) => {
    const times = [];
    for (let i = 0; i < RUNS; i++) {
      const t0 = process.hrtime.bigint();
      const out = spawnSync(opal, ['sweep', '-q', fixture, '--threads', String(threads)], { encoding: 'utf8' });
      times.push(Number(process.hrtime.bigint() - t0) / 1e9);
      assert.equal(out.status, 0, out.stderr);
    }
    return Math.min(...times);
  };
  const figures = {
    date: new Date().toISOString().slice(0, 10),
    machine: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB`,
    load_average_1m: os.loadavg()[0],
    points: 24,
    scenario: 'tests/browser/fixtures/default_sweep24.json',
    chromium_workers: workers,
    chromium_s: Math.min(...browserSeconds),
    native_threads_2_s: native(2),
    native_threads_1_s: native(1),
  };
  fs.writeFileSync(`${artifacts}/sweep-wall-time.json`, `${JSON.stringify(figures, null, 2)}\n`);
  console.log('sweep wall time:', JSON.stringify(figures));
});
