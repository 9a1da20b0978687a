//! Where reads are stamped: dedicated Web Workers (`public/stamp-worker.js`) whose only job is
//! to send a request, stamp each read and hand the bytes on, so neither parsing nor the page's
//! reactive work ever runs between two reads' stamps. The page's own fetch path
//! ([`super::fetch`]) is the fallback when no worker starts.
//!
//! A worker's clock starts at its own `performance.timeOrigin`; its times are moved onto the
//! page's timeline by the difference of the two origins ([`to_page_clock`]) before the core
//! sees them, and `timeOrigin + t0` gives the wall-clock send time.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use js_sys::{Float64Array, Function, Promise, Reflect, Uint8Array, Uint32Array};
use ttft_core::capture::{Capture, CaptureEnd, CapturedHead};
use ttft_core::request::HttpRequestSpec;
use ttft_core::timeline::{Outcome, Read};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{MessageEvent, Worker};

use super::cancel::RunHandle;
use super::clock::now_ms as now;
use super::fetch::{Exchange, Failure, bad_header, failure, sleep_ms};
use super::live::{self, LiveEvent};

/// The worker script, relative to the page.
const WORKER_URL: &str = "public/stamp-worker.js";

/// How long after a request's own timeout the page stops waiting for a worker that has gone
/// silent (the worker enforces the timeout; this only catches a worker that died); a worker
/// running a queue says it is alive every second, so a queue gives up after this much silence.
const GIVE_UP_AFTER_TIMEOUT_MS: f64 = 10_000.0;

/// How long a new worker may take to say it is ready before the page stamps instead.
const READY_TIMEOUT_MS: i32 = 5_000;

/// How a run stamps its reads.
#[derive(Clone)]
pub enum Stamping {
    /// In dedicated workers (the default).
    Workers(Rc<StampWorkers>),
    /// On the page, with the reason the workers were not used.
    Page(String),
}

impl Stamping {
    /// The stamping a run uses: `?stamping=page` or `?stamping=workers:N` in the page's URL
    /// choose (for diagnosis and the benchmark), otherwise one worker; the page when no
    /// worker starts.
    pub async fn choose() -> Stamping {
        let query = web_sys::window()
            .and_then(|w| w.location().search().ok())
            .unwrap_or_default();
        let wanted = query
            .trim_start_matches('?')
            .split('&')
            .find_map(|kv| kv.strip_prefix("stamping="))
            .unwrap_or("workers:1")
            .to_owned();
        if wanted == "page" {
            return Stamping::Page("chosen with ?stamping=page".into());
        }
        let count = wanted
            .strip_prefix("workers:")
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(1)
            .clamp(1, 16);
        match StampWorkers::shared(count).await {
            Ok(w) => Stamping::Workers(w),
            Err(why) => Stamping::Page(why),
        }
    }

    /// In words, for the report.
    pub fn describe(&self) -> String {
        match self {
            Stamping::Workers(w) if w.slots.len() == 1 => "1 stamping worker".into(),
            Stamping::Workers(w) => format!("{} stamping workers", w.slots.len()),
            Stamping::Page(why) => format!("the page ({why})"),
        }
    }
}

/// One worker and what it is doing.
struct Slot {
    worker: Worker,
    in_flight: Cell<u32>,
    /// When the page last heard from it (page clock, ms): a queue gives up on a silent worker.
    last_heard: Rc<Cell<f64>>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
}

/// A set of stamping workers, shared by every run of the page.
pub struct StampWorkers {
    slots: Vec<Slot>,
    /// Resolvers of the requests in flight, by id.
    waiting: Rc<RefCell<HashMap<u32, Function>>>,
    next_id: Cell<u32>,
}

thread_local! {
    static SHARED: RefCell<Option<Rc<StampWorkers>>> = const { RefCell::new(None) };
}

/// `t` of a worker whose clock starts at `worker_origin`, on the clock of a page whose clock
/// starts at `page_origin` (all ms; origins are `performance.timeOrigin`).
pub fn to_page_clock(t: f64, worker_origin: f64, page_origin: f64) -> f64 {
    t + (worker_origin - page_origin)
}

