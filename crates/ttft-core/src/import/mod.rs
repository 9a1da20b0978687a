//! Reading result files of other benchmark tools, so their runs can be compared in the studio:
//! the studio's own report JSON, `vllm bench serve --save-result --save-detailed` JSON,
//! GuideLLM benchmark JSON, AIPerf's `profile_export.jsonl` (and its raw export), SGLang
//! `bench_serving --output-file` JSONL, and a genai-bench experiment folder.
//!
//! Imported runs keep what the tool measured and nothing more: per-chunk times only where the
//! file has them (vLLM, SGLang and AIPerf keep gaps; AIPerf's raw export keeps every SSE
//! message's stamp; a chunk carrying several tokens is flagged as coalesced, not split);
//! GuideLLM and genai-bench keep one mean gap per request, which is our TPOT, and no gaps.
//! Tool timings are taken on the client machine of that tool, not in a browser.
//!
//! Where a file states its own summary (GuideLLM's metric distributions, AIPerf's aggregate
//! export, SGLang's summary fields, genai-bench's aggregated metrics), the figures are kept on
//! the report ([`SourceSummary`]) beside the studio's value from the same requests, with the
//! reason they differ.
//!
//! [`import`] reads one file; [`import_files`] reads several files together (a genai-bench
//! experiment folder, AIPerf's per-request export with its aggregate export), since the core
//! does no I/O and a folder reaches it as `(name, text)` pairs.

mod aiperf;
mod genai_bench;
mod guidellm;
mod sglang;
mod summary;

use serde_json::Value;
use thiserror::Error;

use crate::metrics::{RequestMetrics, TokenSource};
use crate::report::file::{self, ReportFileError};
use crate::report::{EndpointInfo, Report, RequestRecord};
use crate::timeline::Outcome;

pub use summary::{SourceSummary, SummaryFigure};

/// Why a file could not be imported.
#[derive(Debug, Error, PartialEq)]
pub enum ImportError {
    /// Not JSON at all.
    #[error(
        "the file is not JSON or JSON lines ({0}); export a report JSON, or a vLLM / GuideLLM / AIPerf / SGLang / genai-bench result file"
    )]
    NotJson(String),
    /// JSON, but no known shape.
    #[error(
        "unrecognised JSON: expected a ttft-studio report, a `vllm bench serve --save-result --save-detailed` file, a GuideLLM benchmarks file, AIPerf's profile_export.jsonl, SGLang's bench_serving output file or a genai-bench experiment's files"
    )]
    UnknownFormat,
    /// A vLLM file without per-request data.
    #[error(
        "this vLLM result has only summary figures; re-run `vllm bench serve` with `--save-result --save-detailed` to keep per-request TTFT and ITL"
    )]
    NoPerRequestData,
    /// An SGLang output file written without `--output-details`.
    #[error(
        "this SGLang bench_serving output has only summary figures; re-run `python -m sglang.bench_serving` with `--output-file … --output-details` to keep per-request TTFT and ITL"
    )]
    SglangNoDetails,
    /// AIPerf's aggregate export alone (`profile_export_aiperf.json`): no requests in it.
    #[error(
        "this is AIPerf's aggregate export (profile_export_aiperf.json), with no per-request data; import profile_export.jsonl (written with `--export-level records` or `raw`) from the same artifact folder, together with this file to keep AIPerf's own summary beside the studio's"
    )]
    AiperfAggregateOnly,
    /// genai-bench's `experiment_metadata.json` alone.
    #[error(
        "this is genai-bench's experiment_metadata.json; import it together with the experiment folder's per-scenario JSON files (the ones holding `individual_request_metrics`)"
    )]
    GenaiBenchMetadataOnly,
    /// A field has the wrong type or length.
    #[error("field `{field}`: {problem}")]
    BadField {
        /// The field.
        field: String,
        /// What is wrong.
        problem: String,
    },
    /// A line of a JSON-lines file is not JSON.
    #[error("line {line} is not JSON ({problem}); the file looks damaged or cut short")]
    BadLine {
        /// 1-based line number.
        line: usize,
        /// The parser's message.
        problem: String,
    },
    /// A studio report that cannot be read (damaged, or a newer format).
    #[error("{0}")]
    Report(#[from] ReportFileError),
    /// A file with no requests.
    #[error("the file holds no requests")]
    Empty,
    /// One of several files given together could not be imported.
    #[error("{name}: {source}")]
    InFile {
        /// The file's name.
        name: String,
        /// Why.
        source: Box<ImportError>,
    },
}

