//! Server dialects: turns framed events (SSE or NDJSON) into classified [`StreamEvent`]s.
//!
//! Covers OpenAI chat completions (and the servers that imitate it: vLLM, SGLang, TensorRT-LLM,
//! llama.cpp, Ollama's `/v1`, TGI's Messages API), OpenAI completions, the OpenAI Responses API,
//! Anthropic Messages, Ollama native `/api/chat` (and `/api/generate`), TGI native
//! `generate_stream` and llama.cpp's native `/completion`. The dialect is detected from the first events or chosen up front; errors
//! are recognised in every dialect (a top-level `error` key always means an error).
//!
//! This module holds what every dialect shares: the [`Dialect`] enum with its stable ids, the
//! event types ([`StreamEvent`], [`Usage`], [`ServerTimings`], [`StreamError`]), detection
//! ([`detect`]) and the [`DialectDecoder`], which parses the JSON, recognises errors and hands the
//! value to one decoder per API: `openai` (chat and completions), `responses`, `anthropic`,
//! `ollama`, `tgi` and `llamacpp`. The `fields` module parses the pieces they have in common (non-empty
//! strings, usage objects, llama.cpp timings).
//!
//! Events can belong to a choice: with `n > 1` the OpenAI APIs interleave several answers,
//! each chunk naming its `choices[].index`. [`DialectDecoder::decode_choices`] returns that
//! index beside every event (`None` for events outside any choice, such as a usage chunk with
//! empty `choices`, and for dialects with one answer). llama.cpp's `timings` and
//! `prompt_progress` are read on every dialect, wherever they sit at the top level of an event.
//! A body that is one JSON document rather than a stream (a server or proxy that ignored
//! `stream: true`) is read by [`DialectDecoder::decode_document`]; the `whole` module knows the
//! non-streamed shapes.

mod anthropic;
mod fields;
mod llamacpp;
mod ollama;
mod openai;
mod responses;
mod tgi;
mod whole;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::sse::SseEvent;

use anthropic::decode_anthropic;
use ollama::decode_ollama;
use openai::decode_openai;
use responses::decode_responses;
use tgi::decode_tgi;

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
    /// llama.cpp native `/completion`: `{"content":"…","stop":false}`, the last with `timings`.
    LlamaCppNative,
}

