//! NVIDIA AIPerf's per-request exports, one JSON line per request:
//!
//! - `profile_export.jsonl` (`--export-level records`, the default): `metadata` (phase,
//!   `request_start_ns` on the wall clock, cancellation), `metrics` (each `{value, unit}`:
//!   `time_to_first_token`, `request_latency`, `inter_chunk_latency` — the gaps between content
//!   chunks —, sequence lengths), `error`, and with `--export-http-trace` a `trace_data` object
//!   (send start, headers received, and `response_chunks` as `[wall ns, bytes]` when AIPerf
//!   collected them).
//! - `profile_export_raw.jsonl` (`--export-level raw`): every SSE message of each request with
//!   its `perf_ns` stamp, the request's `start_perf_ns`, its status and payload.
//!
//! Per-chunk times are kept: the records' `inter_chunk_latency`, or the raw messages' stamps
//! (messages of one read share a stamp and become one arrival), or, when a record has neither
//! but its HTTP trace has `response_chunks`, the trace's socket reads (said in the report's
//! notes). Warm-up requests are kept as warm-up. Request headers in the files are never read.
//! The aggregate export `profile_export_aiperf.json`, when given beside them, is kept as the
//! report's [`SourceSummary`](super::SourceSummary).

use serde_json::Value;

use super::summary::{Builder, Metric, Stat, same_method};
use super::{Format, ImportError, Measured, num, record};
use crate::report::{EndpointInfo, Report, RequestRecord};
use crate::timeline::Outcome;

/// Whether a JSON object is one line of an AIPerf per-request export.
pub(super) fn is_line(v: &Value) -> bool {
    let meta = v.get("metadata");
    meta.is_some_and(|m| {
        m.get("benchmark_phase").is_some()
            || m.get("request_start_ns").is_some()
            || m.get("x_request_id").is_some()
    }) && (v.get("metrics").is_some() || v.get("responses").is_some() || v.get("error").is_some())
}

/// Which of the two exports a line comes from.
pub(super) fn format_of(v: &Value) -> Format {
    if v.get("responses").is_some() && v.get("start_perf_ns").is_some() {
        Format::AiperfRaw
    } else {
        Format::AiperfRecords
    }
}

/// A `{value, unit}` metric of a record in ms (AIPerf writes display units: `ms`, `sec`, `ns`).
fn ms(value: f64, unit: &str) -> f64 {
    match unit {
        "s" | "sec" | "secs" | "seconds" => value * 1e3,
        "us" | "µs" => value / 1e3,
        "ns" => value / 1e6,
        _ => value,
    }
}

fn metric<'a>(line: &'a Value, name: &str) -> Option<(&'a Value, &'a str)> {
    let m = line.pointer(&format!("/metrics/{name}"))?;
    Some((
        m.get("value")?,
        m.get("unit").and_then(Value::as_str).unwrap_or("ms"),
    ))
}

fn metric_ms(line: &Value, name: &str) -> Option<f64> {
    let (v, unit) = metric(line, name)?;
    num(v).map(|x| ms(x, unit))
}

fn metric_count(line: &Value, names: &[&str]) -> Option<u64> {
    names
        .iter()
        .find_map(|n| metric(line, n).and_then(|(v, _)| num(v)))
        .map(|x| x.round() as u64)
}

/// How a request ended, from its `error`, `was_cancelled` and HTTP status.
fn outcome(line: &Value) -> Outcome {
    if let Some(e) = line.get("error").filter(|e| !e.is_null()) {
        let message = e
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("no message")
            .to_owned();
        let code = e.get("code").and_then(Value::as_u64);
        return match code {
            Some(status @ 100..=599) => Outcome::HttpError {
                status: status as u16,
                message: format!("AIPerf recorded: {message}"),
            },
            _ => Outcome::StreamError {
                message: format!(
                    "AIPerf recorded {}: {message}",
                    e.get("type").and_then(Value::as_str).unwrap_or("an error")
                ),
            },
        };
    }
    if line
        .pointer("/metadata/was_cancelled")
        .and_then(Value::as_bool)
        .unwrap_or(false)
    {
        return Outcome::CutByClient {
            message: "AIPerf cancelled the request (the client's own cancellation)".into(),
        };
    }
    if let Some(status) = line.get("status").and_then(Value::as_u64)
        && !(200..300).contains(&status)
    {
        return Outcome::HttpError {
            status: status as u16,
            message: format!("AIPerf recorded HTTP {status}"),
        };
    }
    Outcome::Ok
}

