//! The reference endpoint's HTTP API: OpenAI chat and text completions, Anthropic messages,
//! models, ground truth and metrics, with OpenAI-style errors.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::sim::engine::{EngineEvent, Engines};
use crate::sim::framing::{Api, Framer, SimTimings};
use crate::sim::plan::{Fault, Piece, PieceKind, Plan, PlanInput, plan};
use crate::sim::profile::{Profile, profiles, resolve};
use crate::sim::text::tokenize;
use crate::sim::truth::{Truth, TruthChunk, TruthStore};

/// Largest request body accepted.
pub const MAX_BODY: usize = 1024 * 1024;
/// Largest `max_tokens`.
pub const MAX_TOKENS: u64 = 32_768;

/// Shared state of the API.
#[derive(Clone)]
pub struct ApiState {
    /// Engines by model.
    pub engines: Engines,
    /// Ground truth.
    pub truth: TruthStore,
    /// Server seed.
    pub seed: u64,
    counter: Arc<AtomicU64>,
}

impl ApiState {
    /// Fresh state with a seed.
    pub fn new(seed: u64) -> Self {
        Self {
            engines: Engines::default(),
            truth: TruthStore::default(),
            seed,
            counter: Arc::new(AtomicU64::new(0)),
        }
    }
}

/// An OpenAI-style error response.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
    kind: &'static str,
    param: Option<&'static str>,
    retry_after: Option<u32>,
}

impl ApiError {
    fn bad(message: impl Into<String>, param: &'static str) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
            kind: "invalid_request_error",
            param: Some(param),
            retry_after: None,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"error": {"message": self.message, "type": self.kind, "param": self.param, "code": self.status.as_u16()}, "object": "error"});
        let mut r = (self.status, Json(body)).into_response();
        if let Some(s) = self.retry_after {
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(s));
        }
        r
    }
}

async fn read_json(req: Request) -> Result<(HeaderMap, Value), ApiError> {
    let (parts, body) = req.into_parts();
    let bytes = axum::body::to_bytes(body, MAX_BODY)
        .await
        .map_err(|_| ApiError {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            message: format!("The request body exceeds {MAX_BODY} bytes. Shorten the prompt."),
            kind: "invalid_request_error",
            param: None,
            retry_after: None,
        })?;
    let v: Value = serde_json::from_slice(&bytes)
        .map_err(|e| ApiError::bad(format!("The body is not valid JSON: {e}"), "body"))?;
    if !v.is_object() {
        return Err(ApiError::bad("The body must be a JSON object.", "body"));
    }
    Ok((parts.headers, v))
}

/// Validated common fields.
struct Common {
    profile: Profile,
    flavour: crate::sim::profile::Flavour,
    model: String,
    prompt: String,
    prompt_tokens: u32,
    max_tokens: u32,
    stream: bool,
    include_usage: bool,
    continuous_usage: bool,
    seed: Option<u64>,
}

fn content_text(c: &Value) -> Option<String> {
    match c {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        Value::Null => Some(String::new()),
        _ => None,
    }
}

