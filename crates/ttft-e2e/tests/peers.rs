//! A peer tool's own result file, produced by the real tool in the test: NVIDIA AIPerf
//! (`aiperf profile`, pinned as the bench pins it) run against the reference endpoint started
//! in-process, its `profile_export.jsonl` imported by the core (`ttft_core::import`) and
//! checked against the server's ground truth (`GET /v1/ground-truth?since=`).
//!
//! The run: `sim-bench` (one chunk per 20 ms decode step), 8 streamed chat requests at
//! concurrency 2 after 2 warm-ups, 20 output tokens each, with `--export-http-trace`. The
//! trace keeps the response headers, so each line carries the server's own `x-request-id` and
//! is matched to its record exactly (the importer itself never reads headers).
//!
//! Checked: request count exact (8 measured + 2 warm-ups, each its own record, none twice); the
//! imported TTFT, E2E and per-chunk gaps are the file's own values, no more and no fewer; and
//! against ground truth: **first token ≤ 15 ms late** (AIPerf's first-content stamp, its
//! wall-clock send time plus TTFT, minus the server's write of the first content chunk, on one
//! machine's wall clock: delivery over loopback plus the Python client's own stamping, the
//! tolerance the Locust suite uses for a Python client, and never more than 1 ms early, which
//! would be a stamp before the write), and **per-gap ITL within 10 ms** (half a 20 ms step:
//! beyond it a gap lands on the wrong step). With the gaps taken out of the same real file,
//! the import keeps none (the trace's `response_chunks` are empty, so there is nothing to fall
//! back on): per-chunk times are never invented. With `profile_export_aiperf.json` beside it,
//! AIPerf's own summary agrees with the studio's from the same requests (same method).
//! Measured here (2 shared cores, three runs): first token 0.1–0.6 ms late, per-gap error
//! ≤ 4 ms (P99 3.7 ms over 190 gaps); the run takes 9–13 s.
//!
//! `#[ignore]`d for plain `cargo test`: it needs AIPerf, which `cargo xtask test` installs into
//! `target/peers/aiperf` (the bench's venv) and hands over in `AIPERF`. By hand: `cargo xtask
//! aiperf` then `cargo test -p ttft-e2e --test peers -- --ignored --nocapture`. The run's
//! artifacts and log stay in `target/peers/aiperf-e2e/`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use serde_json::Value;
use ttft_core::import::{Format, import, import_files};
use ttft_core::report::Report;
use ttft_e2e::{
    WORD_TOKENIZER_PY, ground_truth_since, root, run_logged, start_reference_endpoint, unix_ms,
};

/// The reference endpoint's benchmark model: 20 ms steps nearly independent of load.
const MODEL: &str = "sim-bench";
const REQUESTS: usize = 8;
const WARMUPS: usize = 2;
const CONCURRENCY: usize = 2;
const OUTPUT_TOKENS: usize = 20;
/// Latest the first token may be stamped after the server wrote it (ms).
const FIRST_TOKEN_LATE_MS: f64 = 15.0;
/// Earliest (ms): the two sides read one wall clock, so only its reading jitter.
const FIRST_TOKEN_EARLY_MS: f64 = 1.0;
/// Largest per-gap error (ms): half a step.
const GAP_MS: f64 = 10.0;
/// Longest the AIPerf run may take.
const RUN_TIMEOUT: Duration = Duration::from_secs(300);

fn aiperf_bin() -> Result<PathBuf> {
    // A relative `AIPERF` is taken from the workspace root (tests run in the crate's folder).
    let p = std::env::var_os("AIPERF")
        .map(|p| root().join(p))
        .unwrap_or_else(|| root().join("target/peers/aiperf/bin/aiperf"));
    ensure!(
        p.exists(),
        "no AIPerf at {}: run `cargo xtask aiperf` (it installs AIPerf into target/peers/aiperf) or set AIPERF",
        p.display()
    );
    Ok(p)
}

/// A word-level tokenizer for AIPerf's prompt counting (no model hub is reachable), made with
/// the `tokenizers` package of AIPerf's own venv by the script the bench uses too
/// ([`WORD_TOKENIZER_PY`]).
async fn tokenizer(python: &Path, dir: &Path) -> Result<PathBuf> {
    let tok = dir.join("tokenizer");
    std::fs::create_dir_all(&tok)?;
    let mut c = tokio::process::Command::new(python);
    c.args(["-c", WORD_TOKENIZER_PY]).arg(&tok);
    run_logged(
        c,
        &dir.join("tokenizer.log"),
        RUN_TIMEOUT,
        "making the tokenizer",
    )
    .await?;
    Ok(tok)
}

/// The files of one AIPerf run.
struct AiperfRun {
    records: String,
    aggregate: String,
    /// Wall-clock time just before it started (ms).
    since_ms: f64,
    took_s: f64,
}