/// Which kind of file it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The studio's report JSON.
    Studio,
    /// `vllm bench serve` JSON.
    Vllm,
    /// GuideLLM JSON.
    GuideLlm,
    /// AIPerf's `profile_export.jsonl` (`--export-level records`): per-request metrics, with
    /// the gaps between content chunks.
    AiperfRecords,
    /// AIPerf's `profile_export_raw.jsonl` (`--export-level raw`): every SSE message with its
    /// stamp.
    AiperfRaw,
    /// SGLang `bench_serving --output-file` JSON lines.
    Sglang,
    /// A genai-bench experiment folder's per-scenario files.
    GenaiBench,
}

/// What one file is, from its content.
enum Kind {
    /// The studio's own report: parsed straight into a [`Report`] from the text, never through
    /// a `Value` tree (a 10,000-request report is 90 MB of JSON; a tree of it takes several
    /// times that, and a wasm tab's memory never shrinks back).
    Studio,
    /// The studio's report as parsed after [`python_json`] (a report re-saved by a tool that
    /// writes `NaN`): read from that tree, the text alone would not parse.
    StudioValue(Value),
    Vllm(Value),
    GuideLlm(Value),
    /// AIPerf records or raw lines.
    Aiperf(Vec<Value>, Format),
    AiperfAggregate(Value),
    /// One object per `bench_serving` run.
    Sglang(Vec<Value>),
    GenaiScenario(Value),
    GenaiMetadata(Value),
}

/// Python's `json.dumps` writes `NaN` and `Infinity` (SGLang and AIPerf files can hold them):
/// outside strings they become `null`, so the text parses.
fn python_json(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("NaN") && !text.contains("Infinity") {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_string {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            rest = &rest[c.len_utf8()..];
            continue;
        }
        if c == '"' {
            in_string = true;
        }
        let word = ["-Infinity", "Infinity", "NaN"]
            .into_iter()
            .find(|w| rest.starts_with(w));
        if let Some(w) = word {
            out.push_str("null");
            rest = &rest[w.len()..];
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out.into()
}

fn classify_object(v: Value) -> Result<Kind, ImportError> {
    let Some(obj) = v.as_object() else {
        return Err(ImportError::UnknownFormat);
    };
    if file::looks_like_report(obj) {
        // Only a report that needed `python_json` (NaN written by another tool) gets here.
        return Ok(Kind::StudioValue(v));
    }
    if obj.contains_key("benchmarks") {
        return Ok(Kind::GuideLlm(v));
    }
    if obj.contains_key("individual_request_metrics") || obj.contains_key("aggregated_metrics") {
        return Ok(Kind::GenaiScenario(v));
    }
    if obj.contains_key("benchmark_version") && obj.contains_key("traffic_scenario") {
        return Ok(Kind::GenaiMetadata(v));
    }
    if obj.contains_key("aiperf_version") || obj.contains_key("warmup_metrics") {
        return Ok(Kind::AiperfAggregate(v));
    }
    if aiperf::is_line(&v) {
        let f = aiperf::format_of(&v);
        return Ok(Kind::Aiperf(vec![v], f));
    }
    if sglang::is_sglang(&v) {
        return Ok(Kind::Sglang(vec![v]));
    }
    if obj.contains_key("ttfts")
        || obj.contains_key("median_ttft_ms")
        || obj.contains_key("mean_ttft_ms")
    {
        return Ok(Kind::Vllm(v));
    }
    Err(ImportError::UnknownFormat)
}

/// Reads a file's text and tells what it is: one JSON document, or JSON lines (AIPerf,
/// SGLang).
fn classify(text: &str) -> Result<Kind, ImportError> {
    if is_studio_report(text) {
        return Ok(Kind::Studio);
    }
    let text = python_json(text);
    let whole = serde_json::from_str::<Value>(&text);
    let whole_err = match whole {
        Ok(v) => return classify_object(v),
        Err(e) => e.to_string(),
    };
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(v) => lines.push(v),
            // The first line not JSON: not JSON lines at all.
            Err(_) if lines.is_empty() => return Err(ImportError::NotJson(whole_err)),
            Err(e) => {
                return Err(ImportError::BadLine {
                    line: i + 1,
                    problem: e.to_string(),
                });
            }
        }
    }
    let Some(first) = lines.first() else {
        return Err(ImportError::NotJson(whole_err));
    };
    if aiperf::is_line(first) {
        let f = aiperf::format_of(first);
        return Ok(Kind::Aiperf(lines, f));
    }
    if lines.iter().all(sglang::is_sglang) {
        return Ok(Kind::Sglang(lines));
    }
    Err(ImportError::UnknownFormat)
}

