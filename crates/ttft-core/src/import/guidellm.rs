//! GuideLLM benchmark JSON (`benchmarks.json`), from the 0.3-era layout (`args`, `worker`)
//! to 0.8's (`config.spec.backend.model`, requests under `successful` / `incomplete` /
//! `errored`, per-request `info.timings`).
//!
//! GuideLLM keeps one mean inter-token latency per request (our TPOT) and no gaps. Its own
//! metric distributions (`metrics.*.successful`) are kept as the report's
//! [`SourceSummary`](super::SourceSummary): GuideLLM's percentiles are not interpolated (the
//! first value whose cumulative share reaches p, `Percentiles.from_pdf` in
//! `guidellm/schemas/base/statistics.py`), so of an even count its median is one of the two
//! middle values where the studio's lies between them.

use serde_json::Value;

use super::summary::{Builder, Metric, Stat, same};
use super::{ImportError, Measured, array, num, record};
use crate::report::{EndpointInfo, Report};
use crate::timeline::Outcome;

/// The strategy of a GuideLLM benchmark: label and level.
fn strategy(b: &Value, index: usize) -> (String, Option<f64>) {
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

/// The model benchmarked: 0.8 keeps it in the report's `config.spec.backend.model` (the
/// `BenchmarkGenerativeTextArgs` the run was given), earlier versions in each benchmark's
/// `args` / `config` or the worker's `backend_model`.
fn model(v: &Value, benchmarks: &[Value]) -> Option<String> {
    let top = [
        "/config/spec/backend/model",
        "/config/backend/model",
        "/config/model",
        "/args/model",
    ];
    let per_benchmark = [
        "/args/model",
        "/config/model",
        "/config/backend/model",
        "/worker/backend_model",
    ];
    top.iter()
        .find_map(|p| v.pointer(p).and_then(Value::as_str))
        .or_else(|| {
            benchmarks.iter().find_map(|b| {
                per_benchmark
                    .iter()
                    .find_map(|p| b.pointer(p).and_then(Value::as_str))
            })
        })
        .filter(|m| !m.is_empty())
        .map(str::to_owned)
}

pub(super) fn import(v: &Value) -> Result<Vec<Report>, ImportError> {
    let benchmarks = array(v, "benchmarks")?.ok_or(ImportError::UnknownFormat)?;
    let mut requests = Vec::new();
    let mut t_min = f64::INFINITY;
    // (group, level, start time in s, outcome, measurements)
    type Row = (String, Option<f64>, Option<f64>, Outcome, Measured);
    let mut rows: Vec<Row> = Vec::new();
    let mut groups = Vec::new();
    for (bi, b) in benchmarks.iter().enumerate() {
        let (group, level) = strategy(b, bi);
        groups.push(group.clone());
        let Some(reqs) = b.get("requests") else {
            continue;
        };
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
                    .or_else(|| f("request_start_time"))
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
                                .or_else(|| r.pointer("/info/error"))
                                .and_then(Value::as_str)
                                .unwrap_or("no message")
                        ),
                    },
                    // GuideLLM's own cut: requests still running when the benchmark ended.
                    _ => Outcome::CutByClient {
                        message: "GuideLLM recorded the request as incomplete (cut at the benchmark's end)".into(),
                    },
                };
                let m = Measured {
                    ttft_ms,
                    e2e_ms,
                    tpot_ms: f("inter_token_latency_ms").or_else(|| f("time_per_output_token_ms")),
                    output_tokens: r.get("output_tokens").and_then(Value::as_u64).unwrap_or(0),
                    prompt_tokens: r.get("prompt_tokens").and_then(Value::as_u64),
                    text: r
                        .get("output")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    ..Measured::default()
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
        let mut rec = record(i, &group, level, start_ms, outcome, m);
        rec.sent_epoch_ms = start_s.map(|s| s * 1e3);
        requests.push(rec);
    }
    let model = model(v, benchmarks);
    let shown = model.as_deref().unwrap_or("?");
    let endpoint = EndpointInfo {
        base_url: "guidellm".into(),
        model: shown.to_owned(),
        dialect: None,
    };
    let version = v
        .pointer("/metadata/guidellm_version")
        .and_then(Value::as_str);
    let mut report = Report::new(format!("GuideLLM · {shown}"), endpoint, "imported_guidellm")
        .created_at(if t_min.is_finite() { t_min * 1e3 } else { 0.0 })
        .with_settings(serde_json::json!({
            "imported_from": "guidellm",
            "guidellm_version": version,
            "benchmarks": benchmarks.len(),
        }))
        .with_requests(requests);
    let tool = match version {
        Some(v) => format!("GuideLLM {v}"),
        None => "GuideLLM".to_owned(),
    };
    report.source_summary = summary(&report, benchmarks, &groups).finish(tool);
    Ok(vec![report])
}

