//! Coverage-guided fuzz targets of every parser of untrusted input, one function per parser
//! family: share links, streams (SSE and NDJSON framing, dialect detection, the recorder and
//! the request's metrics), imports of other tools' result files, timeline files, report files
//! (and the llm-d export of what they hold), server metrics scrapes and production trace files.
//!
//! Each target takes arbitrary bytes and must not panic: every outcome of bad input is an
//! error value (ARCHITECTURE.md, "Bad input is an outcome, not a panic"). The AFL++ binaries
//! (`src/bin/`, built by `cargo afl build --features afl`) call these functions; the crate's
//! own tests replay the seed corpora (`corpus/<target>/`) and every input that ever crashed a
//! target (`regressions/<target>/`) through them, so a plain `cargo test` keeps them fixed.
//! `cargo xtask fuzz` runs the fuzzer; `examples/seeds.rs` writes the seeds from the tests'
//! fixtures.
//!
//! Several targets read more than one piece from one input: [`SEPARATOR`] (a byte that never
//! occurs in UTF-8 text) splits the pieces, so the fuzzer itself chooses where a stream's
//! reads end or where one file stops and the next begins.

use ttft_core::capture::{Capture, CaptureEnd, CapturedHead};
use ttft_core::dialect::Dialect;
use ttft_core::metrics::{MetricsConfig, RequestMetrics};
use ttft_core::report::Report;
use ttft_core::server_metrics::{Scrape, ServerSeries};
use ttft_core::timeline::{Outcome, Read};
use ttft_core::timeline_file::MergeOptions;

/// Splits an input into pieces (a stream's reads, a folder's files, a run's scrapes): `0xFF`,
/// which UTF-8 text never holds.
pub const SEPARATOR: u8 = 0xFF;

