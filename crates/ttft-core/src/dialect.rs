//! Server dialects: turns framed events (SSE or NDJSON) into classified [`StreamEvent`]s.
//!
//! Covers OpenAI chat completions (and the servers that imitate it: vLLM, SGLang, TensorRT-LLM,
//! llama.cpp, Ollama's `/v1`, TGI's Messages API), OpenAI completions, the OpenAI Responses API,
//! Anthropic Messages, Ollama native `/api/chat` (and `/api/generate`) and TGI native
//! `generate_stream`. The dialect is detected from the first events or chosen up front; errors
//! are recognised in every dialect (a top-level `error` key always means an error).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::sse::SseEvent;

/// A wire format for streamed generations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Dialect {
    /// `chat.completion.chunk` deltas (OpenAI, vLLM, SGLang, TRT-LLM, llama.cpp, Ollama `/v1`, TGI).
    OpenAiChat,
    /// `text_completion` chunks with `choices[].text`.
    OpenAiCompletions,
    /// OpenAI Responses API: `event: response.*` with typed data.
    OpenAiResponses,
    /// Anthropic Messages: `message_start`, `content_block_delta`, …
    Anthropic,
    /// Ollama native NDJSON: `{"message":{…},"done":false}`.
    OllamaNative,
    /// TGI native `generate_stream`: `{"token":{…},"generated_text":null}`.
    TgiNative,
}

impl Dialect {
    /// Every dialect, for menus and tests.
    pub const ALL: [Dialect; 6] = [
        Dialect::OpenAiChat,
        Dialect::OpenAiCompletions,
        Dialect::OpenAiResponses,
        Dialect::Anthropic,
        Dialect::OllamaNative,
        Dialect::TgiNative,
    ];

    /// A short human label.
    pub fn label(self) -> &'static str {
        match self {
            Dialect::OpenAiChat => "OpenAI chat completions",
            Dialect::OpenAiCompletions => "OpenAI completions",
            Dialect::OpenAiResponses => "OpenAI Responses",
            Dialect::Anthropic => "Anthropic Messages",
            Dialect::OllamaNative => "Ollama native",
            Dialect::TgiNative => "TGI native",
        }
    }
}

/// Token counts reported by the server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt (input) tokens.
    pub prompt_tokens: Option<u64>,
    /// Generated tokens so far (continuous) or in total (final).
    pub completion_tokens: Option<u64>,
    /// Hidden or visible reasoning tokens, where reported.
    pub reasoning_tokens: Option<u64>,
    /// Prompt tokens served from a cache, where reported.
    pub cached_tokens: Option<u64>,
}

/// Server-side timings (llama.cpp `timings`, Ollama durations), in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerTimings {
    /// Prompt tokens processed (excluding cache hits).
    pub prompt_n: Option<u64>,
    /// Prefill time.
    pub prompt_ms: Option<f64>,
    /// Tokens generated.
    pub predicted_n: Option<u64>,
    /// Decode time.
    pub predicted_ms: Option<f64>,
    /// Decode time per token.
    pub predicted_per_token_ms: Option<f64>,
    /// Prompt tokens served from cache.
    pub cache_n: Option<u64>,
}

/// What kind of error an error event is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamError {
    /// The server's message.
    pub message: String,
    /// Type or code, when given (`overloaded_error`, `500`, …).
    pub kind: Option<String>,
}

/// One classified event of a generation stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum StreamEvent {
    /// A chunk that only announces the assistant role (no text): never a token.
    Role,
    /// Answer text (non-empty).
    Content(String),
    /// Visible reasoning / thinking text (non-empty).
    Reasoning(String),
    /// Refusal text (non-empty).
    Refusal(String),
    /// A tool-call fragment for call `index`.
    ToolCall {
        /// Which call of the turn.
        index: u32,
        /// Call id when sent.
        id: Option<String>,
        /// Function name when sent.
        name: Option<String>,
        /// Fragment of the JSON arguments (may be empty).
        arguments: String,
    },
    /// A delta that carried nothing (`content: ""`/`null`, `{}`), a ping or a start marker.
    Empty,
    /// Token counts. `with_output` is true when the same chunk also carried output or choices,
    /// i.e. continuous usage statistics.
    Usage {
        /// The counts.
        usage: Usage,
        /// Whether this usage rode on a chunk with choices (continuous stats).
        with_output: bool,
    },
    /// Server-side timings.
    Timings(ServerTimings),
    /// Prefill progress (llama.cpp `prompt_progress`): not a token.
    Progress {
        /// Prompt tokens in all.
        total: u64,
        /// Prompt tokens processed so far.
        processed: u64,
    },
    /// The server says generation finished (`finish_reason`, `stop_reason`, `done:true`).
    Finish(String),
    /// The stream's terminal marker (`[DONE]`, `message_stop`, `response.completed`).
    Done,
    /// An error reported inside the stream.
    Error(StreamError),
    /// Data that could not be understood (not JSON, or not of the dialect).
    Malformed(String),
}

impl StreamEvent {
    /// Whether the event carries generated output (a token event).
    pub fn is_output(&self) -> bool {
        matches!(
            self,
            StreamEvent::Content(_) | StreamEvent::Reasoning(_) | StreamEvent::Refusal(_)
        ) || matches!(self, StreamEvent::ToolCall { name, arguments, .. } if name.is_some() || !arguments.is_empty())
    }
}

/// Classifies framed events, detecting the dialect unless one was chosen.
#[derive(Debug, Clone, Default)]
pub struct DialectDecoder {
    dialect: Option<Dialect>,
}