/// GuideLLM's percentile of weighted values, as `Percentiles.from_pdf` computes it after
/// `DistributionSummary.from_values`: values sorted, equal values merged (weights summed), each
/// one's probability its weight over the total, the probabilities summed in order, and the
/// first value whose running sum is ≥ p (numpy `searchsorted(cdf, p, side="left")`), no
/// interpolation. Returns the value and its 1-based rank among the sorted values.
fn percentile(pairs: &[(f64, f64)], p: f64) -> Option<(f64, usize)> {
    let mut v: Vec<(f64, f64)> = pairs
        .iter()
        .copied()
        .filter(|(x, w)| x.is_finite() && w.is_finite())
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Merged values with their weights, and the rank of each one's last copy.
    let mut merged: Vec<(f64, f64, usize)> = Vec::new();
    for (i, (x, w)) in v.iter().enumerate() {
        match merged.last_mut() {
            Some(last) if last.0 == *x => {
                last.1 += w;
                last.2 = i + 1;
            }
            _ => merged.push((*x, *w, i + 1)),
        }
    }
    merged.retain(|m| m.1 > 0.0);
    if merged.is_empty() {
        return None;
    }
    let total: f64 = merged.iter().map(|m| m.1).sum();
    let q = p / 100.0;
    let mut cdf = 0.0;
    for m in &merged {
        cdf += m.1 / total;
        if cdf >= q {
            return Some((m.0, m.2));
        }
    }
    // Rounding left the last running sum under p: numpy would index past the end.
    merged.last().map(|m| (m.0, m.2))
}

/// GuideLLM's mean of weighted values (`np.sum(values * probabilities)`).
fn mean(pairs: &[(f64, f64)]) -> Option<f64> {
    let total: f64 = pairs.iter().map(|p| p.1).sum();
    (total > 0.0).then(|| pairs.iter().map(|(x, w)| x * (w / total)).sum())
}

/// Whether no two values are equal (GuideLLM merges equal values into one share).
fn distinct(pairs: &[(f64, f64)]) -> bool {
    let mut v: Vec<f64> = pairs.iter().map(|p| p.0).collect();
    v.sort_by(f64::total_cmp);
    v.windows(2).all(|w| w[0] != w[1])
}

/// A rank in words: `4th`.
fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (1, r) if r != 11 => "st",
        (2, r) if r != 12 => "nd",
        (3, r) if r != 13 => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// The explanation of one GuideLLM figure against the studio's, reproducing GuideLLM's method
/// on the studio's sample to tell which difference it is.
fn explain(
    stat: Stat,
    pairs: &[(f64, f64)],
    weighted: bool,
    our: Option<f64>,
    file: f64,
) -> String {
    let n = pairs.len();
    let Some(our) = our else {
        return "The file keeps no per-request value for this metric, so the studio has none to compare.".into();
    };
    let weight_note = if weighted {
        " GuideLLM weights each request's mean gap by its output tokens − 1 (one value per gap); the studio counts each request once."
    } else {
        ""
    };
    let theirs = match stat {
        Stat::Mean => mean(pairs).map(|m| (m, 0)),
        Stat::P(p) => percentile(pairs, p),
    };
    let Some((theirs, rank)) = theirs.filter(|(t, _)| same(*t, file)) else {
        let recomputed = theirs
            .map(|(t, _)| format!("{t:.3} ms"))
            .unwrap_or_else(|| "nothing".into());
        return format!(
            "Different requests: GuideLLM's own method on the file's {n} successful requests gives {recomputed}, not the figure it states, so its summary covers other requests than those the file lists (it summarises the requests of its measurement window and may list only a sample of them, `sample_size`).{weight_note}"
        );
    };
    if same(our, file) {
        return format!(
            "Same value: the same {n} successful requests, and here GuideLLM's method and the studio's give the same figure.{weight_note}"
        );
    }
    match stat {
        Stat::Mean => format!("Same {n} successful requests, different weighting.{weight_note}"),
        Stat::P(p) => {
            let h = (n.saturating_sub(1)) as f64 * p / 100.0;
            let (lo, hi) = (h.floor() as usize + 1, h.ceil() as usize + 1);
            let ours = if lo == hi {
                format!("the {} smallest", ordinal(lo))
            } else {
                format!(
                    "{:.0} % of the way from the {} smallest to the {}",
                    (h - h.floor()) * 100.0,
                    ordinal(lo),
                    ordinal(hi)
                )
            };
            // Of an even count, GuideLLM's median is one of the two middle values; which one
            // depends on whether the running sum of 1/n shares reaches 0.5 exactly in binary.
            let middle = if p == 50.0 && n.is_multiple_of(2) && !weighted && distinct(pairs) {
                let share: f64 = std::iter::repeat_n(1.0 / n as f64, n / 2).sum();
                if rank == n / 2 + 1 {
                    format!(
                        " Of an even count its median is a middle value, not their mean: here the running sum of {h} shares of 1/{n} is {share:?} in floating point, just under 0.5, so it passes the lower middle value and takes the upper one.",
                        h = n / 2
                    )
                } else {
                    " Of an even count its median is a middle value, not their mean: here the lower one.".to_owned()
                }
            } else {
                String::new()
            };
            format!(
                "Different percentile method, same {n} successful requests: GuideLLM takes the first value whose cumulative share reaches {p} % (numpy `searchsorted` on the running sum of probabilities, no interpolation: `Percentiles.from_pdf`), here the {} smallest, {theirs:.3} ms; the studio interpolates linearly between neighbouring ranks (type 7), here {ours}, {our:.3} ms.{middle}{weight_note}",
                ordinal(rank)
            )
        }
    }
}

