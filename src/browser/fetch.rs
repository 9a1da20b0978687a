//! Where a read is stamped: one request sent with `fetch` and read with `ReadableStream`.
//!
//! t0 is `performance.now()` immediately before `fetch`; each read is stamped the moment its
//! promise resolves, before anything touches the bytes, and the bytes and stamps go straight
//! into the core's [`RequestRecorder`]. Also the ordinary HTTP call for the model list.

use std::cell::Cell;
use std::rc::Rc;

use js_sys::{Reflect, Uint8Array};
use ttft_core::dialect::Dialect;
use ttft_core::request::{HttpRequestSpec, network_error_advice};
use ttft_core::timeline::{Outcome, RequestRecorder, RequestTimeline};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, Headers, RequestInit, Response};

use super::cancel::RunHandle;
use super::clock::now_ms as now;

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
        handle.register(c);
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
            let origin = super::page_origin();
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
        handle.unregister(c);
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

/// Waits `ms` milliseconds.
pub async fn sleep_ms(ms: f64) {
    let p = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(w) = web_sys::window() {
            let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms as i32);
        }
    });
    let _ = JsFuture::from(p).await;
}

/// Why the model list could not be had.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelsError {
    /// No browser window (not in a page).
    #[error("this page has no browser window")]
    NoWindow,
    /// A header the browser refuses.
    #[error("the header '{0}' is not valid: fix it in the endpoint settings")]
    BadHeader(String),
    /// Unreachable or refused (CORS): the advice says what to change.
    #[error("{0}")]
    Unreachable(String),
    /// The server answered with an error status: its explanation.
    #[error("{0}")]
    Http(String),
    /// The answer is not JSON.
    #[error("{0} did not answer with JSON: is this an OpenAI-compatible server?")]
    NotJson(String),
}

/// `GET {base}/v1/models`: the model ids, or what to do.
pub async fn list_models(
    base: &str,
    secret_headers: &[(String, String)],
) -> Result<Vec<String>, ModelsError> {
    let url = format!("{}/v1/models", ttft_core::request::normalise_base(base));
    let window = web_sys::window().ok_or(ModelsError::NoWindow)?;
    let headers = Headers::new().map_err(|_| ModelsError::NoWindow)?;
    for (k, v) in secret_headers {
        headers
            .set(k, v)
            .map_err(|_| ModelsError::BadHeader(k.clone()))?;
    }
    let init = RequestInit::new();
    init.set_method("GET");
    init.set_headers(&headers);
    let origin = super::page_origin();
    let resp = JsFuture::from(window.fetch_with_str_and_init(&url, &init))
        .await
        .map_err(|e| {
            ModelsError::Unreachable(network_error_advice(
                &url,
                &origin,
                &Reflect::get(&e, &"message".into())
                    .ok()
                    .and_then(|m| m.as_string())
                    .unwrap_or_default(),
            ))
        })?;
    let resp: Response = resp.unchecked_into();
    let text = match resp.text() {
        Ok(p) => JsFuture::from(p)
            .await
            .ok()
            .and_then(|t| t.as_string())
            .unwrap_or_default(),
        Err(_) => String::new(),
    };
    if !resp.ok() {
        return Err(ModelsError::Http(ttft_core::timeline::http_error_message(
            resp.status(),
            &text,
        )));
    }
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|_| ModelsError::NotJson(url.clone()))?;
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
