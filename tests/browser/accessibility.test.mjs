// An accessibility audit with axe-core: the page after its opening run, every results tab,
// the editor and talk mode, light and dark, on a laptop and a phone. Serious and critical
// violations fail the test (minor and moderate ones are axe's advice, not WCAG failures).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { serveDist, launchBrowser } from './harness.mjs';

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let server, browser;
before(async () => {
  server = await serveDist();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

/** The serious and critical violations on `page` now, one line each. */
async function audit(page) {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ content: axeSource });
  return page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.impact} ${v.id} (${v.nodes.length}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join('; ')}`);
  });
}

for (const [width, height] of [[1440, 900], [360, 740]]) {
  for (const colorScheme of ['light', 'dark']) {
    test(`no serious accessibility violation at ${width} px, ${colorScheme}`, async () => {
      const page = await browser.newPage({ viewport: { width, height }, colorScheme });
      await page.goto(server.url);
      await page.getByTestId('run-status').getByText('Run 1 finished').waitFor();
      const found = [];
      for (const name of ['Summary', 'Charts', 'Latency', 'Timeline', 'Routing']) {
        await page.getByRole('tab', { name, exact: true }).click();
        await page.getByRole('tabpanel').first().waitFor();
        found.push(...(await audit(page)).map((v) => `${name} tab: ${v}`));
      }
      await page.keyboard.press('t');
      await page.getByTestId('talk-canvas').waitFor();
      found.push(...(await audit(page)).map((v) => `talk mode: ${v}`));
      assert.deepEqual(found, []);
      await page.close();
    });
  }
}
