//! Frames one generation the way each server would (see `shared/reference/sse-dialects.md`).

use serde_json::{Value, json};

use super::plan::{Piece, PieceKind};
use super::profile::Flavour;

/// Which API was called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// `/v1/chat/completions`.
    Chat,
    /// `/v1/completions`.
    Completions,
    /// `/v1/messages`.
    Anthropic,
}

/// llama.cpp-style timings the framer can attach.
#[derive(Debug, Clone, Copy, Default)]
pub struct SimTimings {
    /// Prefill time (ms).
    pub prompt_ms: f64,
    /// Decode time (ms).
    pub predicted_ms: f64,
}

/// Stateful framer for one response.
#[derive(Debug, Clone)]
pub struct Framer {
    /// Flavour.
    pub flavour: Flavour,
    /// API.
    pub api: Api,
    /// Response id.
    pub id: String,
    /// Model name echoed.
    pub model: String,
    /// Unix seconds.
    pub created: u64,
    /// Usage chunk at the end.
    pub include_usage: bool,
    /// Usage on every chunk.
    pub continuous_usage: bool,
    /// Prompt tokens.
    pub prompt_tokens: u32,
    /// Prompt tokens a prefix cache served, for a model that keeps one (`None`: usage says
    /// nothing of a cache, as before): OpenAI-style usage carries
    /// `prompt_tokens_details.cached_tokens`, Anthropic's `cache_read_input_tokens` (with
    /// `input_tokens` the rest), llama.cpp's timings `cache_n` (with `prompt_n` the rest).
    pub cached_tokens: Option<u32>,
    /// Tokens framed so far.
    pub sent_tokens: u32,
    tool_started: bool,
    block_open: Option<&'static str>,
    block_index: u32,
}

fn sse(v: &Value) -> String {
    format!("data: {v}\n\n")
}

fn anthropic(ev: &str, v: &Value) -> String {
    format!("event: {ev}\ndata: {v}\n\n")
}

