//! Peer benchmark clients run against the same reference endpoint as the studio, in the same
//! bench run, and compared with its ground truth exactly as the studio is
//! ([`accuracy::agreement`]): vLLM's `vllm bench serve`, NVIDIA's `aiperf` and SGLang's
//! `bench_serving`.
//!
//! Each tool is installed from PyPI at a pinned version into its own virtualenv under
//! `target/peers/<tool>` (reused when its pinned requirement is already installed; pip's
//! output goes to `target/peers/<tool>-pip.log`); a tool that cannot be installed or run is
//! listed under `skipped` with the reason and the bench goes on. Each runs, unmodified and with
//! nothing between it and the server, over plain HTTP/1.1 at the studio's levels (`plan`: the
//! same streams, requests and answer lengths; one warm-up request; `sim-bench`) and saves what
//! it measured per request:
//!
//! - `vllm bench serve --save-result --save-detailed`: `start_times` (its `time.perf_counter()`
//!   at send), `ttfts`, `itls` (one gap per output chunk after the first), `generated_texts`,
//!   `errors`. It stamps the closing chunk (`delta.content == ""` without a role, its
//!   `_choice_has_streamed_output`) as one more output chunk; that last stamp carries no text
//!   and is dropped when it is the one stamp too many. Its perf-counter send times are put on
//!   the wall clock with the offset between Python's `time.time_ns()` and
//!   `time.perf_counter_ns()` (one system-wide monotonic clock) read just before and after the
//!   run.
//! - `aiperf profile --export-level raw`: `profile_export_raw.jsonl` keeps every SSE message of
//!   every request with its `perf_ns` stamp, the request's `start_perf_ns` and its wall-clock
//!   `metadata.request_start_ns`; the chunks compared are the messages with non-empty
//!   `delta.content`, the ones aiperf's own TTFT and inter-chunk latency are computed from.
//! - `python -m sglang.bench_serving --output-details`: `ttfts`, `itls` (one gap per non-empty
//!   content delta after the first), `generated_texts`, `errors`; no send times, so its TTFT
//!   offsets are centred on their median. Run with `--backend vllm-chat`, which sends the same
//!   requests through the same function as `sglang-oai-chat` but does not call SGLang-only
//!   routes. Its module imports torch (via `sglang.srt`) at start-up, so its venv gets
//!   `sglang` without dependencies plus the two it lacks, and reads torch and the rest from the
//!   vLLM venv through a `.pth` file (after its own packages): it is skipped when vLLM is.
//!
//! No tool needs a model: each gets a small word-level tokenizer made locally
//! (`target/peers/tokenizer`) for counting prompt tokens, since no model hub is reachable.
//! Requests are matched to ground-truth records by their answer text ([`match_truth`]).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use tokio::process::Command;

use ttft_e2e::{run_logged, unix_ms};

use crate::accuracy::{self, ClientRequest};
use crate::plan::{self, Level};

/// The reference endpoint's benchmark model: 20 ms steps nearly independent of load.
const MODEL: &str = "sim-bench";
/// Longest a tool's install may take (vLLM with its CUDA wheels is about 9 GB).
const INSTALL_TIMEOUT: Duration = Duration::from_secs(40 * 60);
/// Longest one tool run (one level) may take.
const RUN_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// A peer tool.
#[derive(Clone, Copy, Debug)]
enum Tool {
    Vllm,
    Aiperf,
    Sglang,
}

impl Tool {
    /// In install order: SGLang's venv borrows vLLM's.
    const ALL: [Tool; 3] = [Tool::Vllm, Tool::Aiperf, Tool::Sglang];

