//! Export of a run as llm-d Benchmark Reports, schema version 0.2 (`llm-d-benchmark`'s
//! `llmdbenchmark/analysis/benchmark_report/schema_v0_2.py`): one report per load point (group)
//! of the run, as JSON, which the schema's readers take as YAML too.
//!
//! A report carries what the run measured and nothing else: `run` (ids from the run's identity,
//! times when the run has a start time), `scenario.load` (the tool, the load level, input and
//! output lengths from the requests' token counts — left out when no request has a prompt count,
//! which the schema requires), and `results.request_performance.aggregate`: request counts, TTFT /
//! ITL / TPOT / normalised TPOT / E2E statistics from the successful requests (mean, min, max and
//! percentiles, type 7 as the studio computes them), and throughputs over the load point's span
//! when the requests' send times are known. The time to second token and the per-user output and
//! prefill rates are not written: the schema has no field that means them (its models forbid other
//! fields). Its `latency` holds TTFT, NTPOT, TPOT, ITL and request latency only, and its
//! `throughput` rates (`input_token_rate`, `output_token_rate`, …) are the load point's, tokens
//! over its span, not one user's; llm-d's own analysis derives its "throughput per user" as 1 /
//! the mean `time_per_output_token`, which is written. No stack is described (the studio does not
//! know the server's hardware), and no API key, header, credential in the URL or free-text setting
//! is written: the endpoint is its origin and path, the settings a list of named numbers and
//! words.

use serde_json::{Map, Value, json};
use thiserror::Error;

use crate::metrics::TokenSource;
use crate::report::{Report, RequestRecord};
use crate::scenario::ScenarioKind;
use crate::stats::{percentile_sorted, sorted};
use crate::timeline::Outcome;

/// The scenario id rate runs of older studios carry (no kind of today's: a rate is a setting).
const OLDER_RATE_SCENARIO: &str = "rate";

/// The schema version written.
pub const VERSION: &str = "0.2";

/// Why a run cannot be exported.
#[derive(Debug, Error, PartialEq)]
pub enum LlmdError {
    /// Nothing to report.
    #[error(
        "the run has no measured requests (warm-up requests are not reported); run it, or import a file with requests, before exporting an llm-d report"
    )]
    NoRequests,
}

/// One load point's report.
#[derive(Debug, Clone, PartialEq)]
pub struct StageReport {
    /// The run's group the report describes (`c=8`), which is its `stage` in order of load.
    pub group: String,
    /// The report, JSON text.
    pub json: String,
}

/// The run's reports, one per group in order of load level (the `stage` index), each a
/// self-contained llm-d Benchmark Report v0.2. Reports of one run share their experiment id
/// (`run.eid`).
pub fn benchmark_reports(report: &Report) -> Result<Vec<StageReport>, LlmdError> {
    let mut groups: Vec<(&str, Option<f64>)> = Vec::new();
    for r in report.measured() {
        if !groups.iter().any(|(g, _)| *g == r.group) {
            groups.push((&r.group, r.level));
        }
    }
    if groups.is_empty() {
        return Err(LlmdError::NoRequests);
    }
    groups.sort_by(|a, b| a.1.unwrap_or(f64::MAX).total_cmp(&b.1.unwrap_or(f64::MAX)));
    Ok(groups
        .iter()
        .enumerate()
        .map(|(stage, (g, _))| StageReport {
            group: (*g).to_owned(),
            json: serde_json::to_string_pretty(&stage_report(report, g, stage)).unwrap_or_default(),
        })
        .collect())
}

