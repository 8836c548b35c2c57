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