fn get(v: &JsValue, key: &str) -> JsValue {
    Reflect::get(v, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

impl StampWorkers {
    /// The page's workers, started (and awaited) on first use; `count` changes restart them.
    async fn shared(count: usize) -> Result<Rc<StampWorkers>, String> {
        if let Some(w) = SHARED.with(|s| s.borrow().clone())
            && w.slots.len() == count
        {
            return Ok(w);
        }
        let workers = Rc::new(StampWorkers::start(count).await?);
        SHARED.with(|s| {
            if let Some(old) = s.borrow_mut().replace(workers.clone()) {
                for slot in &old.slots {
                    slot.worker.terminate();
                }
            }
        });
        Ok(workers)
    }

    async fn start(count: usize) -> Result<StampWorkers, String> {
        let waiting: Rc<RefCell<HashMap<u32, Function>>> = Rc::default();
        let mut slots = Vec::with_capacity(count);
        for _ in 0..count {
            let worker = Worker::new(WORKER_URL)
                .map_err(|_| "this browser cannot start a Web Worker here".to_owned())?;
            let (ready, ready_resolve, ready_reject) = deferred();
            let ready_resolve = RefCell::new(Some(ready_resolve));
            let waiting_for_done = waiting.clone();
            let last_heard = Rc::new(Cell::new(now()));
            let heard = last_heard.clone();
            let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
                heard.set(now());
                let data = e.data();
                match get(&data, "type").as_string().as_deref() {
                    Some("ready") => {
                        if let Some(r) = ready_resolve.borrow_mut().take() {
                            let _ = r.call0(&JsValue::NULL);
                        }
                    }
                    Some("read") => deliver_read(&data),
                    Some("watch-end") => live::deliver(LiveEvent::End {
                        id: get(&data, "id").as_f64().unwrap_or(-1.0) as u32,
                    }),
                    Some(kind @ ("done" | "queue-done")) => {
                        let key = if kind == "done" { "id" } else { "queue" };
                        let id = get(&data, key).as_f64().unwrap_or(-1.0) as u32;
                        if let Some(resolve) = waiting_for_done.borrow_mut().remove(&id) {
                            let _ = resolve.call1(&JsValue::NULL, &data);
                        }
                    }
                    _ => {}
                }
            });
            worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
            worker.set_onerror(Some(&ready_reject));
            let timeout = web_sys::window().map(|w| {
                w.set_timeout_with_callback_and_timeout_and_arguments_0(
                    &ready_reject,
                    READY_TIMEOUT_MS,
                )
            });
            let started = JsFuture::from(ready).await;
            if let (Some(w), Some(Ok(id))) = (web_sys::window(), timeout) {
                w.clear_timeout_with_handle(id);
            }
            worker.set_onerror(None);
            if started.is_err() {
                worker.terminate();
                for s in &slots {
                    let s: &Slot = s;
                    s.worker.terminate();
                }
                return Err(format!(
                    "the stamping worker {WORKER_URL} did not start: is it served next to the page?"
                ));
            }
            slots.push(Slot {
                worker,
                in_flight: Cell::new(0),
                last_heard,
                _on_message: on_message,
            });
        }
        Ok(StampWorkers {
            slots,
            waiting,
            next_id: Cell::new(0),
        })
    }

    /// Empties every worker's Resource Timing buffer (before a run).
    pub fn reset(&self) {
        for s in &self.slots {
            let msg = js_sys::Object::new();
            let _ = Reflect::set(&msg, &"type".into(), &"reset".into());
            let _ = s.worker.post_message(&msg);
        }
    }

    /// Aborts every request in flight in every worker; their partial data comes back.
    pub fn abort_all(&self) {
        for s in &self.slots {
            let msg = js_sys::Object::new();
            let _ = Reflect::set(&msg, &"type".into(), &"abort".into());
            let _ = s.worker.post_message(&msg);
        }
    }

    /// Sends one request through the least busy worker and waits for its capture.
    pub async fn send(
        &self,
        spec: &HttpRequestSpec,
        secret_headers: &[(String, String)],
        timeout_ms: f64,
        handle: &RunHandle,
    ) -> Exchange {
        let page_origin = page_origin();
        if let Some(exchange) = bad_header(spec, secret_headers) {
            return exchange;
        }
        let id = self.new_id();
        let msg = send_message(id, spec, secret_headers, timeout_ms);
        let _ = Reflect::set(&msg, &"type".into(), &"send".into());
        let _ = Reflect::set(&msg, &"watch".into(), &live::wanted().into());
        let (done, resolve, _reject) = deferred();
        // If the worker dies, its own timeout dies with it: the page gives up a little later.
        let window = web_sys::window();
        let give_up = window.as_ref().and_then(|w| {
            w.set_timeout_with_callback_and_timeout_and_arguments_0(
                &resolve,
                (timeout_ms + GIVE_UP_AFTER_TIMEOUT_MS).min(i32::MAX as f64) as i32,
            )
            .ok()
        });
        self.waiting.borrow_mut().insert(id, resolve);
        let slot = self
            .slots
            .iter()
            .min_by_key(|s| s.in_flight.get())
            .expect("at least one worker");
        slot.in_flight.set(slot.in_flight.get() + 1);
        let posted = slot.worker.post_message(&msg);
        let data = match posted {
            Ok(()) => JsFuture::from(done).await.unwrap_or(JsValue::UNDEFINED),
            Err(_) => JsValue::UNDEFINED,
        };
        slot.in_flight.set(slot.in_flight.get() - 1);
        self.waiting.borrow_mut().remove(&id);
        if let (Some(w), Some(t)) = (window, give_up) {
            w.clear_timeout_with_handle(t);
        }
        exchange_of(&data, spec, page_origin, timeout_ms, handle)
    }

    /// Runs `jobs` as a closed loop inside the workers: `lanes` lanes (spread over the
    /// workers), each starting its next request the moment its previous one ends, with no
    /// round trip through the page in between; a job with a planned time is not sent before it.
    /// `on_done(k, exchange)` receives job `k`'s exchange as it comes back. Jobs a cancel
    /// dropped before they were sent never come back. Returns when every lane is over, or when
    /// a worker has been silent for 10 s (its requests then fail with
    /// a message saying so).
    pub async fn run_queue(
        &self,
        jobs: &[Queued],
        lanes: usize,
        secret_headers: &[(String, String)],
        timeout_ms: f64,
        handle: &RunHandle,
        on_done: &dyn Fn(usize, Exchange),
    ) {
        let page_origin = page_origin();
        let lanes = lanes.max(1);
        let workers = self.slots.len().min(lanes);
        let start_epoch = page_origin + now();
        let watch = live::wanted();
        // Per worker: its lanes, the (job, id) pairs it runs and its queue's id.
        let mut per_worker: Vec<(usize, Vec<(usize, u32)>)> = (0..workers)
            .map(|w| {
                (
                    lanes / workers + usize::from(w < lanes % workers),
                    Vec::new(),
                )
            })
            .collect();
        for (k, job) in jobs.iter().enumerate() {
            if let Some(exchange) = bad_header(&job.spec, secret_headers) {
                on_done(k, exchange);
                continue;
            }
            per_worker[(k % lanes) % workers].1.push((k, self.new_id()));
        }
        let mut pending = Vec::new();
        let mut queues = Vec::new();
        for (w, (worker_lanes, ids)) in per_worker.into_iter().enumerate() {
            if ids.is_empty() {
                continue;
            }
            let list = js_sys::Array::new();
            for &(k, id) in &ids {
                let msg = send_message(id, &jobs[k].spec, secret_headers, timeout_ms);
                if let Some(at) = jobs[k].at_ms {
                    let _ = Reflect::set(&msg, &"atMs".into(), &at.into());
                }
                // The first worker's requests are the ones the live surface may draw (one at a
                // time), so two workers never draw at once.
                if w == 0 && watch {
                    let _ = Reflect::set(&msg, &"watch".into(), &true.into());
                }
                list.push(&msg);
                pending.push((k, id, self.wait_for(id)));
            }
            let queue = self.new_id();
            let msg = js_sys::Object::new();
            for (key, v) in [
                ("type", JsValue::from_str("queue")),
                ("queue", JsValue::from(queue)),
                ("lanes", JsValue::from(worker_lanes as u32)),
                ("startEpoch", JsValue::from(start_epoch)),
                ("jobs", list.into()),
            ] {
                let _ = Reflect::set(&msg, &key.into(), &v);
            }
            let over = self.wait_for(queue);
            if self.slots[w].worker.post_message(&msg).is_err() {
                self.release(ids.iter().map(|&(_, id)| id), &JsValue::UNDEFINED);
            }
            queues.push((w, queue, ids, over));
        }
        let each_job = pending.into_iter().map(|(k, _, done)| async move {
            let data = JsFuture::from(done).await.unwrap_or(JsValue::UNDEFINED);
            // Null: dropped by a cancel before it was sent.
            if !data.is_null() {
                on_done(
                    k,
                    exchange_of(&data, &jobs[k].spec, page_origin, timeout_ms, handle),
                );
            }
        });
        let each_queue = queues.iter().map(|(_, _, ids, over)| async move {
            let _ = JsFuture::from(over.clone()).await;
            self.release(ids.iter().map(|&(_, id)| id), &JsValue::NULL);
        });
        let all = futures_util::future::join(
            futures_util::future::join_all(each_job),
            futures_util::future::join_all(each_queue),
        );
        let watchdog = async {
            loop {
                sleep_ms(1_000.0).await;
                for (w, queue, ids, _) in &queues {
                    if now() - self.slots[*w].last_heard.get() > GIVE_UP_AFTER_TIMEOUT_MS {
                        self.release(ids.iter().map(|&(_, id)| id), &JsValue::UNDEFINED);
                        self.release([*queue], &JsValue::NULL);
                    }
                }
            }
        };
        futures_util::pin_mut!(all, watchdog);
        futures_util::future::select(all, watchdog).await;
    }

    fn new_id(&self) -> u32 {
        let id = self.next_id.get();
        self.next_id.set(id.wrapping_add(1));
        id
    }

    /// A promise that the worker's answer for `id` resolves.
    fn wait_for(&self, id: u32) -> Promise {
        let (promise, resolve, _reject) = deferred();
        self.waiting.borrow_mut().insert(id, resolve);
        promise
    }

    /// Resolves whichever of `ids` are still waiting with `value`.
    fn release(&self, ids: impl IntoIterator<Item = u32>, value: &JsValue) {
        for id in ids {
            if let Some(resolve) = self.waiting.borrow_mut().remove(&id) {
                let _ = resolve.call1(&JsValue::NULL, value);
            }
        }
    }
}

