//! A genai-bench experiment folder: one JSON file per traffic scenario and load level
//! (`D16_10_text-to-text_num_concurrency_2_time_1s.json`), each with
//! `individual_request_metrics` (per request: `ttft`, `tpot`, `e2e_latency` in the file's
//! `_time_unit`, token counts, `error_code`, `error_message`) and `aggregated_metrics` (the
//! run's `stats` per metric: mean, p25…p99 by numpy's linear percentile over the successful
//! requests), plus `experiment_metadata.json` (model, server, the command line — which holds
//! the API key and is never read).
//!
//! genai-bench keeps no per-chunk times and no send times: each request has its TTFT, its mean
//! time per output token (our TPOT) and its latency; every request starts at 0. Each file is a
//! group of one report; the aggregated stats are kept as the report's
//! [`SourceSummary`](super::SourceSummary).

use serde_json::Value;

use super::summary::{Builder, Metric, Stat, same_method};
use super::{ImportError, Measured, array, num, record};
use crate::report::{EndpointInfo, Report, RequestRecord};
use crate::timeline::Outcome;

/// A time of the file in ms.
fn to_ms(v: f64, unit: &str) -> f64 {
    match unit {
        "ms" => v,
        _ => v * 1e3,
    }
}

/// The group of one scenario file: its load level, and its traffic scenario when the folder
/// has several.
fn group_of(agg: &Value, with_scenario: bool) -> (String, Option<f64>) {
    let kind = agg
        .get("iteration_type")
        .and_then(Value::as_str)
        .unwrap_or("num_concurrency");
    let (label, level) = if kind == "batch_size" {
        let b = agg.get("batch_size").and_then(num);
        (b.map(|b| format!("batch={b}")), b)
    } else {
        let c = agg.get("num_concurrency").and_then(num);
        (c.map(|c| format!("c={c}")), c)
    };
    let scenario = agg.get("scenario").and_then(Value::as_str);
    let label = match (label, scenario) {
        (Some(l), Some(s)) if with_scenario => format!("{s} {l}"),
        (Some(l), _) => l,
        (None, Some(s)) => s.to_owned(),
        (None, None) => "genai-bench".to_owned(),
    };
    (label, level)
}

