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
//! - `usage` on a chunk whose choices are still streaming is continuous usage (vLLM's and
//!   SGLang's `continuous_usage_stats`); usage on the chunk that carries the `finish_reason`
//!   (llama.cpp's `/v1/completions` puts its only usage there, with or without
//!   `include_usage`) or on a chunk with empty `choices` is the final count;
//! - llama.cpp adds `prompt_progress` (prefill progress, not a token) and `timings`;
//! - with `n > 1` the choices interleave, each with its own role chunk, finish chunk and (on
//!   vLLM with continuous usage, llama.cpp `/v1/completions`) usage: every event is returned
//!   with its `choices[].index`, and a chunk's usage, timings and progress with the index of
//!   its only choice (`None` when it has none or several).
//!
//! Completions chunks carry their text in `choices[].text` and share everything else. A
//! non-streamed answer (`chat.completion`) carries `choices[].message` where a chunk has
//! `delta`, and is read the same way.

use serde_json::Value;

use super::StreamEvent;
use super::fields::{non_empty, parse_progress, parse_timings, parse_usage};

fn choice_index(choice: &Value, pos: usize) -> u32 {
    choice
        .get("index")
        .and_then(Value::as_u64)
        .map_or(pos as u32, |i| u32::try_from(i).unwrap_or(u32::MAX))
}

pub(super) fn decode_openai(v: &Value) -> Vec<(Option<u32>, StreamEvent)> {
    let mut out = Vec::new();
    let choices: &[Value] = v
        .get("choices")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    // Chunk-level fields (usage, timings, progress) belong to the chunk's only choice.
    let owner = match choices {
        [c] => Some(choice_index(c, 0)),
        _ => None,
    };
    let mut finished = false;
    if let Some(p) = v.get("prompt_progress") {
        out.push((owner, parse_progress(p)));
    }
    for (pos, choice) in choices.iter().enumerate() {
        let idx = Some(choice_index(choice, pos));
        let before = out.len();
        let delta = choice
            .get("delta")
            .or_else(|| choice.get("message"))
            .unwrap_or(&Value::Null);
        if let Some(t) = non_empty(choice.get("text")) {
            out.push((idx, StreamEvent::Content(t)));
        }
        for key in ["reasoning_content", "reasoning"] {
            if let Some(r) = non_empty(delta.get(key)) {
                out.push((idx, StreamEvent::Reasoning(r)));
                break;
            }
        }
        if let Some(c) = non_empty(delta.get("content")) {
            out.push((idx, StreamEvent::Content(c)));
        }
        if let Some(r) = non_empty(delta.get("refusal")) {
            out.push((idx, StreamEvent::Refusal(r)));
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
            out.push((
                idx,
                StreamEvent::ToolCall {
                    index,
                    id: non_empty(call.get("id")),
                    name: non_empty(f.get("name")),
                    arguments,
                },
            ));
        }
        if out.len() == before {
            let role_only = delta.get("role").is_some_and(|r| !r.is_null());
            out.push((
                idx,
                if role_only {
                    StreamEvent::Role
                } else {
                    StreamEvent::Empty
                },
            ));
        }
        if let Some(reason) = non_empty(choice.get("finish_reason")) {
            finished = true;
            out.push((idx, StreamEvent::Finish(reason)));
        }
    }
    if let Some(usage) = v.get("usage").and_then(parse_usage) {
        out.push((
            owner,
            StreamEvent::Usage {
                usage,
                with_output: !choices.is_empty() && !finished,
            },
        ));
    }
    if let Some(t) = v.get("timings").and_then(parse_timings) {
        out.push((owner, StreamEvent::Timings(t)));
    }
    if out.is_empty() {
        out.push((None, StreamEvent::Empty));
    }
    out
}
