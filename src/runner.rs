//! The runner: sends requests with `fetch` and reads them with `ReadableStream`.
//!
//! Timestamps: t0 is `performance.now()` immediately before `fetch`; each read is stamped the
//! moment its promise resolves, before any parsing. Parsing and metrics are the core's
//! ([`ttft_core::timeline::RequestRecorder`], [`ttft_core::metrics::RequestMetrics`]); the UI is
//! fed finished records in batches at most four times a second, so rendering never sits between
//! a read and its timestamp.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use js_sys::{Reflect, Uint8Array};
use ttft_core::dialect::Dialect;
use ttft_core::metrics::{MetricsConfig, RequestMetrics};
use ttft_core::report::{RequestRecord, replay_of};
use ttft_core::request::{HttpRequestSpec, network_error_advice};
use ttft_core::timeline::{Outcome, RequestRecorder, RequestTimeline};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, Headers, RequestInit, Response};

use crate::clock::now_ms as now;
use crate::scenario::{Job, Phase};

/// What one request ended with.
pub struct Sent {
    /// The timeline.
    pub timeline: RequestTimeline,
    /// The server's `x-request-id`, if exposed.
    pub server_request_id: Option<String>,
    /// Time the browser held the request before sending it (Resource Timing).
    pub browser_queue_ms: Option<f64>,
    /// t0 on the wall clock (`performance.timeOrigin + t0`).
    pub sent_epoch_ms: Option<f64>,
}

/// Cancels a run: aborts every request in flight and stops starting new ones.
#[derive(Clone, Default)]
pub struct RunHandle {
    cancelled: Rc<Cell<bool>>,
    active: Rc<RefCell<Vec<AbortController>>>,
}

impl RunHandle {
    /// Stops the run; partial results are kept.
    pub fn cancel(&self) {
        self.cancelled.set(true);
        for c in self.active.borrow().iter() {
            c.abort();
        }
    }

    /// Whether [`RunHandle::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.get()
    }
}

