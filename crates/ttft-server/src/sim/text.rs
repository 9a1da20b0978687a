//! Plausible output text, split into tokens, deterministic for a seed.

use serde_json::{Value, json};

const SENTENCES: &[&str] = &[
    "Time to first token is dominated by prefill, which grows with the length of the prompt.",
    "Inter-token latency is set by decoding, which reads every weight once per step and is bound by memory bandwidth.",
    "Under load the scheduler batches requests together, so each new arrival briefly stalls the streams already running.",
    "A user forgives a slow typewriter far more readily than a blank screen.",
    "Quantizing the weights to eight bits halves the bytes read per token and shortens every decode step.",
    "Long system prompts and few-shot examples inflate prefill time before the first word appears.",
    "When the key-value cache fills up, the server preempts a sequence and recomputes it later.",
    "Measure in the client, because that is where the user waits.",
    "Percentiles tell the story that averages hide: the slowest five percent of requests decide how the product feels.",
    "Continuous batching keeps the accelerator busy, but it trades per-request latency for throughput.",
    "```rust\nfn ttft(first_token: f64, sent: f64) -> f64 {\n    first_token - sent\n}\n```",
    "Streaming several tokens in one chunk saves overhead on the wire but makes per-chunk gaps look longer than they are.",
];

const SENTENCES_ZH: &[&str] = &[
    "首令牌延迟主要由预填充阶段决定，与提示词长度基本成正比。",
    "令牌间延迟由解码阶段决定，吃的是显存带宽。",
    "高并发时请求在队列里等待，排队时间才是首令牌延迟的隐形炸弹。",
    "用户在看到第一个字之前的等待最难熬。",
];

