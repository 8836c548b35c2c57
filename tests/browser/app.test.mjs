// The app frame: share links, import/export, keyboard, forms bound to the JSON, themes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import zlib from 'node:zlib';
import { openPage, artifacts, browser, server, useBrowser } from './harness.mjs';

useBrowser();

// The engine's default scenario, which a fresh page opens with.
const DEFAULT_SCENARIO = fs.readFileSync(new URL('../../examples/default.json', import.meta.url), 'utf8');
const SCENARIO = {
  simulation: { seed: 1234, num_workers: 2 },
  router: { policy: { policy: 'prefix_load', w_prefix: 2, w_load: 0.5 } },
  workload: { stages: [
    { type: 'UniformReqRate', request_rate: 5.5, total_requests: 40 },
    { type: 'ExponentialReqRate', request_rate: 20, total_requests: 120 },
  ] },
};

async function ready(url = server.url) {
  const opened = await openPage(browser, url);
  await opened.page.getByRole('heading', { name: 'Opal' }).waitFor();
  return opened;
}
const editor = (page) => page.locator('textarea.scenario-json');
const notices = (page) => page.getByTestId('notices');

/** Types a scenario, clicks Share and returns the link shown in the share box. */
async function makeLink(page, doc) {
  await editor(page).fill(JSON.stringify(doc, null, 2));
  await page.getByRole('button', { name: 'Share', exact: true }).click();
  const link = await page.getByTestId('share-link').inputValue();
  assert.match(link, /#s=v1\.[A-Za-z0-9_-]+$/);
  return link;
}

test('a share link opened in a fresh page restores the same scenario', async () => {
  const { page, errors } = await ready();
  const link = await makeLink(page, SCENARIO);
  // The address bar carries the link too, so copying the URL works as well.
  assert.equal(page.url(), link);
  await notices(page).getByText(/Link copied|select the link in its box/).waitFor();
  await page.screenshot({ path: `${artifacts}/share-link.png` });

  const fresh = await ready(link);
  await notices(fresh.page).getByText('Opened the scenario from the link.').waitFor();
  assert.deepEqual(JSON.parse(await editor(fresh.page).inputValue()), SCENARIO);
  await fresh.page.getByTestId('validation').getByText('Scenario is valid.').waitFor();
  // The link also reproduces the run.
  await fresh.page.getByTestId('run-status').getByText('Run 1 finished').waitFor();
  assert.deepEqual([...errors, ...fresh.errors], []);
});

test('a damaged link opens the default scenario and says what happened', async () => {
  const { page, errors } = await ready();
  const link = await makeLink(page, SCENARIO);
  const [base, payload] = link.split('#s=v1.');
  const cases = [
    [`${base}#s=v1.${payload.slice(0, Math.floor(payload.length / 8) * 4)}`, /it was cut off/],
    [`${base}#s=v1.${payload.slice(0, 10)}*${payload.slice(10)}`, /stray character at position 10/],
    [`${base}#s=v7.${payload}`, /version 'v7' is not one this app reads/],
  ];
  for (const [url, why] of cases) {
    const broken = await ready(url);
    const notice = notices(broken.page).getByText(/The link was damaged/);
    await notice.waitFor();
    assert.match(await notice.textContent(), why);
    assert.match(await notice.textContent(), /Opened the default scenario instead\./);
    assert.equal(await editor(broken.page).inputValue(), DEFAULT_SCENARIO);
    // The damaged link stays in the address bar: nothing the user had is thrown away.
    assert.equal(broken.page.url(), url);
    if (why.source.includes('cut off')) await broken.page.screenshot({ path: `${artifacts}/damaged-link.png` });
    // Dismissing removes it.
    await broken.page.getByRole('button', { name: 'Dismiss' }).click();
    await notice.waitFor({ state: 'detached' });
    assert.deepEqual(broken.errors, []);
  }
  assert.deepEqual(errors, []);
});

test('a link asking more of one run than a tab holds is refused at its stage, and nothing runs', async () => {
  // 2,000 req/s for 6,000 s: 12,000,000 requests, within the document's raised limit
  // (20,000,000) and over the tab's (10,000,000), past which the results may not fit.
  const doc = { simulation: { num_workers: 64, max_requests: 20000000 }, workload: { stages: [
    { type: 'UniformReqRate', request_rate: 2000, time_duration_sec: 6000 }] } };
  const { page, errors } = await ready(`${server.url}#s=v1.${zlib.deflateSync(JSON.stringify(doc)).toString('base64url')}`);
  await page.getByTestId('validation').getByText('workload.stages[0] expects 12,000,000 requests; in a browser tab '
    + 'a run is limited to 10,000,000 requests (the command line, opal run, goes up to simulation.max_requests)').waitFor();
  await page.getByTestId('run-status').getByText('Not run yet').waitFor();
  await editor(page).press('Control+Enter');
  await page.getByTestId('run-status').getByText('Not run yet').waitFor();
  assert.deepEqual(errors, []);
});

test('a short link holding 5,000 stages opens, runs and draws its long lists a part at a time', async () => {
  // 1,385 characters of link once took the page to its 4 GB ceiling (every stage card's
  // callbacks held a copy of the whole list: 5,000² stages) and lost it.
  const doc = { workload: { stages: Array.from({ length: 5000 }, () => (
    { type: 'UniformReqRate', request_rate: 10, total_requests: 10 })) } };
  const link = `${server.url}#s=v1.${zlib.deflateSync(JSON.stringify(doc)).toString('base64url')}`;
  assert.ok(link.length < 1500, `${link.length} characters`);
  const { page, errors } = await ready(link);
  await page.getByTestId('run-status').getByText('Run 1 finished').waitFor({ timeout: 60_000 });
  // The form draws 20 stage cards and says where the rest are; 20 more on request.
  const hidden = page.getByTestId('stages-hidden');
  assert.match(await hidden.textContent(), /^Stages 21 to 5000 are not drawn here/);
  await hidden.getByRole('button', { name: 'Show 20 more' }).click();
  assert.match(await hidden.textContent(), /^Stages 41 to 5000 are not drawn here/);
  // The results draw 20 stage tables, and the charts do not shade 5,000 windows.
  assert.equal(await page.getByTestId('summary').locator('.summary-stage').count(), 20);
  assert.match(await page.getByTestId('stage-tables-hidden').textContent(), /^Stages 20 to 4999 are not drawn here/);
  await page.getByRole('tab', { name: 'Charts' }).click();
  await page.getByTestId('windows-unshaded').waitFor();
  assert.ok(await page.evaluate(() => document.getElementsByTagName('*').length) < 20_000);
  assert.deepEqual(errors, []);
});

test('? opens the shortcut help, Esc closes it, and letters typed in the JSON stay text', async () => {
  const { page, errors } = await ready();
  const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
  await page.keyboard.press('?');
  await help.waitFor();
  assert.ok(await help.getByText('Talk mode on/off').isVisible());
  await page.screenshot({ path: `${artifacts}/help.png` });
  // A modal dialog holds the focus: Tab and Shift+Tab stay on its Close button.
  const focused = () => page.evaluate(() => document.activeElement?.textContent);
  assert.equal(await focused(), 'Close');
  await page.keyboard.press('Tab');
  assert.equal(await focused(), 'Close');
  await page.keyboard.press('Shift+Tab');
  assert.equal(await focused(), 'Close');
  await page.keyboard.press('Escape');
  await help.waitFor({ state: 'detached' });

  await editor(page).fill('{}');
  await editor(page).press('End');
  await editor(page).pressSequentially('?t');
  assert.equal(await editor(page).inputValue(), '{}?t');
  assert.equal(await help.count(), 0);
  assert.equal(await page.locator('.app.talk').count(), 0);
  assert.deepEqual(errors, []);
});

/** The height of the first chart's first label, px on screen. */
const chartText = (page) => page.locator('.chart-svg text').first()
  .evaluate((t) => t.getBoundingClientRect().height);

test('t switches talk mode: large type, results only, playback bar', async () => {
  const { page, errors } = await ready();
  await page.getByRole('tablist', { name: 'Results' }).getByRole('tab', { name: 'Charts' }).click();
  const editorText = await chartText(page);
  await page.locator('body').click({ position: { x: 5, y: 400 } });
  await page.keyboard.press('t');
  await page.locator('.app.talk').waitFor();
  // On a fresh page it runs the scenario and plays it: the playback bar says Pause.
  await page.getByTestId('run-status').getByText(/Run 1 finished/).waitFor();
  await page.getByRole('group', { name: 'Playback' }).getByRole('button', { name: 'Pause' }).waitFor();
  assert.ok(!(await page.getByRole('region', { name: 'Scenario editor' }).isVisible()));
  assert.ok(await page.getByRole('region', { name: 'Results' }).isVisible());
  assert.ok(await page.getByRole('group', { name: 'Playback' }).isVisible());
  const size = await page.locator('.app').evaluate((el) => parseFloat(getComputedStyle(el).fontSize));
  assert.ok(size >= 20, `talk mode type is ${size}px`);
  // Its charts' labels too: 1.5 times the editor's.
  const talkText = await chartText(page);
  assert.ok(talkText >= 1.4 * editorText, `chart labels ${editorText} px, in talk mode ${talkText} px`);
  await page.screenshot({ path: `${artifacts}/talk-mode.png` });
  await page.getByRole('button', { name: 'Talk mode' }).click();
  await page.locator('.app.talk').waitFor({ state: 'detached' });
  assert.ok(await page.getByRole('region', { name: 'Scenario editor' }).isVisible());
  assert.deepEqual(errors, []);
});

test('importing a JSON file with the file picker replaces the scenario; a broken file does not', async () => {
  const { page, errors } = await ready();
  const input = page.getByTestId('import-file');
  const text = JSON.stringify(SCENARIO, null, 2);
  await input.setInputFiles({ name: 'rag.json', mimeType: 'application/json', buffer: Buffer.from(text) });
  await notices(page).getByText('Opened the scenario from rag.json.').waitFor();
  assert.equal(await editor(page).inputValue(), text);

  await input.setInputFiles({ name: 'broken.json', mimeType: 'application/json', buffer: Buffer.from('{ "simulation": ') });
  await notices(page).getByText(/broken\.json is not valid JSON .*your scenario is unchanged/).waitFor();
  assert.equal(await editor(page).inputValue(), text);
  assert.deepEqual(errors, []);
});

test('dropping a JSON file on the page replaces the scenario', async () => {
  const { page, errors } = await ready();
  const text = JSON.stringify({ simulation: { seed: 99 } }, null, 2);
  const transfer = await page.evaluateHandle((body) => {
    const dt = new DataTransfer();
    dt.items.add(new File([body], 'dropped.json', { type: 'application/json' }));
    return dt;
  }, text);
  const app = page.locator('.app');
  await app.dispatchEvent('dragover', { dataTransfer: transfer });
  await page.locator('.app.dragging').waitFor();
  await page.screenshot({ path: `${artifacts}/drop.png` });
  await app.dispatchEvent('drop', { dataTransfer: transfer });
  await notices(page).getByText('Opened the scenario from dropped.json.').waitFor();
  assert.equal(await editor(page).inputValue(), text);
  assert.equal(await page.locator('.app.dragging').count(), 0);
  assert.deepEqual(errors, []);
});

test('Export downloads the scenario text as scenario.json', async () => {
  const { page, errors } = await ready();
  const text = JSON.stringify(SCENARIO, null, 2);
  await editor(page).fill(text);
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Export' }).click(),
  ]);
  assert.equal(download.suggestedFilename(), 'scenario.json');
  assert.equal(fs.readFileSync(await download.path(), 'utf8'), text);
  assert.deepEqual(errors, []);
});