    /// Its venv's name under `target/peers`.
    fn dir_name(self) -> &'static str {
        match self {
            Tool::Vllm => "vllm",
            Tool::Aiperf => "aiperf",
            Tool::Sglang => "sglang",
        }
    }

    /// The PyPI distribution.
    fn package(self) -> &'static str {
        self.dir_name()
    }

    /// The pinned requirement.
    fn requirement(self) -> &'static str {
        match self {
            Tool::Vllm => "vllm[bench]==0.33.0",
            Tool::Aiperf => "aiperf==0.13.0",
            Tool::Sglang => "sglang==0.5.23",
        }
    }

    /// The `pip install` arguments, one list per call.
    fn pip_steps(self) -> Vec<Vec<&'static str>> {
        match self {
            Tool::Sglang => vec![
                vec!["--no-deps", self.requirement()],
                // Imported by `sglang` at start-up and not in vLLM's venv.
                vec!["ipython==9.18.1", "gguf==0.19.0"],
            ],
            _ => vec![vec![self.requirement()]],
        }
    }

    /// How rows name it, with the installed version.
    fn label(self, version: &str) -> String {
        match self {
            Tool::Vllm => format!("vllm bench serve {version}"),
            Tool::Aiperf => format!("aiperf {version}"),
            Tool::Sglang => format!("sglang bench_serving {version}"),
        }
    }
}

/// An installed tool.
struct Installed {
    venv: PathBuf,
    version: String,
    /// Seconds the install took in this call (0 when an existing venv was reused).
    install_s: f64,
    reused: bool,
}

impl Installed {
    fn bin(&self, name: &str) -> PathBuf {
        self.venv.join("bin").join(name)
    }
}

/// What a peer tool kept of one request, in its own clock.
#[derive(Debug, Clone)]
struct PeerRequest {
    /// t0 on the wall clock (ms since the Unix epoch), when known.
    sent_epoch_ms: Option<f64>,
    /// Every stamped output chunk, ms after t0.
    chunk_ms: Vec<f64>,
    /// The answer text it received.
    text: String,
    ok: bool,
    /// The tool stamps the closing (text-less) chunk as one more output chunk.
    trailing_stamp: bool,
}

/// Output of a short command.
async fn output(cmd: &mut Command) -> Result<String> {
    let o = cmd.stdin(Stdio::null()).output().await?;
    if !o.status.success() {
        bail!("{}", String::from_utf8_lossy(&o.stderr).trim());
    }
    Ok(String::from_utf8_lossy(&o.stdout).trim().to_owned())
}

/// Installs `tool` into `dir/<tool>` (a venv; pip from PyPI), or reuses it when its pinned
/// requirement is already installed there.
async fn install(dir: &Path, tool: Tool) -> Result<Installed> {
    let venv = dir.join(tool.dir_name());
    let python = venv.join("bin/python");
    let marker = venv.join("ttft-installed.txt");
    let version = |python: PathBuf| async move {
        output(Command::new(python).args([
            "-c",
            &format!(
                "import importlib.metadata as m; print(m.version('{}'))",
                tool.package()
            ),
        ]))
        .await
    };
    if std::fs::read_to_string(&marker).is_ok_and(|m| m.trim() == tool.requirement())
        && let Ok(v) = version(python.clone()).await
    {
        return Ok(Installed {
            venv,
            version: v,
            install_s: 0.0,
            reused: true,
        });
    }
    let started = Instant::now();
    std::fs::create_dir_all(dir)?;
    let log = dir.join(format!("{}-pip.log", tool.dir_name()));
    // SGLang's torch and the rest come from vLLM's venv (its marker says it is complete).
    let borrowed = dir.join("vllm");
    if matches!(tool, Tool::Sglang) && !borrowed.join("ttft-installed.txt").exists() {
        bail!("needs vLLM's venv for torch and its other imports, and vLLM is not installed");
    }
    if !python.exists() {
        let mut c = Command::new("python3");
        c.args(["-m", "venv"]).arg(&venv);
        run_logged(c, &log, Duration::from_secs(120), "python3 -m venv").await?;
    }
    if matches!(tool, Tool::Sglang) {
        let purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])";
        let own = output(Command::new(&python).args(["-c", purelib])).await?;
        let theirs =
            output(Command::new(borrowed.join("bin/python")).args(["-c", purelib])).await?;
        std::fs::write(Path::new(&own).join("zz-vllm-venv.pth"), theirs + "\n")?;
    }
    eprintln!(
        "peers: pip install {} into {} (log: {})…",
        tool.requirement(),
        venv.display(),
        log.display()
    );
    for (k, step) in tool.pip_steps().into_iter().enumerate() {
        let mut c = Command::new(&python);
        c.args([
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--no-input",
        ])
        .args(&step);
        let log = match k {
            0 => log.clone(),
            k => dir.join(format!("{}-pip-{k}.log", tool.dir_name())),
        };
        run_logged(
            c,
            &log,
            INSTALL_TIMEOUT,
            &format!("pip install {}", step.join(" ")),
        )
        .await?;
    }
    std::fs::write(&marker, tool.requirement())?;
    Ok(Installed {
        venv,
        version: version(python).await?,
        install_s: started.elapsed().as_secs_f64(),
        reused: false,
    })
}