/// Whether `text` is one JSON object whose top-level keys are a studio report's, found by a
/// scan that builds nothing but the keys (every value is skipped, not parsed into a tree).
fn is_studio_report(text: &str) -> bool {
    type TopLevel = serde_json::Map<String, Value>;
    let Ok(keys) =
        serde_json::from_str::<std::collections::BTreeMap<String, serde::de::IgnoredAny>>(text)
    else {
        return false;
    };
    let object: TopLevel = keys.into_keys().map(|k| (k, Value::Null)).collect();
    file::looks_like_report(&object)
}

/// Reads a result file into one or more reports.
pub fn import(text: &str) -> Result<(Format, Vec<Report>), ImportError> {
    reports_of(classify(text)?, text)
}

/// The reports of one file already classified as `kind` (`text` is the file's, for the
/// studio's own reports, read straight from it).
fn reports_of(kind: Kind, text: &str) -> Result<(Format, Vec<Report>), ImportError> {
    match kind {
        Kind::Studio => Ok((Format::Studio, vec![file::read_json(text.as_bytes())?])),
        Kind::StudioValue(v) => Ok((Format::Studio, vec![file::read_value(v)?])),
        Kind::Vllm(v) => vllm(&v).map(|r| (Format::Vllm, vec![r])),
        Kind::GuideLlm(v) => guidellm::import(&v).map(|r| (Format::GuideLlm, r)),
        Kind::Aiperf(lines, f) => aiperf::import(&lines, f, None).map(|r| (f, vec![r])),
        Kind::AiperfAggregate(_) => Err(ImportError::AiperfAggregateOnly),
        Kind::Sglang(runs) => sglang::import(&runs).map(|r| (Format::Sglang, vec![r])),
        Kind::GenaiScenario(v) => genai_bench::import(&[("scenario.json", v)], None)
            .map(|r| (Format::GenaiBench, vec![r])),
        Kind::GenaiMetadata(_) => Err(ImportError::GenaiBenchMetadataOnly),
    }
}

/// Reads several files given together, each as `(file name, text)`: a genai-bench experiment
/// folder's files (its per-scenario JSON files and `experiment_metadata.json`) become one
/// report, AIPerf's `profile_export.jsonl` or `profile_export_raw.jsonl` with
/// `profile_export_aiperf.json` become one report carrying AIPerf's own summary, and any other
/// file is read as by [`import`]. Files that say nothing on their own (PNG plots, spreadsheets,
/// logs) are skipped; a file that cannot be read fails the whole import, named.
pub fn import_files(files: &[(&str, &str)]) -> Result<Vec<(Format, Vec<Report>)>, ImportError> {
    let in_file = |name: &str, e: ImportError| ImportError::InFile {
        name: name.to_owned(),
        source: Box::new(e),
    };
    let mut out = Vec::new();
    let mut genai: Vec<(&str, Value)> = Vec::new();
    let mut genai_meta: Option<Value> = None;
    let mut aiperf_lines: Vec<(Vec<Value>, Format)> = Vec::new();
    let mut aiperf_aggregate: Option<Value> = None;
    for (name, text) in files {
        if !looks_like_text_result(name) {
            continue;
        }
        match classify(text).map_err(|e| in_file(name, e))? {
            Kind::GenaiScenario(v) => genai.push((name, v)),
            Kind::GenaiMetadata(v) => genai_meta = Some(v),
            Kind::Aiperf(lines, f) => aiperf_lines.push((lines, f)),
            Kind::AiperfAggregate(v) => {
                // `phases/warmup/profile_export_aiperf.json` summarises the warm-up only.
                if !name.to_ascii_lowercase().contains("warmup") {
                    aiperf_aggregate = Some(v);
                }
            }
            kind => out.push(reports_of(kind, text).map_err(|e| in_file(name, e))?),
        }
    }
    if !genai.is_empty() {
        out.push((
            Format::GenaiBench,
            vec![genai_bench::import(&genai, genai_meta.as_ref())?],
        ));
    } else if genai_meta.is_some() {
        return Err(ImportError::GenaiBenchMetadataOnly);
    }
    // The raw export has every message's stamp: preferred over the records when both came.
    aiperf_lines.sort_by_key(|(_, f)| *f != Format::AiperfRaw);
    if let Some((lines, f)) = aiperf_lines.into_iter().next() {
        out.push((
            f,
            vec![aiperf::import(&lines, f, aiperf_aggregate.as_ref())?],
        ));
    } else if aiperf_aggregate.is_some() {
        return Err(ImportError::AiperfAggregateOnly);
    }
    if out.is_empty() {
        return Err(ImportError::Empty);
    }
    Ok(out)
}

