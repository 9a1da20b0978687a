//! Simulated models ("profiles"), chosen by model name, and dialect flavours.

use serde::Serialize;

use super::scheduler::LatencyModel;

/// What a profile writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Behaviour {
    /// Plain prose or code.
    Prose,
    /// Starts with a boilerplate opener.
    Openers,
    /// Starts with a house phrase that is on no opener list ([`super::text::HOUSE_PHRASE`]).
    House,
    /// Streams reasoning before the answer.
    Reasoning,
    /// Answers with JSON (or calls a tool when tools are given).
    Agent,
    /// Fails sometimes: mid-stream errors, stalls, dropped connections.
    Flaky,
    /// Answers in markdown: headings, lists, code fences, tables (the rendering lab's, #31).
    Markdown,
}

/// A simulated model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Profile {
    /// Model name clients send.
    pub name: &'static str,
    /// What it is for.
    pub description: &'static str,
    /// Latency model.
    pub latency: LatencyModel,
    /// Tokens per streamed chunk (stream interval).
    pub tokens_per_chunk: u32,
    /// What it writes.
    pub behaviour: Behaviour,
    /// Keeps a prefix cache ([`super::prefix_cache`]): prompts that start like a recent one
    /// prefill only the rest, and usage reports the cached tokens.
    pub prefix_cache: bool,
}

const fn lat(prefill_base_ms: f64, prefill_ms_per_token: f64, decode_base_ms: f64) -> LatencyModel {
    LatencyModel {
        prefill_base_ms,
        prefill_ms_per_token,
        decode_base_ms,
        decode_ms_per_seq: 1.5,
        decode_ms_per_kv_ktok: 1.0,
        max_batch: 64,
        kv_capacity: 200_000,
        max_waiting: 256,
        jitter: 0.0,
        seed: 0,
    }
}

/// The A/B profiles' latency (#29): TTFT ≈ 150 ms (145 ms + 0.05 ms per prompt token), ITL
/// ≈ 20 ms at low load, decode steps varied by 10 % per request and 10 % per step (seed 29).
const AB: LatencyModel = LatencyModel {
    jitter: 0.1,
    seed: 29,
    ..lat(145.0, 0.05, 18.3)
};

/// How much longer `sim-ab-slower`'s decode steps are than `sim-ab`'s.
pub const AB_SLOWER_FACTOR: f64 = 1.10;

/// `m` with every decode cost multiplied by `factor` and the prefill, the noise and its seed
/// unchanged: each decode step of a request lasts exactly `factor` × what it lasts under `m`
/// (the same request id and arrivals draw the same noise), so its ITL is `factor` × too.
pub fn slower_decode(m: LatencyModel, factor: f64) -> LatencyModel {
    LatencyModel {
        decode_base_ms: m.decode_base_ms * factor,
        decode_ms_per_seq: m.decode_ms_per_seq * factor,
        decode_ms_per_kv_ktok: m.decode_ms_per_kv_ktok * factor,
        ..m
    }
}

