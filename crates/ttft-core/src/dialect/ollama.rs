//! Ollama native NDJSON: `/api/chat` and `/api/generate`.
//!
//! One JSON object a line, not SSE. `/api/chat` puts text in `message.content` (and reasoning in
//! `message.thinking`), `/api/generate` in top-level `response` (and `thinking`). Tool calls come
//! whole, without ids, with their arguments as a JSON object. The last line has `done: true`
//! with counts and durations in nanoseconds (`prompt_eval_count`, `prompt_eval_duration`,
//! `eval_count`, `eval_duration`), which become usage and [`ServerTimings`] in milliseconds, and
//! a `done_reason` (`stop` when absent). A failure is a line `{"error": "…"}`, recognised before
//! this decoder runs.

use serde_json::Value;

use super::fields::non_empty;
use super::{ServerTimings, StreamEvent, Usage};

pub(super) fn decode_ollama(v: &Value) -> Vec<StreamEvent> {
    let mut out = Vec::new();
    let msg = v.get("message").unwrap_or(&Value::Null);
    if let Some(t) = non_empty(msg.get("thinking")).or_else(|| non_empty(v.get("thinking"))) {
        out.push(StreamEvent::Reasoning(t));
    }
    if let Some(c) = non_empty(msg.get("content")).or_else(|| non_empty(v.get("response"))) {
        out.push(StreamEvent::Content(c));
    }
    for (i, call) in msg
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let f = call.get("function").unwrap_or(&Value::Null);
        out.push(StreamEvent::ToolCall {
            index: i as u32,
            id: None,
            name: non_empty(f.get("name")),
            arguments: f
                .get("arguments")
                .map(|a| a.to_string())
                .unwrap_or_default(),
        });
    }
    if v.get("done").and_then(Value::as_bool) == Some(true) {
        let ns = |k: &str| v.get(k).and_then(Value::as_f64).map(|n| n / 1e6);
        let eval_count = v.get("eval_count").and_then(Value::as_u64);
        let eval_ms = ns("eval_duration");
        out.push(StreamEvent::Usage {
            usage: Usage {
                prompt_tokens: v.get("prompt_eval_count").and_then(Value::as_u64),
                completion_tokens: eval_count,
                ..Usage::default()
            },
            with_output: false,
        });
        out.push(StreamEvent::Timings(ServerTimings {
            prompt_n: v.get("prompt_eval_count").and_then(Value::as_u64),
            prompt_ms: ns("prompt_eval_duration"),
            predicted_n: eval_count,
            predicted_ms: eval_ms,
            predicted_per_token_ms: match (eval_ms, eval_count) {
                (Some(ms), Some(n)) if n > 0 => Some(ms / n as f64),
                _ => None,
            },
            cache_n: None,
        }));
        out.push(StreamEvent::Finish(
            non_empty(v.get("done_reason")).unwrap_or_else(|| "stop".to_owned()),
        ));
        out.push(StreamEvent::Done);
    }
    if out.is_empty() {
        out.push(if msg.get("role").is_some() {
            StreamEvent::Role
        } else {
            StreamEvent::Empty
        });
    }
    out
}
