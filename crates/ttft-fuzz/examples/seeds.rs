//! Writes the fuzz targets' seed corpora (`crates/ttft-fuzz/corpus/<target>/`) from the tests'
//! fixtures: share links of the fixture runs in every link format and the smallest kept links
//! (an r3 link costs ~40 ms to open whatever its size, its models learning their primers first),
//! a stream per dialect, the peer tools' result files, timeline files, a report file, the
//! servers' metrics and the trace fixtures. Each seed is kept small (arrays cut to two items, JSON lines to three):
//! the fuzzer mutates small inputs fastest.
//!
//! `cargo run -p ttft-fuzz --example seeds` rewrites the folders; the corpus is committed.

use std::path::{Path, PathBuf};

use serde_json::Value;
use ttft_core::report::Report;
use ttft_core::timeline_file::{Vantage, export};
use ttft_fixtures::{report_file, timeline_file, traces};
use ttft_fuzz::SEPARATOR;
use ttft_share::ShareOptions;

/// A corpus: each seed's file name and bytes.
type Seeds = Vec<(String, Vec<u8>)>;

fn main() -> std::io::Result<()> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let repo = root.join("../..");
    let seeds: [(&str, Seeds); 7] = [
        ("share_link", share_links(&repo)?),
        ("stream", streams()),
        ("import", imports(&repo)?),
        ("timeline_file", timelines()),
        ("report_file", reports()),
        ("server_metrics", scrapes(&repo)?),
        ("trace", trace_files()),
    ];
    for (target, files) in seeds {
        let dir = root.join("corpus").join(target);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        for (name, bytes) in &files {
            std::fs::write(dir.join(name), bytes)?;
        }
        println!("{target}: {} seeds", files.len());
    }
    Ok(())
}

/// A small run: two requests of three chunks each.
fn small_run() -> Report {
    report_file::report(vec![
        report_file::record(0, 40.0, 10.0, 3),
        report_file::record(1, 45.0, 12.0, 3),
    ])
}

fn share_links(repo: &Path) -> std::io::Result<Seeds> {
    let run = small_run();
    let options = ShareOptions::default();
    let mut out = vec![
        ("small.r1".into(), ttft_share::encode_r1(&run).into_bytes()),
        (
            "small.r2".into(),
            ttft_share::encode_r2(&run, &options).text.into_bytes(),
        ),
        (
            "small.r3".into(),
            ttft_share::encode(&run, &options).text.into_bytes(),
        ),
        (
            "small.r3-deflate".into(),
            ttft_share::encode_r3_deflate(&run, &options)
                .text
                .into_bytes(),
        ),
        (
            "url".into(),
            format!(
                "https://studio.example/#share={}",
                ttft_share::encode(&run, &options).text
            )
            .into_bytes(),
        ),
    ];
    let links = repo.join("crates/ttft-share/tests/data/links");
    for name in [
        "probe-under-load-before-clients.r2.txt",
        "probe-under-load-before-clients.r3.txt",
    ] {
        out.push((name.into(), std::fs::read(links.join(name))?));
    }
    Ok(out)
}

/// `selector` then the reads, split by [`SEPARATOR`] (see `ttft_fuzz::stream`).
fn stream_seed(selector: u8, reads: &[&str]) -> Vec<u8> {
    let mut out = vec![selector];
    for (i, read) in reads.iter().enumerate() {
        if i > 0 {
            out.push(SEPARATOR);
        }
        out.extend_from_slice(read.as_bytes());
    }
    out
}

