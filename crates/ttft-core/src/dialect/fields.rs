//! Field parsers shared by the dialect decoders.
//!
//! Servers spell the same facts differently, so one parser reads every spelling: a text field
//! counts only when it is a non-empty string (`""` and `null` are the same "nothing" to vLLM,
//! SGLang and llama.cpp), usage objects are read in the OpenAI names (`prompt_tokens`,
//! `completion_tokens`, `*_tokens_details`) and in the Responses/Anthropic names
//! (`input_tokens`, `output_tokens`, `cache_read_input_tokens`,
//! `cache_creation_input_tokens`; Anthropic's whole prompt is the sum of its three input
//! counts), and llama.cpp's `timings` object (`cache_n`: prompt tokens its cache served)
//! becomes [`ServerTimings`].

use serde_json::Value;

use super::{ServerTimings, StreamEvent, Usage};

pub(super) fn non_empty(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

pub(super) fn parse_usage(u: &Value) -> Option<Usage> {
    if !u.is_object() {
        return None;
    }
    let n = |k: &str| u.get(k).and_then(Value::as_u64);
    let cache_read = n("cache_read_input_tokens");
    let cache_write = n("cache_creation_input_tokens");
    // Anthropic's `input_tokens` counts only what follows the last cache breakpoint: the whole
    // prompt is `input_tokens + cache_read_input_tokens + cache_creation_input_tokens` (and
    // llama.cpp's `/v1/messages` sends `input_tokens` = prompt − cached the same way). The
    // OpenAI names count the whole prompt, cached tokens included.
    let prompt_tokens = n("prompt_tokens").or_else(|| {
        n("input_tokens").map(|i| {
            i.saturating_add(cache_read.unwrap_or(0))
                .saturating_add(cache_write.unwrap_or(0))
        })
    });
    Some(Usage {
        prompt_tokens,
        completion_tokens: n("completion_tokens").or_else(|| n("output_tokens")),
        reasoning_tokens: u
            .get("completion_tokens_details")
            .or_else(|| u.get("output_tokens_details"))
            .and_then(|d| d.get("reasoning_tokens"))
            .and_then(Value::as_u64),
        cached_tokens: u
            .get("prompt_tokens_details")
            .or_else(|| u.get("input_tokens_details"))
            .and_then(|d| d.get("cached_tokens"))
            .and_then(Value::as_u64)
            .or(cache_read),
        cache_write_tokens: cache_write,
    })
}

pub(super) fn parse_timings(t: &Value) -> Option<ServerTimings> {
    if !t.is_object() {
        return None;
    }
    Some(ServerTimings {
        prompt_n: t.get("prompt_n").and_then(Value::as_u64),
        prompt_ms: t.get("prompt_ms").and_then(Value::as_f64),
        predicted_n: t.get("predicted_n").and_then(Value::as_u64),
        predicted_ms: t.get("predicted_ms").and_then(Value::as_f64),
        predicted_per_token_ms: t.get("predicted_per_token_ms").and_then(Value::as_f64),
        cache_n: t.get("cache_n").and_then(Value::as_u64),
    })
}

/// llama.cpp's `prompt_progress` object (prefill progress, before any token).
pub(super) fn parse_progress(p: &Value) -> StreamEvent {
    StreamEvent::Progress {
        total: p.get("total").and_then(Value::as_u64).unwrap_or(0),
        processed: p.get("processed").and_then(Value::as_u64).unwrap_or(0),
    }
}
