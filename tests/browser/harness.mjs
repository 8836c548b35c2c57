// Shared test harness: a static server for dist/ on 127.0.0.1 and headless Debian Chromium.
import { before, after } from 'node:test';
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist');
const types = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.wasm': 'application/wasm',
  '.css': 'text/css', '.json': 'application/json', '.svg': 'image/svg+xml', '.png': 'image/png',
};

/** Serves dist/ on a free loopback port, under `prefix` (e.g. '/opal/'); resolves to
 * { url, close }. */
export async function serveDist(prefix = '/') {
  if (!fs.existsSync(path.join(root, 'index.html'))) {
    throw new Error(`no built app in ${root}: run 'trunk build --release' (make test does)`);
  }
  const server = http.createServer((req, res) => {
    const full = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (!full.startsWith(prefix)) { res.writeHead(404).end('not found'); return; }
    const urlPath = `/${full.slice(prefix.length)}`;
    let file = path.normalize(path.join(root, urlPath));
    if (!file.startsWith(root)) { res.writeHead(403).end(); return; }
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, 'index.html');
    fs.readFile(file, (err, data) => {
      if (err) { res.writeHead(404).end('not found'); return; }
      res.writeHead(200, { 'content-type': types[path.extname(file)] ?? 'application/octet-stream' });
      res.end(data);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  // close() waits for every open connection to end, and Chromium can hold one it never
  // sends a request on (a test's page stays open): that hung a CI run for good. End them.
  const close = () => new Promise((r) => { server.close(r); server.closeAllConnections(); });
  return { url: `http://127.0.0.1:${port}${prefix}`, close };
}

/** Launches Debian's Chromium headless with the flags this closed network needs. */
export function launchBrowser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
}

/** Opens a page that records every console error and page error, for the test to assert none. */
export async function openPage(browser, url) {
  return watchErrors(await browser.newPage(), url);
}

/** Records `page`'s console and page errors, then opens `url` in it. */
async function watchErrors(page, url) {
  const errors = [];
  page.on('console', (msg) => { if (msg.type() === 'error') errors.push(`console: ${msg.text()}`); });
  page.on('pageerror', (err) => errors.push(`page: ${err.message}`));
  await page.goto(url);
  // A plain page runs the default scenario as it opens: tests start from its results.
  if (!new URL(url).hash) {
    await page.getByTestId('run-status').getByText('Run 1 finished').waitFor({ timeout: 60_000 });
  }
  return { page, errors };
}

/**
 * Records, as mark `name` of an `openTimedPage` page, the next time `selector` is drawn
 * after it has left the page (a new run's table, once the last one's is gone), and forgets
 * the last click, so `clickToDrawn` times the next click to it.
 */
export async function rearmMark(page, name, selector) {
  await page.evaluate(([n, sel]) => {
    delete window.__drawn[n];
    window.__clicked = undefined;
    let gone = !document.querySelector(sel);
    const observer = new MutationObserver(() => {
      const here = document.querySelector(sel);
      if (!here) gone = true;
      if (gone && here) {
        observer.disconnect();
        requestAnimationFrame(() => { window.__drawn[n] = performance.now(); });
      }
    });
    observer.observe(document, { subtree: true, childList: true });
  }, [name, selector]);
}

/**
 * Opens `url` like `openPage`, in a page that records when each of `marks` (name → CSS
 * selector) is first on screen: the first frame drawn after a matching element appears, in
 * ms since the navigation started. Read one with `drawnAt`. Timed in the page because
 * Playwright's waits poll ever less often (every 500 ms after the first ~0.3 s), so a clock
 * around them counts the polling as well as the app.
 */
export async function openTimedPage(browser, url, marks) {
  const page = await browser.newPage();
  await page.addInitScript((wanted) => {
    window.__drawn = {};
    const pending = new Map(Object.entries(wanted));
    const observer = new MutationObserver(() => {
      for (const [name, selector] of pending) {
        if (!document.querySelector(selector)) continue;
        pending.delete(name);
        requestAnimationFrame(() => { window.__drawn[name] = performance.now(); });
      }
      if (pending.size === 0) observer.disconnect();
    });
    observer.observe(document, { subtree: true, childList: true });
    // The first click after the page opened (e.g. on Run), on the same clock.
    document.addEventListener('click', () => { window.__clicked ??= performance.now(); }, true);
  }, marks);
  return watchErrors(page, url);
}

/** When the mark `name` of an `openTimedPage` page was first drawn (ms since navigation). */
export async function drawnAt(page, name) {
  await page.waitForFunction((n) => window.__drawn[n] !== undefined, name);
  return page.evaluate((n) => window.__drawn[n], name);
}

/** Ms from the first click on an `openTimedPage` page (e.g. on Run) to its mark `name` drawn. */
export async function clickToDrawn(page, name) {
  const drawn = await drawnAt(page, name);
  return drawn - await page.evaluate(() => window.__clicked);
}

/** Where screenshots go, for a person to look at after the run. */
export const artifacts = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../artifacts');

/** The page server and the browser of a test file (live bindings: read them inside tests). */
export let server;
export let browser;

/** Starts the server and the browser before the calling file's tests and closes them after. */
export function useBrowser() {
  before(async () => {
    server = await serveDist();
    browser = await launchBrowser();
    fs.mkdirSync(artifacts, { recursive: true });
  });
  after(async () => { await browser?.close(); await server?.close(); });
}