async fn run_aiperf(port: u16) -> Result<AiperfRun> {
    let bin = aiperf_bin()?;
    let python = bin.with_file_name("python");
    let dir = root().join("target/peers/aiperf-e2e");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let tok = tokenizer(&python, &dir).await?;
    let artifacts = dir.join("artifacts");
    let since_ms = unix_ms() - 1.0;
    let started = Instant::now();
    let mut c = tokio::process::Command::new(&bin);
    c.args(["profile", "--model", MODEL])
        .args(["--url", &format!("http://127.0.0.1:{port}")])
        .args(["--endpoint-type", "chat", "--streaming"])
        .args(["--concurrency", &CONCURRENCY.to_string()])
        .args(["--request-count", &REQUESTS.to_string()])
        .args(["--warmup-request-count", &WARMUPS.to_string()])
        .args(["--output-tokens-mean", &OUTPUT_TOKENS.to_string()])
        .args(["--output-tokens-stddev", "0"])
        .args(["--synthetic-input-tokens-mean", "32"])
        .args(["--synthetic-input-tokens-stddev", "0"])
        .arg("--tokenizer")
        .arg(&tok)
        .args(["--use-server-token-count", "--export-http-trace"])
        .arg("--artifact-dir")
        .arg(&artifacts)
        .args(["--ui", "none", "--no-server-metrics", "--no-gpu-telemetry"])
        .env("TOKENIZERS_PARALLELISM", "false");
    run_logged(c, &dir.join("aiperf.log"), RUN_TIMEOUT, "aiperf profile").await?;
    let took_s = started.elapsed().as_secs_f64();
    let read = |name: &str| {
        std::fs::read_to_string(artifacts.join(name))
            .with_context(|| format!("aiperf wrote no {name} in {}", artifacts.display()))
    };
    Ok(AiperfRun {
        records: read("profile_export.jsonl")?,
        aggregate: read("profile_export_aiperf.json")?,
        since_ms,
        took_s,
    })
}

/// The server's records of `MODEL` since `since_ms`.
async fn ground_truth(port: u16, since_ms: f64) -> Result<Vec<Value>> {
    // Ground truth is filed when a response's stream ends; give the last ones a moment.
    tokio::time::sleep(Duration::from_millis(200)).await;
    ground_truth_since(port, since_ms, MODEL).await
}

/// The one report of an AIPerf records file.
fn import_records(text: &str) -> Result<Report> {
    let (format, mut reports) = import(text)?;
    ensure!(format == Format::AiperfRecords, "read as {format:?}");
    ensure!(reports.len() == 1, "{} reports", reports.len());
    Ok(reports.remove(0))
}

