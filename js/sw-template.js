// ttft-studio's service worker: keeps the app shell (this build's files) for offline use and
// stays out of every other request. Generated at build time by js/build-sw.mjs from this
// template: SHELL is the build's file list and VERSION a hash of their contents, so a new build
// is a new worker, which waits until the page says "reload" (no silent stale app).
//
// What it never touches: cross-origin requests, non-GET requests, and any same-origin GET that
// is not one of the shell files (the reference endpoint's /v1/*, ground truth, metrics...).
// Where the browser has static routing (InstallEvent.addRoutes, Chromium 123+) the shell is
// served by routes to its cache and the worker has no fetch handler, so it is never consulted
// for any other request (dedicated workers' included); elsewhere a fetch handler serves the
// shell and returns at once for everything else, without responding.
const VERSION = "__VERSION__";
const SHELL = __SHELL__;
const CACHE = `ttft-studio-shell-${VERSION}`;
const SHELL_PATHS = new Set(SHELL);
/**
 * Whether this browser routes requests without running the worker (InstallEvent.addRoutes).
 * Then the worker has no fetch handler at all, so no request (the page's, or a stamping
 * worker's) ever waits for it; the shell comes from its cache through the static routes.
 */
const STATIC_ROUTES = typeof InstallEvent !== "undefined" && "addRoutes" in InstallEvent.prototype;
/** Requests that reached the fetch handler and were left alone (newest last, at most 100). */
const passedThrough = [];
/** Whether the static routes were accepted. */
let staticRoutes = STATIC_ROUTES ? "pending" : "not supported";

self.addEventListener("install", (event) => {
  let routes = Promise.resolve();
  if (STATIC_ROUTES) {
    const baseURL = self.location.origin + "/";
    routes = event
      .addRoutes([
        {
          condition: { or: SHELL.map((pathname) => ({ urlPattern: { pathname, baseURL } })) },
          source: { cacheName: CACHE },
        },
      ])
      .then(
        () => (staticRoutes = "active"),
        (e) => (staticRoutes = `refused: ${e}`),
      );
  }
  event.waitUntil(Promise.all([routes, caches.open(CACHE).then((cache) => cache.addAll(SHELL))]));
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
      )
      .then(() => self.clients.claim()),
  );
});

self.addEventListener("message", (event) => {
  const msg = event.data || {};
  if (msg.type === "skip-waiting") self.skipWaiting();
  if (msg.type === "status" && event.ports[0]) {
    event.ports[0].postMessage({
      version: VERSION,
      staticRoutes,
      fetchHandler: !STATIC_ROUTES,
      passedThrough: passedThrough.slice(),
    });
  }
});

// Browsers without static routes (Firefox, Safari today): a fetch handler that answers only the
// shell's GETs and lets everything else go untouched (no respondWith: the browser fetches it as
// if there were no worker, after dispatching the event).
if (!STATIC_ROUTES) {
  self.addEventListener("fetch", (event) => {
    const request = event.request;
    const url = new URL(request.url);
    const ours =
      request.method === "GET" && url.origin === self.location.origin && SHELL_PATHS.has(url.pathname);
    if (!ours) {
      passedThrough.push(`${request.method} ${request.url}`);
      if (passedThrough.length > 100) passedThrough.shift();
      return;
    }
    event.respondWith(
      caches
        .open(CACHE)
        .then((cache) => cache.match(url.pathname))
        .then((hit) => hit || fetch(request)),
    );
  });
}
