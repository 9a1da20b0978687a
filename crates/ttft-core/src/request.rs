//! Building streaming requests for each API style (pure: URL, headers and body; the runner
//! sends them). Secrets are added by the runner at send time and never stored here.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::dialect::Dialect;

/// What one request asks for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GenerationParams {
    /// Model name.
    pub model: String,
    /// Chat messages `(role, content)`.
    pub messages: Vec<(String, String)>,
    /// Max output tokens.
    pub max_tokens: u32,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Seed.
    pub seed: Option<u64>,
    /// Ask for per-chunk usage (vLLM / SGLang / TRT-LLM `continuous_usage_stats`).
    pub continuous_usage: bool,
    /// Ask the server to ignore EOS (vLLM, llama.cpp): fixed output length.
    pub ignore_eos: bool,
    /// JSON output: `response_format` (OpenAI style).
    pub response_format: Option<Value>,
    /// Tool definitions (OpenAI style).
    pub tools: Option<Value>,
    /// Extra top-level body fields merged last (e.g. llama.cpp `cache_prompt: false`).
    pub extra_body: Option<Value>,
}

/// A request ready to send (without secrets).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HttpRequestSpec {
    /// Full URL.
    pub url: String,
    /// Headers (no Authorization: the runner adds keys).
    pub headers: Vec<(String, String)>,
    /// JSON body.
    pub body: String,
}

/// The base URL without a trailing `/` or `/v1`.
pub fn normalise_base(base: &str) -> String {
    let b = base.trim().trim_end_matches('/');
    b.strip_suffix("/v1").unwrap_or(b).to_owned()
}

/// Builds the streaming request for `dialect` (`None` = OpenAI chat completions).
pub fn build_request(
    base: &str,
    dialect: Option<Dialect>,
    p: &GenerationParams,
) -> HttpRequestSpec {
    let base = normalise_base(base);
    let mut headers = vec![("content-type".to_owned(), "application/json".to_owned())];
    let msgs = || {
        Value::Array(
            p.messages
                .iter()
                .map(|(r, c)| json!({"role": r, "content": c}))
                .collect(),
        )
    };
    let (path, mut body) = match dialect.unwrap_or(Dialect::OpenAiChat) {
        Dialect::OpenAiChat => {
            let mut b = json!({"model": p.model, "messages": msgs(), "stream": true, "max_tokens": p.max_tokens, "stream_options": {"include_usage": true}});
            if p.continuous_usage {
                b["stream_options"]["continuous_usage_stats"] = json!(true);
            }
            if let Some(rf) = &p.response_format {
                b["response_format"] = rf.clone();
            }
            if let Some(t) = &p.tools {
                b["tools"] = t.clone();
            }
            ("/v1/chat/completions", b)
        }
        Dialect::OpenAiCompletions => {
            let prompt: Vec<&str> = p.messages.iter().map(|(_, c)| c.as_str()).collect();
            let mut b = json!({"model": p.model, "prompt": prompt.join("\n\n"), "stream": true, "max_tokens": p.max_tokens, "stream_options": {"include_usage": true}});
            if p.continuous_usage {
                b["stream_options"]["continuous_usage_stats"] = json!(true);
            }
            ("/v1/completions", b)
        }
        Dialect::OpenAiResponses => {
            let mut b = json!({"model": p.model, "input": msgs(), "stream": true, "max_output_tokens": p.max_tokens});
            if let Some(t) = &p.tools {
                b["tools"] = t.clone();
            }
            ("/v1/responses", b)
        }
        Dialect::Anthropic => {
            headers.push(("anthropic-version".into(), "2023-06-01".into()));
            headers.push((
                "anthropic-dangerous-direct-browser-access".into(),
                "true".into(),
            ));
            let system: Vec<&str> = p
                .messages
                .iter()
                .filter(|(r, _)| r == "system")
                .map(|(_, c)| c.as_str())
                .collect();
            let rest: Vec<Value> = p
                .messages
                .iter()
                .filter(|(r, _)| r != "system")
                .map(|(r, c)| json!({"role": r, "content": c}))
                .collect();
            let mut b = json!({"model": p.model, "messages": rest, "stream": true, "max_tokens": p.max_tokens});
            if !system.is_empty() {
                b["system"] = json!(system.join("\n\n"));
            }
            ("/v1/messages", b)
        }
        Dialect::OllamaNative => {
            let mut b = json!({"model": p.model, "messages": msgs(), "stream": true, "options": {"num_predict": p.max_tokens}});
            if let Some(t) = p.temperature {
                b["options"]["temperature"] = json!(t);
            }
            if let Some(s) = p.seed {
                b["options"]["seed"] = json!(s);
            }
            if p.response_format.is_some() {
                b["format"] = json!("json");
            }
            ("/api/chat", b)
        }
        Dialect::LlamaCppNative => {
            // llama.cpp's own endpoint: a prompt string, `n_predict`; the stream's lines carry
            // their token ids and the last one the server's timings.
            let prompt: Vec<&str> = p.messages.iter().map(|(_, c)| c.as_str()).collect();
            (
                "/completion",
                json!({"prompt": prompt.join("\n\n"), "n_predict": p.max_tokens, "stream": true}),
            )
        }
        Dialect::TgiNative => {
            let prompt: Vec<&str> = p.messages.iter().map(|(_, c)| c.as_str()).collect();
            (
                "/generate_stream",
                json!({"inputs": prompt.join("\n\n"), "parameters": {"max_new_tokens": p.max_tokens, "details": true}}),
            )
        }
    };
    if takes_sampling_fields(dialect) {
        if let Some(t) = p.temperature {
            body["temperature"] = json!(t);
        }
        if let Some(s) = p.seed.filter(|_| dialect != Some(Dialect::OpenAiResponses)) {
            body["seed"] = json!(s);
        }
        if p.ignore_eos && !rejects_ignore_eos(&base) {
            body["ignore_eos"] = json!(true);
        }
    }
    if let Some(Value::Object(extra)) = &p.extra_body {
        for (k, v) in extra {
            body[k] = v.clone();
        }
    }
    HttpRequestSpec {
        url: format!("{base}{path}"),
        headers,
        body: body.to_string(),
    }
}