/// Sends one request and records its stream.
pub async fn send(
    spec: &HttpRequestSpec,
    secret_headers: &[(String, String)],
    dialect: Option<Dialect>,
    timeout_ms: f64,
    handle: &RunHandle,
) -> Sent {
    let controller = AbortController::new().ok();
    let timed_out = Rc::new(Cell::new(false));
    let window = web_sys::window().expect("a browser window");
    let timer = controller.as_ref().map(|c| {
        let c = c.clone();
        let flag = timed_out.clone();
        let cb = Closure::once(move || {
            flag.set(true);
            c.abort();
        });
        let id = window
            .set_timeout_with_callback_and_timeout_and_arguments_0(
                cb.as_ref().unchecked_ref(),
                timeout_ms.min(i32::MAX as f64) as i32,
            )
            .unwrap_or(0);
        (cb, id)
    });
    if let Some(c) = &controller {
        handle.active.borrow_mut().push(c.clone());
    }
    let headers = Headers::new().expect("Headers");
    for (k, v) in spec.headers.iter().chain(secret_headers) {
        if headers.set(k, v).is_err() {
            let t = now();
            return Sent {
                browser_queue_ms: None,
                sent_epoch_ms: None,
                timeline: RequestRecorder::new(t, dialect, None).fail(
                    t,
                    Outcome::NetworkError {
                        message: format!(
                            "the header '{k}' is not valid: fix it in the endpoint settings"
                        ),
                    },
                ),
                server_request_id: None,
            };
        }
    }
    let init = RequestInit::new();
    init.set_method("POST");
    init.set_headers(&headers);
    init.set_body(&JsValue::from_str(&spec.body));
    if let Some(c) = &controller {
        init.set_signal(Some(&c.signal()));
    }
    // One handle for every stamp of this request: no window/performance lookups before a stamp.
    let Some(perf) = window.performance() else {
        let t = now();
        return Sent {
            browser_queue_ms: None,
            sent_epoch_ms: None,
            timeline: RequestRecorder::new(t, dialect, None).fail(
                t,
                Outcome::NetworkError { message: "this browser has no performance clock: use a current Chromium, Firefox or Safari".into() },
            ),
            server_request_id: None,
        };
    };
    let t0 = perf.now();
    let fetched = JsFuture::from(window.fetch_with_str_and_init(&spec.url, &init)).await;
    let mut rec = RequestRecorder::new(t0, dialect, None);
    let fail_outcome = |err: &JsValue| -> Outcome {
        if timed_out.get() {
            Outcome::Timeout {
                message: format!(
                    "no complete answer within {:.0} s: partial data kept; raise the timeout or lower the load",
                    timeout_ms / 1e3
                ),
            }
        } else if handle.is_cancelled() {
            Outcome::Aborted {
                message: "cancelled by the user: partial data kept".into(),
            }
        } else {
            let msg = err
                .as_string()
                .or_else(|| {
                    Reflect::get(err, &"message".into())
                        .ok()
                        .and_then(|m| m.as_string())
                })
                .unwrap_or_else(|| "network error".into());
            let origin = web_sys::window()
                .and_then(|w| w.location().origin().ok())
                .unwrap_or_default();
            Outcome::NetworkError {
                message: network_error_advice(&spec.url, &origin, &msg),
            }
        }
    };
    let mut server_request_id = None;
    let timeline = match fetched {
        Err(e) => {
            let o = fail_outcome(&e);
            rec.fail(perf.now(), o)
        }
        Ok(v) => {
            let t = perf.now();
            let resp: Response = v.unchecked_into();
            let ct = resp.headers().get("content-type").ok().flatten();
            server_request_id = resp.headers().get("x-request-id").ok().flatten();
            rec.on_headers(t, resp.status(), ct.as_deref());
            if !resp.ok() {
                let body = match resp.text() {
                    Ok(p) => JsFuture::from(p)
                        .await
                        .ok()
                        .and_then(|b| b.as_string())
                        .unwrap_or_default(),
                    Err(_) => String::new(),
                };
                rec.http_error(perf.now(), resp.status(), &body)
            } else {
                read_body(&resp, &perf, rec, &fail_outcome).await
            }
        }
    };
    let browser_queue_ms = resource_timing_queue(&spec.url, t0);
    if let Some((_cb, id)) = timer {
        window.clear_timeout_with_handle(id);
    }
    if let Some(c) = &controller {
        handle.active.borrow_mut().retain(|x| x != c);
    }
    Sent {
        sent_epoch_ms: Some(perf.time_origin() + t0),
        timeline,
        server_request_id,
        browser_queue_ms,
    }
}

/// Time the browser held a request before sending it: Resource Timing `requestStart −
/// startTime` of the entry for `url` that started at `t0` (needs `Timing-Allow-Origin` across
/// origins; `None` when the browser hides it).
fn resource_timing_queue(url: &str, t0: f64) -> Option<f64> {
    let perf = web_sys::window()?.performance()?;
    let entries = perf.get_entries_by_name(url);
    let mut best: Option<(f64, f64)> = None;
    for e in entries.iter() {
        let start = Reflect::get(&e, &"startTime".into()).ok()?.as_f64()?;
        let request_start = Reflect::get(&e, &"requestStart".into()).ok()?.as_f64()?;
        let distance = (start - t0).abs();
        if request_start > 0.0 && distance < 50.0 && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, request_start - start));
        }
    }
    best.map(|(_, q)| q.max(0.0))
}

/// Prepares Resource Timing for a run: a large buffer, emptied.
pub fn reset_resource_timing() {
    if let Some(p) = web_sys::window().and_then(|w| w.performance()) {
        p.clear_resource_timings();
        p.set_resource_timing_buffer_size(100_000);
    }
}