/// Every profile.
pub fn profiles() -> Vec<Profile> {
    vec![
        Profile {
            name: "model-a",
            description: "The article's model A: TTFT ≈ 0.8 s, ITL ≈ 65 ms at low load",
            latency: lat(700.0, 0.5, 62.0),
            tokens_per_chunk: 1,
            behaviour: Behaviour::Prose,
            prefix_cache: false,
        },
        Profile {
            name: "model-b",
            description: "The article's model B: TTFT ≈ 3.5 s, ITL ≈ 40 ms at low load",
            latency: lat(3380.0, 0.6, 37.0),
            tokens_per_chunk: 1,
            behaviour: Behaviour::Prose,
            prefix_cache: false,
        },
        Profile {
            name: "sim-fast",
            description: "A fast small model for quick runs: TTFT ≈ 60 ms, ITL ≈ 12 ms",
            latency: LatencyModel {
                max_batch: 32,
                kv_capacity: 60_000,
                ..lat(40.0, 0.1, 9.0)
            },
            tokens_per_chunk: 1,
            behaviour: Behaviour::Prose,
            prefix_cache: false,
        },
        Profile {
            name: "sim-coalesce",
            description: "Streams 4 tokens per chunk (stream interval 4)",
            latency: lat(60.0, 0.1, 12.0),
            tokens_per_chunk: 4,
            behaviour: Behaviour::Prose,
            prefix_cache: false,
        },
        Profile {
            name: "sim-openers",
            description: "Starts answers with boilerplate openers",
            latency: lat(120.0, 0.2, 25.0),
            tokens_per_chunk: 1,
            behaviour: Behaviour::Openers,
            prefix_cache: false,
        },
        Profile {
            name: "sim-house",
            description: "Starts every answer with a house phrase on no opener list (\"Thank you for contacting Acme support!\"), for teaching the studio a team's openers",
            latency: lat(120.0, 0.2, 25.0),
            tokens_per_chunk: 1,
            behaviour: Behaviour::House,
            prefix_cache: false,
        },
        Profile {
            name: "sim-reasoning",
            description: "Streams reasoning_content before the answer",
            latency: lat(150.0, 0.2, 20.0),
            tokens_per_chunk: 1,
            behaviour: Behaviour::Reasoning,
            prefix_cache: false,
        },
        Profile {
            name: "sim-agent",
            description: "Answers with JSON, or a tool call fitting the request's tools",
            latency: lat(100.0, 0.2, 15.0),
            tokens_per_chunk: 1,
            behaviour: Behaviour::Agent,
            prefix_cache: false,
        },
        Profile {
            name: "sim-flaky",
            description: "Mid-stream errors, stalls and dropped connections",
            latency: lat(80.0, 0.1, 15.0),
            tokens_per_chunk: 1,
            behaviour: Behaviour::Flaky,
            prefix_cache: false,
        },
        Profile {
            name: "sim-bench",
            description: "For capacity benchmarks: huge batches, 20 ms steps nearly independent of load",
            latency: LatencyModel {
                max_batch: 4096,
                kv_capacity: 50_000_000,
                max_waiting: 8192,
                decode_ms_per_seq: 0.001,
                decode_ms_per_kv_ktok: 0.0,
                ..lat(20.0, 0.0, 20.0)
            },
            tokens_per_chunk: 1,
            behaviour: Behaviour::Prose,
            prefix_cache: false,
        },
        Profile {
            name: "sim-bench-fast",
            description: "For client-capacity benchmarks: 5 ms steps (200 chunks/s per stream) nearly independent of load",
            latency: LatencyModel {
                max_batch: 4096,
                kv_capacity: 50_000_000,
                max_waiting: 8192,
                decode_ms_per_seq: 0.0005,
                decode_ms_per_kv_ktok: 0.0,
                ..lat(5.0, 0.0, 5.0)
            },
            tokens_per_chunk: 1,
            behaviour: Behaviour::Prose,
            prefix_cache: false,
        },
        Profile {
            name: "sim-tiny-kv",
            description: "A small KV cache: preempts and re-prefills under load",
            latency: LatencyModel {
                kv_capacity: 2_000,
                max_batch: 16,
                max_waiting: 64,
                ..lat(50.0, 0.1, 10.0)
            },
            tokens_per_chunk: 1,
            behaviour: Behaviour::Prose,
            prefix_cache: false,
        },
        Profile {
            name: "sim-markdown",
            description: "Answers in markdown (headings, lists, code fences, tables), TTFT ≈ 60 ms, ITL ≈ 8 ms: 2,000 tokens make a long document to render (the rendering lab's test)",
            latency: lat(40.0, 0.1, 6.0),
            tokens_per_chunk: 1,
            behaviour: Behaviour::Markdown,
            prefix_cache: false,
        },
        Profile {
            name: "sim-slow",
            description: "Few batch slots (8) and a long queue: answers of 32 tokens saturate it near 6.6 requests/s (of 16 near 12), past which its queue only grows (the saturation stop's test)",
            latency: LatencyModel {
                max_batch: 8,
                max_waiting: 4096,
                ..lat(60.0, 0.1, 20.0)
            },
            tokens_per_chunk: 1,
            behaviour: Behaviour::Prose,
            prefix_cache: false,
        },
    ]
    .into_iter()
    .chain(ab_and_cache_profiles())
    .collect()
}

