// ttft-studio's stamping worker: it sends requests and stamps every read, and does nothing
// else. No parsing, no framework, no page work between two reads' stamps: each read's
// `performance.now()` is taken the moment its promise resolves and stored in a preallocated
// array. When a request is over, its capture (bytes + times, in this worker's clock, with this
// worker's `performance.timeOrigin` so the page can convert) goes to the page in one message,
// and the page's wasm core parses it (`src/browser/stamper.rs`, `ttft_core::capture`).
//
// A run's closed loop runs here too ("queue"): the page posts a phase's requests ahead, and each
// lane starts its next request the moment its previous one ends, with no round trip through the
// page in between; planned send times (Poisson arrivals, later traces) are kept here as well.
//
// In:  {type: "send", id, url, headers: [[name, value]…], body, timeoutMs}
//      {type: "queue", queue, lanes, startEpoch, jobs: [{id, url, headers, body, timeoutMs,
//       atMs}…]}  run `jobs` in order on `lanes` concurrent lanes; a job with `atMs` is not
//       sent before `startEpoch + atMs` (wall clock, ms); answers "done" per job, then
//       {type: "queue-done", queue}
//      {type: "abort"}  abort every request in flight and drop every queued one (a cancelled
//                       run; partial data kept)
//      {type: "reset"}  empty Resource Timing before a run
//      A job (sent or queued) with `watch: true` is shown live on the page's chat surface if
//      no other request of this worker is being shown: each of its reads is also posted as
//      it is stamped (after the stamp, so the stamp never waits for it).
// Out: {type: "ready", timeOrigin}
//      {type: "read", id, seq, timeOrigin, sentAt, at, bytes}  read `seq` (0 = the first) of
//       the request shown live
//      {type: "watch-end", id}  the request shown live is over (its "done" follows)
//      {type: "alive"}  every second while a queue runs
//      {type: "queue-done", queue}
//      {type: "done", id, timeOrigin, sentAt, headersAt, status, contentType, requestId,
//       times: Float64Array, sizes: Uint32Array, body: Uint8Array, endAt,
//       end: "finished" | "http_error" | "failed", error, errorBody, timedOut,
//       duringBody, queueMs, protocol}
"use strict";

const inFlight = new Map();
// Queues being run, by the page's queue id: their jobs not yet started.
const queues = new Map();
performance.setResourceTimingBufferSize(100000);

self.onmessage = (event) => {
  const m = event.data;
  if (m.type === "send") {
    send(m);
  } else if (m.type === "queue") {
    runQueue(m);
  } else if (m.type === "abort") {
    for (const q of queues.values()) {
      q.aborted = true;
      q.jobs.length = 0;
    }
    for (const controller of inFlight.values()) controller.abort();
  } else if (m.type === "reset") {
    performance.clearResourceTimings();
  }
};

// While a queue runs, the page hears from this worker at least every second, so it can tell a
// silent worker from a long request.
let heartbeat = null;
// The id of the request whose reads the page draws live, if any (one at a time).
let watching = null;

// Runs a queue on its lanes: each lane takes the next job the moment its previous one is over.
async function runQueue(m) {
  const q = { jobs: m.jobs.slice(), aborted: false };
  const jobs = q.jobs;
  queues.set(m.queue, q);
  if (heartbeat === null) heartbeat = setInterval(() => self.postMessage({ type: "alive" }), 1000);
  const start = m.startEpoch - performance.timeOrigin;
  const lane = async () => {
    for (;;) {
      const job = jobs.shift();
      if (!job) return;
      if (job.atMs != null) {
        const wait = start + job.atMs - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        // Dropped by an abort while it waited for its time: never sent.
        if (q.aborted) return;
      }
      await send(job);
    }
  };
  const lanes = [];
  for (let k = 0; k < Math.max(1, m.lanes); k++) lanes.push(lane());
  await Promise.all(lanes);
  queues.delete(m.queue);
  if (queues.size === 0) {
    clearInterval(heartbeat);
    heartbeat = null;
  }
  self.postMessage({ type: "queue-done", queue: m.queue });
}