async fn read_body(
    resp: &Response,
    perf: &web_sys::Performance,
    mut rec: RequestRecorder,
    fail: &dyn Fn(&JsValue) -> Outcome,
) -> RequestTimeline {
    let Some(body) = resp.body() else {
        return rec.finish(perf.now());
    };
    let reader: web_sys::ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    loop {
        match JsFuture::from(reader.read()).await {
            Ok(chunk) => {
                let t = perf.now(); // before anything else touches the bytes
                if Reflect::get(&chunk, &"done".into())
                    .ok()
                    .and_then(|d| d.as_bool())
                    .unwrap_or(true)
                {
                    return rec.finish(t);
                }
                if let Ok(v) = Reflect::get(&chunk, &"value".into()) {
                    let bytes = v.unchecked_into::<Uint8Array>().to_vec();
                    rec.on_read(t, &bytes);
                }
            }
            Err(e) => {
                let t = perf.now();
                let outcome = match fail(&e) {
                    Outcome::NetworkError { .. } => Outcome::Truncated { message: "the connection broke mid-stream: the server or a proxy closed it (partial data kept)".into() },
                    o => o,
                };
                return rec.fail(t, outcome);
            }
        }
    }
}

/// Progress of a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Progress {
    /// Requests finished.
    pub done: usize,
    /// Requests planned.
    pub total: usize,
    /// Label of the phase running.
    pub phase: String,
}

/// Everything a run needs besides its cancel handle and its sink.
pub struct RunPlan {
    /// Phases of jobs.
    pub phases: Vec<Phase>,
    /// Builds the HTTP request of a job.
    pub build: Rc<dyn Fn(&Job) -> HttpRequestSpec>,
    /// API key and extra headers: sent, never stored.
    pub secret_headers: Vec<(String, String)>,
    /// Chosen dialect (`None` = detect).
    pub dialect: Option<Dialect>,
    /// Metric settings.
    pub metrics: MetricsConfig,
    /// Per-request timeout (ms).
    pub timeout_ms: f64,
}

/// Runs the phases; `on_batch` receives finished records (at most every 250 ms) and progress.
pub async fn run_phases(
    plan: RunPlan,
    handle: RunHandle,
    on_batch: Rc<dyn Fn(Vec<RequestRecord>, Progress)>,
) {
    let RunPlan {
        phases,
        build,
        secret_headers,
        dialect,
        metrics,
        timeout_ms,
    } = plan;
    let total: usize = phases.iter().map(|p| p.jobs.len()).sum();
    reset_resource_timing();
    let run_start = now();
    let pending: Rc<RefCell<Vec<RequestRecord>>> = Rc::default();
    let last_flush = Rc::new(Cell::new(0.0));
    let done = Rc::new(Cell::new(0usize));
    let index = Rc::new(Cell::new(0u32));
    let history: Rc<RefCell<Vec<(String, String)>>> = Rc::default();
    for phase in phases {
        if handle.is_cancelled() {
            break;
        }
        let label = phase
            .jobs
            .first()
            .map(|j| j.group.clone())
            .unwrap_or_default();
        let queue: Rc<RefCell<VecDeque<Job>>> =
            Rc::new(RefCell::new(phase.jobs.into_iter().collect()));
        let phase_start = now();
        let next_arrival = Rc::new(Cell::new(0.0f64));
        let rate = phase.rate_per_s;
        let workers = (0..phase.concurrency.max(1)).map(|_| {
            let (
                queue,
                build,
                secret_headers,
                metrics,
                handle,
                on_batch,
                pending,
                last_flush,
                done,
                index,
                history,
                label,
                next_arrival,
            ) = (
                queue.clone(),
                build.clone(),
                secret_headers.clone(),
                metrics.clone(),
                handle.clone(),
                on_batch.clone(),
                pending.clone(),
                last_flush.clone(),
                done.clone(),
                index.clone(),
                history.clone(),
                label.clone(),
                next_arrival.clone(),
            );
            async move {
                loop {
                    if handle.is_cancelled() {
                        break;
                    }
                    let Some(mut job) = queue.borrow_mut().pop_front() else {
                        break;
                    };
                    if rate > 0.0 {
                        // Poisson arrivals: exponential gaps, scheduled from the phase start.
                        let gap = -(1.0 - js_sys::Math::random()).ln() / rate * 1e3;
                        let at = next_arrival.get() + gap;
                        next_arrival.set(at);
                        let wait = phase_start + at - now();
                        if wait > 0.0 {
                            sleep_ms(wait).await;
                        }
                    }
                    if job.chained {
                        let mut msgs = history.borrow().clone();
                        msgs.extend(
                            job.params
                                .messages
                                .iter()
                                .filter(|(r, _)| r != "system")
                                .cloned(),
                        );
                        job.params.messages = msgs;
                    }
                    let spec = build(&job);
                    let i = index.get();
                    index.set(i + 1);
                    let start_ms = now() - run_start;
                    let sent = send(&spec, &secret_headers, dialect, timeout_ms, &handle).await;
                    let m = RequestMetrics::compute(&sent.timeline, &metrics);
                    {
                        let mut h = history.borrow_mut();
                        *h = job.params.messages.clone();
                        let reply = if m.tool_calls.is_empty() {
                            m.text.clone()
                        } else {
                            m.tool_calls
                                .iter()
                                .map(|c| {
                                    format!(
                                        "called {}({})",
                                        c.name.clone().unwrap_or_default(),
                                        c.arguments
                                    )
                                })
                                .collect::<Vec<_>>()
                                .join("; ")
                        };
                        h.push(("assistant".into(), reply));
                    }
                    pending.borrow_mut().push(RequestRecord {
                        index: i,
                        group: job.group.clone(),
                        level: job.level,
                        warmup: job.warmup,
                        start_ms,
                        browser_queue_ms: sent.browser_queue_ms,
                        outcome: sent.timeline.outcome.clone(),
                        metrics: m,
                        replay: replay_of(&sent.timeline),
                        server_request_id: sent.server_request_id,
                        sent_epoch_ms: sent.sent_epoch_ms,
                    });
                    done.set(done.get() + 1);
                    let t = now();
                    if t - last_flush.get() > 250.0 || done.get() == total {
                        last_flush.set(t);
                        flush(&pending, &*on_batch, done.get(), total, label.clone());
                    }
                }
            }
        });
        futures_util::future::join_all(workers).await;
    }
    flush(&pending, &*on_batch, done.get(), total, String::new());
}

