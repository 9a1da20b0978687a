//! The page's own fetch path: one request sent with `fetch` and read with `ReadableStream` on
//! the page's thread, used when no stamping worker starts ([`super::stamper`] is the default).
//! Also what both paths share ([`Exchange`], the header check), the ordinary HTTP call for the
//! model list, and a sleep.
//!
//! t0 is `performance.now()` immediately before `fetch`; each read is stamped the moment its
//! promise resolves, before anything touches the bytes; the bytes and stamps form a
//! [`Capture`] that the core parses when the request is over.

use std::cell::Cell;
use std::rc::Rc;

use js_sys::{Reflect, Uint8Array};
use ttft_core::capture::{Capture, CaptureEnd, CapturedHead};
use ttft_core::dialect::Dialect;
use ttft_core::request::{HttpRequestSpec, network_error_advice};
use ttft_core::timeline::{Outcome, Read, RequestRecorder, RequestTimeline};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, Headers, Response};

use super::cancel::RunHandle;
use super::clock::now_ms as now;

/// One request as a client stamped it: the capture and what the browser said besides.
pub struct Exchange {
    /// Bytes and times, on the page's clock.
    pub capture: Capture,
    /// The server's `x-request-id`, if exposed.
    pub server_request_id: Option<String>,
    /// Time the browser held the request before sending it (Resource Timing).
    pub browser_queue_ms: Option<f64>,
    /// t0 on the wall clock (`performance.timeOrigin + t0`).
    pub sent_epoch_ms: Option<f64>,
    /// Resource Timing `nextHopProtocol` (`http/1.1`, `h2`, …).
    pub protocol: Option<String>,
}

impl Exchange {
    /// An exchange that failed before anything was sent.
    fn failed_at_once(message: String) -> Exchange {
        let t = now();
        Exchange {
            capture: Capture {
                sent_at: t,
                head: None,
                body: Vec::new(),
                reads: Vec::new(),
                end: CaptureEnd::Failed {
                    at: t,
                    outcome: Outcome::NetworkError { message },
                },
            },
            server_request_id: None,
            browser_queue_ms: None,
            sent_epoch_ms: None,
            protocol: None,
        }
    }

    /// The request's timeline: the capture parsed by the core, for a request that asked for
    /// `choices` answers (`n`; see [`ttft_core::request::choices_asked`]).
    pub fn timeline(&self, dialect: Option<Dialect>, choices: Option<u32>) -> RequestTimeline {
        self.capture
            .record_asking(dialect, choices)
            .unwrap_or_else(|e| {
                RequestRecorder::new(self.capture.sent_at, dialect, None).fail(
                    self.capture.sent_at,
                    Outcome::NetworkError {
                        message: e.to_string(),
                    },
                )
            })
    }
}

/// The failed exchange when a header cannot be sent (the browser refuses its name or value).
pub fn bad_header(spec: &HttpRequestSpec, secret_headers: &[(String, String)]) -> Option<Exchange> {
    let headers = Headers::new().ok()?;
    spec.headers
        .iter()
        .chain(secret_headers)
        .find_map(|(k, v)| {
            headers.set(k, v).is_err().then(|| {
                Exchange::failed_at_once(format!(
                    "the header '{k}' is not valid: fix it in the endpoint settings"
                ))
            })
        })
}

/// What is known when a request fails.
pub struct Failure<'a> {
    /// The run's timeout fired.
    pub timed_out: bool,
    /// That timeout (ms).
    pub timeout_ms: f64,
    /// The user cancelled the run.
    pub cancelled: bool,
    /// The body had begun.
    pub during_body: bool,
    /// The request's URL.
    pub url: &'a str,
    /// The browser's message.
    pub message: &'a str,
}

/// Why a request failed, in words that say what to do (both stamping paths).
pub fn failure(f: Failure) -> Outcome {
    if f.timed_out {
        Outcome::Timeout {
            message: format!(
                "no complete answer within {:.0} s: partial data kept; raise the timeout or lower the load",
                f.timeout_ms / 1e3
            ),
        }
    } else if f.cancelled {
        Outcome::CutByClient {
            message: "cancelled by the user (Stop): partial data kept; not the server's failure"
                .into(),
        }
    } else if f.during_body {
        Outcome::Truncated {
            message: "the connection broke mid-stream: the server or a proxy closed it (partial data kept)".into(),
        }
    } else {
        Outcome::NetworkError {
            message: network_error_advice(f.url, &super::page_origin(), f.message),
        }
    }
}

