// Disaggregated prefill/decode in the app: the preset runs in the tab and its deployment
// panel shows the native engine's pools, TTFT split and KV transfers (exact values); the
// timeline draws transfer segments on the decode workers' lanes; talk mode moves KV between
// the pools; a share link carries the deployment and reproduces the run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { openPage, artifacts, browser, server, useBrowser } from './harness.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'opal-deployment-'));
const PRESET = 'disaggregation_long_prompts';

useBrowser();

const editor = (page) => page.locator('textarea.scenario-json');
const status = (page) => page.getByTestId('run-status');
/** The exact value behind a cell (its data-value, Rust's round-trip form). */
const value = async (page, testid) => Number(await page.locator(`[data-testid="${testid}"][data-value]`)
  .getAttribute('data-value'));

/** The CLI's results for the scenario text (`opal run --json`), parsed. */
function native(text) {
  const scenario = path.join(tmp, 'scenario.json');
  const results = path.join(tmp, 'results.json');
  fs.writeFileSync(scenario, text);
  const out = spawnSync('cargo', ['run', '-q', '--release', '-p', 'opal-cli', '--', 'run', '-q',
    scenario, '--json', results], { cwd: repo, encoding: 'utf8' });
  assert.equal(out.status, 0, out.stderr);
  return JSON.parse(fs.readFileSync(results, 'utf8'));
}

/** Every number of the deployment panel, by the engine's field names. */
async function panelNumbers(page, pools) {
  const n = { pools: [] };
  for (let i = 0; i < pools; i += 1) {
    const row = {};
    for (const k of ['workers', 'requests', 'busy', 'compute_utilization', 'memory_utilization']) {
      row[k] = await value(page, `pool-${i}-${k}`);
    }
    n.pools.push(row);
  }
  n.pool_balance = await value(page, 'deployment-pool_balance');
  for (const part of ['ttft_queueing', 'ttft_prefill', 'transfer']) {
    n[part] = {};
    for (const k of ['count', 'mean_ms', 'median_ms', 'p90_ms', 'p99_ms']) {
      n[part][k] = await value(page, `deployment-${part}-${k}`);
    }
  }
  for (const k of ['transfers', 'transfer_bytes', 'transfer_cached_tokens']) {
    n[k] = await value(page, `deployment-${k}`);
  }
  return n;
}

/** The same numbers from the CLI's results JSON. */
function nativeNumbers(d) {
  const pick = (o, keys) => Object.fromEntries(keys.map((k) => [k, o[k]]));
  const lat = ['count', 'mean_ms', 'median_ms', 'p90_ms', 'p99_ms'];
  return {
    pools: d.pools.map((p) => pick(p, ['workers', 'requests', 'busy', 'compute_utilization', 'memory_utilization'])),
    pool_balance: d.pool_balance,
    ttft_queueing: pick(d.ttft_queueing, lat),
    ttft_prefill: pick(d.ttft_prefill, lat),
    transfer: pick(d.transfer, lat),
    transfers: d.transfers,
    transfer_bytes: d.transfer_bytes,
    transfer_cached_tokens: d.transfer_cached_tokens,
  };
}

async function setTheme(page, name) {
  const theme = page.getByRole('button', { name: /^Theme:/ });
  for (let k = 0; k < 3 && (await theme.textContent()) !== `Theme: ${name}`; k += 1) await theme.click();
  assert.equal(await theme.textContent(), `Theme: ${name}`);
}

