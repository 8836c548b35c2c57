// The race view: a share link carrying a race opens it, runs every entrant in the worker
// pool, plays them back on one clock with live counters, and each entrant's final numbers
// equal the native engine's run of the same patched scenario.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { openPage, artifacts, browser, server, useBrowser } from './harness.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const preset = JSON.parse(fs.readFileSync(`${repo}/examples/race_round_robin_vs_prefix.json`, 'utf8'));

useBrowser();

/** A share link's fragment, made as the app documents it: zlib, then base64url. */
function shareFragment(doc) {
  return `#s=v1.${zlib.deflateSync(JSON.stringify(doc)).toString('base64url')}`;
}

/** RFC 7386 merge patch, written here independently of the engine's. */
function mergePatch(target, patch) {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out = (target && typeof target === 'object' && !Array.isArray(target)) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k]; else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** The native engine's results for one entrant: the document without its race, patched. */
function nativeRun(entrant, dir, i) {
  const { race, ...doc } = preset;
  const file = path.join(dir, `entrant${i}.json`);
  const out = path.join(dir, `entrant${i}.out.json`);
  fs.writeFileSync(file, JSON.stringify(mergePatch(doc, entrant.patch)));
  const cli = spawnSync('cargo', ['run', '-q', '--release', '-p', 'opal-cli', '--', 'run', file,
    '-q', '--json', out], { cwd: repo, encoding: 'utf8' });
  assert.equal(cli.status, 0, cli.stderr);
  return JSON.parse(fs.readFileSync(out, 'utf8'));
}

const lanes = (page) => page.getByTestId('race-lane');
const counter = async (lane, id, attr = 'data-value') =>
  Number(await lane.getByTestId(id).getAttribute(attr));
const position = (page) => page.evaluate(() => Number(document.querySelector('.talk-bar input[type=range]').value));

test('a race share link opens the race, plays it on one clock and ends on the engine\'s numbers', async () => {
  const { page, errors } = await openPage(browser, server.url + shareFragment(preset));
  // Projector size.
  await page.setViewportSize({ width: 1280, height: 720 });
  const view = page.getByTestId('race-view');
  await view.waitFor();
  assert.equal(await lanes(page).count(), 2);
  assert.deepEqual(await lanes(page).evaluateAll((ls) => ls.map((l) => l.dataset.label)),
    ['round robin', 'prefix-aware']);
  // Both entrants simulate by themselves; then each lane shows its counters and cluster.
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=race-completed]').length === 2,
    null, { timeout: 120_000 });
  assert.equal(await lanes(page).first().getByTestId('talk-canvas').count(), 1);
  const completed = () => lanes(page).evaluateAll((ls) =>
    ls.map((l) => Number(l.querySelector('[data-testid=race-completed]').dataset.value)));
  assert.deepEqual(await completed(), [0, 0], 'the clock starts at 0');

  // Space plays; the counters climb as the clock advances.
  await page.keyboard.press(' ');
  await page.waitForFunction(() => Number(document.querySelector('[data-testid=race-completed]').dataset.value) > 10,
    null, { timeout: 30_000 });
  await page.keyboard.press(' ');
  const paused = await position(page);
  assert.ok(paused > 0);
  const early = await completed();
  assert.ok(early.every((n) => n > 0 && n < 600), `${early}`);

  // → seeks 5 s; halfway through, the counters are live figures, and a leader is marked.
  for (let k = 0; k < 3; k += 1) await page.keyboard.press('ArrowRight');
  await page.waitForFunction((p) => Number(document.querySelector('.talk-bar input[type=range]').value) >= p + 14.9,
    paused);
  const mid = await completed();
  assert.ok(mid.every((n, i) => n > early[i]), `${mid} after ${early}`);
  assert.ok(await page.locator('.race-counter.leader').count() >= 1);
  await page.getByTestId('race-split').waitFor();
  await page.waitForTimeout(300);
  await page.screenshot({ path: `${artifacts}/race-mid.png` });

  // + speeds up to 64×; playback runs to the end of the slower entrant and stops there.
  for (let k = 0; k < 6; k += 1) await page.keyboard.press('+');
  await page.keyboard.press(' ');
  // (The slider's value is the browser's rounding of the position, so compare loosely.)
  await page.waitForFunction(() => {
    const r = document.querySelector('.talk-bar input[type=range]');
    return Number(r.value) >= Number(r.max) - 1e-6 && r.closest('.talk-bar').querySelector('button').textContent === 'Play';
  }, null, { timeout: 60_000 });
  await page.waitForTimeout(300);
  await page.screenshot({ path: `${artifacts}/race-end.png` });

  // Each entrant's final numbers are the native engine's for its patched scenario.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opal-race-'));
  for (const [i, entrant] of preset.race.entrants.entries()) {
    const native = nativeRun(entrant, dir, i);
    const stage = native.stages[0];
    const lane = lanes(page).nth(i);
    assert.equal(await counter(lane, 'race-completed'), stage.successful_requests, entrant.label);
    assert.equal(await counter(lane, 'race-p99'), stage.ttft.p99_ms, entrant.label);
    assert.equal(await counter(lane, 'race-p99', 'data-mean'), stage.ttft.mean_ms, entrant.label);
    assert.equal(await counter(lane, 'race-hit'), stage.prefix_hit_rate.gpu_cache, entrant.label);
  }
  // The preset's story: prefix-aware routing serves more from the GPU cache.
  const hits = await lanes(page).evaluateAll((ls) =>
    ls.map((l) => Number(l.querySelector('[data-testid=race-hit]').dataset.value)));
  assert.ok(hits[1] > hits[0], `${hits}`);
  // The routes split where a policy chose for a reason (not at a tie broken at random), and
  // the verdict waits for every seed: prefix-aware wins p99 TTFT at each of the preset's
  // three, decided after the warm-up (the first 10 % of arrivals, ~30 s).
  assert.match(await page.getByTestId('race-split').textContent(),
    /Routes split at t = [\d.]+ s: request \d+ goes to worker \d+ vs \d+; prefix-aware chose by cached prefix/);
  await page.getByTestId('race-decided')
    .getByText(/^prefix-aware leads p99 TTFT in 3 of 3 seeds \(decided at \d+ s, after the warm-up\)\.$/)
    .waitFor({ timeout: 120_000 });

  // Esc leaves the race for the editor, which holds the link's document.
  await page.keyboard.press('Escape');
  await view.waitFor({ state: 'detached' });
  await page.getByTestId('race-panel').waitFor();
  await page.getByRole('button', { name: /Theme/ }).click();
  await page.getByRole('button', { name: /Theme/ }).click();
  await page.locator('.app.theme-dark').waitFor();
  await page.getByTestId('race-panel').screenshot({ path: `${artifacts}/race-editor-dark.png` });
  assert.deepEqual(errors, []);
});