impl Framer {
    /// A framer. (Each argument is one fact of the response; a struct would only rename them.)
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        flavour: Flavour,
        api: Api,
        id: String,
        model: String,
        created: u64,
        include_usage: bool,
        continuous_usage: bool,
        prompt_tokens: u32,
    ) -> Self {
        Self {
            flavour,
            api,
            id,
            model,
            created,
            include_usage,
            continuous_usage,
            prompt_tokens,
            cached_tokens: None,
            sent_tokens: 0,
            tool_started: false,
            block_open: None,
            block_index: 0,
        }
    }

    fn usage(&self) -> Value {
        let mut u = json!({"prompt_tokens": self.prompt_tokens, "total_tokens": self.prompt_tokens + self.sent_tokens, "completion_tokens": self.sent_tokens});
        if let Some(n) = self.cached_tokens {
            u["prompt_tokens_details"] = json!({"cached_tokens": n});
        }
        u
    }

    /// Anthropic's prompt-side usage: `input_tokens` is what followed the cached prefix.
    fn anthropic_input_usage(&self) -> Value {
        match self.cached_tokens {
            Some(n) => {
                json!({"input_tokens": self.prompt_tokens.saturating_sub(n), "cache_creation_input_tokens": 0, "cache_read_input_tokens": n, "output_tokens": 1})
            }
            None => json!({"input_tokens": self.prompt_tokens, "output_tokens": 1}),
        }
    }

    fn chat_chunk(&self, delta: Value, finish: Option<&str>) -> Value {
        let mut choice = json!({"index": 0, "delta": delta});
        match self.flavour {
            Flavour::Trtllm => {
                if let Some(f) = finish {
                    choice["finish_reason"] = json!(f);
                }
            }
            Flavour::Sglang => {
                choice["logprobs"] = Value::Null;
                choice["finish_reason"] = json!(finish);
                choice["matched_stop"] = Value::Null;
            }
            Flavour::Llamacpp | Flavour::Ollama => choice["finish_reason"] = json!(finish),
            _ => {
                choice["logprobs"] = Value::Null;
                choice["finish_reason"] = json!(finish);
            }
        }
        let id = if self.flavour == Flavour::Tgi {
            String::new()
        } else {
            self.id.clone()
        };
        let mut chunk = json!({"id": id, "object": "chat.completion.chunk", "created": self.created, "model": self.model, "choices": [choice]});
        match self.flavour {
            Flavour::Sglang | Flavour::Tgi => chunk["usage"] = Value::Null,
            Flavour::Llamacpp => chunk["system_fingerprint"] = json!("b6000-sim"),
            Flavour::Ollama => chunk["system_fingerprint"] = json!("fp_ollama"),
            _ => {}
        }
        if self.continuous_usage {
            chunk["usage"] = self.usage();
        }
        chunk
    }

    fn full_delta(&self, mut delta: Value) -> Value {
        if self.flavour == Flavour::Sglang {
            for k in ["role", "content", "reasoning_content", "tool_calls"] {
                if delta.get(k).is_none() {
                    delta[k] = Value::Null;
                }
            }
        }
        if self.flavour == Flavour::Tgi {
            delta["role"] = json!("assistant");
        }
        delta
    }

    /// The opening events (role chunk, `message_start`), if the flavour sends any.
    pub fn start(&mut self) -> String {
        match self.api {
            Api::Anthropic => anthropic(
                "message_start",
                &json!({"type":"message_start","message":{"id": self.id,"type":"message","role":"assistant","content":[],"model": self.model,"stop_reason":null,"stop_sequence":null,"usage": self.anthropic_input_usage()}}),
            ),
            Api::Completions => String::new(),
            Api::Chat => match self.flavour {
                Flavour::Ollama | Flavour::Tgi => String::new(),
                Flavour::Trtllm => format!(
                    "data: {} \n\n",
                    self.chat_chunk(json!({"role": "assistant"}), None)
                ),
                Flavour::Llamacpp => {
                    sse(&self.chat_chunk(json!({"role": "assistant", "content": null}), None))
                }
                _ => sse(&self.chat_chunk(
                    self.full_delta(json!({"role": "assistant", "content": ""})),
                    None,
                )),
            },
        }
    }

    /// One chunk carrying `group` (tokens of one kind).
    pub fn chunk(&mut self, group: &[Piece]) -> String {
        let Some(first) = group.first() else {
            return String::new();
        };
        self.sent_tokens += group.len() as u32;
        let text: String = group.iter().map(|p| p.text.as_str()).collect();
        match self.api {
            Api::Completions => {
                let mut c = json!({"id": self.id, "object": "text_completion", "created": self.created, "model": self.model, "choices": [{"index": 0, "text": text, "logprobs": null, "finish_reason": null}]});
                if self.continuous_usage {
                    c["usage"] = self.usage();
                }
                sse(&c)
            }
            Api::Anthropic => self.anthropic_chunk(first.kind, &text),
            Api::Chat => {
                let first_content =
                    self.flavour == Flavour::Ollama && self.sent_tokens == group.len() as u32;
                let mut delta = match first.kind {
                    PieceKind::Answer => json!({"content": text}),
                    PieceKind::Reasoning => match self.flavour {
                        Flavour::Vllm | Flavour::Ollama => json!({"reasoning": text}),
                        _ => json!({"reasoning_content": text}),
                    },
                    PieceKind::ToolName => {
                        self.tool_started = true;
                        json!({"tool_calls": [{"index": 0, "type": "function", "id": format!("call-{}", self.id), "function": {"name": text, "arguments": ""}}]})
                    }
                    PieceKind::ToolArgs => {
                        json!({"tool_calls": [{"index": 0, "function": {"arguments": text}}]})
                    }
                };
                if first_content {
                    delta["role"] = json!("assistant");
                }
                if self.flavour == Flavour::Trtllm && first.kind == PieceKind::Answer {
                    delta["reasoning_content"] = json!("");
                }
                sse(&self.chat_chunk(self.full_delta(delta), None))
            }
        }
    }

    fn anthropic_chunk(&mut self, kind: PieceKind, text: &str) -> String {
        let block = match kind {
            PieceKind::Reasoning => "thinking",
            PieceKind::Answer => "text",
            PieceKind::ToolName | PieceKind::ToolArgs => "tool_use",
        };
        let mut out = String::new();
        if self.block_open != Some(block) {
            if self.block_open.is_some() {
                out += &anthropic(
                    "content_block_stop",
                    &json!({"type":"content_block_stop","index": self.block_index}),
                );
                self.block_index += 1;
            }
            let start = match block {
                "thinking" => json!({"type":"thinking","thinking":""}),
                "text" => json!({"type":"text","text":""}),
                _ => {
                    json!({"type":"tool_use","id": format!("toolu_{}", self.id),"name": if kind == PieceKind::ToolName { text } else { "tool" },"input":{}})
                }
            };
            out += &anthropic(
                "content_block_start",
                &json!({"type":"content_block_start","index": self.block_index,"content_block": start}),
            );
            self.block_open = Some(block);
            if kind == PieceKind::ToolName {
                return out;
            }
        }
        let delta = match kind {
            PieceKind::Reasoning => json!({"type":"thinking_delta","thinking": text}),
            PieceKind::Answer => json!({"type":"text_delta","text": text}),
            _ => json!({"type":"input_json_delta","partial_json": text}),
        };
        out + &anthropic(
            "content_block_delta",
            &json!({"type":"content_block_delta","index": self.block_index,"delta": delta}),
        )
    }

    /// The closing events: finish reason, usage, timings, terminal marker.
    pub fn finish(&mut self, reason: &str, timings: SimTimings) -> String {
        match self.api {
            Api::Anthropic => {
                let mut out = String::new();
                if self.block_open.is_some() {
                    out += &anthropic(
                        "content_block_stop",
                        &json!({"type":"content_block_stop","index": self.block_index}),
                    );
                }
                let stop = match reason {
                    "length" => "max_tokens",
                    "tool_calls" => "tool_use",
                    _ => "end_turn",
                };
                out += &anthropic(
                    "message_delta",
                    &json!({"type":"message_delta","delta":{"stop_reason": stop,"stop_sequence":null},"usage":{"output_tokens": self.sent_tokens}}),
                );
                out + &anthropic("message_stop", &json!({"type":"message_stop"}))
            }
            Api::Completions => {
                let mut out = sse(
                    &json!({"id": self.id, "object": "text_completion", "created": self.created, "model": self.model, "choices": [{"index": 0, "text": "", "logprobs": null, "finish_reason": reason}]}),
                );
                if self.include_usage {
                    out += &sse(
                        &json!({"id": self.id, "object": "text_completion", "created": self.created, "model": self.model, "choices": [], "usage": self.usage()}),
                    );
                }
                out + "data: [DONE]\n\n"
            }
            Api::Chat => {
                let delta = match self.flavour {
                    Flavour::Llamacpp | Flavour::Ollama => json!({}),
                    Flavour::Sglang => {
                        json!({"role": null, "content": null, "reasoning_content": null, "tool_calls": null})
                    }
                    Flavour::Trtllm => json!({"content": "", "reasoning_content": ""}),
                    _ => self.full_delta(json!({"content": ""})),
                };
                let mut out = sse(&self.chat_chunk(delta, Some(reason)));
                let timings = (self.flavour == Flavour::Llamacpp).then(|| {
                    let n = f64::from(self.sent_tokens.max(1));
                    let cache_n = self.cached_tokens.unwrap_or(0);
                    let prompt_n = self.prompt_tokens.saturating_sub(cache_n);
                    json!({"cache_n": cache_n, "prompt_n": prompt_n, "prompt_ms": timings.prompt_ms, "prompt_per_token_ms": timings.prompt_ms / f64::from(prompt_n.max(1)), "predicted_n": self.sent_tokens, "predicted_ms": timings.predicted_ms, "predicted_per_token_ms": timings.predicted_ms / n, "predicted_per_second": n / timings.predicted_ms.max(1e-9) * 1e3})
                });
                if self.include_usage || timings.is_some() {
                    let id = if self.flavour == Flavour::Tgi {
                        String::new()
                    } else {
                        self.id.clone()
                    };
                    let mut u = json!({"id": id, "object": "chat.completion.chunk", "created": self.created, "model": self.model, "choices": []});
                    if self.include_usage {
                        u["usage"] = self.usage();
                    }
                    if let Some(t) = timings {
                        u["timings"] = t;
                    }
                    out += &sse(&u);
                }
                out + "data: [DONE]\n\n"
            }
        }
    }

    /// A mid-stream error as the flavour reports it (llama.cpp and TRT-LLM: no `[DONE]`).
    pub fn error(&self, message: &str) -> String {
        match self.api {
            Api::Anthropic => anthropic(
                "error",
                &json!({"type":"error","error":{"type":"overloaded_error","message": message}}),
            ),
            _ => match self.flavour {
                Flavour::Llamacpp => sse(
                    &json!({"error": {"code": 500, "message": message, "type": "server_error"}}),
                ),
                Flavour::Trtllm => String::new(),
                Flavour::Tgi => {
                    sse(&json!({"error": {"message": message, "http_status_code": 500}}))
                        + "data: [DONE]\n\n"
                }
                _ => {
                    sse(
                        &json!({"error": {"message": message, "type": "InternalServerError", "param": null, "code": 500}}),
                    ) + "data: [DONE]\n\n"
                }
            },
        }
    }
}
