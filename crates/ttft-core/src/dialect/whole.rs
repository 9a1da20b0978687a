//! Non-streamed answers: the whole response in one JSON document.
//!
//! A server or proxy that ignores `stream: true` (or drops it on the way) answers with the
//! API's non-streamed object, usually as `application/json`:
//!
//! - OpenAI chat completions: `{"object":"chat.completion","choices":[{"index":0,"message":
//!   {"role":"assistant","content":"…"},"finish_reason":"stop"}],"usage":{…}}` (llama.cpp adds
//!   `timings`); the `message` is read like a chunk's `delta`;
//! - OpenAI completions: `{"object":"text_completion","choices":[{"text":"…","index":0,
//!   "finish_reason":"stop"}],"usage":{…}}`;
//! - OpenAI Responses: `{"object":"response","status":"completed","output":[…],"usage":{…}}`
//!   with `message` items (`output_text` parts), `reasoning` items and `function_call` items;
//! - Anthropic Messages: `{"type":"message","content":[{"type":"text","text":"…"},…],
//!   "stop_reason":"end_turn","usage":{…}}`;
//! - Ollama native with `stream: false`: one object with `done: true` (only when it carries
//!   output: a streamed reply that produced nothing is one such line too);
//! - TGI native `/generate`: `{"generated_text":"…","details":{…}}` (or a one-element array);
//! - llama.cpp native `/completion` with `stream: false`: `{"content":"…","stop":true,
//!   "stop_type":"eos","timings":{…},"tokens_predicted":…,…}`.
//!
//! The document is complete by construction, so the events end with [`StreamEvent::Done`].

use serde_json::Value;

use super::fields::{non_empty, parse_usage};
use super::openai::decode_openai;
use super::{Dialect, StreamEvent};

type Events = Vec<(Option<u32>, StreamEvent)>;

/// The dialect and events of a non-streamed answer, or `None` when `v` is not one.
pub(super) fn decode_whole(v: &Value) -> Option<(Dialect, Events)> {
    let v = match v {
        Value::Array(items) if items.len() == 1 => &items[0], // TGI via the HF Inference API
        other => other,
    };
    let object = v.get("object").and_then(Value::as_str);
    let ty = v.get("type").and_then(Value::as_str);
    let choices = v.get("choices").and_then(Value::as_array);
    let (dialect, mut out) = if let Some(choices) = choices {
        let first = choices.first();
        let is_chunk = object == Some("chat.completion.chunk")
            || first.is_some_and(|c| c.get("delta").is_some());
        let answer = matches!(object, Some("chat.completion") | Some("text_completion"))
            || first.is_some_and(|c| c.get("message").is_some() || c.get("text").is_some());
        if is_chunk || !answer {
            return None;
        }
        let completions = object == Some("text_completion")
            || first.is_some_and(|c| c.get("text").is_some() && c.get("message").is_none());
        let dialect = if completions {
            Dialect::OpenAiCompletions
        } else {
            Dialect::OpenAiChat
        };
        (dialect, decode_openai(v))
    } else if object == Some("response") && v.get("output").is_some_and(Value::is_array) {
        (Dialect::OpenAiResponses, decode_response_object(v))
    } else if ty == Some("message") && v.get("content").is_some_and(Value::is_array) {
        (Dialect::Anthropic, decode_message_object(v))
    } else if v.get("done").and_then(Value::as_bool) == Some(true)
        && (v.get("message").is_some() || v.get("response").is_some())
    {
        let out: Events = super::ollama::decode_ollama(v)
            .into_iter()
            .map(|e| (None, e))
            .collect();
        if !out.iter().any(|(_, e)| e.is_output()) {
            return None;
        }
        return Some((Dialect::OllamaNative, out));
    } else if v.get("generated_text").is_some_and(Value::is_string) && v.get("token").is_none() {
        (Dialect::TgiNative, decode_generated_text(v))
    } else if super::llamacpp::is_llamacpp(v)
        && v.get("stop").and_then(Value::as_bool) == Some(true)
    {
        let out = super::llamacpp::decode_llamacpp(v, &mut Default::default());
        if !out.iter().any(|(_, e)| e.is_output()) {
            return None; // a streamed reply's last line looks the same
        }
        (Dialect::LlamaCppNative, out)
    } else {
        return None;
    };
    out.push((None, StreamEvent::Done));
    Some((dialect, out))
}