test('the race preset opens the race in one click, four lanes fit, and a bad patch says where', async () => {
  const { page, errors } = await openPage(browser, server.url);
  await page.setViewportSize({ width: 1280, height: 720 });
  await page.getByRole('heading', { name: 'Opal' }).waitFor();
  await page.locator('[data-preset="race_round_robin_vs_prefix"]').click();
  await page.getByTestId('race-view').waitFor();
  await page.keyboard.press('Escape');
  // Two more entrants from the panel's policy list: four lanes.
  const panel = page.getByTestId('race-panel');
  await panel.getByRole('combobox').selectOption('least_loaded');
  await panel.getByRole('button', { name: 'Add entrant' }).click();
  await panel.getByRole('combobox').selectOption('prefix_load');
  await panel.getByRole('button', { name: 'Add entrant' }).click();
  assert.ok(await panel.getByRole('button', { name: 'Add entrant' }).isDisabled(), 'four at most');
  // A patch that breaks the scenario is reported at its entrant, and the race cannot start.
  const patch = panel.locator('.race-patch').nth(1);
  await patch.fill('{"simulation": {"num_workers": 0}}');
  await patch.blur();
  await panel.getByText('race.entrants[1].patch: with this patch the scenario is invalid').waitFor();
  assert.ok(await panel.getByTestId('start-race').isDisabled());
  await patch.fill('{"router": {"policy": {"policy": "max_prefix"}}}');
  await patch.blur();
  await panel.getByTestId('start-race').click();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=race-completed]').length === 4,
    null, { timeout: 180_000 });
  await page.getByRole('slider', { name: 'Simulated time' }).fill('20');
  await page.waitForTimeout(400);
  await page.screenshot({ path: `${artifacts}/race-four.png` });
  // On a 1080p projector all four lanes fit on one screen.
  await page.setViewportSize({ width: 1920, height: 1080 });
  await page.waitForTimeout(400);
  await page.screenshot({ path: `${artifacts}/race-four-1080p.png` });
  assert.deepEqual(errors, []);
});