/// Sends one request from the page and stamps its reads.
pub async fn send(
    spec: &HttpRequestSpec,
    secret_headers: &[(String, String)],
    timeout_ms: f64,
    handle: &RunHandle,
) -> Exchange {
    if let Some(exchange) = bad_header(spec, secret_headers) {
        return exchange;
    }
    let window = web_sys::window().expect("a browser window");
    // One handle for every stamp of this request: no window/performance lookups before a stamp.
    let Some(perf) = window.performance() else {
        return Exchange::failed_at_once(
            "this browser has no performance clock: use a current Chromium, Firefox or Safari"
                .into(),
        );
    };
    let controller = AbortController::new().ok();
    let timed_out = Rc::new(Cell::new(false));
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
        let _ = headers.set(k, v); // checked by bad_header
    }
    // gloo-net builds the whole request before t0 (URL, headers, body, signal); its `send` is
    // then the global `fetch` and nothing else, so t0 is as close to the send as before.
    let request = gloo_net::http::RequestBuilder::new(&spec.url)
        .method(gloo_net::http::Method::POST)
        .headers(gloo_net::http::Headers::from_raw(headers))
        .abort_signal(controller.as_ref().map(|c| c.signal()).as_ref())
        .body(JsValue::from_str(&spec.body));
    let request = match request {
        Ok(r) => r,
        Err(e) => {
            return Exchange::failed_at_once(format!(
                "the browser refused to build the request to {}: {e}",
                spec.url
            ));
        }
    };
    let t0 = perf.now();
    let fetched = request.send().await;
    let fail_outcome = |message: &str, during_body: bool| -> Outcome {
        failure(Failure {
            timed_out: timed_out.get(),
            timeout_ms,
            cancelled: handle.is_cancelled(),
            during_body,
            url: &spec.url,
            message,
        })
    };
    let mut capture = Capture {
        sent_at: t0,
        head: None,
        body: Vec::new(),
        reads: Vec::new(),
        end: CaptureEnd::Finished { at: t0 },
    };
    let mut server_request_id = None;
    match fetched {
        Err(e) => {
            let message = match e {
                gloo_net::Error::JsError(js) => js.message,
                other => other.to_string(),
            };
            let outcome = fail_outcome(&message, false);
            capture.end = CaptureEnd::Failed {
                at: perf.now(),
                outcome,
            };
        }
        Ok(resp) => {
            let t = perf.now();
            let resp: Response = resp.into();
            server_request_id = resp.headers().get("x-request-id").ok().flatten();
            capture.head = Some(CapturedHead {
                at: t,
                status: resp.status(),
                content_type: resp.headers().get("content-type").ok().flatten(),
            });
            if !resp.ok() {
                let body = match resp.text() {
                    Ok(p) => JsFuture::from(p)
                        .await
                        .ok()
                        .and_then(|b| b.as_string())
                        .unwrap_or_default(),
                    Err(_) => String::new(),
                };
                capture.end = CaptureEnd::HttpError {
                    at: perf.now(),
                    body,
                };
            } else {
                read_body(&resp, &perf, &mut capture, &fail_outcome).await;
            }
        }
    }
    let (browser_queue_ms, protocol) = resource_timing(&spec.url, t0);
    if let Some((_cb, id)) = timer {
        window.clear_timeout_with_handle(id);
    }
    if let Some(c) = &controller {
        handle.unregister(c);
    }
    Exchange {
        sent_epoch_ms: Some(perf.time_origin() + t0),
        capture,
        server_request_id,
        browser_queue_ms,
        protocol,
    }
}