/// Hands a worker's `read` message of a watched request to the live tap, on the page's clock.
fn deliver_read(data: &JsValue) {
    let page_origin = page_origin();
    let worker_origin = get(data, "timeOrigin").as_f64().unwrap_or(page_origin);
    let num = |key: &str| get(data, key).as_f64().unwrap_or(0.0);
    let sent_at = num("sentAt");
    live::deliver(LiveEvent::Read {
        id: num("id") as u32,
        seq: num("seq") as u32,
        sent_at: to_page_clock(sent_at, worker_origin, page_origin),
        sent_epoch_ms: worker_origin + sent_at,
        at: to_page_clock(num("at"), worker_origin, page_origin),
        bytes: get(data, "bytes")
            .dyn_into::<Uint8Array>()
            .map(|a| a.to_vec())
            .unwrap_or_default(),
    });
}

/// A request of a queue the workers run.
pub struct Queued {
    /// What to send.
    pub spec: HttpRequestSpec,
    /// When to send it at the earliest, in ms after the queue starts (Poisson arrivals,
    /// traces); `None` = as soon as a lane is free.
    pub at_ms: Option<f64>,
}

/// The page's `performance.timeOrigin`.
fn page_origin() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.time_origin())
}

/// A request as the worker takes it (`type` aside).
fn send_message(
    id: u32,
    spec: &HttpRequestSpec,
    secret_headers: &[(String, String)],
    timeout_ms: f64,
) -> js_sys::Object {
    let headers = js_sys::Array::new();
    for (k, v) in spec.headers.iter().chain(secret_headers) {
        headers.push(&js_sys::Array::of2(&k.into(), &v.into()));
    }
    let msg = js_sys::Object::new();
    for (k, v) in [
        ("id", JsValue::from(id)),
        ("url", JsValue::from_str(&spec.url)),
        ("headers", headers.into()),
        ("body", JsValue::from_str(&spec.body)),
        ("timeoutMs", JsValue::from(timeout_ms.min(i32::MAX as f64))),
    ] {
        let _ = Reflect::set(&msg, &k.into(), &v);
    }
    msg
}