/// A 128-bit FNV-1a-style id of some text, as 32 hex digits.
fn id(parts: &[&str]) -> String {
    let mut out = String::new();
    for seed in [0xcbf2_9ce4_8422_2325u64, 0x6c62_272e_07bb_0142u64] {
        let mut h = seed;
        for p in parts {
            for b in p.bytes().chain([0xff]) {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
        out.push_str(&format!("{h:016x}"));
    }
    out
}

/// Unix ms as ISO-8601 UTC (`2026-12-01T04:41:37.123Z`).
pub(crate) fn iso8601(unix_ms: f64) -> String {
    let ms = unix_ms.round() as i64;
    let (days, rem) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000
    )
}

/// The schema's `Statistics` of a sample, `None` when it is empty.
fn statistics(values: &[f64], units: &str) -> Option<Value> {
    let s = sorted(values);
    if s.is_empty() {
        return None;
    }
    let n = s.len() as f64;
    let mean = s.iter().sum::<f64>() / n;
    let var = s.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
    let p = |q: f64| percentile_sorted(&s, q);
    Some(json!({
        "units": units,
        "mean": mean,
        "stddev": var.sqrt(),
        "min": s[0],
        "p0p1": p(0.1),
        "p1": p(1.0),
        "p5": p(5.0),
        "p10": p(10.0),
        "p25": p(25.0),
        "p50": p(50.0),
        "p75": p(75.0),
        "p90": p(90.0),
        "p95": p(95.0),
        "p99": p(99.0),
        "p99p9": p(99.9),
        "max": s[s.len() - 1],
    }))
}

/// The schema's `SequenceLength` of token counts: `fixed` when all are equal, otherwise
/// `other` with the mean, minimum and maximum (the studio does not know the distribution the
/// load drew from).
fn sequence_length(counts: &[u64]) -> Option<Value> {
    let (min, max) = (*counts.iter().min()?, *counts.iter().max()?);
    if min == max {
        return Some(json!({ "distribution": "fixed", "value": min }));
    }
    let mean = counts.iter().sum::<u64>() as f64 / counts.len() as f64;
    Some(json!({ "distribution": "other", "value": mean, "min": min, "max": max }))
}

/// `scheme://host[:port]/path` of a URL: no user, password, query or fragment (where keys
/// travel). Text that is not a URL is kept only when it has none of those marks.
fn safe_endpoint(url: &str) -> Option<String> {
    let cut = |s: &str| -> String { s.split(['?', '#']).next().unwrap_or_default().to_owned() };
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let rest = cut(rest);
            let (authority, path) = match rest.find('/') {
                Some(i) => (&rest[..i], &rest[i..]),
                None => (rest.as_str(), ""),
            };
            let host = authority.rsplit('@').next().unwrap_or_default();
            Some(format!("{scheme}://{host}{path}"))
        }
        None => (!url.contains(['@', '?', '=', '#']) && !looks_secret(url)).then(|| url.to_owned()),
    }
}

/// Whether a word looks like a credential.
fn looks_secret(s: &str) -> bool {
    let l = s.to_ascii_lowercase();
    [
        "sk-",
        "bearer",
        "api_key",
        "apikey",
        "api-key",
        "token",
        "secret",
        "password",
        "authorization",
    ]
    .iter()
    .any(|m| l.contains(m))
}

/// Settings worth a reader's look, by name: numbers, switches and short words only.
const SETTINGS: [&str; 30] = [
    "kind",
    "requests",
    "concurrency",
    "warmup",
    "max_tokens",
    "temperature",
    "seed",
    "levels",
    "prompt_levels",
    "rounds",
    "rate_per_s",
    "timeout_s",
    "ignore_eos",
    "continuous_usage",
    "use_tools",
    "imported_from",
    "max_concurrency",
    "request_rate",
    "benchmarks",
    "export",
    "backend",
    "dataset_name",
    "task",
    "traffic_scenario",
    "server_engine",
    "server_version",
    "server_gpu_type",
    "server_gpu_count",
    "guidellm_version",
    "aiperf_version",
];

fn safe_setting(v: &Value) -> Option<Value> {
    match v {
        Value::Bool(_) | Value::Number(_) => Some(v.clone()),
        Value::String(s) if s.len() <= 80 && !looks_secret(s) => Some(v.clone()),
        Value::Array(a) => {
            let kept: Vec<Value> = a.iter().filter_map(safe_setting).collect();
            (kept.len() == a.len() && !kept.is_empty()).then_some(Value::Array(kept))
        }
        _ => None,
    }
}

/// The load generator: the importing tool's, or the studio's own.
fn tool(report: &Report) -> (String, String) {
    let imported = report.settings.get("imported_from").and_then(Value::as_str);
    match imported {
        Some(t) => {
            let version = report
                .source_summary
                .as_ref()
                .and_then(|s| s.tool.rsplit_once(' ').map(|(_, v)| v.to_owned()))
                .filter(|v| v.chars().next().is_some_and(|c| c.is_ascii_digit()))
                .unwrap_or_else(|| "unknown".into());
            (t.to_owned(), version)
        }
        None => ("ttft-studio".into(), env!("CARGO_PKG_VERSION").into()),
    }
}