async function send(m) {
  const controller = new AbortController();
  inFlight.set(m.id, controller);
  const out = {
    type: "done", id: m.id, timeOrigin: performance.timeOrigin, sentAt: 0, headersAt: null,
    status: 0, contentType: null, requestId: null, endAt: 0, end: "finished", error: null,
    errorBody: null, timedOut: false, duringBody: false, queueMs: null, protocol: null,
  };
  const timer = setTimeout(() => {
    out.timedOut = true;
    controller.abort();
  }, m.timeoutMs);
  let times = new Float64Array(2048);
  let sizes = new Uint32Array(2048);
  const parts = [];
  let n = 0;
  const watched = m.watch === true && watching === null;
  if (watched) watching = m.id;
  try {
    const init = { method: "POST", headers: m.headers, body: m.body, signal: controller.signal };
    out.sentAt = performance.now();
    const response = await fetch(m.url, init);
    out.headersAt = performance.now();
    out.status = response.status;
    out.contentType = response.headers.get("content-type");
    out.requestId = response.headers.get("x-request-id");
    if (!response.ok) {
      out.errorBody = await response.text();
      out.end = "http_error";
      out.endAt = performance.now();
    } else if (response.body) {
      out.duringBody = true;
      const reader = response.body.getReader();
      for (;;) {
        const r = await reader.read();
        const t = performance.now();
        if (r.done) {
          out.endAt = t;
          break;
        }
        if (n === times.length) {
          const grownTimes = new Float64Array(n * 2);
          grownTimes.set(times);
          times = grownTimes;
          const grownSizes = new Uint32Array(n * 2);
          grownSizes.set(sizes);
          sizes = grownSizes;
        }
        times[n] = t;
        sizes[n] = r.value.byteLength;
        parts.push(r.value);
        n++;
        if (watched) {
          self.postMessage({
            type: "read", id: m.id, seq: n - 1, timeOrigin: performance.timeOrigin,
            sentAt: out.sentAt, at: t, bytes: r.value,
          });
        }
      }
    } else {
      out.endAt = performance.now();
    }
  } catch (err) {
    out.endAt = performance.now();
    out.end = "failed";
    out.error = String((err && err.message) || err);
  }
  clearTimeout(timer);
  inFlight.delete(m.id);
  if (watched) {
    watching = null;
    self.postMessage({ type: "watch-end", id: m.id });
  }
  // The request is over: from here on nothing is stamped for it.
  let total = 0;
  for (let k = 0; k < n; k++) total += sizes[k];
  const body = new Uint8Array(total);
  let offset = 0;
  for (const p of parts) {
    body.set(p, offset);
    offset += p.byteLength;
  }
  out.times = times.slice(0, n);
  out.sizes = sizes.slice(0, n);
  out.body = body;
  const entry = timingEntry(m.url, out.sentAt);
  if (entry) {
    out.protocol = entry.nextHopProtocol || null;
    // Held by the browser before sending: from the start of the fetch to the request going out,
    // less the time this request spent opening its own connection (DNS, TCP, TLS), which is
    // connection setup, not a queue. A reused connection has none (its phases are all 0 long).
    if (entry.requestStart > 0) {
      const setup = entry.domainLookupStart > 0 && entry.connectEnd > entry.domainLookupStart
        ? entry.connectEnd - entry.domainLookupStart : 0;
      out.queueMs = Math.max(0, entry.requestStart - entry.startTime - setup);
    }
  }
  self.postMessage(out, [out.times.buffer, out.sizes.buffer, out.body.buffer]);
}

// The Resource Timing entry of the request sent at `sentAt` (the closest start within 50 ms).
function timingEntry(url, sentAt) {
  let best = null;
  for (const e of performance.getEntriesByName(url)) {
    const distance = Math.abs(e.startTime - sentAt);
    if (distance < 50 && (!best || distance < Math.abs(best.startTime - sentAt))) best = e;
  }
  return best;
}

self.postMessage({ type: "ready", timeOrigin: performance.timeOrigin });
