// ttft-studio's service worker: keeps the app shell (this build's files) for offline use and
// stays out of every other request. Generated at build time by js/build-sw.mjs from this
// template: SHELL is the build's file list and VERSION a hash of their contents, so a new build
// is a new worker, which waits until the page says "reload" (no silent stale app).
//
// It has no fetch handler, so it is never consulted for any request: the shell is served by
// static routes to its cache (InstallEvent.addRoutes, Chromium 123+), which the browser applies
// without running the worker, and every other request (the reference endpoint's /v1/*, any
// cross-origin, non-GET or streaming request, the stamping workers' too) goes to the network as
// if there were no worker. A browser without static routes would need a fetch handler, which
// every benchmark request would wait for (the worker started when idle): there the install
// fails on purpose and the studio says it cannot keep an offline copy.
const VERSION = "__VERSION__";
const SHELL = __SHELL__;
const CACHE = `ttft-studio-shell-${VERSION}`;
const STATIC_ROUTES = typeof InstallEvent !== "undefined" && "addRoutes" in InstallEvent.prototype;

self.addEventListener("install", (event) => {
  if (!STATIC_ROUTES) {
    event.waitUntil(Promise.reject(new Error("no static routes: an offline copy would sit in every request's path")));
    return;
  }
  const baseURL = self.location.origin + "/";
  const routes = event.addRoutes([
    {
      condition: { or: SHELL.map((pathname) => ({ urlPattern: { pathname, baseURL } })) },
      source: { cacheName: CACHE },
    },
  ]);
  // Fresh from the server, not from the HTTP cache: a stale file must not enter a new version.
  const shell = caches
    .open(CACHE)
    .then((cache) => cache.addAll(SHELL.map((url) => new Request(url, { cache: "reload" }))));
  // A refused route or a missing file fails the install: never "ready" without working.
  event.waitUntil(Promise.all([routes, shell]));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) =>
        Promise.all(
          keys
            .filter((k) => k.startsWith("ttft-studio-shell-") && k !== CACHE)
            .map((k) => caches.delete(k)),
        ),
      ),
  );
  // No clients.claim(): a page that loaded without the worker stays without it until its next
  // load (Chromium consults a worker that claimed a page mid-life for that page's requests).
});

self.addEventListener("message", (event) => {
  const msg = event.data || {};
  if (msg.type === "skip-waiting") self.skipWaiting();
  if (msg.type === "status" && event.ports[0]) {
    event.ports[0].postMessage({ version: VERSION, staticRoutes: STATIC_ROUTES, fetchHandler: false });
  }
});