fn stage_report(report: &Report, group: &str, stage: usize) -> Value {
    let members: Vec<&RequestRecord> = report.measured().filter(|r| r.group == group).collect();
    let ok: Vec<&RequestRecord> = members
        .iter()
        .copied()
        .filter(|r| r.outcome.is_ok())
        .collect();
    let level = members.first().and_then(|r| r.level);
    let incomplete = members
        .iter()
        .filter(|r| {
            matches!(
                r.outcome,
                Outcome::Aborted { .. } | Outcome::CutByClient { .. } | Outcome::Timeout { .. }
            )
        })
        .count();
    let failures = members.len() - ok.len() - incomplete;
    let counted: Vec<&RequestRecord> = ok
        .iter()
        .copied()
        .filter(|r| r.metrics.token_source != TokenSource::Estimate)
        .collect();
    let prompts: Vec<u64> = ok.iter().filter_map(|r| r.metrics.prompt_tokens).collect();
    let outputs: Vec<u64> = counted.iter().map(|r| r.metrics.output_tokens).collect();
    let f = |g: &dyn Fn(&RequestRecord) -> Option<f64>| -> Vec<f64> {
        ok.iter().filter_map(|r| g(r)).collect()
    };
    let mut itl = Vec::new();
    for r in &ok {
        r.metrics.extend_per_token_itl(&mut itl);
    }
    let ntpot: Vec<f64> = counted
        .iter()
        .filter_map(|r| {
            let e = r.metrics.e2e_ms?;
            (r.metrics.output_tokens > 0).then(|| e / r.metrics.output_tokens as f64)
        })
        .collect();

    // Send times are known unless every request of several starts at 0 (SGLang, vLLM,
    // genai-bench files keep none).
    let times_known = members.len() == 1 || members.iter().any(|r| r.start_ms != 0.0);
    let (start, end) = crate::run_stats::wall_span(members.iter().copied());
    let span_s = (times_known && end > start).then(|| (end - start) / 1e3);

    let mut requests = Map::new();
    requests.insert("total".into(), json!(members.len()));
    requests.insert("failures".into(), json!(failures));
    requests.insert("incomplete".into(), json!(incomplete));
    let prompt_f: Vec<f64> = prompts.iter().map(|x| *x as f64).collect();
    let output_f: Vec<f64> = outputs.iter().map(|x| *x as f64).collect();
    if let Some(s) = statistics(&prompt_f, "count") {
        requests.insert("input_length".into(), s);
    }
    if let Some(s) = statistics(&output_f, "count") {
        requests.insert("output_length".into(), s);
    }

    let mut latency = Map::new();
    let metrics: [(&str, Vec<f64>, &str); 5] = [
        ("time_to_first_token", f(&|r| r.metrics.ttft_ms), "ms"),
        ("inter_token_latency", itl, "ms/token"),
        (
            "time_per_output_token",
            f(&|r| r.metrics.tpot_ms),
            "ms/token",
        ),
        ("normalized_time_per_output_token", ntpot, "ms/token"),
        ("request_latency", f(&|r| r.metrics.e2e_ms), "ms"),
    ];
    for (name, values, units) in metrics {
        if let Some(s) = statistics(&values, units) {
            latency.insert(name.into(), s);
        }
    }

    let mut throughput = Map::new();
    if let Some(span) = span_s {
        throughput.insert(
            "request_rate".into(),
            json!({ "units": "queries/s", "mean": ok.len() as f64 / span }),
        );
        if !outputs.is_empty() && counted.len() == ok.len() {
            let out: u64 = outputs.iter().sum();
            throughput.insert(
                "output_token_rate".into(),
                json!({ "units": "tokens/s", "mean": out as f64 / span }),
            );
            if prompts.len() == ok.len() {
                let inp: u64 = prompts.iter().sum();
                throughput.insert(
                    "input_token_rate".into(),
                    json!({ "units": "tokens/s", "mean": inp as f64 / span }),
                );
                throughput.insert(
                    "total_token_rate".into(),
                    json!({ "units": "tokens/s", "mean": (inp + out) as f64 / span }),
                );
            }
        }
    }

    let mut aggregate = Map::new();
    aggregate.insert("requests".into(), Value::Object(requests));
    if !latency.is_empty() {
        aggregate.insert("latency".into(), Value::Object(latency));
    }
    if !throughput.is_empty() {
        aggregate.insert("throughput".into(), Value::Object(throughput));
    }

    let created = format!("{}", report.created_unix_ms);
    let mut run = Map::new();
    run.insert(
        "uid".into(),
        json!(id(&[
            &report.title,
            &created,
            group,
            &members.len().to_string()
        ])),
    );
    run.insert("eid".into(), json!(id(&[&report.title, &created])));
    if report.created_unix_ms > 0.0 && start.is_finite() {
        let t0 = report.created_unix_ms + if times_known { start } else { 0.0 };
        let mut time = Map::new();
        time.insert("start".into(), json!(iso8601(t0)));
        if let Some(span) = span_s {
            time.insert("end".into(), json!(iso8601(t0 + span * 1e3)));
            time.insert("duration".into(), json!(format!("PT{span}S")));
        }
        run.insert("time".into(), Value::Object(time));
    }
    run.insert("description".into(), json!(report.title));
    run.insert("keywords".into(), json!(["ttft-studio", report.scenario]));

    let mut out = Map::new();
    out.insert("version".into(), json!(VERSION));
    out.insert("run".into(), Value::Object(run));
    if let Some(load) = load(report, group, stage, level, &prompts, &outputs) {
        out.insert("scenario".into(), json!({ "load": load }));
    }
    out.insert(
        "results".into(),
        json!({ "request_performance": { "aggregate": Value::Object(aggregate) } }),
    );
    Value::Object(out)
}

