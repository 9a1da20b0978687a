//! OpenAI chat completions (`chat.completion.chunk`) and completions (`text_completion`).
//!
//! The most imitated wire format: OpenAI and Azure, vLLM, SGLang, TensorRT-LLM, llama.cpp's
//! server, Ollama's `/v1` and TGI's Messages API all stream it, each with its quirks, handled
//! here:
//!
//! - a first chunk that only announces the role (`content: ""`, or `role: null` on llama.cpp
//!   and SGLang's all-keys-present chunks) is [`StreamEvent::Role`] or [`StreamEvent::Empty`],
//!   never the first token; a delta of `{}` with a `finish_reason` is empty too, and so is
//!   Azure's leading chunk with empty `choices`;
//! - visible reasoning arrives as `reasoning_content` (vLLM, SGLang, DeepSeek) or `reasoning`
//!   (Ollama and others); refusals as `refusal`;
//! - tool calls arrive as fragments keyed by `index` (the position in the array when absent);
//!   Ollama sends the arguments whole, sometimes as a JSON object rather than a string;
//! - `usage` on a chunk that also has choices is continuous usage (vLLM's
//!   `continuous_usage_stats`), on a chunk with empty `choices` the final count;
//! - llama.cpp adds `prompt_progress` (prefill progress, not a token) and `timings`.
//!
//! Completions chunks carry their text in `choices[].text` and share everything else.

use serde_json::Value;

use super::StreamEvent;
use super::fields::{non_empty, parse_timings, parse_usage};

pub(super) fn decode_openai(v: &Value) -> Vec<StreamEvent> {
    let mut out = Vec::new();
    let choices = v.get("choices").and_then(Value::as_array);
    let mut saw_output_or_choice = false;
    if let Some(p) = v.get("prompt_progress") {
        out.push(StreamEvent::Progress {
            total: p.get("total").and_then(Value::as_u64).unwrap_or(0),
            processed: p.get("processed").and_then(Value::as_u64).unwrap_or(0),
        });
    }
    for choice in choices.into_iter().flatten() {
        saw_output_or_choice = true;
        let before = out.len();
        let delta = choice.get("delta").unwrap_or(&Value::Null);
        if let Some(t) = non_empty(choice.get("text")) {
            out.push(StreamEvent::Content(t));
        }
        for key in ["reasoning_content", "reasoning"] {
            if let Some(r) = non_empty(delta.get(key)) {
                out.push(StreamEvent::Reasoning(r));
                break;
            }
        }
        if let Some(c) = non_empty(delta.get("content")) {
            out.push(StreamEvent::Content(c));
        }
        if let Some(r) = non_empty(delta.get("refusal")) {
            out.push(StreamEvent::Refusal(r));
        }
        for (pos, call) in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let f = call.get("function").unwrap_or(&Value::Null);
            let index = call
                .get("index")
                .and_then(Value::as_u64)
                .unwrap_or(pos as u64) as u32;
            let arguments = match f.get("arguments") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(), // Ollama sends whole objects
            };
            out.push(StreamEvent::ToolCall {
                index,
                id: non_empty(call.get("id")),
                name: non_empty(f.get("name")),
                arguments,
            });
        }
        if out.len() == before {
            let role_only = delta.get("role").is_some_and(|r| !r.is_null());
            out.push(if role_only {
                StreamEvent::Role
            } else {
                StreamEvent::Empty
            });
        }
        if let Some(reason) = non_empty(choice.get("finish_reason")) {
            out.push(StreamEvent::Finish(reason));
        }
    }
    if let Some(usage) = v.get("usage").and_then(parse_usage) {
        out.push(StreamEvent::Usage {
            usage,
            with_output: saw_output_or_choice,
        });
    }
    if let Some(t) = v.get("timings").and_then(parse_timings) {
        out.push(StreamEvent::Timings(t));
    }
    if out.is_empty() {
        out.push(StreamEvent::Empty);
    }
    out
}