/// A venv's size on disk (MB), by `du`.
async fn size_mb(path: &Path) -> Option<f64> {
    let out = output(Command::new("du").arg("-sm").arg(path)).await.ok()?;
    out.split_whitespace().next()?.parse().ok()
}

/// Makes (once) the word-level tokenizer the tools count prompt tokens with, using `python`
/// (any venv with `tokenizers`) and the script the AIPerf e2e test uses too
/// ([`ttft_e2e::WORD_TOKENIZER_PY`]).
async fn tokenizer(dir: &Path, python: &Path) -> Result<PathBuf> {
    let tok = dir.join("tokenizer");
    if tok.join("tokenizer.json").exists() && tok.join("tokenizer_config.json").exists() {
        return Ok(tok);
    }
    std::fs::create_dir_all(&tok)?;
    output(
        Command::new(python)
            .args(["-c", ttft_e2e::WORD_TOKENIZER_PY])
            .arg(&tok),
    )
    .await
    .context("cannot make the tokenizer")?;
    Ok(tok)
}

/// Python's wall clock minus its perf counter (ns): puts `time.perf_counter()` stamps on the
/// wall clock. The median of many adjacent pairs.
async fn perf_counter_offset_ns(python: &Path) -> Result<i128> {
    let out = output(Command::new(python).args([
        "-c",
        "import time\nv=sorted(time.time_ns()-time.perf_counter_ns() for _ in range(2001))\nprint(v[1000])",
    ]))
    .await?;
    Ok(out.parse()?)
}