/// The `scenario.load` section; `None` without prompt token counts (`input_seq_len` is
/// required by the schema, and is not made up).
fn load(
    report: &Report,
    group: &str,
    stage: usize,
    level: Option<f64>,
    prompts: &[u64],
    outputs: &[u64],
) -> Option<Value> {
    let input = sequence_length(prompts)?;
    let (tool, version) = tool(report);
    let mut standardized = Map::new();
    standardized.insert("tool".into(), json!(tool));
    standardized.insert("tool_version".into(), json!(version));
    standardized.insert("source".into(), json!("unknown"));
    standardized.insert("stage".into(), json!(stage));
    standardized.insert("input_seq_len".into(), input);
    if let Some(o) = sequence_length(outputs) {
        standardized.insert("output_seq_len".into(), o);
    }
    let settings_concurrency = report
        .settings
        .get("concurrency")
        .and_then(Value::as_f64)
        .filter(|_| {
            matches!(
                report.scenario_kind(),
                Some(
                    ScenarioKind::Chat
                        | ScenarioKind::AgentJson
                        | ScenarioKind::MultiTurn
                        | ScenarioKind::SharedPrefix
                )
            )
        });
    let concurrency = if group.starts_with("c=") { level } else { None }.or(settings_concurrency);
    if let Some(c) = concurrency.filter(|c| *c >= 1.0 && c.fract() == 0.0) {
        standardized.insert("concurrency".into(), json!(c as u64));
    }
    let rate = if group.contains("/s") { level } else { None }.or_else(|| {
        (report.scenario == OLDER_RATE_SCENARIO)
            .then(|| report.settings.get("rate_per_s").and_then(Value::as_f64))
            .flatten()
    });
    if let Some(r) = rate.filter(|r| *r > 0.0 && r.is_finite()) {
        standardized.insert("rate_qps".into(), json!(r));
    }
    let mut config = Map::new();
    // `?` is how an import says the file did not name the model.
    let model = report.endpoint.model.as_str();
    if !model.is_empty() && model != "?" {
        config.insert("model".into(), json!(model));
    }
    if let Some(e) = safe_endpoint(&report.endpoint.base_url) {
        config.insert("endpoint".into(), json!(e));
    }
    if let Some(d) = report.endpoint.dialect {
        config.insert("api".into(), json!(d.id()));
    }
    config.insert("scenario".into(), json!(report.scenario));
    config.insert("group".into(), json!(group));
    if let Some(s) = report.settings.as_object() {
        let mut kept = Map::new();
        for k in SETTINGS {
            if let Some(v) = s.get(k).and_then(safe_setting) {
                kept.insert(k.into(), v);
            }
        }
        if !kept.is_empty() {
            config.insert("settings".into(), Value::Object(kept));
        }
    }
    Some(json!({
        "metadata": {
            "schema_version": "0.0.1",
            "description": format!("{} · {group}", report.title),
        },
        "standardized": Value::Object(standardized),
        "native": { "config": Value::Object(config) },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc_iso8601() {
        assert_eq!(iso8601(0.0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(1_796_100_097_515.0), "2026-12-01T04:41:37.515Z");
        assert_eq!(iso8601(951_782_400_000.0), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn endpoints_lose_credentials() {
        assert_eq!(
            safe_endpoint("https://me:sk-secret@api.example.com:8443/v1?api_key=sk-x#f").as_deref(),
            Some("https://api.example.com:8443/v1")
        );
        assert_eq!(safe_endpoint("guidellm").as_deref(), Some("guidellm"));
        assert_eq!(safe_endpoint("key=sk-abc"), None);
    }

    #[test]
    fn sequence_lengths() {
        assert_eq!(
            sequence_length(&[5, 5]),
            Some(json!({ "distribution": "fixed", "value": 5 }))
        );
        assert_eq!(
            sequence_length(&[4, 8]),
            Some(json!({ "distribution": "other", "value": 6.0, "min": 4, "max": 8 }))
        );
        assert_eq!(sequence_length(&[]), None);
    }
}