/// Selector bits: content type (0 none, 1 SSE, 2 NDJSON, 3 JSON), dialect `<< 2` (6, 7: none),
/// end `<< 5` (2: HTTP error, 3: cut short), JSON tracking `0x80`.
fn streams() -> Seeds {
    const DETECT: u8 = 7 << 2;
    let chat = timeline_file::chunk("Hel");
    let chat2 = timeline_file::chunk("lo");
    let seeds: Vec<(&str, u8, Vec<&str>)> = vec![
        (
            "openai-chat",
            1 | DETECT,
            vec![&chat, &chat2[..20], &chat2[20..], timeline_file::DONE],
        ),
        (
            "openai-chat-json",
            1 | DETECT | 0x80,
            vec![
                "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{\\\"answer\\\": \"}}]}\n\n",
                "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"1}\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
            ],
        ),
        (
            "openai-tools",
            1 | DETECT,
            vec![
                "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\"\"}}]}}]}\n\n",
                "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\":1}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n",
            ],
        ),
        (
            "openai-completions",
            DETECT,
            vec![
                "data: {\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\"Hi\"}]}\r\n\r\n",
                "data: {\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\"!\",\"finish_reason\":\"stop\"}],\"usage\":{\"completion_tokens\":2}}\r\n\r\ndata: [DONE]\r\n\r\n",
            ],
        ),
        (
            "openai-responses",
            1 | DETECT,
            vec![
                "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r\"}}\n\n",
                "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"Hi\"}\n\n",
                "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"output_tokens\":1}}}\n\n",
            ],
        ),
        (
            "anthropic",
            1 | DETECT,
            vec![
                "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\n",
                "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n: ping\n\n",
                "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n",
                "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
            ],
        ),
        (
            "ollama",
            2 | DETECT,
            vec![
                "{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"Hi\"},\"done\":false}\n",
                "{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"eval_count\":1,\"eval_duration\":1000}\n",
            ],
        ),
        (
            "tgi",
            1 | DETECT,
            vec![
                "data:{\"token\":{\"id\":1,\"text\":\"Hi\",\"special\":false},\"generated_text\":null}\n\n",
                "data:{\"token\":{\"id\":2,\"text\":\"</s>\",\"special\":true},\"generated_text\":\"Hi\",\"details\":{\"generated_tokens\":2}}\n\n",
            ],
        ),
        (
            "whole-json",
            3 | DETECT,
            vec![
                "{\"object\":\"chat.completion\",\"choices\":[{\"index\":0,",
                "\"message\":{\"content\":\"好的，Hi 😀\"},\"finish_reason\":\"stop\"}],\"usage\":{\"completion_tokens\":3}}",
            ],
        ),
        (
            "stream-error",
            1 | DETECT,
            vec![&chat, "data: {\"error\":{\"message\":\"overloaded\"}}\n\n"],
        ),
        (
            "http-error",
            3 | DETECT | (2 << 5),
            vec!["{\"error\":{\"message\":\"overloaded\"}}"],
        ),
        (
            "cut-short",
            1 | DETECT | (3 << 5),
            vec![&chat, &chat2[..30]],
        ),
        (
            "chosen-dialect",
            1 | (3 << 2),
            vec![&chat, timeline_file::DONE],
        ),
    ];
    seeds
        .into_iter()
        .map(|(name, selector, reads)| (name.to_owned(), stream_seed(selector, &reads)))
        .collect()
}

/// `value` with every array cut to its first two items and every string to 64 characters.
fn shrink(value: Value) -> Value {
    match value {
        Value::Array(a) => Value::Array(a.into_iter().take(2).map(shrink).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, shrink(v))).collect()),
        Value::String(s) => Value::String(s.chars().take(64).collect()),
        v => v,
    }
}

/// A peer file, small: JSON shrunk, JSON lines cut to three lines, each shrunk.
fn small_file(path: &Path) -> std::io::Result<String> {
    let text = std::fs::read_to_string(path)?;
    if let Ok(v) = serde_json::from_str::<Value>(&text) {
        return Ok(shrink(v).to_string());
    }
    let lines: Vec<String> = text
        .lines()
        .take(3)
        .map(|l| serde_json::from_str::<Value>(l).map_or(l.to_owned(), |v| shrink(v).to_string()))
        .collect();
    Ok(lines.join("\n") + "\n")
}

