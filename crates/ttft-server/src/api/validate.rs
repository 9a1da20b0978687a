//! Reading and checking a request: the JSON body (size-limited) and the fields the chat,
//! completions and Anthropic messages APIs share (model and flavour, prompt or messages,
//! `max_tokens`, `temperature`, `stream`, `stream_options`), with the prompt's token count
//! checked against the model's KV capacity.

use axum::extract::Request;
use axum::http::{HeaderMap, StatusCode};
use serde_json::Value;

use super::{ApiError, MAX_BODY, MAX_TOKENS};
use crate::sim::framing::Api;
use crate::sim::profile::{Profile, resolve};
use crate::sim::text::tokenize;

pub(super) async fn read_json(req: Request) -> Result<(HeaderMap, Value), ApiError> {
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
pub(super) struct Common {
    pub(super) profile: Profile,
    pub(super) flavour: crate::sim::profile::Flavour,
    pub(super) model: String,
    pub(super) prompt: String,
    pub(super) prompt_tokens: u32,
    pub(super) max_tokens: u32,
    pub(super) stream: bool,
    pub(super) include_usage: bool,
    pub(super) continuous_usage: bool,
    pub(super) seed: Option<u64>,
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

pub(super) fn common(headers: &HeaderMap, v: &Value, api: Api) -> Result<Common, ApiError> {
    let (model, profile, flavour) = model_of(headers, v)?;
    let (prompt, messages) = match api {
        Api::Completions => (completions_prompt(v)?, 1),
        _ => messages_prompt(v)?,
    };
    let max_tokens = max_tokens_of(v, api)?;
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
    check_prompt_fits(prompt_tokens, &profile, max_tokens)?;
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

/// `model`, and the profile and flavour it names (the `x-sim-flavour` header may choose the
/// flavour): an unknown model is not found, a bad flavour a bad request.
fn model_of<'v>(
    headers: &HeaderMap,
    v: &'v Value,
) -> Result<(&'v str, Profile, crate::sim::profile::Flavour), ApiError> {
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
    Ok((model, profile, flavour))
}

/// The completions API's `prompt`: a string, or an array of strings taken one per line.
fn completions_prompt(v: &Value) -> Result<String, ApiError> {
    match v.get("prompt") {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Array(a)) if a.iter().all(Value::is_string) => Ok(a
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("\n")),
        _ => Err(ApiError::bad(
            "`prompt` is required: a string or an array of strings.",
            "prompt",
        )),
    }
}

/// The chat and messages APIs' prompt: the `system` text (Anthropic's), then each message's
/// content on a line of its own; with the number of messages.
fn messages_prompt(v: &Value) -> Result<(String, usize), ApiError> {
    let msgs = v
        .get("messages")
        .and_then(Value::as_array)
        .filter(|m| !m.is_empty())
        .ok_or_else(|| ApiError::bad("`messages` must be a non-empty array.", "messages"))?;
    let mut text = String::new();
    if let Some(s) = v.get("system").and_then(content_text) {
        text.push_str(&s);
    }
    for (i, m) in msgs.iter().enumerate() {
        let role = m
            .get("role")
            .and_then(Value::as_str)
            .ok_or_else(|| ApiError::bad(format!("messages[{i}].role is required."), "messages"))?;
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
    Ok((text, msgs.len()))
}

/// `max_tokens` (chat: `max_completion_tokens` when sent), from 1 to [`MAX_TOKENS`]; 256 when
/// left out, except that the messages API requires it.
fn max_tokens_of(v: &Value, api: Api) -> Result<u32, ApiError> {
    let max_field = if api == Api::Chat && v.get("max_completion_tokens").is_some() {
        "max_completion_tokens"
    } else {
        "max_tokens"
    };
    match v.get(max_field).filter(|n| !n.is_null()) {
        None if api != Api::Anthropic => Ok(256),
        None => Err(ApiError::bad("`max_tokens` is required.", "max_tokens")),
        Some(n) => match n.as_u64() {
            Some(n) if (1..=MAX_TOKENS).contains(&n) => Ok(n as u32),
            _ => Err(ApiError::bad(
                format!("`{max_field}` must be an integer from 1 to {MAX_TOKENS}."),
                "max_tokens",
            )),
        },
    }
}

/// The prompt must leave room in the model's KV capacity for the answer (at most half of it).
fn check_prompt_fits(
    prompt_tokens: u32,
    profile: &Profile,
    max_tokens: u32,
) -> Result<(), ApiError> {
    let capacity = profile.latency.kv_capacity;
    if prompt_tokens <= capacity.saturating_sub(max_tokens.min(capacity / 2)) {
        return Ok(());
    }
    Err(ApiError {
        status: StatusCode::PAYLOAD_TOO_LARGE,
        message: format!(
            "The prompt has {prompt_tokens} tokens; model `{}` accepts at most {} with max_tokens {max_tokens}.",
            profile.name,
            capacity.saturating_sub(max_tokens)
        ),
        kind: "invalid_request_error",
        param: Some("messages"),
        retry_after: None,
    })
}