fn p99(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    ttft_core::stats::percentile_sorted(&v, 99.0).unwrap_or(f64::NAN)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs AIPerf: run `cargo xtask test` (or `cargo xtask aiperf`)"]
async fn aiperf_profile_export_imports_as_the_server_saw_it() -> Result<()> {
    let port = start_reference_endpoint().await?;
    let run = run_aiperf(port).await?;
    let truth = ground_truth(port, run.since_ms).await?;
    let lines: Vec<Value> = run
        .records
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    let report = import_records(&run.records)?;

    // Every request, once: the file's lines, the report's requests and the server's records.
    ensure!(
        lines.len() == REQUESTS + WARMUPS,
        "{} lines in the file",
        lines.len()
    );
    ensure!(
        truth.len() == REQUESTS + WARMUPS,
        "{} server records",
        truth.len()
    );
    ensure!(report.requests.len() == lines.len());
    ensure!(
        report.measured().count() == REQUESTS,
        "{} measured requests",
        report.measured().count()
    );
    ensure!(report.requests.iter().filter(|r| r.warmup).count() == WARMUPS);
    ensure!(report.title == "AIPerf · ?", "{}", report.title);
    let mut seen = std::collections::HashSet::new();
    let (mut late, mut gap_err) = (Vec::new(), Vec::new());
    for (line, r) in lines.iter().zip(&report.requests) {
        ensure!(r.outcome.is_ok(), "{:?}", r.outcome);
        let id = line
            .pointer("/trace_data/response_headers/X-Request-ID")
            .or_else(|| line.pointer("/trace_data/response_headers/x-request-id"))
            .and_then(Value::as_str)
            .context("the HTTP trace keeps no x-request-id")?;
        ensure!(seen.insert(id.to_owned()), "{id} twice");
        let t = truth
            .iter()
            .find(|t| t["id"] == id)
            .with_context(|| format!("no server record {id}"))?;
        let m = &r.metrics;
        // The file's own values, kept as they are.
        let file_ms = |name: &str| line.pointer(&format!("/metrics/{name}/value"));
        let ttft = m.ttft_ms.context("no TTFT")?;
        ensure!(
            (ttft
                - file_ms("time_to_first_token")
                    .and_then(Value::as_f64)
                    .unwrap_or(f64::NAN))
            .abs()
                < 1e-9
        );
        ensure!(
            (m.e2e_ms.unwrap_or(f64::NAN)
                - file_ms("request_latency")
                    .and_then(Value::as_f64)
                    .unwrap_or(f64::NAN))
            .abs()
                < 1e-9
        );
        let file_gaps: Vec<f64> = file_ms("inter_chunk_latency")
            .and_then(Value::as_array)
            .context("no inter_chunk_latency")?
            .iter()
            .filter_map(Value::as_f64)
            .collect();
        ensure!(
            m.itl_ms == file_gaps,
            "gaps are the file's, no more, no fewer"
        );
        ensure!(
            m.output_tokens == OUTPUT_TOKENS as u64,
            "{} tokens",
            m.output_tokens
        );
        // Against what the server wrote.
        let chunks: Vec<&Value> = t["chunks"]
            .as_array()
            .context("no chunks")?
            .iter()
            .filter(|c| c["text"].as_str().is_some_and(|s| !s.is_empty()))
            .collect();
        ensure!(
            chunks.len() == m.itl_ms.len() + 1,
            "{id}: {} content chunks written, {} gaps kept",
            chunks.len(),
            m.itl_ms.len()
        );
        let written = |c: &Value| c["written_ms"].as_f64().unwrap_or(f64::NAN);
        let received = t["received_unix_ms"].as_f64().context("no receipt time")?;
        let sent = r.sent_epoch_ms.context("no send time")?;
        late.push(sent + ttft - (received + written(chunks[0])));
        for (w, g) in chunks.windows(2).zip(&m.itl_ms) {
            gap_err.push((g - (written(w[1]) - written(w[0]))).abs());
        }
    }
    let (late_min, late_max) = late
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(*x), b.max(*x))
        });
    let gap_max = gap_err.iter().copied().fold(0.0, f64::max);
    eprintln!(
        "aiperf: {} requests in {:.1} s; first token late by {late_min:.2}..{late_max:.2} ms (P99 {:.2}); per-gap |error| P99 {:.2} ms, max {gap_max:.2} ms over {} gaps",
        lines.len(),
        run.took_s,
        p99(late.clone()),
        p99(gap_err.clone()),
        gap_err.len()
    );
    ensure!(
        late_min >= -FIRST_TOKEN_EARLY_MS && late_max <= FIRST_TOKEN_LATE_MS,
        "first token {late_min:.2}..{late_max:.2} ms after the server wrote it: {late:?}"
    );
    ensure!(gap_max <= GAP_MS, "per-gap error up to {gap_max:.2} ms");

    imports_without_gaps(&lines, &report)?;
    imports_with_aiperf_summary(&run)?;
    Ok(())
}

/// The same real file without its gaps: the import keeps none and invents none.
fn imports_without_gaps(lines: &[Value], report: &Report) -> Result<()> {
    let stripped: String = lines
        .iter()
        .map(|l| {
            let mut l = l.clone();
            if let Some(m) = l.get_mut("metrics").and_then(Value::as_object_mut) {
                m.remove("inter_chunk_latency");
            }
            l.to_string() + "\n"
        })
        .collect();
    let bare = import_records(&stripped)?;
    ensure!(bare.requests.len() == lines.len());
    for (a, b) in report.requests.iter().zip(&bare.requests) {
        ensure!(
            b.metrics.itl_ms.is_empty(),
            "gaps invented: {:?}",
            b.metrics.itl_ms
        );
        ensure!(b.metrics.ttft_ms == a.metrics.ttft_ms && b.metrics.e2e_ms == a.metrics.e2e_ms);
        ensure!(b.metrics.output_arrivals == 1 && !b.metrics.coalesced);
    }
    ensure!(bare.import_notes.is_empty(), "{:?}", bare.import_notes);
    Ok(())
}

/// With AIPerf's aggregate beside it: the model, and AIPerf's own summary beside ours.
fn imports_with_aiperf_summary(run: &AiperfRun) -> Result<()> {
    let mut both = import_files(&[
        ("profile_export.jsonl", run.records.as_str()),
        ("profile_export_aiperf.json", run.aggregate.as_str()),
    ])?;
    ensure!(both.len() == 1 && both[0].1.len() == 1);
    let with_summary = both.remove(0).1.remove(0);
    ensure!(
        with_summary.title == format!("AIPerf · {MODEL}"),
        "{}",
        with_summary.title
    );
    let summary = with_summary
        .source_summary
        .context("AIPerf's summary is kept")?;
    ensure!(summary.tool == "AIPerf 0.13.0", "{}", summary.tool);
    let median = summary
        .figures
        .iter()
        .find(|f| f.metric == "TTFT median")
        .context("AIPerf states a TTFT median")?;
    let ours = median.our_value.context("the studio's TTFT median")?;
    eprintln!(
        "aiperf: TTFT median {:.3} ms (AIPerf) vs {ours:.3} ms (studio)",
        median.file_value
    );
    ensure!(
        (median.file_value - ours).abs() < 0.01,
        "same requests, same method: {median:?}"
    );
    Ok(())
}