test('the form and the JSON edit the same document and keep what was typed', async () => {
  const { page, errors } = await ready();
  const seed = page.getByLabel('Seed');
  assert.equal(await seed.inputValue(), '42');
  // A one-field document, so the whole of it can be compared after each edit.
  await editor(page).fill('{ "simulation": { "seed": 42 } }');
  await seed.fill('7');
  await page.waitForFunction(() => document.querySelector('textarea.scenario-json').value.includes('"seed": 7'));
  assert.deepEqual(JSON.parse(await editor(page).inputValue()), { simulation: { seed: 7 } });

  // Not a number: the text stays in the field, the error is announced, the document keeps 7.
  await seed.fill('7x');
  await page.getByText("'7x' is not a number").waitFor();
  assert.equal(await seed.inputValue(), '7x');
  assert.equal(await seed.getAttribute('aria-invalid'), 'true');
  assert.equal(await seed.getAttribute('aria-describedby'), 'simulation-seed-hint simulation-seed-error');
  assert.deepEqual(JSON.parse(await editor(page).inputValue()), { simulation: { seed: 7 } });
  await page.screenshot({ path: `${artifacts}/form-error.png` });

  // ArrowUp steps from the last valid number.
  await seed.fill('7');
  await seed.press('ArrowUp');
  assert.equal(await seed.inputValue(), '8');
  await page.waitForFunction(() => document.querySelector('textarea.scenario-json').value.includes('"seed": 8'));

  // Editing the JSON updates the form.
  await editor(page).fill('{ "simulation": { "seed": 11 } }');
  await page.waitForFunction(() => document.querySelector('#simulation-seed').value === '11');

  // Broken JSON: the error is located, the form pauses, and the text is kept.
  await editor(page).fill('{\n  "simulation": { "seed": 11 ');
  const jsonError = page.getByTestId('json-error');
  await jsonError.waitFor();
  assert.match(await jsonError.textContent(), /^Line 2, column \d+: EOF while parsing an object/);
  assert.ok(await seed.isDisabled());
  assert.equal(await editor(page).inputValue(), '{\n  "simulation": { "seed": 11 ');
  await jsonError.getByRole('button', { name: 'Show me' }).click();
  const caret = await editor(page).evaluate((el) => el.selectionStart);
  assert.equal(caret, '{\n  "simulation": { "seed": 11 '.length);
  assert.deepEqual(errors, []);
});