fn is_warmup(line: &Value) -> bool {
    ["/metadata/benchmark_phase", "/metadata/phase_kind"]
        .iter()
        .any(|p| line.pointer(p).and_then(Value::as_str) == Some("warmup"))
}

/// One line of `profile_export.jsonl`; the flag says whether its per-chunk times are the HTTP
/// trace's socket reads.
fn from_record(line: &Value) -> Result<(Measured, bool), ImportError> {
    let mut gaps_ms = Vec::new();
    if let Some((v, unit)) = metric(line, "inter_chunk_latency") {
        let list = v
            .as_array()
            .ok_or_else(|| super::bad("metrics.inter_chunk_latency.value", "expected an array"))?;
        for g in list {
            let g = num(g)
                .ok_or_else(|| super::bad("metrics.inter_chunk_latency.value", "not a number"))?;
            gaps_ms.push(ms(g, unit));
        }
    }
    let trace = line.get("trace_data");
    let send_ns = trace
        .and_then(|t| t.get("request_send_start_ns"))
        .and_then(Value::as_f64);
    let mut from_trace = false;
    if gaps_ms.is_empty()
        && let (Some(chunks), Some(_)) = (
            trace
                .and_then(|t| t.get("response_chunks"))
                .and_then(Value::as_array),
            send_ns,
        )
    {
        let stamps: Vec<f64> = chunks
            .iter()
            .filter_map(|c| c.get(0).and_then(Value::as_f64))
            .collect();
        if stamps.len() > 1 {
            gaps_ms = stamps.windows(2).map(|w| (w[1] - w[0]) / 1e6).collect();
            from_trace = true;
        }
    }
    let ttfb_ms = trace
        .and_then(|t| t.get("response_headers_received_ns"))
        .and_then(Value::as_f64)
        .zip(send_ns)
        .map(|(h, s)| (h - s) / 1e6)
        .filter(|t| *t >= 0.0);
    let ttft_ms = metric_ms(line, "time_to_first_token");
    let output_tokens = metric_count(
        line,
        &[
            "output_sequence_length",
            "output_token_count",
            "usage_completion_tokens",
        ],
    )
    .unwrap_or(gaps_ms.len() as u64 + u64::from(ttft_ms.is_some()));
    Ok((
        Measured {
            ttfb_ms,
            ttft_ms,
            e2e_ms: metric_ms(line, "request_latency"),
            gaps_ms,
            output_tokens,
            prompt_tokens: metric_count(line, &["input_sequence_length", "usage_prompt_tokens"]),
            ..Measured::default()
        },
        from_trace,
    ))
}

/// The text an SSE `data:` message carries: chat `delta.content`, completions `text`.
fn message_text(data: &str) -> Option<(String, Value)> {
    let v: Value = serde_json::from_str(data).ok()?;
    let choice = v.pointer("/choices/0");
    let text = choice
        .and_then(|c| c.pointer("/delta/content").or_else(|| c.get("text")))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    Some((text, v))
}