impl DialectDecoder {
    /// A decoder for `dialect`, or one that detects it (`None`).
    pub fn new(dialect: Option<Dialect>) -> Self {
        Self { dialect }
    }

    /// The dialect in use, once known.
    pub fn dialect(&self) -> Option<Dialect> {
        self.dialect
    }

    /// Classifies one framed event into zero or more stream events.
    pub fn decode(&mut self, ev: &SseEvent) -> Vec<StreamEvent> {
        let data = ev.data.trim();
        if data == "[DONE]" {
            return vec![StreamEvent::Done];
        }
        if ev.event == "ping" {
            return vec![StreamEvent::Empty];
        }
        let value: Value = match serde_json::from_str(data) {
            Ok(v) => v,
            Err(_) if ev.event == "error" => {
                return vec![StreamEvent::Error(StreamError {
                    message: data.to_owned(),
                    kind: None,
                })];
            }
            Err(e) => {
                return vec![StreamEvent::Malformed(format!(
                    "not JSON ({e}): {}",
                    clip(data)
                ))];
            }
        };
        if let Some(err) = top_level_error(&value, &ev.event) {
            return vec![StreamEvent::Error(err)];
        }
        if self.dialect.is_none() {
            self.dialect = detect(&ev.event, &value);
        }
        match self.dialect {
            Some(Dialect::OpenAiChat) | Some(Dialect::OpenAiCompletions) => decode_openai(&value),
            Some(Dialect::OpenAiResponses) => decode_responses(&ev.event, &value),
            Some(Dialect::Anthropic) => decode_anthropic(&value),
            Some(Dialect::OllamaNative) => decode_ollama(&value),
            Some(Dialect::TgiNative) => decode_tgi(&value),
            None => vec![StreamEvent::Malformed(format!(
                "unknown stream format: {}",
                clip(data)
            ))],
        }
    }
}

fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(160).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

/// Detects the dialect of one decoded JSON event.
pub fn detect(event: &str, v: &Value) -> Option<Dialect> {
    let ty = v.get("type").and_then(Value::as_str).unwrap_or(event);
    if ty.starts_with("response.") || event.starts_with("response.") {
        return Some(Dialect::OpenAiResponses);
    }
    if ty.starts_with("message_") || ty.starts_with("content_block_") || ty == "ping" {
        return Some(Dialect::Anthropic);
    }
    match v.get("object").and_then(Value::as_str) {
        Some("chat.completion.chunk") => return Some(Dialect::OpenAiChat),
        Some("text_completion") => return Some(Dialect::OpenAiCompletions),
        _ => {}
    }
    if let Some(choices) = v.get("choices").and_then(Value::as_array) {
        if let Some(c) = choices.first()
            && c.get("text").is_some()
            && c.get("delta").is_none()
        {
            return Some(Dialect::OpenAiCompletions);
        }
        return Some(Dialect::OpenAiChat);
    }
    if v.get("done").is_some() && (v.get("message").is_some() || v.get("response").is_some()) {
        return Some(Dialect::OllamaNative);
    }
    if v.get("token").is_some() || v.get("generated_text").is_some() {
        return Some(Dialect::TgiNative);
    }
    None
}

fn top_level_error(v: &Value, event: &str) -> Option<StreamError> {
    let obj = v.as_object()?;
    let is_error_type = obj.get("type").and_then(Value::as_str) == Some("error");
    let err = obj.get("error");
    if err.is_none() && event != "error" && !is_error_type {
        return None;
    }
    let err = err.unwrap_or(v);
    if err.is_null() {
        return None;
    }
    let message = match err {
        Value::String(s) => s.clone(),
        Value::Object(o) => o
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| err.to_string()),
        other => other.to_string(),
    };
    let kind = match err {
        Value::Object(o) => ["type", "code", "http_status_code"]
            .iter()
            .find_map(|k| o.get(*k).filter(|v| !v.is_null()))
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| v.to_string())
            }),
        _ => None,
    };
    Some(StreamError { message, kind })
}

fn non_empty(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

fn parse_usage(u: &Value) -> Option<Usage> {
    if !u.is_object() {
        return None;
    }
    let n = |k: &str| u.get(k).and_then(Value::as_u64);
    Some(Usage {
        prompt_tokens: n("prompt_tokens").or_else(|| n("input_tokens")),
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
            .or_else(|| n("cache_read_input_tokens")),
    })
}

fn parse_timings(t: &Value) -> Option<ServerTimings> {
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

fn decode_openai(v: &Value) -> Vec<StreamEvent> {
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

fn decode_responses(event: &str, v: &Value) -> Vec<StreamEvent> {
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

fn decode_anthropic(v: &Value) -> Vec<StreamEvent> {
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

fn decode_ollama(v: &Value) -> Vec<StreamEvent> {
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

fn decode_tgi(v: &Value) -> Vec<StreamEvent> {
    let mut out = Vec::new();
    let tok = v.get("token").unwrap_or(&Value::Null);
    let special = tok.get("special").and_then(Value::as_bool).unwrap_or(false);
    match non_empty(tok.get("text")) {
        Some(t) if !special => out.push(StreamEvent::Content(t)),
        _ => out.push(StreamEvent::Empty),
    }
    if v.get("generated_text").is_some_and(|g| !g.is_null()) {
        let details = v.get("details").unwrap_or(&Value::Null);
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
        out.push(StreamEvent::Done);
    }
    out
}