/// Whether [`build_request`] writes the top-level sampling fields `temperature`, `seed` and
/// `ignore_eos` for `dialect`: the OpenAI styles' and llama.cpp's own (they are documented
/// `/completion` options); the other APIs have no `ignore_eos`, so their answers may stop
/// before `max_tokens`.
pub fn takes_sampling_fields(dialect: Option<Dialect>) -> bool {
    matches!(
        dialect,
        None | Some(Dialect::OpenAiChat)
            | Some(Dialect::OpenAiCompletions)
            | Some(Dialect::OpenAiResponses)
            | Some(Dialect::LlamaCppNative)
    )
}

/// Whether `base` is OpenAI's own API (`api.openai.com`, or an Azure OpenAI resource,
/// `*.openai.azure.com`): it speaks the OpenAI styles but answers 400 "Unrecognized request
/// argument supplied: ignore_eos", a field only open-source servers (vLLM, SGLang, llama.cpp,
/// TensorRT-LLM) document. [`build_request`] leaves `ignore_eos` out for it.
pub fn rejects_ignore_eos(base: &str) -> bool {
    let rest = base
        .trim()
        .split_once("://")
        .map_or(base.trim(), |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, h)| h)
        .split(':')
        .next()
        .unwrap_or_default()
        .trim_end_matches('.')
        .to_ascii_lowercase();
    host == "api.openai.com" || host.ends_with(".openai.azure.com")
}

/// A sentence when the user asked to ignore EOS but the endpoint at `base` with `dialect`
/// does not take the field: it is not sent, so answers may end before `max_tokens`. `None`
/// when `ignore_eos` goes out as asked (or was not asked).
pub fn ignore_eos_note(base: &str, dialect: Option<Dialect>, asked: bool) -> Option<String> {
    if !asked {
        return None;
    }
    if !takes_sampling_fields(dialect) {
        let name = dialect.map_or("This API", Dialect::label);
        return Some(format!(
            "{name} has no ignore_eos, so it is not sent: answers may end before max_tokens (max_tokens only caps them)"
        ));
    }
    rejects_ignore_eos(base).then(|| {
        "OpenAI's own API rejects ignore_eos (400 \"Unrecognized request argument\"), so it is not sent: answers may end before max_tokens".to_owned()
    })
}

/// How many answers a request body asks for: OpenAI's `n` (llama.cpp's native `n_cmpl`), 1
/// when the body does not say; `None` when the body is not a JSON object (unknown).
pub fn choices_asked(body: &str) -> Option<u32> {
    let v: Value = serde_json::from_str(body).ok()?;
    let obj = v.as_object()?;
    let n = ["n", "n_cmpl"]
        .iter()
        .find_map(|k| obj.get(*k).and_then(Value::as_u64))
        .unwrap_or(1);
    Some(u32::try_from(n).unwrap_or(u32::MAX).max(1))
}

/// A line of the extra-headers setting that is not `Name: value`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("extra header line {line} needs the form 'Name: value'")]
pub struct HeaderLineError {
    /// 1-based line number.
    pub line: usize,
}

/// Parses extra headers written one `Name: value` per line (blank lines skipped).
pub fn parse_header_lines(text: &str) -> Result<Vec<(String, String)>, HeaderLineError> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, line)| {
            let (k, v) = line
                .split_once(':')
                .ok_or(HeaderLineError { line: i + 1 })?;
            Ok((k.trim().to_owned(), v.trim().to_owned()))
        })
        .collect()
}

/// The header that carries an API key for `dialect`: `(name, value)`.
pub fn auth_header(dialect: Option<Dialect>, key: &str) -> (String, String) {
    match dialect {
        Some(Dialect::Anthropic) => ("x-api-key".into(), key.to_owned()),
        _ => ("authorization".into(), format!("Bearer {key}")),
    }
}

/// What to tell a user whose browser could not call `url` from `origin`.
pub fn network_error_advice(url: &str, origin: &str, browser_message: &str) -> String {
    format!(
        "The browser could not complete the request to {url} ({browser_message}). Either the server is not reachable \
         (check the URL, port and that it is running), or it refused this page's origin {origin} (CORS). Fixes by server: \
         vLLM: --allowed-origins '[\"{origin}\"]' (default allows all); SGLang: runs with CORS open by default, check a proxy; \
         llama.cpp: allows any origin (use its --host/--port); Ollama: OLLAMA_ORIGINS={origin}; \
         TGI: --cors-allow-origin {origin} and no Authorization header (its preflight allows only Content-Type); \
         Anthropic: the studio sends anthropic-dangerous-direct-browser-access; a proxy in front must answer OPTIONS preflights."
    )
}

/// A text of about `tokens` tokens (≈ 4 characters each) for prompt-length sweeps.
pub fn filler_text(tokens: usize) -> String {
    const BASE: &str = "The quarterly report covers revenue, latency budgets, inference costs and user feedback for the assistant product. ";
    let mut s = String::with_capacity(tokens * 4 + BASE.len());
    while s.len() < tokens * 4 {
        s.push_str(BASE);
    }
    s.truncate(tokens * 4);
    s
}
