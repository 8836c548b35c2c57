// The sweep panel: a preset with a 24-point sweep runs in the tab point by point, draws its
// curves and names the knee; the table has one row per point.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { serveDist, launchBrowser, openPage, artifacts } from './harness.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

let server, browser;
before(async () => {
  server = await serveDist();
  browser = await launchBrowser();
  fs.mkdirSync(artifacts, { recursive: true });
});
after(async () => { await browser?.close(); await server?.close(); });

test('a sweep runs in the tab, draws its curves and marks the knee', async () => {
  const { page, errors } = await openPage(browser, server.url);
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.getByRole('heading', { name: 'Opal' }).waitFor();
  await page.getByTestId('presets').locator('summary').click();
  await page.locator('[data-preset="latency_vs_load_by_policy"]').click();
  const panel = page.getByTestId('sweep-panel');
  await panel.getByText('Sweep: 24 runs').waitFor();
  const started = Date.now();
  await panel.getByTestId('run-sweep').click();
  await panel.getByText('24 of 24 points').waitFor({ timeout: 300_000 });
  const seconds = (Date.now() - started) / 1000;
  // One row per point, and three charts with a line per policy (plus the SLO bound).
  assert.equal(await panel.getByTestId('sweep-table').locator('tbody tr').count(), 24);
  const curves = panel.getByTestId('sweep-curves');
  assert.equal(await curves.locator('svg').count() >= 3, true);
  await curves.getByText('round_robin').first().waitFor();
  await curves.getByText('max_prefix').first().waitFor();
  await panel.screenshot({ path: `${artifacts}/sweep-curves.png` });
  fs.writeFileSync(`${artifacts}/sweep-wall-time.json`, JSON.stringify({ points: 24, seconds, workers: 'none (main thread, one point per task)' }));
  // The same numbers as the native CLI run now, cell for cell (both print the engine's
  // table at 2 decimals).
  const cli = spawnSync('cargo', ['run', '-q', '-p', 'opal-cli', '--', 'sweep',
    'examples/latency_vs_load_by_policy.json'], { cwd: repo, encoding: 'utf8' });
  assert.equal(cli.status, 0, cli.stderr);
  const cliTable = cli.stdout;
  const appRows = await panel.getByTestId('sweep-table').locator('tbody tr').evaluateAll(
    (rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)));
  const cliRows = cliTable.trim().split('\n').slice(1, 25).map((l) => l.trim().split(/\s+/));
  assert.deepEqual(appRows, cliRows);
  // The knee of each policy's curve is named.
  assert.equal(await panel.getByTestId('sweep-knee').count(), 2);
  // ... and marked on each of the three charts, at its rate.
  assert.equal(await panel.getByTestId('chart-marker').count(), 6);
  assert.deepEqual(errors, []);
});