/// Hands the finished records to the UI with the progress so far.
fn flush(
    pending: &RefCell<Vec<RequestRecord>>,
    on_batch: &dyn Fn(Vec<RequestRecord>, Progress),
    done: usize,
    total: usize,
    phase: String,
) {
    let batch = std::mem::take(&mut *pending.borrow_mut());
    on_batch(batch, Progress { done, total, phase });
}

/// Waits `ms` milliseconds.
pub async fn sleep_ms(ms: f64) {
    let p = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(w) = web_sys::window() {
            let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms as i32);
        }
    });
    let _ = JsFuture::from(p).await;
}

/// `GET {base}/v1/models`: the model ids, or a message that says what to do.
pub async fn list_models(
    base: &str,
    secret_headers: &[(String, String)],
) -> Result<Vec<String>, String> {
    let url = format!("{}/v1/models", ttft_core::request::normalise_base(base));
    let window = web_sys::window().ok_or("no window")?;
    let headers = Headers::new().map_err(|_| "Headers")?;
    for (k, v) in secret_headers {
        headers
            .set(k, v)
            .map_err(|_| format!("the header '{k}' is not valid"))?;
    }
    let init = RequestInit::new();
    init.set_method("GET");
    init.set_headers(&headers);
    let origin = window.location().origin().unwrap_or_default();
    let resp = JsFuture::from(window.fetch_with_str_and_init(&url, &init))
        .await
        .map_err(|e| {
            network_error_advice(
                &url,
                &origin,
                &Reflect::get(&e, &"message".into())
                    .ok()
                    .and_then(|m| m.as_string())
                    .unwrap_or_default(),
            )
        })?;
    let resp: Response = resp.unchecked_into();
    let text = JsFuture::from(resp.text().map_err(|_| "no body")?)
        .await
        .ok()
        .and_then(|t| t.as_string())
        .unwrap_or_default();
    if !resp.ok() {
        return Err(ttft_core::timeline::http_error_message(
            resp.status(),
            &text,
        ));
    }
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|_| {
        format!("{url} did not answer with JSON: is this an OpenAI-compatible server?")
    })?;
    let ids: Vec<String> = v
        .get("data")
        .or_else(|| v.get("models"))
        .and_then(|d| d.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|m| {
                    m.get("id")
                        .or_else(|| m.get("name"))
                        .and_then(|i| i.as_str())
                        .map(str::to_owned)
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(ids)
}