fn common(headers: &HeaderMap, v: &Value, api: Api) -> Result<Common, ApiError> {
    let model = v
        .get("model")
        .and_then(Value::as_str)
        .ok_or_else(|| ApiError::bad("`model` is required and must be a string.", "model"))?;
    let flavour_header = headers.get("x-sim-flavour").and_then(|h| h.to_str().ok());
    let (profile, flavour) = resolve(model, flavour_header).map_err(|m| ApiError {
        status: if m.contains("flavour") {
            StatusCode::BAD_REQUEST
        } else {
            StatusCode::NOT_FOUND
        },
        message: m,
        kind: "invalid_request_error",
        param: Some("model"),
        retry_after: None,
    })?;
    let (prompt, messages) = match api {
        Api::Completions => {
            let p = match v.get("prompt") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Array(a)) if a.iter().all(Value::is_string) => a
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join("\n"),
                _ => {
                    return Err(ApiError::bad(
                        "`prompt` is required: a string or an array of strings.",
                        "prompt",
                    ));
                }
            };
            (p, 1)
        }
        _ => {
            let msgs = v
                .get("messages")
                .and_then(Value::as_array)
                .filter(|m| !m.is_empty())
                .ok_or_else(|| {
                    ApiError::bad("`messages` must be a non-empty array.", "messages")
                })?;
            let mut text = String::new();
            if let Some(s) = v.get("system").and_then(content_text) {
                text.push_str(&s);
            }
            for (i, m) in msgs.iter().enumerate() {
                let role = m.get("role").and_then(Value::as_str).ok_or_else(|| {
                    ApiError::bad(format!("messages[{i}].role is required."), "messages")
                })?;
                if ![
                    "system",
                    "user",
                    "assistant",
                    "tool",
                    "developer",
                    "function",
                ]
                .contains(&role)
                {
                    return Err(ApiError::bad(
                        format!("messages[{i}].role `{role}` is not a valid role."),
                        "messages",
                    ));
                }
                let c = m.get("content").unwrap_or(&Value::Null);
                let c = content_text(c).ok_or_else(|| {
                    ApiError::bad(
                        format!("messages[{i}].content must be a string or an array of parts."),
                        "messages",
                    )
                })?;
                text.push('\n');
                text.push_str(&c);
            }
            (text, msgs.len())
        }
    };
    let max_field = if api == Api::Chat && v.get("max_completion_tokens").is_some() {
        "max_completion_tokens"
    } else {
        "max_tokens"
    };
    let max_tokens = match v.get(max_field).filter(|n| !n.is_null()) {
        None if api != Api::Anthropic => 256,
        None => return Err(ApiError::bad("`max_tokens` is required.", "max_tokens")),
        Some(n) => match n.as_u64() {
            Some(n) if (1..=MAX_TOKENS).contains(&n) => n as u32,
            _ => {
                return Err(ApiError::bad(
                    format!("`{max_field}` must be an integer from 1 to {MAX_TOKENS}."),
                    "max_tokens",
                ));
            }
        },
    };
    if let Some(t) = v.get("temperature").filter(|t| !t.is_null())
        && !t.as_f64().is_some_and(|t| (0.0..=2.0).contains(&t))
    {
        return Err(ApiError::bad(
            "`temperature` must be a number from 0 to 2.",
            "temperature",
        ));
    }
    let stream = match v.get("stream") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(ApiError::bad("`stream` must be a boolean.", "stream")),
    };
    let opts = v.get("stream_options").filter(|o| !o.is_null());
    if let Some(o) = opts
        && !o.is_object()
    {
        return Err(ApiError::bad(
            "`stream_options` must be an object.",
            "stream_options",
        ));
    }
    let flag = |k: &str| opts.and_then(|o| o.get(k)).and_then(Value::as_bool);
    // vLLM: any stream_options object turns usage on (include_usage defaults true there).
    let include_usage = match flavour {
        crate::sim::profile::Flavour::Vllm => {
            opts.is_some() && flag("include_usage") != Some(false)
        }
        _ => flag("include_usage") == Some(true),
    };
    let prompt_tokens = (tokenize(&prompt).len() + 3 * messages) as u32;
    if prompt_tokens
        > profile
            .latency
            .kv_capacity
            .saturating_sub(max_tokens.min(profile.latency.kv_capacity / 2))
    {
        return Err(ApiError {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            message: format!(
                "The prompt has {prompt_tokens} tokens; model `{}` accepts at most {} with max_tokens {max_tokens}.",
                profile.name,
                profile.latency.kv_capacity.saturating_sub(max_tokens)
            ),
            kind: "invalid_request_error",
            param: Some("messages"),
            retry_after: None,
        });
    }
    Ok(Common {
        model: model.to_owned(),
        profile,
        flavour,
        prompt,
        prompt_tokens,
        max_tokens,
        stream,
        include_usage,
        continuous_usage: flag("continuous_usage_stats") == Some(true),
        seed: v.get("seed").and_then(Value::as_u64),
    })
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// `POST /v1/chat/completions`.
pub async fn chat(State(st): State<ApiState>, req: Request) -> Result<Response, ApiError> {
    generate(st, req, Api::Chat).await
}

/// `POST /v1/completions`.
pub async fn completions(State(st): State<ApiState>, req: Request) -> Result<Response, ApiError> {
    generate(st, req, Api::Completions).await
}

