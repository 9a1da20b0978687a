//! Anthropic Messages: `message_start`, `content_block_*`, `message_delta`, `message_stop`.
//!
//! `message_start` announces the role and the prompt-side usage; its `output_tokens` is a
//! placeholder (1) and is dropped. Content blocks start with `content_block_start` (a
//! `tool_use` block gives the call's id and name) and grow by `text_delta`, `thinking_delta`
//! (visible reasoning) and `input_json_delta` (tool arguments) deltas; other deltas, such as
//! `signature_delta`, and `ping` carry nothing. `message_delta` carries the output usage and
//! the `stop_reason`, and `message_stop` ends the stream. `event: error` (for instance
//! `overloaded_error`) is recognised before this decoder runs, like every top-level error.
//! llama.cpp's `timings`, when an event carries them, are read by the shared decoder.

use serde_json::Value;

use super::fields::{non_empty, parse_usage};
use super::{StreamEvent, Usage};

pub(super) fn decode_anthropic(v: &Value) -> Vec<StreamEvent> {
    let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
    match ty {
        "message_start" => {
            let mut out = vec![StreamEvent::Role];
            if let Some(u) = v.pointer("/message/usage").and_then(parse_usage) {
                // output_tokens here is a placeholder (1): keep only the prompt side.
                out.push(StreamEvent::Usage {
                    usage: Usage {
                        completion_tokens: None,
                        ..u
                    },
                    with_output: false,
                });
            }
            out
        }
        "content_block_start" => {
            let block = v.get("content_block").unwrap_or(&Value::Null);
            let index = v.get("index").and_then(Value::as_u64).unwrap_or(0) as u32;
            match block.get("type").and_then(Value::as_str) {
                Some("tool_use") => vec![StreamEvent::ToolCall {
                    index,
                    id: non_empty(block.get("id")),
                    name: non_empty(block.get("name")),
                    arguments: String::new(),
                }],
                Some("text") => vec![
                    non_empty(block.get("text")).map_or(StreamEvent::Empty, StreamEvent::Content),
                ],
                _ => vec![StreamEvent::Empty],
            }
        }
        "content_block_delta" => {
            let d = v.get("delta").unwrap_or(&Value::Null);
            let index = v.get("index").and_then(Value::as_u64).unwrap_or(0) as u32;
            let ev = match d.get("type").and_then(Value::as_str) {
                Some("text_delta") => non_empty(d.get("text")).map(StreamEvent::Content),
                Some("thinking_delta") => non_empty(d.get("thinking")).map(StreamEvent::Reasoning),
                Some("input_json_delta") => Some(StreamEvent::ToolCall {
                    index,
                    id: None,
                    name: None,
                    arguments: d
                        .get("partial_json")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                }),
                _ => None,
            };
            vec![ev.unwrap_or(StreamEvent::Empty)]
        }
        "message_delta" => {
            let mut out = Vec::new();
            if let Some(u) = v.get("usage").and_then(parse_usage) {
                out.push(StreamEvent::Usage {
                    usage: u,
                    with_output: false,
                });
            }
            if let Some(r) = non_empty(v.pointer("/delta/stop_reason")) {
                out.push(StreamEvent::Finish(r));
            }
            if out.is_empty() {
                out.push(StreamEvent::Empty);
            }
            out
        }
        "message_stop" => vec![StreamEvent::Done],
        _ => vec![StreamEvent::Empty],
    }
}