/// A small deterministic generator (SplitMix64).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// Seeded.
    pub fn new(seed: u64) -> Self {
        Self(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    /// Next value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform index below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

/// Splits text into token-like pieces: words with their leading space, punctuation, and
/// long words in pieces of at most 4 bytes; CJK one character per token.
pub fn tokenize(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let flush = |cur: &mut String, out: &mut Vec<String>| {
        if cur.is_empty() {
            return;
        }
        let chars: Vec<char> = cur.chars().collect();
        for piece in chars.chunks(5) {
            out.push(piece.iter().collect());
        }
        cur.clear();
    };
    for c in text.chars() {
        if c.is_alphanumeric() && !is_cjk(c) {
            cur.push(c);
        } else if c == ' ' {
            flush(&mut cur, &mut out);
            cur.push(' ');
        } else {
            flush(&mut cur, &mut out);
            out.push(c.to_string());
        }
    }
    flush(&mut cur, &mut out);
    out
}

fn is_cjk(c: char) -> bool {
    ('\u{3000}'..='\u{9fff}').contains(&c) || ('\u{ff00}'..='\u{ffef}').contains(&c)
}

/// Whether a prompt is mostly Chinese.
pub fn is_chinese(prompt: &str) -> bool {
    let cjk = prompt.chars().filter(|c| is_cjk(*c)).count();
    cjk * 3 > prompt.chars().filter(|c| !c.is_whitespace()).count()
}

/// Exactly `n` prose tokens.
pub fn prose_tokens(rng: &mut Rng, n: usize, chinese: bool) -> Vec<String> {
    let bank = if chinese { SENTENCES_ZH } else { SENTENCES };
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let s = bank[rng.below(bank.len())];
        let sep = if out.is_empty() || chinese {
            ""
        } else if rng.unit() < 0.2 {
            "\n\n"
        } else {
            " "
        };
        out.extend(tokenize(&format!("{sep}{s}")));
    }
    out.truncate(n);
    out
}

/// Opener tokens.
pub fn opener(rng: &mut Rng, chinese: bool) -> Vec<String> {
    let en = [
        "Sure, here's a summary of the key points:\n\n",
        "Certainly! Here's what you need to know:\n\n",
        "Of course. ",
    ];
    let zh = ["好的，我来帮你总结一下：", "当然可以！以下是要点："];
    if chinese {
        tokenize(zh[rng.below(zh.len())])
    } else {
        tokenize(en[rng.below(en.len())])
    }
}

/// The house phrase `sim-house` starts every English answer with: a support desk's greeting
/// that no opener list holds, so the studio can learn it from a run.
pub const HOUSE_PHRASE: &str = "Thank you for contacting Acme support! ";
/// The same for answers to Chinese prompts.
pub const HOUSE_PHRASE_ZH: &str = "感谢您联系 Acme 客服！";

/// House phrase tokens.
pub fn house(chinese: bool) -> Vec<String> {
    tokenize(if chinese {
        HOUSE_PHRASE_ZH
    } else {
        HOUSE_PHRASE
    })
}

/// Section titles of `sim-markdown`'s answers.
const TOPICS: &[&str] = &[
    "Prefill and the prompt",
    "Decoding is bound by memory",
    "Batching under load",
    "What the user waits for",
    "Caching the prefix",
    "Measuring in the client",
];

/// A markdown block of `sim-markdown`'s: a list, a code fence, a table or a quote.
fn markdown_block(rng: &mut Rng) -> String {
    let sentence = |rng: &mut Rng| SENTENCES[rng.below(SENTENCES.len() - 2)];
    match rng.below(4) {
        0 => (0..3 + rng.below(3))
            .map(|i| {
                let mark = if i % 2 == 0 { "-" } else { "1." };
                format!("{mark} **Point {}**: {}\n", i + 1, sentence(rng))
            })
            .collect::<String>(),
        1 => format!(
            "```rust\nfn itl_ms(gaps: &[f64]) -> f64 {{\n    let total: f64 = gaps.iter().sum();\n    total / gaps.len().max(1) as f64 // {} ms\n}}\n```\n",
            10 + rng.below(90)
        ),
        2 => {
            let mut t = "| metric | P50 | P99 |\n| --- | ---: | ---: |\n".to_owned();
            for name in ["TTFT", "ITL", "E2E"] {
                let p50 = 10 + rng.below(500);
                t.push_str(&format!("| {name} | {p50} ms | {} ms |\n", p50 * 3));
            }
            t
        }
        _ => format!("> {}\n", sentence(rng)),
    }
}

/// Exactly `n` tokens of a markdown document (`sim-markdown`): sections with a heading, a
/// paragraph and a list, code fence, table or quote each, so a long answer makes a long
/// document for a chat UI's markdown renderer.
pub fn markdown_tokens(rng: &mut Rng, n: usize) -> Vec<String> {
    let mut out = Vec::with_capacity(n);
    let mut section = 0;
    while out.len() < n {
        section += 1;
        let title = TOPICS[rng.below(TOPICS.len())];
        let para = (0..2).map(|_| SENTENCES[rng.below(SENTENCES.len() - 2)]);
        let para: Vec<&str> = para.collect();
        let text = format!(
            "## {section}. {title}\n\n{}\n\n{}\n",
            para.join(" "),
            markdown_block(rng)
        );
        out.extend(tokenize(&text));
    }
    out.truncate(n);
    out
}

/// A value fitting a JSON schema (objects, arrays, strings, numbers, booleans, enums).
pub fn value_for_schema(schema: &Value, rng: &mut Rng, depth: u32) -> Value {
    if let Some(e) = schema
        .get("enum")
        .and_then(Value::as_array)
        .filter(|e| !e.is_empty())
    {
        return e[rng.below(e.len())].clone();
    }
    let words = [
        "Paris",
        "latency",
        "prefill",
        "Oslo",
        "benchmark",
        "decode",
        "Tokyo",
    ];
    match schema.get("type").and_then(Value::as_str) {
        Some("object") | None if depth < 4 => {
            let mut obj = serde_json::Map::new();
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (k, s) in props {
                    obj.insert(k.clone(), value_for_schema(s, rng, depth + 1));
                }
            } else if depth == 0 {
                obj.insert("action".into(), json!("search"));
                obj.insert(
                    "query".into(),
                    json!(format!("{} {}", words[rng.below(7)], words[rng.below(7)])),
                );
                obj.insert(
                    "confidence".into(),
                    json!((rng.unit() * 100.0).round() / 100.0),
                );
                obj.insert(
                    "steps".into(),
                    json!(["measure TTFT", "measure ITL", "compare percentiles"]),
                );
            }
            Value::Object(obj)
        }
        Some("array") => {
            let item = schema
                .get("items")
                .cloned()
                .unwrap_or(json!({"type": "string"}));
            Value::Array(
                (0..2 + rng.below(2))
                    .map(|_| value_for_schema(&item, rng, depth + 1))
                    .collect(),
            )
        }
        Some("integer") => json!(rng.below(100)),
        Some("number") => json!((rng.unit() * 1000.0).round() / 10.0),
        Some("boolean") => json!(rng.unit() < 0.5),
        _ => json!(words[rng.below(words.len())]),
    }
}

/// JSON text split into pieces of about three characters, as a tokenizer would.
pub fn json_tokens(v: &Value) -> Vec<String> {
    let s = serde_json::to_string_pretty(v).unwrap_or_else(|_| "{}".into());
    let chars: Vec<char> = s.chars().collect();
    chars.chunks(3).map(|c| c.iter().collect()).collect()
}