/// One run of `tool` at one level; what it kept of each request.
async fn run_tool(
    tool: Tool,
    inst: &Installed,
    url: &str,
    tok: &Path,
    work: &Path,
    level: Level,
) -> Result<Vec<PeerRequest>> {
    let Level {
        streams,
        requests,
        tokens,
    } = level;
    let _ = std::fs::remove_dir_all(work);
    std::fs::create_dir_all(work)?;
    let log = work.join("run.log");
    match tool {
        Tool::Vllm => {
            // Prompts of its `custom` dataset (its `random` one wants a real model's vocabulary).
            let prompts: String = (0..requests.max(1))
                .map(|i| {
                    json!({ "prompt": format!("Request {i}: explain why time to first token matters to a reader of streamed text.") })
                        .to_string()
                        + "\n"
                })
                .collect();
            let data = work.join("prompts.jsonl");
            std::fs::write(&data, prompts)?;
            let python = inst.bin("python");
            let before = perf_counter_offset_ns(&python).await?;
            let mut c = Command::new(inst.bin("vllm"));
            c.args([
                "bench",
                "serve",
                "--backend",
                "openai-chat",
                "--base-url",
                url,
            ])
            .args(["--endpoint", "/v1/chat/completions", "--model", MODEL])
            .arg("--tokenizer")
            .arg(tok)
            .args(["--dataset-name", "custom", "--dataset-path"])
            .arg(&data)
            .args(["--custom-output-len", &tokens.to_string()])
            .args(["--skip-chat-template", "--disable-shuffle"])
            .args(["--num-prompts", &requests.to_string()])
            .args(["--max-concurrency", &streams.to_string()])
            .args(["--request-rate", "inf", "--num-warmups", "1"])
            .args(["--save-result", "--save-detailed", "--result-dir"])
            .arg(work)
            .args(["--result-filename", "result.json", "--disable-tqdm"])
            .env("HF_HUB_OFFLINE", "1")
            .env("TOKENIZERS_PARALLELISM", "false");
            run_logged(c, &log, RUN_TIMEOUT, "vllm bench serve").await?;
            let after = perf_counter_offset_ns(&python).await?;
            let offset_ms = (before + after) as f64 / 2.0 / 1e6;
            let v: Value = serde_json::from_str(&python_json(
                &std::fs::read_to_string(work.join("result.json"))
                    .context("vllm bench serve saved no result.json")?,
            ))?;
            parse_ttfts_itls(&v, "vllm bench serve", Some(offset_ms), true)
        }
        Tool::Aiperf => {
            let mut c = Command::new(inst.bin("aiperf"));
            c.args(["profile", "--model", MODEL, "--url", url])
                .args(["--endpoint-type", "chat", "--streaming"])
                .args(["--concurrency", &streams.to_string()])
                .args(["--request-count", &requests.to_string()])
                .args(["--warmup-request-count", "1"])
                .args(["--output-tokens-mean", &tokens.to_string()])
                .args(["--output-tokens-stddev", "0"])
                .args(["--synthetic-input-tokens-mean", "64"])
                .args(["--synthetic-input-tokens-stddev", "0"])
                .arg("--tokenizer")
                .arg(tok)
                .args(["--use-server-token-count", "--export-level", "raw"])
                .arg("--artifact-dir")
                .arg(work)
                .args(["--ui", "none", "--no-server-metrics", "--no-gpu-telemetry"])
                .env("TOKENIZERS_PARALLELISM", "false");
            run_logged(c, &log, RUN_TIMEOUT, "aiperf profile").await?;
            let raw = std::fs::read_to_string(work.join("profile_export_raw.jsonl"))
                .context("aiperf saved no profile_export_raw.jsonl")?;
            parse_aiperf(&raw)
        }
        Tool::Sglang => {
            // Its `custom` dataset: conversations whose first turn is the prompt.
            let prompts: String = (0..requests.max(1))
                .map(|i| {
                    json!({ "conversations": [
                        { "role": "user", "content": format!("Request {i}: explain why time to first token matters to a reader of streamed text.") },
                        { "role": "assistant", "content": "Because the reader waits for it." },
                    ] })
                    .to_string()
                        + "\n"
                })
                .collect();
            let data = work.join("conversations.jsonl");
            std::fs::write(&data, prompts)?;
            let out = work.join("result.jsonl");
            let mut c = Command::new(inst.bin("python"));
            c.args(["-m", "sglang.bench_serving", "--backend", "vllm-chat"])
                .args(["--base-url", url, "--model", MODEL, "--tokenizer"])
                .arg(tok)
                .args(["--dataset-name", "custom", "--dataset-path"])
                .arg(&data)
                .args(["--sharegpt-output-len", &tokens.to_string()])
                .args(["--num-prompts", &requests.to_string()])
                .args(["--max-concurrency", &streams.to_string()])
                .args(["--request-rate", "inf", "--warmup-requests", "1"])
                .arg("--output-file")
                .arg(&out)
                .args(["--output-details", "--disable-tqdm"])
                .env("HF_HUB_OFFLINE", "1")
                .env("TOKENIZERS_PARALLELISM", "false");
            run_logged(c, &log, RUN_TIMEOUT, "sglang.bench_serving").await?;
            let text =
                std::fs::read_to_string(&out).context("sglang.bench_serving saved no result")?;
            let last = text
                .lines()
                .rfind(|l| !l.trim().is_empty())
                .context("sglang.bench_serving saved an empty result")?;
            parse_ttfts_itls(
                &serde_json::from_str(&python_json(last))?,
                "sglang.bench_serving",
                None,
                false,
            )
        }
    }
}

