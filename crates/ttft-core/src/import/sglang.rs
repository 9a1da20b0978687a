//! SGLang `python -m sglang.bench_serving --output-file out.jsonl --output-details`: one JSON
//! line per run (a run appends a line to the file), each with the run's summary fields
//! (`median_ttft_ms`, `p99_itl_ms`, …) and, with `--output-details`, per-request `ttfts`,
//! `itls` (one gap per non-empty content chunk after the first, seconds), `input_lens`,
//! `output_lens`, `generated_texts` and `errors` — the names `vllm bench serve` uses.
//!
//! It keeps no per-request latency and no send times: a request's E2E here ends at its last
//! content chunk (TTFT + gaps), and every request starts at 0. Each line becomes a group of one
//! report (`c=2`, `rate=4/s`). SGLang's summary is kept beside the studio's
//! ([`SourceSummary`](super::SourceSummary)): both take numpy's linear percentile (type 7) over
//! the successful requests, so they agree except where the metric itself differs.

use serde_json::Value;

use super::summary::{Builder, Metric, Stat, same_method};
use super::{ImportError, load_group, num, ttfts_itls_requests};
use crate::report::{EndpointInfo, Report};

/// Whether a JSON object is a `bench_serving` result line (fields only SGLang writes).
pub(super) fn is_sglang(v: &Value) -> bool {
    v.get("total_output_tokens_retokenized").is_some()
        || (v.get("median_ttft_ms").is_some() && v.get("sharegpt_output_len").is_some())
}

pub(super) fn import(runs: &[Value]) -> Result<Report, ImportError> {
    let mut requests = Vec::new();
    let mut groups = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        if run.get("ttfts").is_none() {
            return Err(ImportError::SglangNoDetails);
        }
        let rate = run.get("request_rate").and_then(num);
        let (mut group, level) = load_group(
            run.get("max_concurrency").and_then(num),
            rate,
            &format!("run {}", i + 1),
        );
        // Two lines at the same load stay two groups.
        if groups.iter().any(|(g, _)| *g == group) {
            group = format!("{group} (run {})", i + 1);
        }
        let mut rs =
            ttfts_itls_requests(run, &group, level, requests.len(), "SGLang bench_serving")?;
        requests.append(&mut rs);
        groups.push((group, run));
    }
    if requests.is_empty() {
        return Err(ImportError::Empty);
    }
    let first = &runs[0];
    let backend = first.get("backend").and_then(Value::as_str);
    let endpoint = EndpointInfo {
        base_url: backend
            .map(|b| format!("sglang bench_serving ({b})"))
            .unwrap_or_else(|| "sglang bench_serving".into()),
        // The output file does not name the model.
        model: "?".into(),
        dialect: None,
    };
    let mut report = Report::new(
        format!("SGLang bench_serving · {} run(s)", runs.len()),
        endpoint,
        "imported_sglang",
    )
    .with_settings(serde_json::json!({
        "imported_from": "sglang bench_serving",
        "backend": backend,
        "dataset_name": first.get("dataset_name"),
        "runs": groups.iter().map(|(g, r)| serde_json::json!({
            "group": g,
            "max_concurrency": r.get("max_concurrency"),
            "request_rate": r.get("request_rate").and_then(num),
        })).collect::<Vec<_>>(),
    }))
    .with_requests(requests);
    report.source_summary = summary(&report, &groups).finish("SGLang bench_serving");
    Ok(report)
}

const METHOD: &str = "both take numpy's linear interpolation between neighbouring ranks (type 7) over the same successful requests";

/// SGLang's summary fields of each run beside the studio's.
fn summary<'a>(report: &'a Report, groups: &[(String, &Value)]) -> Builder<'a> {
    let mut b = Builder::new(report);
    for (group, run) in groups {
        for (prefix, metric) in [
            ("ttft", Metric::Ttft),
            ("itl", Metric::Itl),
            ("tpot", Metric::Tpot),
            ("e2e_latency", Metric::E2e),
        ] {
            for (stat_name, stat) in [
                ("median", Stat::P(50.0)),
                ("mean", Stat::Mean),
                ("p90", Stat::P(90.0)),
                ("p95", Stat::P(95.0)),
                ("p99", Stat::P(99.0)),
            ] {
                let value = run.get(format!("{stat_name}_{prefix}_ms")).and_then(num);
                b.add(Some(group), metric, stat, value, |_, our, file| {
                    same_method(our, file, METHOD, || match metric {
                        Metric::E2e | Metric::Tpot => format!(
                            "Different end of the request: SGLang's latency runs until the stream closes (its TPOT is that latency minus TTFT over output tokens − 1), but the file keeps no per-request latency, so the studio's {} ends at the last content chunk (TTFT + the recorded gaps); the difference is the time after the last token.",
                            metric.label()
                        ),
                        _ => format!(
                            "Different requests or values: SGLang states {file:.3} ms where its own per-request values give the studio's figure; the summary and the per-request arrays of this line disagree (SGLang's ITL is re-tokenised per chunk when speculative decoding reports an accept length)."
                        ),
                    })
                });
            }
        }
    }
    b
}