test('the disaggregation preset shows the native engine\'s deployment, its transfers on the timeline and in talk mode', async () => {
  const { page, errors } = await openPage(browser, server.url);
  await page.setViewportSize({ width: 1400, height: 1000 });
  await page.getByRole('heading', { name: 'Opal' }).waitFor();
  // One click loads the preset and runs it.
  await page.locator(`[data-preset="${PRESET}"]`).click();
  await status(page).getByText('Run 2 finished').waitFor({ timeout: 120_000 });

  // The deployment panel equals the CLI's report on the same document, value for value.
  const text = await editor(page).inputValue();
  const want = native(text);
  assert.ok(want.deployment, 'the preset is a disaggregated deployment');
  await page.getByTestId('deployment').waitFor();
  const got = await panelNumbers(page, want.deployment.pools.length);
  assert.deepEqual(got, nativeNumbers(want.deployment));
  // Not vacuous: both pools served every request, and KV moved for each.
  assert.deepEqual(want.deployment.pools.map((p) => p.role), ['prefill', 'decode']);
  assert.ok(want.deployment.transfers > 500 && want.deployment.transfer_bytes > 0);
  assert.equal(await page.getByTestId('deployment-pool').count(), 2);
  for (const theme of ['light', 'dark']) {
    await setTheme(page, theme);
    await page.getByTestId('deployment').screenshot({ path: `${artifacts}/deployment-${theme}.png` });
  }
  await setTheme(page, 'light');

  // Per-worker table: each worker's pool (2 prefill then 2 decode workers, in start order).
  await page.getByRole('tab', { name: 'Routing' }).click();
  const poolCells = page.getByTestId('worker-pool');
  assert.deepEqual(await poolCells.allTextContents(), ['prefill', 'prefill', 'decode', 'decode']);

  // Timeline: lanes named by pool; transfer segments drawn on the decode workers' lanes.
  await page.getByRole('tab', { name: 'Timeline' }).click();
  const canvas = page.getByTestId('timeline').locator('canvas');
  await page.waitForFunction(() => Number(document.querySelector('[data-testid=timeline] canvas')
    ?.getAttribute('data-transfers-drawn')) > 0);
  const drawn = Number(await canvas.getAttribute('data-bars-drawn'));
  const transfersDrawn = Number(await canvas.getAttribute('data-transfers-drawn'));
  assert.ok(transfersDrawn > 0 && transfersDrawn <= drawn, `${transfersDrawn} of ${drawn}`);
  await page.getByTestId('timeline').getByText('KV transfer', { exact: true }).waitFor();
  // Zoomed in, the tooltip of a bar names both workers and the transfer.
  await canvas.focus();
  for (let k = 0; k < 5; k += 1) await page.keyboard.press('+');
  const box = await canvas.boundingBox();
  const tooltip = page.getByTestId('timeline').locator('.chart-tooltip');
  for (let dy = 26; dy < box.height && !(await tooltip.count()); dy += 4) {
    await page.mouse.move(box.x + box.width * 0.6, box.y + dy);
  }
  assert.match(await tooltip.textContent(),
    /worker \d+ → worker \d+[\s\S]*KV transfer prefill · worker \d+ → decode · worker \d+: [\d.]+ (GB|MB) in /);
  // Neither the tooltip (it opens leftwards right of the middle) nor the sweep's wide table
  // makes the page scroll sideways.
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
    'the tooltip widened the page');
  await page.screenshot({ path: `${artifacts}/deployment-timeline-light.png` });
  await page.mouse.move(box.x - 20, box.y - 20);
  await setTheme(page, 'dark');
  await page.evaluate(() => window.scrollTo(0, window.scrollY));
  await page.screenshot({ path: `${artifacts}/deployment-timeline-dark.png` });

  // Talk mode: KV transfers travel from the prefill pool to the decode pool. A slow link
  // (2 GB/s: ~0.4 s per prompt) keeps several in flight at any instant, so a paused frame
  // shows them.
  const slow = JSON.parse(text);
  slow.deployment.kv_transfer.bandwidth_gbps = 2;
  await editor(page).fill(JSON.stringify(slow, null, 2));
  await page.getByRole('button', { name: 'Run', exact: true }).click();
  await status(page).getByText('Run 3 finished').waitFor({ timeout: 120_000 });
  await page.locator('body').click({ position: { x: 5, y: 5 } });
  await page.keyboard.press('t');
  const talk = page.getByTestId('talk-canvas');
  await talk.waitFor();
  // It plays by itself.
  await page.keyboard.press('+');
  await page.waitForFunction(() => Number(document.querySelector('[data-testid=talk-canvas]')
    ?.getAttribute('data-position')) > 6, null, { timeout: 30_000 });
  await page.keyboard.press(' ');
  await page.waitForTimeout(300);
  assert.ok(Number(await talk.getAttribute('data-transfers')) > 0, 'no transfer drawn while paused');
  for (const theme of ['dark', 'light']) {
    await setTheme(page, theme);
    await page.waitForTimeout(100);
    await page.screenshot({ path: `${artifacts}/deployment-talk-${theme}.png` });
  }
  assert.deepEqual(errors, []);
});