/// One line of `profile_export_raw.jsonl`: content arrivals from the messages' stamps.
fn from_raw(line: &Value) -> Result<(Measured, Option<String>), ImportError> {
    let start = line
        .get("start_perf_ns")
        .and_then(Value::as_f64)
        .ok_or_else(|| super::bad("start_perf_ns", "expected a number"))?;
    let responses = line
        .get("responses")
        .and_then(Value::as_array)
        .ok_or_else(|| super::bad("responses", "expected an array"))?;
    // (stamp ns, text) per arrival: messages of one read share a stamp.
    let mut arrivals: Vec<(f64, String)> = Vec::new();
    let (mut prompt_tokens, mut output_tokens, mut model) = (None, None, None);
    let mut last_ns = None;
    for r in responses {
        let Some(t) = r.get("perf_ns").and_then(Value::as_f64) else {
            continue;
        };
        last_ns = Some(t);
        let packets = r.get("packets").and_then(Value::as_array);
        let mut text = String::new();
        for p in packets.into_iter().flatten() {
            if p.get("name").and_then(Value::as_str) != Some("data") {
                continue;
            }
            let Some((t, v)) = p
                .get("value")
                .and_then(Value::as_str)
                .and_then(message_text)
            else {
                continue;
            };
            text.push_str(&t);
            if let Some(u) = v.get("usage").filter(|u| !u.is_null()) {
                prompt_tokens = u
                    .get("prompt_tokens")
                    .and_then(Value::as_u64)
                    .or(prompt_tokens);
                output_tokens = u
                    .get("completion_tokens")
                    .and_then(Value::as_u64)
                    .or(output_tokens);
            }
            if model.is_none() {
                model = v.get("model").and_then(Value::as_str).map(str::to_owned);
            }
        }
        if text.is_empty() {
            continue;
        }
        match arrivals.last_mut() {
            Some((at, so_far)) if *at == t => so_far.push_str(&text),
            _ => arrivals.push((t, text)),
        }
    }
    let ttft_ms = arrivals.first().map(|(t, _)| (t - start) / 1e6);
    let gaps_ms: Vec<f64> = arrivals
        .windows(2)
        .map(|w| (w[1].0 - w[0].0) / 1e6)
        .collect();
    let text: String = arrivals.iter().map(|(_, s)| s.as_str()).collect();
    Ok((
        Measured {
            ttft_ms,
            e2e_ms: last_ns.map(|t| (t - start) / 1e6),
            output_tokens: output_tokens.unwrap_or(arrivals.len() as u64),
            gaps_ms,
            prompt_tokens,
            text,
            ..Measured::default()
        },
        model.or_else(|| {
            line.pointer("/payload/model")
                .and_then(Value::as_str)
                .map(str::to_owned)
        }),
    ))
}