fn final_usage(u: &Value) -> Option<StreamEvent> {
    parse_usage(u).map(|usage| StreamEvent::Usage {
        usage,
        with_output: false,
    })
}

fn decode_response_object(v: &Value) -> Events {
    let mut out = Vec::new();
    let items = v.get("output").and_then(Value::as_array);
    for (pos, item) in items.into_iter().flatten().enumerate() {
        let parts = |key: &str| {
            item.get(key)
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice)
        };
        match item.get("type").and_then(Value::as_str) {
            Some("message") => {
                for part in parts("content") {
                    match part.get("type").and_then(Value::as_str) {
                        Some("refusal") => {
                            if let Some(r) = non_empty(part.get("refusal")) {
                                out.push(StreamEvent::Refusal(r));
                            }
                        }
                        _ => {
                            if let Some(t) = non_empty(part.get("text")) {
                                out.push(StreamEvent::Content(t));
                            }
                        }
                    }
                }
            }
            Some("reasoning") => {
                for part in parts("summary").iter().chain(parts("content")) {
                    if let Some(t) = non_empty(part.get("text")) {
                        out.push(StreamEvent::Reasoning(t));
                    }
                }
            }
            Some("function_call") => out.push(StreamEvent::ToolCall {
                index: pos as u32,
                id: non_empty(item.get("call_id")).or_else(|| non_empty(item.get("id"))),
                name: non_empty(item.get("name")),
                arguments: item
                    .get("arguments")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
            }),
            _ => {}
        }
    }
    if let Some(u) = v.get("usage").and_then(final_usage) {
        out.push(u);
    }
    let status = v
        .get("status")
        .and_then(Value::as_str)
        .unwrap_or("completed");
    let reason = if status == "incomplete" {
        v.pointer("/incomplete_details/reason")
            .and_then(Value::as_str)
            .unwrap_or("incomplete")
    } else {
        status
    };
    out.push(StreamEvent::Finish(reason.to_owned()));
    out.into_iter().map(|e| (None, e)).collect()
}

fn decode_message_object(v: &Value) -> Events {
    let mut out = Vec::new();
    let blocks = v.get("content").and_then(Value::as_array);
    for (pos, block) in blocks.into_iter().flatten().enumerate() {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => out.extend(non_empty(block.get("text")).map(StreamEvent::Content)),
            Some("thinking") => {
                out.extend(non_empty(block.get("thinking")).map(StreamEvent::Reasoning))
            }
            Some("tool_use") => out.push(StreamEvent::ToolCall {
                index: pos as u32,
                id: non_empty(block.get("id")),
                name: non_empty(block.get("name")),
                arguments: block.get("input").map(Value::to_string).unwrap_or_default(),
            }),
            _ => {}
        }
    }
    if let Some(u) = v.get("usage").and_then(final_usage) {
        out.push(u);
    }
    out.push(StreamEvent::Finish(
        non_empty(v.get("stop_reason")).unwrap_or_else(|| "end_turn".to_owned()),
    ));
    out.into_iter().map(|e| (None, e)).collect()
}

fn decode_generated_text(v: &Value) -> Events {
    let mut out = Vec::new();
    out.extend(non_empty(v.get("generated_text")).map(StreamEvent::Content));
    out.extend(super::tgi::final_details(
        v.get("details").unwrap_or(&Value::Null),
    ));
    out.into_iter().map(|e| (None, e)).collect()
}