test('a share link carries the deployment and reproduces the run', async () => {
  const { page, errors } = await openPage(browser, server.url);
  await page.getByRole('heading', { name: 'Opal' }).waitFor();
  const doc = { simulation: { seed: 3 },
    deployment: { name: '1P:1D', pools: [{ name: 'p', role: 'prefill', num_workers: 1 },
      { name: 'd', role: 'decode', num_workers: 1, worker: { max_num_seqs: 64 } }],
    kv_transfer: { bandwidth_gbps: 10, latency_s: 0.002, concurrency: 4 } },
    workload: { stages: [{ type: 'UniformReqRate', request_rate: 4, total_requests: 40 }] } };
  await editor(page).fill(JSON.stringify(doc, null, 2));
  await page.getByRole('button', { name: 'Run', exact: true }).click();
  await status(page).getByText('Run 2 finished').waitFor({ timeout: 60_000 });
  const here = await panelNumbers(page, 2);
  assert.equal(here.transfers, 40);
  await page.getByRole('button', { name: 'Share', exact: true }).click();
  const link = await page.getByTestId('share-link').inputValue();

  const fresh = await openPage(browser, link);
  await status(fresh.page).getByText('Run 1 finished').waitFor({ timeout: 60_000 });
  assert.deepEqual(JSON.parse(await editor(fresh.page).inputValue()).deployment,
    JSON.parse(await editor(page).inputValue()).deployment);
  assert.deepEqual(await panelNumbers(fresh.page, 2), here);
  assert.deepEqual([...errors, ...fresh.errors], []);
});

test('the Deployment form writes pools, shows the engine\'s problem at a pool\'s field, and goes back', async () => {
  const { page, errors } = await openPage(browser, server.url);
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.getByRole('heading', { name: 'Opal' }).waitFor();
  const doc = async () => JSON.parse(await editor(page).inputValue());
  const until = async (check) => {
    for (let i = 0; i < 50; i += 1) {
      try { if (check(await doc())) return; } catch { /* mid-edit */ }
      await page.waitForTimeout(50);
    }
    assert.fail(`the JSON never matched: ${await editor(page).inputValue()}`);
  };
  await page.getByTestId('add-deployment').click();
  await until((d) => d.deployment?.pools?.map((p) => p.role).join() === 'prefill,decode');
  assert.equal(await page.getByTestId('pool-card').count(), 2);
  // A pool's GPU override shows the top-level GPU until set, and is written key by key.
  await page.locator('#deployment-pools-1-hardware-gpu').selectOption('A100-80GB');
  await until((d) => d.deployment.pools[1].hardware?.gpu === 'A100-80GB');
  // Zero workers: the field itself says a pool has at least one, and the document keeps 1.
  const workers = page.locator('#deployment-pools-1-num_workers');
  await workers.fill('0');
  await page.locator('#deployment-pools-1-num_workers-error').getByText('must be at least 1').waitFor();
  assert.equal((await doc()).deployment.pools[1].num_workers, 1);
  // Too many: the engine's message under that pool's field.
  await workers.fill('100000');
  await until((d) => d.deployment.pools[1].num_workers === 100000);
  await page.locator('#deployment-pools-1-num_workers-error').getByText('must be between 1 and').waitFor();
  await page.locator('.field-group', { hasText: 'KV link bandwidth' }).first()
    .screenshot({ path: `${artifacts}/deployment-editor.png` });
  await workers.fill('3');
  await until((d) => d.deployment.pools[1].num_workers === 3);
  await page.locator('#deployment-pools-1-num_workers-error').waitFor({ state: 'detached' });
  await page.locator('#deployment-kv_transfer-bandwidth_gbps').fill('25');
  await until((d) => d.deployment.kv_transfer.bandwidth_gbps === 25);
  await page.getByRole('button', { name: 'Back to one mixed pool' }).click();
  await until((d) => d.deployment === null || d.deployment === undefined);
  await page.getByTestId('add-deployment').waitFor();
  assert.deepEqual(errors, []);
});