test('Ctrl+Enter asks for a run, and the results pane reports its outcome', async () => {
  const { page, errors } = await ready();
  const status = page.getByTestId('run-status');
  // The page opened with the default scenario's run, and says what it shows.
  await status.getByText('Run 1 finished').waitFor();
  await page.getByTestId('opening-caption').getByText(/default scenario's results/).waitFor();
  await editor(page).press('Control+Enter');
  await status.getByText(/Run 2 finished at [\d.]+ s simulated/).waitFor();
  assert.equal(await page.getByTestId('opening-caption').count(), 0, 'the caption is for the opening run');
  // A scenario with problems is not run at all, and the user is told why.
  await editor(page).fill('[1]');
  await editor(page).press('Control+Enter');
  await notices(page).getByText('Fix 1 problem in the scenario before running.').waitFor();
  await status.getByText(/Run 2 finished/).waitFor();
  // A stage whose trace file was not provided fails with the field that names it.
  await editor(page).fill(JSON.stringify({ workload: { stages: [{ type: 'Trace', trace_file: 'conv.jsonl' }] } }));
  await editor(page).press('Control+Enter');
  await status.getByText(/Run 3 did not complete: workload\.stages\[0\]\.trace_file: the file "conv\.jsonl" was not provided/).waitFor();
  assert.deepEqual(errors, []);
});

test('a field showing a value that is not valid holds the run back and says which', async () => {
  const { page, errors } = await ready();
  const status = page.getByTestId('run-status');
  const seed = page.getByLabel('Seed');
  await seed.fill('-5');
  await page.locator('#simulation-seed-error').waitFor();
  // The document keeps 42; running it silently would not be what the field shows.
  await editor(page).press('Control+Enter');
  await notices(page).getByText('Fix Seed: must be at least 0 (the scenario still holds 42) before running.').waitFor();
  await status.getByText('Run 1 finished').waitFor();
  await seed.fill('7');
  await editor(page).press('Control+Enter');
  await status.getByText(/Run 2 finished/).waitFor();
  assert.deepEqual(errors, []);
});

test('the theme button overrides the system colour scheme; narrow screens show one pane at a time', async () => {
  const { page, errors } = await ready();
  const bg = () => page.locator('.app').evaluate((el) => getComputedStyle(el).backgroundColor);
  const theme = page.getByRole('button', { name: /^Theme:/ });
  await theme.click(); // system -> light
  assert.equal(await theme.textContent(), 'Theme: light');
  assert.equal(await bg(), 'rgb(250, 251, 252)');
  await theme.click(); // light -> dark
  assert.equal(await bg(), 'rgb(20, 23, 27)');
  await page.screenshot({ path: `${artifacts}/dark.png` });

  // A phone opens on the results; the editor is one tab away, and Run comes back.
  await page.setViewportSize({ width: 600, height: 900 });
  const editor = page.getByRole('region', { name: 'Scenario editor' });
  const results = page.getByRole('region', { name: 'Results' });
  const panes = page.getByTestId('pane-switch');
  await results.waitFor();
  assert.equal(await editor.isVisible(), false);
  assert.equal(await panes.getByRole('tab', { name: 'Results' }).getAttribute('aria-selected'), 'true');
  await page.screenshot({ path: `${artifacts}/narrow.png`, fullPage: true });
  await panes.getByRole('tab', { name: 'Scenario' }).click();
  await editor.waitFor();
  assert.equal(await results.isVisible(), false);
  await page.getByRole('button', { name: 'Run', exact: true }).click();
  await results.waitFor();
  assert.equal(await editor.isVisible(), false);
  // Wide again: both panes, no tabs.
  await page.setViewportSize({ width: 1400, height: 900 });
  await editor.waitFor();
  assert.equal(await panes.isVisible(), false);
  assert.deepEqual(errors, []);
});

test('the results tabs follow the arrow keys, Home and End, and run outcomes are announced', async () => {
  const { page, errors } = await ready();
  const status = page.getByTestId('run-status');
  // A live region: screen readers announce "Run 1 finished" without the user looking.
  assert.equal(await status.getAttribute('aria-live'), 'polite');
  assert.equal(await status.getAttribute('role'), 'status');
  await status.getByText(/Run 1 finished/).waitFor();
  const tabs = page.getByRole('tablist', { name: 'Results' });
  const tab = (name) => tabs.getByRole('tab', { name });
  const selected = async () => tabs.locator('[role=tab][aria-selected=true]').textContent();
  await tab('Summary').focus();
  // One tab stop: only the selected tab is in the Tab order.
  assert.equal(await tabs.locator('[role=tab][tabindex="0"]').count(), 1);
  await page.keyboard.press('ArrowRight');
  assert.equal(await selected(), 'Charts');
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Charts');
  await page.keyboard.press('End');
  assert.equal(await selected(), 'Routing');
  await page.keyboard.press('ArrowRight');
  assert.equal(await selected(), 'Summary', 'the arrows wrap');
  await page.keyboard.press('ArrowLeft');
  assert.equal(await selected(), 'Routing');
  await page.keyboard.press('Home');
  assert.equal(await selected(), 'Summary');
  const panel = page.getByRole('tabpanel');
  assert.equal(await panel.getAttribute('aria-labelledby'), await tab('Summary').getAttribute('id'));
  assert.deepEqual(errors, []);
});

test('an embed link shows only its run playing, its timeline, or its race, sized for an iframe', async () => {
  const { page, errors } = await ready();
  const link = await makeLink(page, SCENARIO);
  // The share box offers the iframe that embeds the link's run.
  const code = await page.getByTestId('share-embed').inputValue();
  assert.equal(code, `<iframe src="${link}&amp;embed" width="960" height="540" style="border:0" `
    + 'title="Opal: a simulated LLM serving run" loading="lazy"></iframe>');

  // The embed runs itself and plays, with nothing of the editor or the results.
  const embed = await openPage(browser, `${link}&embed`);
  await embed.page.setViewportSize({ width: 960, height: 540 });
  await embed.page.getByTestId('talk-canvas').waitFor({ timeout: 60_000 });
  assert.equal(await embed.page.getByRole('region', { name: 'Scenario editor' }).count(), 0);
  assert.equal(await embed.page.getByRole('region', { name: 'Results' }).count(), 0);
  const clock = embed.page.getByRole('slider', { name: 'Simulated time' });
  const at = Number(await clock.inputValue());
  await embed.page.waitForFunction((t) => Number(document.querySelector('input[type=range]').value) > t, at);
  // Esc leaves nothing; the credit opens the whole app on the same scenario.
  await embed.page.keyboard.press('Escape');
  await embed.page.getByTestId('talk-canvas').waitFor();
  assert.equal(await embed.page.getByTestId('embed-open').getAttribute('href'), link);
  await embed.page.screenshot({ path: `${artifacts}/embed-run.png` });

  // `=timeline` embeds the request timeline instead, drawn once the run ends.
  const timeline = await openPage(browser, `${link}&embed=timeline`);
  await timeline.page.setViewportSize({ width: 960, height: 540 });
  await timeline.page.getByTestId('timeline').locator('canvas').waitFor({ timeout: 60_000 });
  assert.equal(await timeline.page.getByRole('region', { name: 'Scenario editor' }).count(), 0);
  assert.equal(await timeline.page.getByRole('group', { name: 'Playback' }).count(), 0);
  assert.equal(await timeline.page.getByTestId('embed-open').getAttribute('href'), link);
  await timeline.page.screenshot({ path: `${artifacts}/embed-timeline.png` });

  // A link holding a race embeds the race.
  const race = JSON.parse(fs.readFileSync(new URL('../../examples/race_round_robin_vs_prefix.json', import.meta.url), 'utf8'));
  const raceLink = await makeLink(page, race);
  const raced = await openPage(browser, `${raceLink}&embed`);
  await raced.page.setViewportSize({ width: 960, height: 540 });
  await raced.page.getByTestId('race-view').waitFor({ timeout: 60_000 });
  assert.equal(await raced.page.getByRole('region', { name: 'Scenario editor' }).count(), 0);
  // It plays by itself once its entrants have run.
  await raced.page.waitForFunction(() => Number(document.querySelector('input[type=range]')?.value) > 0,
    null, { timeout: 180_000 });
  await raced.page.screenshot({ path: `${artifacts}/embed-race.png` });
  assert.deepEqual([...errors, ...embed.errors, ...timeline.errors, ...raced.errors], []);
});