/// Whether a file of a tool's output folder can hold results (JSON or JSON lines), by name.
fn looks_like_text_result(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".json") || lower.ends_with(".jsonl") || !lower.contains('.')
}

fn bad(field: &str, problem: impl Into<String>) -> ImportError {
    ImportError::BadField {
        field: field.into(),
        problem: problem.into(),
    }
}

fn array<'a>(v: &'a Value, field: &str) -> Result<Option<&'a Vec<Value>>, ImportError> {
    match v.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) => Ok(Some(a)),
        Some(_) => Err(bad(field, "expected an array")),
    }
}

fn num(v: &Value) -> Option<f64> {
    v.as_f64().filter(|x| x.is_finite())
}

/// Metrics of an imported request: only what the tool measured.
#[derive(Default)]
struct Measured {
    ttfb_ms: Option<f64>,
    ttft_ms: Option<f64>,
    e2e_ms: Option<f64>,
    /// Gaps between arrivals (ms), empty when the tool kept none.
    gaps_ms: Vec<f64>,
    tpot_ms: Option<f64>,
    output_tokens: u64,
    prompt_tokens: Option<u64>,
    text: String,
}

impl Measured {
    fn into_metrics(self) -> RequestMetrics {
        let arrivals = if self.gaps_ms.is_empty() {
            u32::from(self.ttft_ms.is_some())
        } else {
            self.gaps_ms.len() as u32 + 1
        };
        let tokens_per_arrival = if arrivals > 0 {
            self.output_tokens as f64 / f64::from(arrivals)
        } else {
            0.0
        };
        let tpot_ms = self.tpot_ms.or_else(|| {
            let (e, t) = (self.e2e_ms?, self.ttft_ms?);
            (self.output_tokens > 1).then(|| (e - t) / (self.output_tokens - 1) as f64)
        });
        let decode = self
            .tpot_ms
            .or(tpot_ms)
            .filter(|t| *t > 0.0)
            .map(|t| 1e3 / t);
        RequestMetrics {
            ttfb_ms: self.ttfb_ms,
            ttft_ms: self.ttft_ms,
            ttft_kind: None,
            first_reasoning_ms: None,
            first_answer_ms: self.ttft_ms,
            meaningful_ms: None,
            opener_text: String::new(),
            e2e_ms: self.e2e_ms,
            tpot_ms,
            gap_tokens: vec![None; self.gaps_ms.len()],
            itl_ms: self.gaps_ms,
            output_tokens: self.output_tokens,
            token_source: TokenSource::Imported,
            prompt_tokens: self.prompt_tokens,
            reasoning_tokens: None,
            cached_tokens: None,
            cache_write_tokens: None,
            output_events: arrivals,
            output_arrivals: arrivals,
            tokens_per_arrival,
            // Only known when the tool kept per-chunk gaps.
            coalesced: arrivals > 1 && tokens_per_arrival > 1.5,
            stalls: Vec::new(),
            decode_tokens_per_s: decode,
            server_timings: None,
            json: None,
            tool_calls: Vec::new(),
            text: self.text,
            reasoning_text: String::new(),
            choices: Vec::new(),
            streamed: true,
        }
    }
}

fn record(
    index: usize,
    group: &str,
    level: Option<f64>,
    start_ms: f64,
    outcome: Outcome,
    m: Measured,
) -> RequestRecord {
    RequestRecord {
        index: index as u32,
        group: group.to_owned(),
        level,
        warmup: false,
        start_ms,
        browser_queue_ms: None,
        outcome,
        metrics: m.into_metrics(),
        replay: Vec::new(),
        server_request_id: None,
        sent_epoch_ms: None,
        protocol: None,
        reading_units: Vec::new(),
        token_arrivals: Vec::new(),
        raw: None,
        client: None,
        origin: None,
        pair: None,
        planned_ms: None,
    }
}