/// `POST /v1/messages` (Anthropic).
pub async fn messages(State(st): State<ApiState>, req: Request) -> Result<Response, ApiError> {
    generate(st, req, Api::Anthropic).await
}

async fn generate(st: ApiState, req: Request, api: Api) -> Result<Response, ApiError> {
    let received = Instant::now();
    let received_unix_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1e3);
    let (headers, v) = read_json(req).await?;
    let c = common(&headers, &v, api)?;
    let n = st.counter.fetch_add(1, Ordering::Relaxed);
    let id = format!("sim-{n}");
    let seed = st.seed ^ c.seed.unwrap_or(n).wrapping_mul(0x2545_F491_4F6C_DD1D);
    let plan = plan(
        &c.profile,
        &PlanInput {
            prompt: &c.prompt,
            max_tokens: c.max_tokens,
            tools: v.get("tools"),
            response_format: v.get("response_format"),
            seed,
        },
    );
    let engine = st.engines.get(c.profile.name, &c.profile.latency);
    let rx = engine
        .submit(n, c.prompt_tokens, plan.pieces.len() as u32)
        .map_err(|_| ApiError {
            status: StatusCode::TOO_MANY_REQUESTS,
            message: format!(
                "The queue of `{}` is full ({} waiting). Retry later or lower concurrency.",
                c.profile.name, c.profile.latency.max_waiting
            ),
            kind: "rate_limit_error",
            param: None,
            retry_after: Some(1),
        })?;
    let framer = Framer::new(
        c.flavour,
        api,
        format!("chatcmpl-{id}"),
        c.model.clone(),
        unix_now(),
        c.include_usage,
        c.continuous_usage,
        c.prompt_tokens,
    );
    let truth = Truth {
        id: id.clone(),
        received_unix_ms,
        model: c.profile.name.to_owned(),
        flavour: format!("{:?}", c.flavour).to_lowercase(),
        prompt_tokens: c.prompt_tokens,
        planned_tokens: plan.pieces.len() as u32,
        queue_ms: None,
        prefill_ms: None,
        batch_sizes: Vec::new(),
        preemptions: 0,
        chunks: Vec::new(),
        outcome: "cancelled".into(),
    };
    let interval = if api == Api::Anthropic {
        1
    } else {
        c.profile.tokens_per_chunk.max(1)
    };
    let generation = Gen {
        rx,
        framer,
        plan,
        interval,
        pending: Vec::new(),
        emitted: 0,
        received,
        truth,
        store: st.truth.clone(),
        started: false,
        done: false,
        stalled: false,
        drop_next: false,
        first_at: None,
        last_at: None,
    };
    let mut resp = if c.stream {
        let body = Body::from_stream(futures_util::stream::unfold(
            generation,
            |mut g| async move { g.next().await.map(|item| (item, g)) },
        ));
        let mut r = Response::new(body);
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/event-stream; charset=utf-8"),
        );
        r.headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        r
    } else {
        Json(collect(generation, api, &c).await).into_response()
    };
    resp.headers_mut().insert(
        "x-request-id",
        HeaderValue::from_str(&id).expect("ascii id"),
    );
    Ok(resp)
}

/// One response being generated.
struct Gen {
    rx: mpsc::UnboundedReceiver<EngineEvent>,
    framer: Framer,
    plan: Plan,
    interval: u32,
    pending: Vec<Piece>,
    emitted: u32,
    received: Instant,
    truth: Truth,
    store: TruthStore,
    started: bool,
    done: bool,
    stalled: bool,
    drop_next: bool,
    first_at: Option<Instant>,
    last_at: Option<Instant>,
}

impl Drop for Gen {
    fn drop(&mut self) {
        self.store.finish(self.truth.clone());
    }
}

fn ms_since(a: Instant, b: Instant) -> f64 {
    b.saturating_duration_since(a).as_secs_f64() * 1e3
}