pub(super) fn import(
    lines: &[Value],
    format: Format,
    aggregate: Option<&Value>,
) -> Result<Report, ImportError> {
    let mut rows: Vec<(Option<f64>, bool, Outcome, Measured)> = Vec::new();
    let mut model = None;
    let mut trace_reads = 0usize;
    for line in lines {
        let (mut m, from_trace) = if format == Format::AiperfRaw {
            let (m, found) = from_raw(line)?;
            model = model.or(found);
            (m, false)
        } else {
            from_record(line)?
        };
        trace_reads += usize::from(from_trace);
        let mut outcome = outcome(line);
        if outcome.is_ok() && m.ttft_ms.is_none() {
            outcome = Outcome::StreamError {
                message: "AIPerf recorded no first token".into(),
            };
        }
        if !outcome.is_ok() && m.gaps_ms.is_empty() {
            m.e2e_ms = m.e2e_ms.filter(|e| *e > 0.0);
        }
        let start_ns = line
            .pointer("/metadata/request_start_ns")
            .and_then(Value::as_f64);
        rows.push((start_ns, is_warmup(line), outcome, m));
    }
    if rows.is_empty() {
        return Err(ImportError::Empty);
    }
    let t0 = rows
        .iter()
        .filter_map(|r| r.0)
        .fold(f64::INFINITY, f64::min);
    let mut requests: Vec<RequestRecord> = Vec::with_capacity(rows.len());
    let concurrency = aggregate
        .and_then(|a| a.pointer("/input_config/phases"))
        .and_then(Value::as_array)
        .and_then(|ps| {
            ps.iter()
                .find(|p| p.get("kind").and_then(Value::as_str) != Some("warmup"))
                .and_then(|p| p.get("concurrency"))
                .and_then(num)
        });
    let (group, level) = super::load_group(concurrency, None, "aiperf");
    for (i, (start_ns, warmup, outcome, m)) in rows.into_iter().enumerate() {
        let start_ms = start_ns.map_or(0.0, |s| (s - t0) / 1e6);
        let mut r = record(i, &group, level, start_ms, outcome, m);
        r.warmup = warmup;
        r.sent_epoch_ms = start_ns.map(|s| s / 1e6);
        requests.push(r);
    }
    let model = model
        .or_else(|| {
            aggregate
                .and_then(|a| a.pointer("/input_config/models/items/0/name"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "?".into());
    let version = aggregate
        .and_then(|a| a.get("aiperf_version"))
        .and_then(Value::as_str);
    let export = if format == Format::AiperfRaw {
        "profile_export_raw.jsonl"
    } else {
        "profile_export.jsonl"
    };
    let endpoint = EndpointInfo {
        base_url: "aiperf".into(),
        model: model.clone(),
        dialect: None,
    };
    let mut report = Report::new(format!("AIPerf · {model}"), endpoint, "imported_aiperf")
        .created_at(if t0.is_finite() { t0 / 1e6 } else { 0.0 })
        .with_settings(serde_json::json!({
            "imported_from": "aiperf",
            "aiperf_version": version,
            "export": export,
            "concurrency": concurrency,
        }))
        .with_requests(requests);
    if trace_reads > 0 {
        report.import_notes.push(format!(
            "{trace_reads} request(s) had no inter-chunk latencies: their per-chunk times are the HTTP trace's socket reads (`trace_data.response_chunks`), which may split or join SSE messages."
        ));
    }
    if let Some(a) = aggregate {
        let tool = match version {
            Some(v) => format!("AIPerf {v}"),
            None => "AIPerf".to_owned(),
        };
        report.source_summary = summary(&report, a, format).finish(tool);
    }
    Ok(report)
}

/// AIPerf's aggregate figures beside the studio's.
fn summary<'a>(report: &'a Report, aggregate: &Value, format: Format) -> Builder<'a> {
    let mut b = Builder::new(report);
    const METHOD: &str = "both interpolate linearly between neighbouring ranks (type 7; AIPerf's `metric_result_from_array`) over the profiling phase's successful requests, warm-up excluded";
    for (name, metric) in [
        ("time_to_first_token", Metric::Ttft),
        ("inter_chunk_latency", Metric::Itl),
        ("inter_token_latency", Metric::Tpot),
        ("request_latency", Metric::E2e),
    ] {
        let Some(m) = aggregate.get(name) else {
            continue;
        };
        let unit = m
            .get("unit")
            .and_then(Value::as_str)
            .unwrap_or("ms")
            .to_owned();
        let count = m.get("count").and_then(Value::as_u64);
        for (key, stat) in [
            ("p50", Stat::P(50.0)),
            ("avg", Stat::Mean),
            ("p90", Stat::P(90.0)),
            ("p95", Stat::P(95.0)),
            ("p99", Stat::P(99.0)),
        ] {
            let value = m.get(key).and_then(num).map(|v| ms(v, &unit));
            let unit = unit.clone();
            b.add(None, metric, stat, value, |values, our, file| {
                let n = values.len();
                let mut text = same_method(our, file, METHOD, || match count {
                    Some(c) if c as usize != n => format!(
                        "Different requests: AIPerf summarised {c} values, the studio {n} from the per-request file (AIPerf's aggregate counts what its record processors kept; a request missing from the file, or one the studio marks failed, is in one and not the other)."
                    ),
                    _ if format == Format::AiperfRaw => "Different stamps: the studio's times come from the raw export's message stamps (from send to the first non-empty content message, and between reads), AIPerf's from its own record processing of the same messages.".into(),
                    _ => "Same requests and method, different values: AIPerf's aggregate was computed before its display conversion and rounding of the per-request file.".into(),
                });
                if unit != "ms" {
                    text.push_str(&format!(" (AIPerf states it in {unit}; shown here in ms.)"));
                }
                text
            });
        }
    }
    b
}
