//! Text Generation Inference native `generate_stream`.
//!
//! Every event carries one `token` (`text`, `special`); special tokens such as `</s>` are not
//! text. The last event has a non-null `generated_text` and `details` with
//! `generated_tokens` and the `finish_reason` (`eos_token`, `length`, …), which end the stream.
//! TGI's OpenAI-compatible Messages API is decoded as OpenAI chat instead.

use serde_json::Value;

use super::fields::non_empty;
use super::{StreamEvent, Usage};

pub(super) fn decode_tgi(v: &Value) -> Vec<StreamEvent> {
    let mut out = Vec::new();
    let tok = v.get("token").unwrap_or(&Value::Null);
    let special = tok.get("special").and_then(Value::as_bool).unwrap_or(false);
    match non_empty(tok.get("text")) {
        Some(t) if !special => out.push(StreamEvent::Content(t)),
        _ => out.push(StreamEvent::Empty),
    }
    if v.get("generated_text").is_some_and(|g| !g.is_null()) {
        out.extend(final_details(v.get("details").unwrap_or(&Value::Null)));
        out.push(StreamEvent::Done);
    }
    out
}

/// TGI's `details` of a finished generation (last stream event, or a whole answer): the
/// generated token count as final usage, and the finish reason.
pub(super) fn final_details(details: &Value) -> Vec<StreamEvent> {
    let mut out = Vec::new();
    if let Some(n) = details.get("generated_tokens").and_then(Value::as_u64) {
        out.push(StreamEvent::Usage {
            usage: Usage {
                completion_tokens: Some(n),
                ..Usage::default()
            },
            with_output: false,
        });
    }
    out.push(StreamEvent::Finish(
        non_empty(details.get("finish_reason")).unwrap_or_else(|| "stop".to_owned()),
    ));
    out
}