pub(super) fn import(
    files: &[(&str, Value)],
    metadata: Option<&Value>,
) -> Result<Report, ImportError> {
    let scenarios: std::collections::BTreeSet<&str> = files
        .iter()
        .filter_map(|(_, v)| {
            v.pointer("/aggregated_metrics/scenario")
                .and_then(Value::as_str)
        })
        .collect();
    let with_scenario = scenarios.len() > 1;
    let mut ordered: Vec<(&str, &Value, String, Option<f64>)> = files
        .iter()
        .map(|(name, v)| {
            let agg = v.get("aggregated_metrics").unwrap_or(&Value::Null);
            let (g, l) = group_of(agg, with_scenario);
            (*name, v, g, l)
        })
        .collect();
    ordered.sort_by(|a, b| {
        a.3.unwrap_or(f64::MAX)
            .total_cmp(&b.3.unwrap_or(f64::MAX))
            .then_with(|| a.2.cmp(&b.2))
    });
    let warmup_ratio = metadata.and_then(|m| m.get("warmup_ratio")).and_then(num);
    let mut requests: Vec<RequestRecord> = Vec::new();
    let mut groups: Vec<(String, &Value, String)> = Vec::new();
    for (name, v, group, level) in &ordered {
        let unit = v
            .get("_time_unit")
            .and_then(Value::as_str)
            .unwrap_or("s")
            .to_owned();
        let items = array(v, "individual_request_metrics")
            .map_err(|e| in_file(name, e))?
            .ok_or_else(|| {
                in_file(
                    name,
                    super::bad(
                        "individual_request_metrics",
                        "missing: this genai-bench file has only aggregated metrics",
                    ),
                )
            })?;
        let warmups = warmup_ratio.map_or(0, |r| (items.len() as f64 * r) as usize);
        for (k, r) in items.iter().enumerate() {
            let f = |key: &str| r.get(key).and_then(num).map(|x| to_ms(x, &unit));
            let outcome = match r.get("error_code").filter(|c| !c.is_null()) {
                None => Outcome::Ok,
                Some(code) => {
                    let message = format!(
                        "genai-bench recorded: {}",
                        r.get("error_message")
                            .and_then(Value::as_str)
                            .unwrap_or("no message")
                    );
                    match code.as_u64() {
                        Some(s @ 100..=599) => Outcome::HttpError {
                            status: s as u16,
                            message,
                        },
                        _ => Outcome::StreamError { message },
                    }
                }
            };
            let m = Measured {
                ttft_ms: f("ttft"),
                e2e_ms: f("e2e_latency"),
                tpot_ms: f("tpot"),
                output_tokens: r
                    .get("num_output_tokens")
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
                prompt_tokens: r.get("num_input_tokens").and_then(Value::as_u64),
                ..Measured::default()
            };
            let mut rec = record(requests.len(), group, *level, 0.0, outcome, m);
            rec.warmup = k < warmups;
            requests.push(rec);
        }
        groups.push((group.clone(), *v, unit));
    }
    if requests.is_empty() {
        return Err(ImportError::Empty);
    }
    let meta = |k: &str| {
        metadata
            .and_then(|m| m.get(k))
            .cloned()
            .unwrap_or(Value::Null)
    };
    let model = metadata
        .and_then(|m| m.get("api_model_name").or_else(|| m.get("model")))
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_owned();
    let endpoint = EndpointInfo {
        base_url: metadata
            .and_then(|m| m.get("api_backend"))
            .and_then(Value::as_str)
            .map(|b| format!("genai-bench ({b})"))
            .unwrap_or_else(|| "genai-bench".into()),
        model: model.clone(),
        dialect: None,
    };
    // Only named facts of the metadata: its `cmd` holds the API key.
    let mut report = Report::new(
        format!("genai-bench · {model}"),
        endpoint,
        "imported_genai_bench",
    )
    .with_settings(serde_json::json!({
        "imported_from": "genai-bench",
        "benchmark_version": meta("benchmark_version"),
        "task": meta("task"),
        "traffic_scenario": meta("traffic_scenario"),
        "server_engine": meta("server_engine"),
        "server_version": meta("server_version"),
        "server_gpu_type": meta("server_gpu_type"),
        "server_gpu_count": meta("server_gpu_count"),
        "files": ordered.iter().map(|o| o.0).collect::<Vec<_>>(),
    }))
    .with_requests(requests);
    let tool = match metadata
        .and_then(|m| m.get("benchmark_version"))
        .and_then(Value::as_str)
    {
        Some(v) => format!("genai-bench {v}"),
        None => "genai-bench".to_owned(),
    };
    report.source_summary = summary(&report, &groups).finish(tool);
    Ok(report)
}

fn in_file(name: &str, e: ImportError) -> ImportError {
    ImportError::InFile {
        name: name.to_owned(),
        source: Box::new(e),
    }
}

/// genai-bench's aggregated stats of each file beside the studio's.
fn summary<'a>(report: &'a Report, groups: &[(String, &Value, String)]) -> Builder<'a> {
    let mut b = Builder::new(report);
    const METHOD: &str = "both take numpy's linear interpolation between neighbouring ranks (type 7) over the same successful requests";
    for (group, file, unit) in groups {
        let Some(stats) = file.pointer("/aggregated_metrics/stats") else {
            continue;
        };
        for (name, metric) in [
            ("ttft", Metric::Ttft),
            ("tpot", Metric::Tpot),
            ("e2e_latency", Metric::E2e),
        ] {
            for (key, stat) in [
                ("p50", Stat::P(50.0)),
                ("mean", Stat::Mean),
                ("p90", Stat::P(90.0)),
                ("p95", Stat::P(95.0)),
                ("p99", Stat::P(99.0)),
            ] {
                let value = stats
                    .get(name)
                    .and_then(|s| s.get(key))
                    .and_then(num)
                    .map(|x| to_ms(x, unit));
                b.add(Some(group), metric, stat, value, |values, our, file| {
                    let mut text = same_method(our, file, METHOD, || format!(
                        "Different requests: genai-bench leaves the first and last requests of each run out of its statistics as warm-up and cool-down (`--warmup-ratio`, `--cooldown-ratio`) and drops errored ones; the studio summarises the {} successful requests the file lists.",
                        values.len()
                    ));
                    if unit != "ms" {
                        text.push_str(&format!(
                            " (genai-bench states it in {unit}; shown here in ms.)"
                        ));
                    }
                    text
                });
            }
        }
    }
    b
}