/// A promise with its resolve and reject functions.
fn deferred() -> (Promise, Function, Function) {
    let mut out = (None, None);
    let promise = Promise::new(&mut |resolve, reject| out = (Some(resolve), Some(reject)));
    let (resolve, reject) = out;
    (
        promise,
        resolve.expect("Promise runs its executor at once"),
        reject.expect("Promise runs its executor at once"),
    )
}

/// A worker's `done` message as an exchange on the page's clock.
fn exchange_of(
    data: &JsValue,
    spec: &HttpRequestSpec,
    page_origin: f64,
    timeout_ms: f64,
    handle: &RunHandle,
) -> Exchange {
    let worker_origin = get(data, "timeOrigin").as_f64().unwrap_or(page_origin);
    let clock = |t: f64| to_page_clock(t, worker_origin, page_origin);
    let num = |key: &str| get(data, key).as_f64();
    let text = |key: &str| get(data, key).as_string();
    let sent_at = num("sentAt").unwrap_or(0.0);
    let times: Vec<f64> = get(data, "times")
        .dyn_into::<Float64Array>()
        .map(|a| a.to_vec())
        .unwrap_or_default();
    let sizes: Vec<u32> = get(data, "sizes")
        .dyn_into::<Uint32Array>()
        .map(|a| a.to_vec())
        .unwrap_or_default();
    let body: Vec<u8> = get(data, "body")
        .dyn_into::<Uint8Array>()
        .map(|a| a.to_vec())
        .unwrap_or_default();
    let end_at = clock(num("endAt").unwrap_or(sent_at));
    let end = if data.is_undefined() {
        CaptureEnd::Failed {
            at: end_at,
            outcome: Outcome::NetworkError {
                message: "the stamping worker stopped answering: reload the page and run again"
                    .into(),
            },
        }
    } else {
        match text("end").as_deref() {
            Some("http_error") => CaptureEnd::HttpError {
                at: end_at,
                body: text("errorBody").unwrap_or_default(),
            },
            Some("failed") => {
                let message = text("error").unwrap_or_else(|| "network error".into());
                let outcome = failure(Failure {
                    timed_out: get(data, "timedOut").as_bool() == Some(true),
                    timeout_ms,
                    cancelled: handle.is_cancelled(),
                    during_body: get(data, "duringBody").as_bool() == Some(true),
                    url: &spec.url,
                    message: &message,
                });
                CaptureEnd::Failed {
                    at: end_at,
                    outcome,
                }
            }
            _ => CaptureEnd::Finished { at: end_at },
        }
    };
    let head = num("headersAt").map(|at| CapturedHead {
        at: clock(at),
        status: num("status").unwrap_or(0.0) as u16,
        content_type: text("contentType"),
    });
    let reads = times
        .iter()
        .zip(&sizes)
        .map(|(t, b)| Read {
            at: clock(*t),
            bytes: *b,
        })
        .collect();
    Exchange {
        capture: Capture {
            sent_at: clock(sent_at),
            head,
            body,
            reads,
            end,
        },
        server_request_id: text("requestId"),
        browser_queue_ms: num("queueMs"),
        sent_epoch_ms: (!data.is_undefined()).then_some(worker_origin + sent_at),
        protocol: text("protocol").filter(|p| !p.is_empty()),
    }
}
