//! OpenAI Responses API: typed `response.*` events.
//!
//! Text, refusal and reasoning (summary or raw) come as `*.delta` events; a function call is
//! announced by `response.output_item.added` (its name and `call_id`) and its arguments stream
//! as `response.function_call_arguments.delta`, both keyed by `output_index`.
//! `response.completed` and `response.incomplete` carry the final usage (`input_tokens`,
//! `output_tokens`) and end the stream (an incomplete response finishes with its
//! `incomplete_details.reason`); `response.failed` is an error with the response's code.
//! Lifecycle events (`response.created`, `response.in_progress`, `*.done`, …) carry nothing.
//! llama.cpp adds its `timings` (and, on request, `prompt_progress`) to these events: on the
//! terminal event, at the top level of its data or inside its `response`, they become
//! [`StreamEvent::Timings`] as on the chat path; on other events the shared decoder reads them.

use serde_json::Value;

use super::fields::{non_empty, parse_timings, parse_usage};
use super::{StreamError, StreamEvent};

pub(super) fn decode_responses(event: &str, v: &Value) -> Vec<StreamEvent> {
    let ty = v.get("type").and_then(Value::as_str).unwrap_or(event);
    let delta = || non_empty(v.get("delta"));
    let one = |e: Option<StreamEvent>| vec![e.unwrap_or(StreamEvent::Empty)];
    match ty {
        "response.output_text.delta" => one(delta().map(StreamEvent::Content)),
        "response.refusal.delta" => one(delta().map(StreamEvent::Refusal)),
        "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
            one(delta().map(StreamEvent::Reasoning))
        }
        "response.function_call_arguments.delta" => vec![StreamEvent::ToolCall {
            index: v.get("output_index").and_then(Value::as_u64).unwrap_or(0) as u32,
            id: non_empty(v.get("item_id")),
            name: None,
            arguments: v
                .get("delta")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
        }],
        "response.output_item.added" => {
            let item = v.get("item").unwrap_or(&Value::Null);
            if item.get("type").and_then(Value::as_str) == Some("function_call") {
                vec![StreamEvent::ToolCall {
                    index: v.get("output_index").and_then(Value::as_u64).unwrap_or(0) as u32,
                    id: non_empty(item.get("call_id")).or_else(|| non_empty(item.get("id"))),
                    name: non_empty(item.get("name")),
                    arguments: String::new(),
                }]
            } else {
                vec![StreamEvent::Empty]
            }
        }
        "response.completed" | "response.incomplete" => {
            let resp = v.get("response").unwrap_or(&Value::Null);
            let mut out = Vec::new();
            if let Some(u) = resp.get("usage").and_then(parse_usage) {
                out.push(StreamEvent::Usage {
                    usage: u,
                    with_output: false,
                });
            }
            if let Some(t) = v
                .get("timings")
                .or_else(|| resp.get("timings"))
                .and_then(parse_timings)
            {
                out.push(StreamEvent::Timings(t));
            }
            let reason = if ty == "response.completed" {
                "completed".to_owned()
            } else {
                resp.pointer("/incomplete_details/reason")
                    .and_then(Value::as_str)
                    .unwrap_or("incomplete")
                    .to_owned()
            };
            out.push(StreamEvent::Finish(reason));
            out.push(StreamEvent::Done);
            out
        }
        "response.failed" => {
            let err = v.pointer("/response/error").unwrap_or(&Value::Null);
            vec![StreamEvent::Error(StreamError {
                message: err
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("response.failed")
                    .to_owned(),
                kind: non_empty(err.get("code")),
            })]
        }
        _ => vec![StreamEvent::Empty],
    }
}