/// The A/B profiles (#29) and the prefix cache's.
fn ab_and_cache_profiles() -> Vec<Profile> {
    vec![
        Profile {
            name: "sim-ab",
            description: "For A/B runs: TTFT ≈ 150 ms, ITL ≈ 20 ms, with realistic seeded noise (each request's decode speed and each decode step vary by 10 %, lognormal, deterministic from the request id)",
            latency: AB,
            tokens_per_chunk: 1,
            behaviour: Behaviour::Prose,
            prefix_cache: false,
        },
        Profile {
            name: "sim-ab-twin",
            description: "Exactly sim-ab's latency and noise under another name: an A/B run of sim-ab against it should find no difference",
            latency: AB,
            tokens_per_chunk: 1,
            behaviour: Behaviour::Prose,
            prefix_cache: false,
        },
        Profile {
            name: "sim-ab-slower",
            description: "sim-ab with every decode step exactly 10 % longer (ITL ratio 1.10 by construction: decode costs × 1.1, same noise and seed), prefill identical: the known difference an A/B run should find",
            latency: slower_decode(AB, AB_SLOWER_FACTOR),
            tokens_per_chunk: 1,
            behaviour: Behaviour::Prose,
            prefix_cache: false,
        },
        Profile {
            name: "sim-cache",
            description: "A prefix cache (blocks of 16 tokens, the 256 latest prompts): a prompt that starts like a recent one prefills only the rest (0.5 ms per uncached token) and reports prompt_tokens_details.cached_tokens; \"cache_prompt\": false turns it off per request",
            latency: lat(30.0, 0.5, 12.0),
            tokens_per_chunk: 1,
            behaviour: Behaviour::Prose,
            prefix_cache: true,
        },
    ]
}

/// How a server frames the same generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Flavour {
    /// OpenAI's API.
    OpenAi,
    /// vLLM: role chunk with `content:""`, keys only when set.
    Vllm,
    /// SGLang: every key present, nulls included.
    Sglang,
    /// TensorRT-LLM: role chunk without content and a trailing space.
    Trtllm,
    /// llama.cpp: role `content:null`, `timings` on the last event.
    Llamacpp,
    /// Ollama's `/v1`: no role-only chunk.
    Ollama,
    /// TGI Messages API: role on every chunk, empty id.
    Tgi,
}

impl Flavour {
    /// Every flavour.
    pub const ALL: [Flavour; 7] = [
        Flavour::OpenAi,
        Flavour::Vllm,
        Flavour::Sglang,
        Flavour::Trtllm,
        Flavour::Llamacpp,
        Flavour::Ollama,
        Flavour::Tgi,
    ];

    /// Parses a name (`vllm`, `sglang`, …).
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "openai" => Flavour::OpenAi,
            "vllm" => Flavour::Vllm,
            "sglang" => Flavour::Sglang,
            "trtllm" | "trt-llm" | "tensorrt-llm" => Flavour::Trtllm,
            "llamacpp" | "llama.cpp" | "llama-cpp" => Flavour::Llamacpp,
            "ollama" => Flavour::Ollama,
            "tgi" => Flavour::Tgi,
            _ => return None,
        })
    }
}

/// Splits `model@flavour` into the profile and the flavour (`vllm` when absent).
pub fn resolve(model: &str, header_flavour: Option<&str>) -> Result<(Profile, Flavour), String> {
    let (name, suffix) = model
        .split_once('@')
        .map_or((model, None), |(n, f)| (n, Some(f)));
    let flavour = match suffix.or(header_flavour) {
        Some(f) => Flavour::parse(f).ok_or_else(|| {
            format!(
                "unknown flavour '{f}': use openai, vllm, sglang, trtllm, llamacpp, ollama or tgi"
            )
        })?,
        None => Flavour::Vllm,
    };
    let profile = profiles()
        .into_iter()
        .find(|p| p.name == name)
        .ok_or_else(|| {
            format!(
                "The model `{name}` does not exist. Available: {}",
                profiles()
                    .iter()
                    .map(|p| p.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
    Ok((profile, flavour))
}