impl Gen {
    /// Frames the pending tokens; records them as one written chunk (timed at return).
    fn flush(&mut self, out: &mut String, scheduled: Instant) {
        if self.pending.is_empty() {
            return;
        }
        if !self.started {
            self.started = true;
            out.push_str(&self.framer.start());
        }
        let group = std::mem::take(&mut self.pending);
        out.push_str(&self.framer.chunk(&group));
        self.emitted += group.len() as u32;
        self.truth.chunks.push(TruthChunk {
            written_ms: 0.0, // set when handed over
            scheduled_ms: ms_since(self.received, scheduled),
            text: group.iter().map(|p| p.text.as_str()).collect(),
            tokens: group.len() as u32,
        });
    }

    fn hand_over(&mut self, out: String, chunks_before: usize) -> Bytes {
        let now = Instant::now();
        for c in &mut self.truth.chunks[chunks_before..] {
            c.written_ms = ms_since(self.received, now);
        }
        Bytes::from(out)
    }

    async fn next(&mut self) -> Option<Result<Bytes, std::io::Error>> {
        if self.done {
            return None;
        }
        if self.drop_next {
            self.done = true;
            return Some(Err(std::io::Error::other("simulated dropped connection")));
        }
        let before = self.truth.chunks.len();
        let mut out = String::new();
        loop {
            let Some(ev) = self.rx.recv().await else {
                self.done = true;
                self.truth.outcome = "error".into();
                return None;
            };
            match ev {
                EngineEvent::Token {
                    index,
                    scheduled,
                    prefill_ms,
                    batch,
                } => {
                    let now = Instant::now();
                    self.first_at.get_or_insert(now);
                    self.last_at = Some(now);
                    if let (Some(p), None) = (prefill_ms, self.truth.prefill_ms) {
                        self.truth.prefill_ms = Some(p);
                        self.truth.queue_ms =
                            Some((ms_since(self.received, scheduled) - p).max(0.0));
                    }
                    self.truth.batch_sizes.push(batch);
                    let Some(piece) = self.plan.pieces.get(index as usize).cloned() else {
                        continue;
                    };
                    if self.pending.first().is_some_and(|p| p.kind != piece.kind)
                        || piece.kind == PieceKind::ToolName
                    {
                        self.flush(&mut out, scheduled);
                    }
                    let tool_name = piece.kind == PieceKind::ToolName;
                    self.pending.push(piece);
                    // Stream interval: the first token at once, then every `interval` tokens.
                    if index == 0 || tool_name || self.pending.len() as u32 >= self.interval {
                        self.flush(&mut out, scheduled);
                    }
                    let sent = self.emitted;
                    match self.plan.fault {
                        Some(Fault::ErrorAfter(k)) if sent >= k => {
                            out.push_str(
                                &self.framer.error(
                                    "simulated failure: the engine lost a worker mid-stream",
                                ),
                            );
                            self.done = true;
                            self.truth.outcome = "error".into();
                            return Some(Ok(self.hand_over(out, before)));
                        }
                        Some(Fault::DropAfter(k)) if sent >= k => {
                            self.done = true;
                            self.truth.outcome = "dropped".into();
                            if out.is_empty() {
                                return Some(Err(std::io::Error::other(
                                    "simulated dropped connection",
                                )));
                            }
                            // Write what is due, then drop on the next poll.
                            self.done = false;
                            self.drop_next = true;
                            return Some(Ok(self.hand_over(out, before)));
                        }
                        Some(Fault::StallAfter(k, ms)) if sent >= k && !self.stalled => {
                            self.stalled = true;
                            tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                        }
                        _ => {}
                    }
                    if !out.is_empty() {
                        return Some(Ok(self.hand_over(out, before)));
                    }
                }
                EngineEvent::Preempted => self.truth.preemptions += 1,
                EngineEvent::Finished => {
                    self.flush(&mut out, Instant::now());
                    let prompt_ms = self.truth.prefill_ms.unwrap_or(0.0);
                    let predicted_ms = match (self.first_at, self.last_at) {
                        (Some(a), Some(b)) => ms_since(a, b),
                        _ => 0.0,
                    };
                    let reason = self.plan.finish_reason;
                    out.push_str(&self.framer.finish(
                        reason,
                        SimTimings {
                            prompt_ms,
                            predicted_ms,
                        },
                    ));
                    self.done = true;
                    self.truth.outcome = "ok".into();
                    return Some(Ok(self.hand_over(out, before)));
                }
            }
        }
    }
}

