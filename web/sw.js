// The page's offline copy: a service worker that keeps the files of the page last opened,
// so that the app opens and runs with the network gone (talks happen on bad Wi-Fi). It
// lives next to index.html, so its scope is whatever path the site is served from.
//
// Files whose names carry Trunk's content hash never change: they are served from the
// copy. The page itself and worker.js keep their names across versions: they come from
// the network while there is one, and from the copy when there is none. Each time the
// page comes from the network, the copy is brought up to that page's files and the files
// of older versions are dropped.
const CACHE = 'opal-offline';
// Trunk writes the hash as a u64 in hexadecimal without leading zeros: up to 16 digits.
const HASHED = /-[0-9a-f]{1,16}(_bg)?\.(js|wasm|css)$/;

const scopeUrl = (path) => new URL(path, self.registration.scope).href;

/** The same-origin files a page's HTML names (its glue, wasm, stylesheet and worker). */
function filesOf(html) {
  const files = new Set([scopeUrl('worker.js')]);
  for (const [name] of html.matchAll(/[\w./-]+\.(js|wasm|css)\b/g)) {
    if (name.endsWith('sw.js')) continue;
    const url = new URL(name, self.registration.scope);
    if (url.origin === self.location.origin) files.add(url.href);
  }
  return [...files];
}

/** Keeps `page` (the index's response) and the files it names; drops every other file. */
async function keep(page) {
  const cache = await caches.open(CACHE);
  const index = scopeUrl('./');
  const files = filesOf(await page.clone().text());
  await cache.put(index, page);
  await Promise.all(files.map(async (url) => {
    if (HASHED.test(url) && (await cache.match(url))) return;
    const response = await fetch(url, { cache: HASHED.test(url) ? 'force-cache' : 'no-cache' });
    if (response.ok) await cache.put(url, response);
  }));
  const wanted = new Set([index, ...files]);
  for (const request of await cache.keys()) {
    if (!wanted.has(request.url)) await cache.delete(request);
  }
}

self.addEventListener('install', (event) => {
  event.waitUntil((async () => {
    const page = await fetch(scopeUrl('./'), { cache: 'no-cache' });
    if (page.ok) await keep(page);
    await self.skipWaiting();
  })());
});

self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('fetch', (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== 'GET' || url.origin !== self.location.origin) return;
  if (request.mode === 'navigate') {
    // Any page of the scope (a share link's query or fragment included) is the app.
    event.respondWith((async () => {
      try {
        const page = await fetch(request);
        if (page.ok && url.pathname === new URL(scopeUrl('./')).pathname) {
          event.waitUntil(keep(page.clone()).catch(() => {}));
        }
        return page;
      } catch (offline) {
        const kept = await caches.match(scopeUrl('./'));
        if (kept) return kept;
        throw offline;
      }
    })());
    return;
  }
  event.respondWith((async () => {
    // worker.js is asked for with the glue's URL in its query: one copy serves any.
    const kept = await caches.match(request, { ignoreSearch: true });
    if (kept && HASHED.test(url.pathname)) return kept;
    try {
      return await fetch(request);
    } catch (offline) {
      if (kept) return kept;
      throw offline;
    }
  })());
});