/// JSON as Python's `json.dumps` writes it: `NaN`, `Infinity` and `-Infinity` (outside strings)
/// become `null`, so serde can read it.
fn python_json(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
        } else if let Some(word) = ["-Infinity", "Infinity", "NaN"]
            .into_iter()
            .find(|w| rest.starts_with(w))
        {
            out.push_str("null");
            rest = &rest[word.len()..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// The per-request lists vLLM's and SGLang's benchmark clients save (`ttfts`, `itls`,
/// `generated_texts`, `errors`, in seconds). `start_offset_ms`, when given, puts their
/// perf-counter `start_times` on the wall clock (vLLM keeps them; SGLang does not);
/// `trailing_stamp`: the tool stamps the closing chunk as output (vLLM).
fn parse_ttfts_itls(
    v: &Value,
    who: &str,
    start_offset_ms: Option<f64>,
    trailing_stamp: bool,
) -> Result<Vec<PeerRequest>> {
    let list = |k: &str| {
        v[k].as_array()
            .with_context(|| format!("the {who} result has no `{k}`"))
    };
    let (ttfts, itls, texts, errors) = (
        list("ttfts")?,
        list("itls")?,
        list("generated_texts")?,
        list("errors")?,
    );
    let starts = match start_offset_ms {
        Some(_) => Some(list("start_times")?),
        None => None,
    };
    let n = ttfts.len();
    anyhow::ensure!(
        [
            itls.len(),
            texts.len(),
            errors.len(),
            starts.map_or(n, Vec::len)
        ]
        .iter()
        .all(|&l| l == n),
        "the {who} result lists differ in length"
    );
    Ok((0..n)
        .map(|i| {
            let ttft = ttfts[i].as_f64().unwrap_or(0.0) * 1e3;
            let ok = errors[i].as_str().is_some_and(str::is_empty) && ttft > 0.0;
            let mut at = ttft;
            let mut chunk_ms = vec![ttft];
            for g in itls[i].as_array().into_iter().flatten() {
                at += g.as_f64().unwrap_or(0.0) * 1e3;
                chunk_ms.push(at);
            }
            PeerRequest {
                sent_epoch_ms: starts
                    .zip(start_offset_ms)
                    .and_then(|(s, off)| Some(s[i].as_f64()? * 1e3 + off)),
                chunk_ms: if ok { chunk_ms } else { Vec::new() },
                text: texts[i].as_str().unwrap_or("").to_owned(),
                ok,
                trailing_stamp,
            }
        })
        .collect())
}

/// aiperf's `profile_export_raw.jsonl`: every SSE message of each request with its stamp.
fn parse_aiperf(raw: &str) -> Result<Vec<PeerRequest>> {
    let mut out = Vec::new();
    for line in raw.lines().filter(|l| !l.trim().is_empty()) {
        let r: Value = serde_json::from_str(line)?;
        if r["metadata"]["benchmark_phase"].as_str() == Some("warmup") {
            continue;
        }
        let start = r["start_perf_ns"].as_i64().context("no start_perf_ns")?;
        let mut chunk_ms = Vec::new();
        let mut text = String::new();
        for resp in r["responses"].as_array().into_iter().flatten() {
            let Some(at) = resp["perf_ns"].as_i64() else {
                continue;
            };
            for p in resp["packets"].as_array().into_iter().flatten() {
                if p["name"] != "data" {
                    continue;
                }
                let Some(Ok(d)) = p["value"].as_str().map(serde_json::from_str::<Value>) else {
                    continue;
                };
                if let Some(c) = d["choices"][0]["delta"]["content"].as_str()
                    && !c.is_empty()
                {
                    chunk_ms.push((at - start) as f64 / 1e6);
                    text.push_str(c);
                }
            }
        }
        let ok = r["status"].as_i64() == Some(200) && r["error"].is_null() && !chunk_ms.is_empty();
        out.push(PeerRequest {
            sent_epoch_ms: r["metadata"]["request_start_ns"]
                .as_i64()
                .map(|ns| ns as f64 / 1e6),
            chunk_ms,
            text,
            ok,
            trailing_stamp: false,
        });
    }
    Ok(out)
}

/// How many of a run's requests the matcher placed.
#[derive(Debug, Default)]
struct Matching {
    peer_requests: usize,
    records: usize,
    paired: usize,
    ambiguous: usize,
    unplaced: usize,
}

/// Pairs what a peer kept of each request with the server's ground-truth records of the run.
///
/// The tools keep neither the server's `x-request-id` nor anything else the server sent per
/// request except the answer, so the answer is the key. Without a `seed` in the request the
/// simulator draws each answer from a generator seeded by the request's number, so the
/// 100-token answers of one run differ from each other; a record's answer is the text of its
/// chunks, a peer request's the text it received (vLLM's `generated_texts`, aiperf's content
/// deltas). A peer request is paired with a record only when exactly one record and exactly one
/// peer request of the run carry that text, and (when the peer knows its wall-clock send time)
/// the server received that request no earlier than 1 s before it was sent and no later than
/// 60 s after. Anything else (no record, a text shared by two requests, a receipt time out of
/// place) leaves the request without an id, so [`accuracy::agreement`] counts it as
/// mismatched: it is never paired by guess. Records the peer did not keep (its warm-up) stay
/// unpaired. For a tool that stamps the closing chunk as output (`trailing_stamp`), its last
/// stamp is dropped when it is the one stamp more than the record has chunks.
fn match_truth(peer: &[PeerRequest], records: &[Value]) -> (Vec<ClientRequest>, Matching) {
    let text_of = |t: &Value| -> String {
        t["chunks"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["text"].as_str())
            .collect()
    };
    let record_texts: Vec<String> = records.iter().map(text_of).collect();
    let mut m = Matching {
        peer_requests: peer.len(),
        records: records.len(),
        ..Matching::default()
    };
    let reqs = peer
        .iter()
        .map(|p| {
            let mut c = ClientRequest {
                request_id: None,
                sent_epoch_ms: p.sent_epoch_ms,
                chunk_ms: p.chunk_ms.clone(),
                ok: p.ok,
            };
            if !p.ok {
                return c;
            }
            let in_records: Vec<usize> = (0..records.len())
                .filter(|&i| !p.text.is_empty() && record_texts[i] == p.text)
                .collect();
            let in_peer = peer.iter().filter(|q| q.ok && q.text == p.text).count();
            let [i] = in_records[..] else {
                if in_records.len() > 1 || in_peer > 1 {
                    m.ambiguous += 1;
                } else {
                    m.unplaced += 1;
                }
                return c;
            };
            if in_peer != 1 {
                m.ambiguous += 1;
                return c;
            }
            let t = &records[i];
            if let (Some(sent), Some(received)) = (p.sent_epoch_ms, t["received_unix_ms"].as_f64())
                && !(sent - 1e3..=sent + 60e3).contains(&received)
            {
                m.unplaced += 1;
                return c;
            }
            let server_chunks = t["chunks"].as_array().map_or(0, Vec::len);
            if p.trailing_stamp && c.chunk_ms.len() == server_chunks + 1 {
                c.chunk_ms.pop();
            }
            c.request_id = t["id"].as_str().map(str::to_owned);
            m.paired += 1;
            c
        })
        .collect();
    (reqs, m)
}

/// One tool at one level: run it, match its requests, compare with ground truth.
async fn measure(
    studio: &ttft_e2e::Studio,
    tool: Tool,
    inst: &Installed,
    tok: &Path,
    work: &Path,
    level: Level,
) -> Result<Value> {
    let since = unix_ms() - 1.0;
    let peer = run_tool(tool, inst, &studio.url, tok, work, level).await?;
    // Ground truth is filed when a response's stream ends; give the last ones a moment.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let records = ttft_e2e::ground_truth_since(studio.port, since, MODEL).await?;
    let (reqs, m) = match_truth(&peer, &records);
    let a = accuracy::agreement(studio.port, &reqs).await?;
    let mut row = a.to_json();
    row["matching"] = json!({
        "peer_requests": m.peer_requests, "server_records": m.records, "paired": m.paired,
        "ambiguous": m.ambiguous, "unplaced": m.unplaced,
    });
    Ok(row)
}

/// Installs and runs the peer tools against `studio`'s reference endpoint, `rounds` times at
/// each level, and compares each run with ground truth.
///
/// Returns `{ "rows": [{client, kind: "peer", transport, streams, requests, rounds: [agreement
/// per round]}], "skipped": [{client, reason}], "tools": [{client, install_s, reused, venv_mb,
/// round_s}] }`. A tool that cannot be installed or run is skipped with its reason; the bench
/// goes on.
pub async fn peers(studio: &ttft_e2e::Studio, root: &Path, rounds: usize) -> Result<Value> {
    let dir = root.join("target/peers");
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    let mut tools = Vec::new();
    for tool in Tool::ALL {
        let inst = match install(&dir, tool).await {
            Ok(i) => i,
            Err(e) => {
                eprintln!("peers: {} skipped: {e:#}", tool.requirement());
                skipped.push(
                    json!({ "client": tool.requirement(), "reason": format!("install: {e:#}") }),
                );
                continue;
            }
        };
        let label = tool.label(&inst.version);
        let tok = match tokenizer(&dir, &inst.bin("python")).await {
            Ok(t) => t,
            Err(e) => {
                skipped.push(json!({ "client": label, "reason": format!("tokenizer: {e:#}") }));
                continue;
            }
        };
        let levels = plan::levels();
        let mut level_rounds: Vec<Vec<Value>> = vec![Vec::new(); levels.len()];
        let mut round_s = Vec::new();
        let mut failure = None;
        'rounds: for round in 0..rounds {
            let started = Instant::now();
            for (k, &level) in levels.iter().enumerate() {
                let streams = level.streams;
                eprintln!("peers: {label}, round {}, {streams} streams…", round + 1);
                let work = dir.join(format!("{}-run", tool.dir_name()));
                match measure(studio, tool, &inst, &tok, &work, level).await {
                    Ok(r) => level_rounds[k].push(r),
                    Err(e) => {
                        failure = Some(format!("run at {streams} streams: {e:#}"));
                        break 'rounds;
                    }
                }
            }
            round_s.push((started.elapsed().as_secs_f64() * 10.0).round() / 10.0);
        }
        for (k, level) in levels.iter().enumerate() {
            if !level_rounds[k].is_empty() {
                rows.push(json!({
                    "client": label, "kind": "peer", "transport": "HTTP/1.1",
                    "streams": level.streams, "requests": level.requests, "tokens": level.tokens,
                    "rounds": std::mem::take(&mut level_rounds[k]),
                }));
            }
        }
        if let Some(reason) = failure {
            eprintln!("peers: {label} stopped: {reason}");
            skipped.push(json!({ "client": label, "reason": reason }));
        }
        tools.push(json!({
            "client": label, "requirement": tool.requirement(),
            "install_s": (inst.install_s * 10.0).round() / 10.0, "reused": inst.reused,
            "venv_mb": size_mb(&inst.venv).await, "round_s": round_s,
        }));
    }
    Ok(json!({ "rows": rows, "skipped": skipped, "tools": tools }))
}

/// `ttft-bench ROOT --peers-only`: runs the peers alone (one round) and prints their JSON.
pub async fn standalone(root: &Path) -> Result<()> {
    let served = crate::server::start_from_env(root).await?;
    let started = Instant::now();
    let mut v = peers(&served.studio, root, 1).await?;
    v["duration_s"] = json!(started.elapsed().as_secs_f64().round());
    println!("{}", serde_json::to_string_pretty(&v)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, received: f64, texts: &[&str]) -> Value {
        json!({ "id": id, "received_unix_ms": received,
                "chunks": texts.iter().map(|t| json!({ "text": t, "written_ms": 0.0 })).collect::<Vec<_>>() })
    }

    fn peer(text: &str, sent: Option<f64>, chunks: usize, trailing: bool) -> PeerRequest {
        PeerRequest {
            sent_epoch_ms: sent,
            chunk_ms: (0..chunks).map(|i| i as f64).collect(),
            text: text.into(),
            ok: true,
            trailing_stamp: trailing,
        }
    }

    #[test]
    fn pairs_by_unique_text_and_never_guesses() {
        let records = [
            record("sim-1", 1000.0, &["a", "b"]),
            record("sim-2", 1001.0, &["c", "d"]),
            record("sim-3", 1002.0, &["x", "y"]),
            record("sim-4", 1003.0, &["x", "y"]),
            record("sim-5", 1004.0, &["w", "u"]),
        ];
        let peers = [
            peer("ab", Some(999.0), 3, true),   // closing stamp dropped
            peer("cd", None, 2, false),         // no send time: text alone
            peer("xy", Some(1000.0), 2, false), // two records share it
            peer("zz", Some(1000.0), 2, false), // no record
            peer("wu", Some(5000.0), 2, false), // received before it was sent
        ];
        let (reqs, m) = match_truth(&peers, &records);
        let ids: Vec<Option<&str>> = reqs.iter().map(|r| r.request_id.as_deref()).collect();
        assert_eq!(ids, [Some("sim-1"), Some("sim-2"), None, None, None]);
        assert_eq!(reqs[0].chunk_ms.len(), 2);
        assert_eq!((m.paired, m.ambiguous, m.unplaced), (2, 1, 2));
    }

    #[test]
    fn reads_each_tools_export() {
        let v = json!({ "start_times": [10.0], "ttfts": [0.05], "itls": [[0.02, 0.02]],
                        "generated_texts": ["ab"], "errors": [""] });
        let r = parse_ttfts_itls(&v, "vllm", Some(1000.0), true).unwrap();
        assert_eq!(r[0].sent_epoch_ms, Some(11_000.0));
        let ms: Vec<i64> = r[0].chunk_ms.iter().map(|x| x.round() as i64).collect();
        assert_eq!(ms, [50, 70, 90]);
        let raw = json!({ "metadata": { "benchmark_phase": "profiling", "request_start_ns": 2_000_000_000i64 },
            "start_perf_ns": 1_000_000, "status": 200, "error": null,
            "responses": [
                { "perf_ns": 31_000_000, "packets": [{ "name": "data", "value": "{\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}" }] },
                { "perf_ns": 31_000_000, "packets": [{ "name": "data", "value": "{\"choices\":[{\"delta\":{\"content\":\"a\"}}]}" }] },
                { "perf_ns": 51_000_000, "packets": [{ "name": "data", "value": "{\"choices\":[{\"delta\":{\"content\":\"b\"}}]}" }] },
                { "perf_ns": 52_000_000, "packets": [{ "name": "data", "value": "[DONE]" }] }
            ] });
        let s = json!({ "ttfts": [0.03, 0.0], "itls": [[0.02], []], "generated_texts": ["ab", ""],
                        "errors": ["", "boom"] });
        let r = parse_ttfts_itls(&s, "sglang", None, false).unwrap();
        let py = r#"{"rate": Infinity, "x": -Infinity, "y": NaN, "t": "NaN \" Infinity"}"#;
        let v: Value = serde_json::from_str(&python_json(py)).unwrap();
        assert_eq!(
            v,
            json!({ "rate": null, "x": null, "y": null, "t": "NaN \" Infinity" })
        );
        assert_eq!((r[0].sent_epoch_ms, r[0].ok, r[1].ok), (None, true, false));
        assert_eq!(r[0].chunk_ms.len(), 2);
        let r = parse_aiperf(&raw.to_string()).unwrap();
        assert_eq!(r[0].text, "ab");
        assert_eq!(r[0].chunk_ms, [30.0, 50.0]);
        assert_eq!(r[0].sent_epoch_ms, Some(2000.0));
        assert!(r[0].ok);
    }
}