/// GuideLLM's own figures for each benchmark beside the studio's.
fn summary<'a>(report: &'a Report, benchmarks: &[Value], groups: &[String]) -> Builder<'a> {
    let mut b = Builder::new(report);
    let stats = [
        Stat::P(50.0),
        Stat::Mean,
        Stat::P(90.0),
        Stat::P(95.0),
        Stat::P(99.0),
    ];
    for (bench, group) in benchmarks.iter().zip(groups) {
        let Some(metrics) = bench.get("metrics") else {
            continue;
        };
        // (GuideLLM's metric, ours, scale to ms, weighted by output tokens − 1)
        let table = [
            ("time_to_first_token_ms", Metric::Ttft, 1.0, false),
            ("inter_token_latency_ms", Metric::Tpot, 1.0, true),
            ("request_latency", Metric::E2e, 1e3, false),
        ];
        for (name, metric, scale, weighted) in table {
            let Some(dist) = metrics.get(name).and_then(|d| d.get("successful")) else {
                continue;
            };
            // The studio's sample with GuideLLM's weights, one pair per successful request.
            let pairs: Vec<(f64, f64)> = super::summary::ok_requests(report, Some(group))
                .filter_map(|r| {
                    let m = &r.metrics;
                    let v = match metric {
                        Metric::Ttft => m.ttft_ms,
                        Metric::Tpot => m.tpot_ms,
                        _ => m.e2e_ms,
                    }?;
                    let w = if weighted {
                        m.output_tokens.saturating_sub(1) as f64
                    } else {
                        1.0
                    };
                    Some((v, w))
                })
                .collect();
            for stat in stats {
                let value = match stat {
                    Stat::Mean => dist.get("mean"),
                    Stat::P(50.0) => dist.get("median"),
                    Stat::P(p) => dist.pointer(&format!("/percentiles/p{p}")),
                }
                .and_then(num)
                .map(|x| x * scale);
                b.add(Some(group), metric, stat, value, |_, our, file| {
                    explain(stat, &pairs, weighted, our, file)
                });
            }
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ones(v: &[f64]) -> Vec<(f64, f64)> {
        v.iter().map(|x| (*x, 1.0)).collect()
    }

    #[test]
    fn an_even_count_takes_a_middle_value_not_their_mean() {
        // 0.25 + 0.25 = 0.5 exactly: the lower middle value.
        assert_eq!(
            percentile(&ones(&[4.0, 1.0, 3.0, 2.0]), 50.0),
            Some((2.0, 2))
        );
        // 1/10 summed five times is 0.5 exactly in binary too.
        let ten: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(percentile(&ones(&ten), 50.0), Some((5.0, 5)));
    }

    #[test]
    fn a_running_sum_short_of_one_half_by_rounding_takes_the_upper_middle_value() {
        // Twelve values: 1/12 summed six times is 0.49999999999999994 < 0.5 in binary, so
        // numpy's `searchsorted` passes the lower middle value: the 7th of 12, not the 6th.
        let twelve: Vec<f64> = (1..=12).map(f64::from).collect();
        let half: f64 = std::iter::repeat_n(1.0 / 12.0, 6).sum();
        assert!(half < 0.5);
        assert_eq!(percentile(&ones(&twelve), 50.0), Some((7.0, 7)));
        // Eighteen: the sum overshoots 0.5, the lower middle value (9th) is taken.
        let eighteen: Vec<f64> = (1..=18).map(f64::from).collect();
        assert_eq!(percentile(&ones(&eighteen), 50.0), Some((9.0, 9)));
    }

    #[test]
    fn equal_values_are_merged_and_weights_count() {
        assert_eq!(
            percentile(&[(1.0, 1.0), (1.0, 1.0), (9.0, 1.0)], 50.0),
            Some((1.0, 2))
        );
        assert_eq!(percentile(&[(1.0, 1.0), (9.0, 3.0)], 50.0), Some((9.0, 2)));
        assert_eq!(mean(&[(1.0, 1.0), (9.0, 3.0)]), Some(7.0));
    }

    #[test]
    fn ordinals() {
        assert_eq!(ordinal(1), "1st");
        assert_eq!(ordinal(12), "12th");
        assert_eq!(ordinal(23), "23rd");
    }
}
