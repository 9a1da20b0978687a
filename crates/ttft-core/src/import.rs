//! Reading result files: the studio's own report JSON, `vllm bench serve --save-result
//! --save-detailed` JSON and GuideLLM benchmark JSON, so runs from other tools can be compared
//! in the studio.
//!
//! Imported runs keep what the tool measured and nothing more: vLLM records per-chunk gaps (its
//! "ITL" is per arrival, so a chunk carrying several tokens is flagged as coalesced, not split);
//! GuideLLM records a mean inter-token latency per request, which is our TPOT, and no gaps.
//! Tool timings are taken on the client machine of that tool, not in a browser.

use serde_json::Value;
use thiserror::Error;

use crate::metrics::{RequestMetrics, TokenSource};
use crate::report::file::{self, ReportFileError};
use crate::report::{EndpointInfo, Report, RequestRecord};
use crate::timeline::Outcome;

/// Why a file could not be imported.
#[derive(Debug, Error, PartialEq)]
pub enum ImportError {
    /// Not JSON at all.
    #[error("the file is not JSON ({0}); export a report JSON, or a vLLM / GuideLLM result file")]
    NotJson(String),
    /// JSON, but no known shape.
    #[error(
        "unrecognised JSON: expected a ttft-studio report, a `vllm bench serve --save-result --save-detailed` file or a GuideLLM benchmarks file"
    )]
    UnknownFormat,
    /// A vLLM file without per-request data.
    #[error(
        "this vLLM result has only summary figures; re-run `vllm bench serve` with `--save-result --save-detailed` to keep per-request TTFT and ITL"
    )]
    NoPerRequestData,
    /// A field has the wrong type or length.
    #[error("field `{field}`: {problem}")]
    BadField {
        /// The field.
        field: String,
        /// What is wrong.
        problem: String,
    },
    /// A studio report that cannot be read (damaged, or a newer format).
    #[error("{0}")]
    Report(#[from] ReportFileError),
    /// A GuideLLM file with no requests.
    #[error("the file holds no requests")]
    Empty,
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
}

/// Reads a result file into one or more reports.
pub fn import(text: &str) -> Result<(Format, Vec<Report>), ImportError> {
    let v: Value = serde_json::from_str(text).map_err(|e| ImportError::NotJson(e.to_string()))?;
    let Some(obj) = v.as_object() else {
        return Err(ImportError::UnknownFormat);
    };
    if file::looks_like_report(obj) {
        return Ok((Format::Studio, vec![file::read_value(v)?]));
    }
    if obj.contains_key("benchmarks") {
        return guidellm(&v).map(|r| (Format::GuideLlm, r));
    }
    if obj.contains_key("ttfts")
        || obj.contains_key("median_ttft_ms")
        || obj.contains_key("mean_ttft_ms")
    {
        return vllm(&v).map(|r| (Format::Vllm, vec![r]));
    }
    Err(ImportError::UnknownFormat)
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
struct Measured {
    ttft_ms: Option<f64>,
    e2e_ms: Option<f64>,
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
            ttfb_ms: None,
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
    }
}

fn vllm(v: &Value) -> Result<Report, ImportError> {
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
    let concurrency = v.get("max_concurrency").and_then(num);
    let rate = v.get("request_rate").and_then(num);
    let (group, level) = match (concurrency, rate) {
        (Some(c), _) => (format!("c={c}"), Some(c)),
        (None, Some(r)) => (format!("rate={r}/s"), Some(r)),
        _ => ("vllm bench".to_owned(), None),
    };
    let model = v.get("model_id").and_then(Value::as_str).unwrap_or("?");
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
                message: format!("vLLM bench recorded: {}", e.trim()),
            },
            None if ttft_ms.is_none() => Outcome::StreamError {
                message: "vLLM bench recorded no first token".into(),
            },
            None => Outcome::Ok,
        };
        let m = Measured {
            ttft_ms,
            e2e_ms,
            gaps_ms,
            tpot_ms: None,
            output_tokens,
            prompt_tokens: input_lens.and_then(|a| a[i].as_u64()),
            text: texts
                .and_then(|a| a[i].as_str())
                .unwrap_or_default()
                .to_owned(),
        };
        requests.push(record(i, &group, level, 0.0, outcome, m));
    }
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