fn imports(repo: &Path) -> std::io::Result<Seeds> {
    let peers = repo.join("crates/ttft-core/tests/data/peers");
    let mut out = Vec::new();
    for file in [
        "aiperf-records/profile_export.jsonl",
        "aiperf-records/profile_export_aiperf.json",
        "aiperf-raw/profile_export_raw.jsonl",
        "genai-bench/D16_10_text-to-text_num_concurrency_1_time_1s.json",
        "genai-bench/experiment_metadata.json",
        "guidellm/benchmarks-0.8.1.json",
        "sglang/result.jsonl",
        "sglang/summary-only.jsonl",
    ] {
        out.push((
            file.replace('/', "-"),
            small_file(&peers.join(file))?.into_bytes(),
        ));
    }
    // Folders read together, in the order of `ttft_fuzz::IMPORT_NAMES`.
    let sep = [SEPARATOR];
    let aiperf = [
        small_file(&peers.join("aiperf-records/profile_export.jsonl"))?,
        small_file(&peers.join("aiperf-records/profile_export_aiperf.json"))?,
    ];
    out.push((
        "folder-aiperf".into(),
        aiperf.map(String::into_bytes).join(&sep[..]),
    ));
    let genai = [
        String::new(),
        String::new(),
        small_file(&peers.join("genai-bench/experiment_metadata.json"))?,
        small_file(&peers.join("genai-bench/D16_10_text-to-text_num_concurrency_1_time_1s.json"))?,
    ];
    out.push((
        "folder-genai-bench".into(),
        genai.map(String::into_bytes).join(&sep[..]),
    ));
    let vllm = serde_json::json!({
        "ttfts": [0.05, 0.06], "itls": [[0.01, 0.012], [0.011]],
        "input_lens": [16, 16], "output_lens": [3, 2], "errors": ["", ""],
        "generated_texts": ["a b c", "a b"], "duration": 1.0, "completed": 2,
        "median_ttft_ms": 55.0, "model_id": "m", "backend": "openai-chat",
        "date": "20260101-000000", "max_concurrency": 2,
    });
    out.push(("vllm.json".into(), vllm.to_string().into_bytes()));
    out.push((
        "studio-report.json".into(),
        small_run().to_json_pretty().into_bytes(),
    ));
    Ok(out)
}

fn timelines() -> Seeds {
    let one = timeline_file::worker_file("w1:1", &[0, 1], 10_000.0, 1.7e12);
    let two = timeline_file::worker_file("w2:2", &[0], 20_000.0, 1.7e12 + 5.0);
    let browser = Vantage::browser(Some(0.005), None);
    let mut exported = export(&timeline_file::browser_run(), &browser);
    // Three lines are enough to start from.
    exported = exported.lines().take(3).map(|l| format!("{l}\n")).collect();
    vec![
        ("worker".into(), one.clone().into_bytes()),
        (
            "two-workers".into(),
            [one.into_bytes(), two.into_bytes()].join(&[SEPARATOR][..]),
        ),
        ("browser-export".into(), exported.into_bytes()),
    ]
}

fn reports() -> Seeds {
    let run = small_run();
    vec![
        ("report.json".into(), run.to_json_pretty().into_bytes()),
        (
            "compact.json".into(),
            serde_json::to_vec(&run).expect("a report serializes"),
        ),
    ]
}

/// The trace fixtures' first three lines, each read as detected (selector byte 0).
fn trace_files() -> Seeds {
    [
        ("mooncake.jsonl", traces::MOONCAKE),
        ("azure.csv", traces::AZURE),
        ("burstgpt.csv", traces::BURSTGPT),
    ]
    .into_iter()
    .map(|(seed, name)| {
        let head: String = traces::read(name)
            .lines()
            .take(3)
            .map(|l| format!("{l}\n"))
            .collect();
        (seed.to_owned(), [&[0][..], head.as_bytes()].concat())
    })
    .collect()
}

fn scrapes(repo: &Path) -> std::io::Result<Seeds> {
    let metrics = repo.join("crates/ttft-core/tests/data/metrics");
    let read = |name: &str| std::fs::read(metrics.join(name));
    // The families the studio keeps only: a vLLM scrape shrinks to ~10 kB.
    let kept = |bytes: Vec<u8>| {
        ttft_core::server_metrics::Scrape::new(0.0, &String::from_utf8_lossy(&bytes))
            .text
            .into_bytes()
    };
    let sep = [SEPARATOR];
    Ok(vec![
        (
            "vllm-run".into(),
            [
                kept(read("vllm-before.txt")?),
                kept(read("vllm-after.txt")?),
            ]
            .join(&sep[..]),
        ),
        ("vllm-v0".into(), kept(read("vllm-v0.txt")?)),
        ("sglang".into(), kept(read("sglang.txt")?)),
        ("tgi".into(), kept(read("tgi.txt")?)),
        (
            "llamacpp-run".into(),
            [read("llamacpp-before.txt")?, read("llamacpp.txt")?].join(&sep[..]),
        ),
        (
            "reference-run".into(),
            [read("reference-before.txt")?, read("reference-after.txt")?].join(&sep[..]),
        ),
    ])
}