/// The per-request arrays of a `vllm bench serve --save-detailed` file, which SGLang's
/// `bench_serving --output-details` writes too (same names, same units: seconds), as records
/// numbered from `first_index`; `tool` names the tool in error messages.
fn ttfts_itls_requests(
    v: &Value,
    group: &str,
    level: Option<f64>,
    first_index: usize,
    tool: &str,
) -> Result<Vec<RequestRecord>, ImportError> {
    let ttfts = array(v, "ttfts")?.ok_or(ImportError::NoPerRequestData)?;
    let n = ttfts.len();
    let same_len = |field: &str| -> Result<Option<&Vec<Value>>, ImportError> {
        let a = array(v, field)?;
        if let Some(a) = a
            && a.len() != n
        {
            return Err(bad(
                field,
                format!("{} entries, but `ttfts` has {n}", a.len()),
            ));
        }
        Ok(a)
    };
    let itls = same_len("itls")?;
    let input_lens = same_len("input_lens")?;
    let output_lens = same_len("output_lens")?;
    let errors = same_len("errors")?;
    let e2els = same_len("e2els")?;
    let texts = same_len("generated_texts")?;
    let mut requests = Vec::with_capacity(n);
    for i in 0..n {
        let error = errors
            .and_then(|e| e[i].as_str())
            .filter(|e| !e.trim().is_empty());
        let gaps_ms: Vec<f64> = match itls.map(|a| &a[i]) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(g)) => g
                .iter()
                .map(|x| {
                    num(x)
                        .map(|s| s * 1e3)
                        .ok_or_else(|| bad("itls", format!("request {i}: not a number")))
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(bad("itls", format!("request {i}: expected an array"))),
        };
        let ttft_ms = num(&ttfts[i]).filter(|t| *t > 0.0).map(|s| s * 1e3);
        let e2e_ms = e2els
            .and_then(|a| num(&a[i]))
            .filter(|e| *e > 0.0)
            .map(|s| s * 1e3)
            .or_else(|| ttft_ms.map(|t| t + gaps_ms.iter().sum::<f64>()));
        let output_tokens = output_lens
            .and_then(|a| a[i].as_u64())
            .unwrap_or(gaps_ms.len() as u64 + u64::from(ttft_ms.is_some()));
        let outcome = match error {
            Some(e) => Outcome::StreamError {
                message: format!("{tool} recorded: {}", e.trim()),
            },
            None if ttft_ms.is_none() => Outcome::StreamError {
                message: format!("{tool} recorded no first token"),
            },
            None => Outcome::Ok,
        };
        let m = Measured {
            ttft_ms,
            e2e_ms,
            gaps_ms,
            output_tokens,
            prompt_tokens: input_lens.and_then(|a| a[i].as_u64()),
            text: texts
                .and_then(|a| a[i].as_str())
                .unwrap_or_default()
                .to_owned(),
            ..Measured::default()
        };
        requests.push(record(first_index + i, group, level, 0.0, outcome, m));
    }
    Ok(requests)
}

/// The load of a run as a group label and level: concurrency first, then request rate.
fn load_group(
    concurrency: Option<f64>,
    rate: Option<f64>,
    fallback: &str,
) -> (String, Option<f64>) {
    match (concurrency, rate) {
        (Some(c), _) => (format!("c={c}"), Some(c)),
        (None, Some(r)) => (format!("rate={r}/s"), Some(r)),
        _ => (fallback.to_owned(), None),
    }
}

fn vllm(v: &Value) -> Result<Report, ImportError> {
    let concurrency = v.get("max_concurrency").and_then(num);
    let rate = v.get("request_rate").and_then(num);
    let (group, level) = load_group(concurrency, rate, "vllm bench");
    let requests = ttfts_itls_requests(v, &group, level, 0, "vLLM bench")?;
    let model = v.get("model_id").and_then(Value::as_str).unwrap_or("?");
    let endpoint = EndpointInfo {
        base_url: v
            .get("backend")
            .and_then(Value::as_str)
            .map(|b| format!("vllm bench ({b})"))
            .unwrap_or_else(|| "vllm bench".into()),
        model: model.to_owned(),
        dialect: None,
    };
    let title = format!(
        "vLLM bench · {model}{}",
        v.get("date")
            .and_then(Value::as_str)
            .map(|d| format!(" · {d}"))
            .unwrap_or_default()
    );
    Ok(Report::new(title, endpoint, "imported_vllm")
        .with_settings(serde_json::json!({ "imported_from": "vllm bench serve", "max_concurrency": concurrency, "request_rate": rate }))
        .with_requests(requests))
}