/// The strategy of a GuideLLM benchmark: label and level.
fn guidellm_strategy(b: &Value, index: usize) -> (String, Option<f64>) {
    let strategy = b
        .pointer("/args/strategy")
        .or_else(|| b.pointer("/config/strategy"))
        .or_else(|| b.get("strategy"));
    let Some(s) = strategy else {
        return (format!("benchmark {}", index + 1), None);
    };
    let kind = s
        .get("type_")
        .or_else(|| s.get("type"))
        .and_then(Value::as_str)
        .unwrap_or("benchmark");
    if let Some(c) = s.get("streams").and_then(num) {
        (format!("c={c}"), Some(c))
    } else if let Some(r) = s.get("rate").and_then(num) {
        (format!("{kind} {r}/s"), Some(r))
    } else {
        (kind.to_owned(), None)
    }
}

fn guidellm(v: &Value) -> Result<Vec<Report>, ImportError> {
    let benchmarks = array(v, "benchmarks")?.ok_or(ImportError::UnknownFormat)?;
    let mut requests = Vec::new();
    let mut model = None;
    let mut t_min = f64::INFINITY;
    // (group, level, start time in s, outcome, measurements)
    type Row = (String, Option<f64>, Option<f64>, Outcome, Measured);
    let mut rows: Vec<Row> = Vec::new();
    for (bi, b) in benchmarks.iter().enumerate() {
        let (group, level) = guidellm_strategy(b, bi);
        let Some(reqs) = b.get("requests") else {
            continue;
        };
        model = model.or_else(|| {
            b.pointer("/args/model")
                .or_else(|| b.pointer("/config/model"))
                .or_else(|| b.pointer("/worker/backend_model"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        });
        for (status, list) in [
            ("successful", "ok"),
            ("errored", "error"),
            ("incomplete", "incomplete"),
        ] {
            let Some(items) = array(reqs, status)? else {
                continue;
            };
            for r in items {
                let f = |k: &str| r.get(k).and_then(num);
                let start_s = f("start_time")
                    .or_else(|| r.pointer("/info/timings/request_start").and_then(num));
                let ttft_ms = f("time_to_first_token_ms")
                    .or_else(|| Some((f("first_token_time")? - start_s?) * 1e3));
                let e2e_ms = f("request_latency")
                    .map(|s| s * 1e3)
                    .or_else(|| Some((f("end_time")? - start_s?) * 1e3));
                if let Some(s) = start_s {
                    t_min = t_min.min(s);
                }
                let outcome = match list {
                    "ok" => Outcome::Ok,
                    "error" => Outcome::StreamError {
                        message: format!(
                            "GuideLLM recorded an error: {}",
                            r.get("error")
                                .and_then(Value::as_str)
                                .unwrap_or("no message")
                        ),
                    },
                    _ => Outcome::Aborted {
                        message: "GuideLLM recorded the request as incomplete".into(),
                    },
                };
                let m = Measured {
                    ttft_ms,
                    e2e_ms,
                    gaps_ms: Vec::new(),
                    tpot_ms: f("inter_token_latency_ms").or_else(|| f("time_per_output_token_ms")),
                    output_tokens: r.get("output_tokens").and_then(Value::as_u64).unwrap_or(0),
                    prompt_tokens: r.get("prompt_tokens").and_then(Value::as_u64),
                    text: r
                        .get("output")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                };
                rows.push((group.clone(), level, start_s, outcome, m));
            }
        }
    }
    if rows.is_empty() {
        return Err(ImportError::Empty);
    }
    for (i, (group, level, start_s, outcome, m)) in rows.into_iter().enumerate() {
        let start_ms = start_s.map_or(0.0, |s| (s - t_min) * 1e3);
        requests.push(record(i, &group, level, start_ms, outcome, m));
    }
    let model = model.unwrap_or_else(|| "?".into());
    let endpoint = EndpointInfo {
        base_url: "guidellm".into(),
        model: model.clone(),
        dialect: None,
    };
    Ok(vec![
        Report::new(format!("GuideLLM · {model}"), endpoint, "imported_guidellm")
            .created_at(if t_min.is_finite() { t_min * 1e3 } else { 0.0 })
            .with_settings(
                serde_json::json!({ "imported_from": "guidellm", "benchmarks": benchmarks.len() }),
            )
            .with_requests(requests),
    ])
}