/// Resource Timing of the entry for `url` that started at `t0`: the time the browser held the
/// request before sending it (`requestStart − startTime`, less its own connection setup;
/// needs `Timing-Allow-Origin` across origins) and the protocol used.
fn resource_timing(url: &str, t0: f64) -> (Option<f64>, Option<String>) {
    let Some(perf) = web_sys::window().and_then(|w| w.performance()) else {
        return (None, None);
    };
    let mut best: Option<(f64, JsValue)> = None;
    for e in perf.get_entries_by_name(url).iter() {
        let Some(start) = Reflect::get(&e, &"startTime".into())
            .ok()
            .and_then(|v| v.as_f64())
        else {
            continue;
        };
        let distance = (start - t0).abs();
        if distance < 50.0 && best.as_ref().is_none_or(|(d, _)| distance < *d) {
            best = Some((distance, e));
        }
    }
    let Some((_, e)) = best else {
        return (None, None);
    };
    let num = |k: &str| Reflect::get(&e, &k.into()).ok().and_then(|v| v.as_f64());
    // The request's own connection setup (DNS, TCP, TLS) is not a queue; a reused connection
    // has none (all its phases 0 long).
    let setup = match (num("domainLookupStart"), num("connectEnd")) {
        (Some(d), Some(c)) if d > 0.0 && c > d => c - d,
        _ => 0.0,
    };
    let queue = match (num("requestStart"), num("startTime")) {
        (Some(r), Some(s)) if r > 0.0 => Some((r - s - setup).max(0.0)),
        _ => None,
    };
    let protocol = Reflect::get(&e, &"nextHopProtocol".into())
        .ok()
        .and_then(|v| v.as_string())
        .filter(|p| !p.is_empty());
    (queue, protocol)
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
    capture: &mut Capture,
    fail: &dyn Fn(&str, bool) -> Outcome,
) {
    let Some(body) = resp.body() else {
        capture.end = CaptureEnd::Finished { at: perf.now() };
        return;
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
                    capture.end = CaptureEnd::Finished { at: t };
                    return;
                }
                if let Ok(v) = Reflect::get(&chunk, &"value".into()) {
                    let bytes = v.unchecked_into::<Uint8Array>();
                    capture.reads.push(Read {
                        at: t,
                        bytes: bytes.length(),
                    });
                    let start = capture.body.len();
                    capture.body.resize(start + bytes.length() as usize, 0);
                    bytes.copy_to(&mut capture.body[start..]);
                }
            }
            Err(e) => {
                let t = perf.now();
                let message = e
                    .as_string()
                    .or_else(|| {
                        Reflect::get(&e, &"message".into())
                            .ok()
                            .and_then(|m| m.as_string())
                    })
                    .unwrap_or_else(|| "network error".into());
                let outcome = fail(&message, true);
                capture.end = CaptureEnd::Failed { at: t, outcome };
                return;
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

/// The built-in reference endpoint's HTTP/1.1 origins (`GET /v1/transports` on the page's own
/// server), the page's first: more than one when it listens on extra ports. `None` when it has
/// one or does not say.
pub async fn reference_origins() -> Option<Vec<String>> {
    let location = web_sys::window()?.location();
    let (protocol, hostname) = (location.protocol().ok()?, location.hostname().ok()?);
    let text = get_from_page_origin("/v1/transports").await?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let origins: Vec<String> = v["http1_ports"]
        .as_array()?
        .iter()
        .filter_map(|p| p.as_u64())
        .map(|port| format!("{protocol}//{hostname}:{port}"))
        .collect();
    (origins.len() > 1).then_some(origins)
}

/// `GET` of a path on the page's own server (the built-in reference endpoint): the body when
/// the answer is a success, else `None`.
pub async fn get_from_page_origin(path: &str) -> Option<String> {
    let url = format!("{}{path}", super::page_origin());
    let resp = gloo_net::http::Request::get(&url).send().await.ok()?;
    if !resp.ok() {
        return None;
    }
    resp.text().await.ok()
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
    // Headers are checked here: gloo-net's own `header` throws on a name the browser refuses.
    let headers = Headers::new().map_err(|_| ModelsError::NoWindow)?;
    for (k, v) in secret_headers {
        headers
            .set(k, v)
            .map_err(|_| ModelsError::BadHeader(k.clone()))?;
    }
    let origin = super::page_origin();
    let resp = gloo_net::http::Request::get(&url)
        .headers(gloo_net::http::Headers::from_raw(headers))
        .send()
        .await
        .map_err(|e| {
            let message = match e {
                gloo_net::Error::JsError(js) => js.message,
                other => other.to_string(),
            };
            ModelsError::Unreachable(network_error_advice(&url, &origin, &message))
        })?;
    let text = resp.text().await.unwrap_or_default();
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
