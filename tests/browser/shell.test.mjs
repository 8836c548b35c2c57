// The app shell renders, reaches the engine, and shows its validation live.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { serveDist, launchBrowser, openPage, artifacts } from './harness.mjs';

let server, browser;
before(async () => { server = await serveDist(); browser = await launchBrowser(); });
after(async () => { await browser?.close(); await server?.close(); });

test('the app renders its frame and reports the engine version', async () => {
  const { page, errors } = await openPage(browser, server.url);
  await page.getByRole('heading', { name: 'Opal' }).waitFor();
  const version = await page.getByTestId('engine-version').textContent();
  assert.match(version, /^engine \d+\.\d+\.\d+/);
  assert.ok(await page.getByRole('region', { name: 'Scenario editor' }).isVisible());
  assert.ok(await page.getByRole('region', { name: 'Results' }).isVisible());
  fs.mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: `${artifacts}/shell.png`, fullPage: true });
  assert.deepEqual(errors, []);
});

test('editing the scenario is checked by the engine as you type', async () => {
  const { page, errors } = await openPage(browser, server.url);
  const validation = page.getByTestId('validation');
  await validation.getByText('Scenario is valid.').waitFor();
  await page.locator('textarea.scenario-json').fill('{ "simulation": ');
  await validation.getByText(/not valid JSON/).waitFor();
  await page.locator('textarea.scenario-json').fill('{}');
  await validation.getByText('Scenario is valid.').waitFor();
  assert.deepEqual(errors, []);
});

test('the site works from a sub-path of a static host (relative asset paths)', async () => {
  const sub = await serveDist('/some/path/opal/');
  try {
    const { page, errors } = await openPage(browser, sub.url);
    await page.getByRole('heading', { name: 'Opal' }).waitFor();
    await page.getByTestId('validation').getByText('Scenario is valid.').waitFor();
    assert.deepEqual(errors, []);
  } finally {
    await sub.close();
  }
});

test('once opened, the site works with the network gone, from a sub-path too', async () => {
  const sub = await serveDist('/talks/opal/');
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(sub.url);
    const status = page.getByTestId('run-status');
    await status.getByText('Run 1 finished').waitFor({ timeout: 60_000 });
    // The service worker has kept the page and every file it names.
    const kept = await page.evaluate(async () => {
      await navigator.serviceWorker.ready;
      for (let i = 0; i < 100; i++) {
        const cache = await caches.open('opal-offline');
        const names = (await cache.keys()).map((r) => new URL(r.url).pathname);
        if (names.some((n) => n.endsWith('_bg.wasm'))) return names.sort();
        await new Promise((r) => setTimeout(r, 100));
      }
      return [];
    });
    // Trunk's hashes are hexadecimal u64s without leading zeros: up to 16 digits.
    assert.deepEqual(kept.map((n) => n.replace(/-[0-9a-f]{1,16}(?=(_bg)?\.(js|wasm|css)$)/, '-HASH')), [
      '/talks/opal/', '/talks/opal/opal-web-HASH.js', '/talks/opal/opal-web-HASH_bg.wasm',
      '/talks/opal/style-HASH.css', '/talks/opal/worker.js',
    ]);
    // The network goes: the host is gone and the browser is offline.
    await sub.close();
    await context.setOffline(true);
    await page.reload();
    await status.getByText('Run 1 finished').waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await status.getByText('Run 2 finished').waitFor({ timeout: 60_000 });
    await page.screenshot({ path: `${artifacts}/offline.png` });
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
    await sub.close();
  }
});