impl Dialect {
    /// Every dialect, for menus and tests.
    pub const ALL: [Dialect; 7] = [
        Dialect::OpenAiChat,
        Dialect::OpenAiCompletions,
        Dialect::OpenAiResponses,
        Dialect::Anthropic,
        Dialect::OllamaNative,
        Dialect::TgiNative,
        Dialect::LlamaCppNative,
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
            Dialect::LlamaCppNative => "llama.cpp native /completion",
        }
    }

    /// A stable id for saved settings and the UI's select; never changes once released.
    /// [`Dialect::from_id`] reads it back.
    pub fn id(self) -> &'static str {
        match self {
            Dialect::OpenAiChat => "openai_chat",
            Dialect::OpenAiCompletions => "openai_completions",
            Dialect::OpenAiResponses => "openai_responses",
            Dialect::Anthropic => "anthropic",
            Dialect::OllamaNative => "ollama",
            Dialect::TgiNative => "tgi",
            Dialect::LlamaCppNative => "llamacpp",
        }
    }

    /// The dialect whose [`Dialect::id`] is `id`; `None` for an unknown id, including `auto`
    /// (which means "detect it").
    pub fn from_id(id: &str) -> Option<Dialect> {
        Dialect::ALL.into_iter().find(|d| d.id() == id)
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
    /// Prompt tokens served from a prefix cache, where reported (OpenAI, vLLM, SGLang and
    /// llama.cpp `prompt_tokens_details.cached_tokens`, Responses
    /// `input_tokens_details.cached_tokens`, Anthropic `cache_read_input_tokens`); part of
    /// `prompt_tokens`.
    pub cached_tokens: Option<u64>,
    /// Prompt tokens written to the cache by this request (Anthropic
    /// `cache_creation_input_tokens`); part of `prompt_tokens`, not a hit.
    #[serde(default)]
    pub cache_write_tokens: Option<u64>,
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
    /// Token counts. `with_output` is true when the same chunk carried choices that were still
    /// streaming, i.e. continuous usage statistics; usage on the finish chunk or on a chunk
    /// without choices is the final count.
    Usage {
        /// The counts.
        usage: Usage,
        /// Whether this usage rode on a chunk with unfinished choices (continuous stats).
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
    /// llama.cpp native: tokens seen so far per completion (its lines carry their own).
    llamacpp_tokens: BTreeMap<u32, u64>,
}

impl DialectDecoder {
    /// A decoder for `dialect`, or one that detects it (`None`).
    pub fn new(dialect: Option<Dialect>) -> Self {
        Self {
            dialect,
            llamacpp_tokens: BTreeMap::new(),
        }
    }

    /// The dialect in use, once known.
    pub fn dialect(&self) -> Option<Dialect> {
        self.dialect
    }

    /// Classifies one framed event into zero or more stream events.
    pub fn decode(&mut self, ev: &SseEvent) -> Vec<StreamEvent> {
        self.decode_choices(ev)
            .into_iter()
            .map(|(_, e)| e)
            .collect()
    }

    /// Classifies one framed event like [`DialectDecoder::decode`], with the choice
    /// (`choices[].index`) each event belongs to; `None` outside any choice.
    pub fn decode_choices(&mut self, ev: &SseEvent) -> Vec<(Option<u32>, StreamEvent)> {
        let data = ev.data.trim();
        if data == "[DONE]" {
            return vec![(None, StreamEvent::Done)];
        }
        if ev.event == "ping" {
            return vec![(None, StreamEvent::Empty)];
        }
        let value: Value = match serde_json::from_str(data) {
            Ok(v) => v,
            Err(_) if ev.event == "error" => {
                return vec![(
                    None,
                    StreamEvent::Error(StreamError {
                        message: data.to_owned(),
                        kind: None,
                    }),
                )];
            }
            Err(e) => {
                return vec![(
                    None,
                    StreamEvent::Malformed(format!("not JSON ({e}): {}", clip(data))),
                )];
            }
        };
        if let Some(err) = top_level_error(&value, &ev.event) {
            return vec![(None, StreamEvent::Error(err))];
        }
        if self.dialect.is_none() {
            self.dialect = detect(&ev.event, &value);
        }
        let one = |v: Vec<StreamEvent>| v.into_iter().map(|e| (None, e)).collect::<Vec<_>>();
        let mut out = match self.dialect {
            Some(Dialect::OpenAiChat) | Some(Dialect::OpenAiCompletions) => decode_openai(&value),
            Some(Dialect::OpenAiResponses) => one(decode_responses(&ev.event, &value)),
            Some(Dialect::Anthropic) => one(decode_anthropic(&value)),
            Some(Dialect::OllamaNative) => one(decode_ollama(&value)),
            Some(Dialect::TgiNative) => one(decode_tgi(&value)),
            Some(Dialect::LlamaCppNative) => {
                llamacpp::decode_llamacpp(&value, &mut self.llamacpp_tokens)
            }
            None => {
                return vec![(
                    None,
                    StreamEvent::Malformed(format!("unknown stream format: {}", clip(data))),
                )];
            }
        };
        llamacpp_extras(&value, &mut out);
        out
    }

    /// Reads a whole response body that is one JSON document instead of a stream: a server or
    /// proxy that ignored `stream: true` and answered with `chat.completion`,
    /// `text_completion`, a Responses `response` or an Anthropic `message` object (or Ollama's
    /// and TGI's non-streamed objects). Returns its events, all of which belong to one arrival,
    /// or `None` when the document is not a complete answer of a known dialect. An error
    /// document is not an answer: it is left to [`DialectDecoder::decode_choices`].
    pub fn decode_document(&mut self, value: &Value) -> Option<Vec<(Option<u32>, StreamEvent)>> {
        if top_level_error(value, "message").is_some() {
            return None;
        }
        let (dialect, mut out) = whole::decode_whole(value)?;
        self.dialect = Some(dialect);
        llamacpp_extras(value, &mut out);
        Some(out)
    }
}

/// llama.cpp's additions outside the dialects' own fields: the `timings` object (server-side
/// prefill and decode times, on the last event of every API, or on every event with
/// `timings_per_token`; Responses events may carry it inside `response`) and
/// `prompt_progress`. Added when the dialect's decoder did not already read them.
fn llamacpp_extras(v: &Value, out: &mut Vec<(Option<u32>, StreamEvent)>) {
    let has = |out: &Vec<(Option<u32>, StreamEvent)>, f: fn(&StreamEvent) -> bool| {
        out.iter().any(|(_, e)| f(e))
    };
    if !has(out, |e| matches!(e, StreamEvent::Timings(_)))
        && let Some(t) = v
            .get("timings")
            .or_else(|| v.pointer("/response/timings"))
            .and_then(fields::parse_timings)
    {
        out.push((None, StreamEvent::Timings(t)));
    }
    if !has(out, |e| matches!(e, StreamEvent::Progress { .. }))
        && let Some(p) = v.get("prompt_progress").filter(|p| p.is_object())
    {
        out.push((None, fields::parse_progress(p)));
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
    if ty == "message" && v.get("content").is_some_and(Value::is_array) {
        return Some(Dialect::Anthropic); // a non-streamed Messages answer
    }
    match v.get("object").and_then(Value::as_str) {
        Some("chat.completion.chunk") | Some("chat.completion") => {
            return Some(Dialect::OpenAiChat);
        }
        Some("text_completion") => return Some(Dialect::OpenAiCompletions),
        Some("response") => return Some(Dialect::OpenAiResponses), // non-streamed Responses
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
    if llamacpp::is_llamacpp(v) {
        return Some(Dialect::LlamaCppNative);
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
