//! The generation handlers: `POST /v1/chat/completions`, `/v1/completions` and `/v1/messages`.
//! Each reads and checks the request, plans the generation, queues it on the model's engine
//! (429 with `Retry-After` when the queue is full) and answers with an SSE stream or one JSON
//! body, tagged with `x-request-id` (the key of its ground truth).

use std::sync::atomic::Ordering;

use axum::Json;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use tokio::time::Instant;

use super::stream::{Gen, collect};
use super::validate::{common, read_json};
use super::{ApiError, ApiState, unix_now};
use crate::sim::framing::{Api, Framer};
use crate::sim::plan::{PlanInput, plan};
use crate::sim::prefix_cache::token_id;
use crate::sim::text::tokenize;
use crate::sim::truth::Truth;

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
    // A model with a prefix cache serves the prompt's start from it (`PrefixCache::admit`),
    // unless the request turns it off as llama.cpp's `"cache_prompt": false` does (the usage
    // then reports 0 cached tokens).
    let use_cache = v.get("cache_prompt").and_then(serde_json::Value::as_bool) != Some(false);
    let cached_tokens = c.profile.prefix_cache.then(|| {
        if !use_cache {
            return 0;
        }
        let ids: Vec<u64> = tokenize(&c.prompt).iter().map(|t| token_id(t)).collect();
        let mut caches = st.prefix_caches.lock().expect("prefix cache lock");
        let hit = caches.entry(c.profile.name).or_default().admit(&ids);
        u32::try_from(hit).unwrap_or(u32::MAX).min(c.prompt_tokens)
    });
    let engine = st.engines.get(c.profile.name, &c.profile.latency);
    let rx = engine
        .submit_cached(
            n,
            c.prompt_tokens,
            cached_tokens.unwrap_or(0),
            plan.pieces.len() as u32,
        )
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
    let mut framer = Framer::new(
        c.flavour,
        api,
        format!("chatcmpl-{id}"),
        c.model.clone(),
        unix_now(),
        c.include_usage,
        c.continuous_usage,
        c.prompt_tokens,
    );
    framer.cached_tokens = cached_tokens;
    let truth = Truth {
        id: id.clone(),
        received_unix_ms,
        model: c.profile.name.to_owned(),
        flavour: format!("{:?}", c.flavour).to_lowercase(),
        prompt_tokens: c.prompt_tokens,
        cached_tokens,
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