/// A target: its name (the binary's, the corpus folder's) and its function.
pub type Target = (&'static str, fn(&[u8]));

/// Every target, in the order `cargo xtask fuzz` runs and reports them.
pub const TARGETS: [Target; 7] = [
    ("share_link", share_link),
    ("stream", stream),
    ("import", import),
    ("timeline_file", timeline_file),
    ("report_file", report_file),
    ("server_metrics", server_metrics),
    ("trace", trace),
];

/// The names a multi-file import gives its pieces, in turn: the files of an AIPerf artifact
/// folder and of a genai-bench experiment folder, and a file named like none of them.
pub const IMPORT_NAMES: [&str; 6] = [
    "profile_export.jsonl",
    "profile_export_aiperf.json",
    "experiment_metadata.json",
    "D16_10_text-to-text_num_concurrency_1_time_1s.json",
    "profile_export_raw.jsonl",
    "results.json",
];

/// The input's pieces between [`SEPARATOR`]s (one piece when it has none).
fn pieces(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    data.split(|b| *b == SEPARATOR)
}

/// Text as the studio reads a file: invalid UTF-8 replaced, as the browser's `File.text()` does.
fn text(data: &[u8]) -> String {
    String::from_utf8_lossy(data).into_owned()
}

/// What the studio does with a report it opened from an untrusted source: export it as llm-d
/// benchmark reports (every load point's statistics).
fn opened(report: &Report) {
    let _ = ttft_core::llmd::benchmark_reports(report);
}

/// A share link (the part after `#share=`, or a whole URL), any format, decoded; then opened.
pub fn share_link(data: &[u8]) {
    if let Ok(report) = ttft_share::decode(&text(data)) {
        opened(&report);
    }
}

/// How a stream target reads its first byte: the response's `Content-Type` (bits 0–1), the
/// dialect the user chose or none to detect it (bits 2–4), how the exchange ended (bits 5–6),
/// and whether the metrics track JSON answers (bit 7).
struct StreamSetup {
    content_type: Option<&'static str>,
    dialect: Option<Dialect>,
    end: u8,
    track_json: bool,
}

impl StreamSetup {
    fn of(selector: u8) -> Self {
        let content_type = [
            None,
            Some("text/event-stream"),
            Some("application/x-ndjson"),
            Some("application/json"),
        ][usize::from(selector & 0b11)];
        Self {
            content_type,
            dialect: Dialect::ALL
                .get(usize::from((selector >> 2) & 0b111))
                .copied(),
            end: (selector >> 5) & 0b11,
            track_json: selector & 0x80 != 0,
        }
    }
}

/// A response as the stamping worker captures it: the first byte chooses the setup
/// (`StreamSetup`), the rest is the body, its reads split at each [`SEPARATOR`] (one
/// millisecond apart). The capture goes through framing, dialect detection and the recorder,
/// then the request's metrics, which may not count more output events than were recorded.
pub fn stream(data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let setup = StreamSetup::of(selector);
    let mut body = Vec::with_capacity(rest.len());
    let mut reads = Vec::new();
    for (i, piece) in pieces(rest).enumerate() {
        body.extend_from_slice(piece);
        reads.push(Read {
            at: 2.0 + i as f64,
            bytes: u32::try_from(piece.len()).unwrap_or(u32::MAX),
        });
    }
    let at = 3.0 + reads.len() as f64;
    let (status, end) = match setup.end {
        // A non-2xx answer's body is read whole, not as the stream's reads.
        2 => {
            let end = CaptureEnd::HttpError {
                at,
                body: text(&body),
            };
            body.clear();
            reads.clear();
            (500, end)
        }
        3 => (
            200,
            CaptureEnd::Failed {
                at,
                outcome: Outcome::Aborted {
                    message: "cut short".into(),
                },
            },
        ),
        _ => (200, CaptureEnd::Finished { at }),
    };
    let capture = Capture {
        sent_at: 0.0,
        head: Some(CapturedHead {
            at: 1.0,
            status,
            content_type: setup.content_type.map(str::to_owned),
        }),
        body,
        reads,
        end,
    };
    let Ok(timeline) = capture.record(setup.dialect) else {
        return;
    };
    let config = MetricsConfig {
        track_json: setup.track_json,
        required_keys: vec!["answer".into()],
        ..MetricsConfig::default()
    };
    let metrics = RequestMetrics::compute(&timeline, &config);
    assert!(
        metrics.output_events as usize <= timeline.events.len(),
        "{} output events counted of {} recorded",
        metrics.output_events,
        timeline.events.len()
    );
}

/// Another tool's result file (vLLM, GuideLLM, AIPerf, SGLang, genai-bench, or a studio
/// report): one piece is one file read alone; several pieces are the files of one folder,
/// named in turn by [`IMPORT_NAMES`], read together as the studio reads a dropped folder.
pub fn import(data: &[u8]) {
    let files: Vec<(String, String)> = pieces(data)
        .zip(IMPORT_NAMES.iter().cycle())
        .map(|(piece, name)| (format!("run/{name}"), text(piece)))
        .collect();
    if let [(_, one)] = files.as_slice() {
        if let Ok((_, reports)) = ttft_core::import::import(one) {
            reports.iter().for_each(opened);
        }
    } else {
        let read = ttft_core::result_files::read_results(&files);
        read.reports.iter().for_each(opened);
    }
}

/// Timeline files of one run, one per worker (pieces named `worker-N.jsonl`), merged into a
/// report as an import of Locust's files does.
pub fn timeline_file(data: &[u8]) {
    let files: Vec<(String, String)> = pieces(data)
        .enumerate()
        .map(|(i, piece)| (format!("worker-{i}.jsonl"), text(piece)))
        .collect();
    for (_, file) in &files {
        let _ = ttft_core::timeline_file::looks_like_timeline(file);
    }
    if let Ok(merged) = ttft_core::timeline_file::merge_files(&files, &MergeOptions::default()) {
        opened(&merged.report);
    }
}

/// A saved report file (the studio's own JSON, any version), read and then opened.
pub fn report_file(data: &[u8]) {
    if let Ok(report) = ttft_core::report::read_json(data) {
        opened(&report);
    }
}

/// A server's `/metrics` answers (Prometheus text), one scrape a piece, a second apart: each
/// parsed and rendered back, the server told from it, and the run's server-side series built
/// from the scrapes.
pub fn server_metrics(data: &[u8]) {
    let mut scrapes = Vec::new();
    for (i, piece) in pieces(data).enumerate() {
        let text = text(piece);
        let exposition = ttft_core::prometheus::parse(&text);
        let _ = ttft_core::server_metrics::detect_server(&exposition);
        let _ = ttft_core::prometheus::render(&exposition);
        scrapes.push(Scrape::new(i as f64 * 1000.0, &text));
    }
    let _ = ServerSeries::from_scrapes(&scrapes, None);
}

/// A production trace file (Mooncake JSONL, Azure or BurstGPT CSV), read as the format the
/// first byte chooses (bits 0–1: detected, Mooncake, Azure, BurstGPT), then planned (the first
/// 64 requests at 10×) with the first prompts built and the expected prefix reuse counted.
pub fn trace(data: &[u8]) {
    use ttft_core::trace::{TraceFormat, TracePlanOptions};
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let format = [
        None,
        Some(TraceFormat::Mooncake),
        Some(TraceFormat::Azure),
        Some(TraceFormat::BurstGpt),
    ][usize::from(selector & 0b11)];
    let _ = ttft_core::trace::detect(rest);
    let Ok(trace) = ttft_core::trace::parse(rest, format) else {
        return;
    };
    let options = TracePlanOptions {
        speed: 10.0,
        max_requests: 64,
        ..TracePlanOptions::default()
    };
    if let Ok(plan) = ttft_core::trace::plan(&trace, &options) {
        let _ = plan.prefix_reuse();
        // Prompts of at most 20,000 tokens: a longer one is valid, only slow to build.
        for job in plan
            .jobs
            .iter()
            .filter(|j| j.input_tokens <= 20_000)
            .take(4)
        {
            let _ = job.prompt();
        }
    }
}