async fn collect(mut g: Gen, api: Api, c: &Common) -> Value {
    // Drain without framing a stream: collect the pieces as they are produced.
    let mut answer = String::new();
    let mut reasoning = String::new();
    let mut args = String::new();
    let mut produced = 0u32;
    while let Some(ev) = g.rx.recv().await {
        match ev {
            EngineEvent::Token { index, .. } => {
                if let Some(p) = g.plan.pieces.get(index as usize) {
                    produced += 1;
                    match p.kind {
                        PieceKind::Answer => answer.push_str(&p.text),
                        PieceKind::Reasoning => reasoning.push_str(&p.text),
                        PieceKind::ToolArgs => args.push_str(&p.text),
                        PieceKind::ToolName => {}
                    }
                }
            }
            EngineEvent::Finished => break,
            EngineEvent::Preempted => g.truth.preemptions += 1,
        }
    }
    g.truth.outcome = "ok".into();
    g.done = true;
    let reason = g.plan.finish_reason;
    let tool = g.plan.tool_name.clone();
    let usage = json!({"prompt_tokens": c.prompt_tokens, "completion_tokens": produced, "total_tokens": c.prompt_tokens + produced});
    match api {
        Api::Anthropic => {
            let mut content = Vec::new();
            if !reasoning.is_empty() {
                content.push(json!({"type": "thinking", "thinking": reasoning}));
            }
            if let Some(name) = tool {
                content.push(json!({"type": "tool_use", "id": format!("toolu_{}", g.truth.id), "name": name, "input": serde_json::from_str::<Value>(&args).unwrap_or(json!({}))}));
            } else {
                content.push(json!({"type": "text", "text": answer}));
            }
            json!({"id": g.truth.id, "type": "message", "role": "assistant", "model": c.model, "content": content,
                   "stop_reason": match reason { "length" => "max_tokens", "tool_calls" => "tool_use", _ => "end_turn" },
                   "stop_sequence": null, "usage": {"input_tokens": c.prompt_tokens, "output_tokens": produced}})
        }
        Api::Completions => {
            json!({"id": g.truth.id, "object": "text_completion", "created": unix_now(), "model": c.model,
                                   "choices": [{"index": 0, "text": answer, "logprobs": null, "finish_reason": reason}], "usage": usage})
        }
        Api::Chat => {
            let mut message = json!({"role": "assistant", "content": if tool.is_some() { Value::Null } else { json!(answer) }});
            if !reasoning.is_empty() {
                message["reasoning_content"] = json!(reasoning);
            }
            if let Some(name) = tool {
                message["tool_calls"] = json!([{"id": format!("call-{}", g.truth.id), "type": "function", "function": {"name": name, "arguments": args}}]);
            }
            json!({"id": format!("chatcmpl-{}", g.truth.id), "object": "chat.completion", "created": unix_now(), "model": c.model,
                   "choices": [{"index": 0, "message": message, "finish_reason": reason}], "usage": usage})
        }
    }
}

/// `GET /v1/models`: the profiles.
pub async fn models() -> Json<Value> {
    let data: Vec<Value> = profiles()
        .iter()
        .map(|p| json!({"id": p.name, "object": "model", "created": 0, "owned_by": "ttft-studio", "description": p.description, "tokens_per_chunk": p.tokens_per_chunk, "behaviour": p.behaviour}))
        .collect();
    Json(json!({"object": "list", "data": data}))
}

/// `GET /v1/ground-truth/{id}`.
pub async fn ground_truth(
    State(st): State<ApiState>,
    Path(id): Path<String>,
) -> Result<Json<crate::sim::truth::Truth>, ApiError> {
    st.truth.get(&id).map(Json).ok_or(ApiError {
        status: StatusCode::NOT_FOUND,
        message: format!(
            "No ground truth for `{id}` (unknown, still streaming, or evicted after {} records).",
            TruthStore::CAPACITY
        ),
        kind: "not_found_error",
        param: None,
        retry_after: None,
    })
}

/// `GET /metrics` in Prometheus text format.
pub async fn metrics(State(st): State<ApiState>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        st.truth.prometheus(&st.engines.loads()),
    )
}
