//! Charts of one run.

use charming::Chart;
use charming::element::{AxisType, ItemStyle, LineStyle, LineStyleType, Step, Symbol, Trigger};
use charming::series::{Bar, Line, Scatter};
use ttft_core::report::{Aggregates, Report, RequestRecord};
use ttft_core::stats::{Summary, histogram};

use crate::style::{
    THRESHOLD, base, category_axis, cdf_points, hline, marks, ms, round, title, value_axis, vline,
    xy,
};
use crate::{ChartSpec, MAX_DRAWN_REQUESTS};

/// Points kept per CDF line.
const CDF_POINTS: usize = 200;

/// Every chart that has data in this run, in reading order.
pub fn report_charts(report: &Report, agg: &Aggregates) -> Vec<ChartSpec> {
    let ok: Vec<&RequestRecord> = report.measured().filter(|r| r.outcome.is_ok()).collect();
    let ttft: Vec<f64> = ok.iter().filter_map(|r| r.metrics.ttft_ms).collect();
    let itl: Vec<f64> = ok.iter().flat_map(|r| r.metrics.per_token_itl()).collect();
    let mut out = Vec::new();
    if !ttft.is_empty() {
        out.push(latency_histogram(
            "ttft-hist",
            "TTFT distribution",
            &ttft,
            agg.ttft,
            Some(report.thresholds.ttft_ms),
            "requests",
        ));
        out.push(first_token_cdf(&ok, agg));
    }
    if !itl.is_empty() {
        out.push(latency_histogram(
            "itl-hist",
            "Inter-token latency distribution (per token)",
            &itl,
            agg.itl,
            Some(report.thresholds.itl_ms),
            "token gaps",
        ));
        out.push(itl_cdf(&ok, &itl));
    }
    if !report.requests.is_empty() {
        out.push(waterfall(report));
    }
    out.extend(itl_by_position(&ok, agg));
    out.extend(ttft_vs_prompt(&ok, agg));
    if report.scenario == "multi_turn" {
        out.extend(rounds(report, agg));
    } else if report.scenario != "prompt_sweep" {
        out.extend(levels(report, agg));
    }
    out.extend(json_valid(&ok, agg));
    out
}

fn bins_for(n: usize) -> usize {
    ((n as f64).sqrt().ceil() as usize).clamp(5, 40)
}

/// Histogram on a value axis (bars at bin centres), with P50/P95/P99 and the threshold.
fn latency_histogram(
    id: &'static str,
    name: &str,
    values: &[f64],
    summary: Option<Summary>,
    threshold: Option<f64>,
    counted: &str,
) -> ChartSpec {
    let bins = histogram(values, bins_for(values.len()));
    let (lo, hi) = (
        bins.first().map_or(0.0, |b| b.lo),
        bins.last().map_or(0.0, |b| b.hi),
    );
    let mut lines = Vec::new();
    if let Some(s) = summary {
        lines.push(vline(&format!("P50 {}", ms(s.p50)), round(s.p50)));
        lines.push(vline(&format!("P95 {}", ms(s.p95)), round(s.p95)));
        lines.push(vline(&format!("P99 {}", ms(s.p99)), round(s.p99)));
    }
    let mut chart = base(Trigger::Axis)
        .title(title(name))
        .x_axis(value_axis("ms").min(round(lo)).max(round(hi)))
        .y_axis(value_axis(counted).scale(false))
        .series(
            Bar::new()
                .name("count")
                .bar_width("90%")
                .data(
                    bins.iter()
                        .map(|b| xy((b.lo + b.hi) / 2.0, b.count as f64))
                        .collect(),
                )
                .mark_line(marks(lines, "#333")),
        );
    if let Some(t) = threshold.filter(|t| *t >= lo && *t <= hi) {
        chart = chart.series(
            Line::new()
                .name("threshold")
                .data(Vec::<charming::datatype::DataPoint>::new())
                .mark_line(marks(
                    vec![vline(&format!("threshold {}", ms(t)), round(t))],
                    THRESHOLD,
                )),
        );
    }
    let caption = match summary {
        Some(s) => format!(
            "{} values in {} bins; P50 {}, P95 {}, P99 {}, max {}.",
            values.len(),
            bins.len(),
            ms(s.p50),
            ms(s.p95),
            ms(s.p99),
            ms(s.max)
        ),
        None => format!("{} values.", values.len()),
    };
    ChartSpec {
        id,
        title: name.to_owned(),
        caption,
        chart,
    }
}

fn cdf_line(name: &str, values: &[f64]) -> Line {
    Line::new()
        .name(name)
        .show_symbol(false)
        .step(Step::End)
        .data(cdf_points(values, CDF_POINTS))
}

fn cdf_chart(name: &str) -> Chart {
    base(Trigger::Axis)
        .title(title(name))
        .x_axis(value_axis("ms"))
        .y_axis(
            value_axis("% of requests at or below")
                .min(0)
                .max(100)
                .scale(false),
        )
}

/// TTFB, TTFT and meaningful first token as CDFs: the gaps between the lines are server
/// queueing/prefill and the cost of boilerplate openers.
fn first_token_cdf(ok: &[&RequestRecord], agg: &Aggregates) -> ChartSpec {
    let mut chart = cdf_chart("First byte, first token, first meaningful token");
    for (name, pick) in [
        (
            "TTFB (headers)",
            (|r: &RequestRecord| r.metrics.ttfb_ms) as fn(&RequestRecord) -> Option<f64>,
        ),
        ("TTFT", |r| r.metrics.ttft_ms),
        ("meaningful first token", |r| r.metrics.meaningful_ms),
    ] {
        let v: Vec<f64> = ok.iter().filter_map(|r| pick(r)).collect();
        if !v.is_empty() {
            chart = chart.series(cdf_line(name, &v));
        }
    }
    let caption = match (agg.ttfb, agg.ttft, agg.meaningful) {
        (Some(b), Some(t), m) => format!(
            "P50: headers at {}, first token at {}{}.",
            ms(b.p50),
            ms(t.p50),
            m.map(|m| format!(", first meaningful token at {}", ms(m.p50)))
                .unwrap_or_default()
        ),
        (_, Some(t), _) => format!("P50 first token at {}.", ms(t.p50)),
        _ => String::new(),
    };
    ChartSpec {
        id: "ttft-cdf",
        title: "First byte, first token, first meaningful token".into(),
        caption,
        chart,
    }
}

/// Per-token ITL and per-arrival gaps as CDFs: apart when chunks carry several tokens.
fn itl_cdf(ok: &[&RequestRecord], itl: &[f64]) -> ChartSpec {
    let gaps: Vec<f64> = ok
        .iter()
        .flat_map(|r| r.metrics.itl_ms.iter().copied())
        .collect();
    let mut chart = cdf_chart("Inter-token latency CDF").series(cdf_line("per token", itl));
    let coalesced = ok.iter().any(|r| r.metrics.coalesced);
    if coalesced {
        chart = chart.series(cdf_line("per chunk arrival", &gaps));
    }
    ChartSpec {
        id: "itl-cdf",
        title: "Inter-token latency CDF".into(),
        caption: if coalesced {
            "Chunks carry several tokens: the per-arrival line is what a naive tool calls ITL."
                .into()
        } else {
            "One token per chunk: per-token and per-arrival gaps are the same.".into()
        },
        chart,
    }
}

/// Requests drawn individually: all up to the cap, else an even sample.
pub(crate) fn drawn(requests: &[RequestRecord]) -> Vec<&RequestRecord> {
    let n = requests.len();
    if n <= MAX_DRAWN_REQUESTS {
        return requests.iter().collect();
    }
    (0..MAX_DRAWN_REQUESTS)
        .map(|i| &requests[i * n / MAX_DRAWN_REQUESTS])
        .collect()
}

/// Per-request waterfall: wait before sending, browser queue, headers, first token, streaming.
fn waterfall(report: &Report) -> ChartSpec {
    let reqs = drawn(&report.requests);
    let labels: Vec<String> = reqs
        .iter()
        .map(|r| format!("#{}{}", r.index, if r.warmup { " (warm-up)" } else { "" }))
        .collect();
    let seg = |f: &dyn Fn(&RequestRecord) -> Option<f64>| -> Vec<charming::datatype::DataPoint> {
        reqs.iter()
            .map(|r| round(f(r).unwrap_or(0.0).max(0.0)).into())
            .collect()
    };
    let queue = |r: &RequestRecord| r.browser_queue_ms.unwrap_or(0.0);
    let ttfb = |r: &RequestRecord| r.metrics.ttfb_ms;
    let stack = [
        ("start offset", "transparent", seg(&|r| Some(r.start_ms))),
        ("browser queue", "#999999", seg(&|r| r.browser_queue_ms)),
        (
            "to headers (TTFB)",
            "#56B4E9",
            seg(&|r| Some(ttfb(r)? - queue(r))),
        ),
        (
            "to first token",
            "#E69F00",
            seg(&|r| Some(r.metrics.ttft_ms? - ttfb(r).unwrap_or(queue(r)))),
        ),
        (
            "streaming",
            "#009E73",
            seg(&|r| Some(r.metrics.e2e_ms? - r.metrics.ttft_ms?)),
        ),
    ];
    let mut chart = base(Trigger::Axis)
        .title(title("Per-request waterfall"))
        .x_axis(value_axis("ms since the run started").scale(false))
        .y_axis(category_axis("", labels).inverse(true));
    for (name, color, data) in stack {
        chart = chart.series(
            Bar::new()
                .name(name)
                .stack("request")
                .bar_width("70%")
                .item_style(ItemStyle::new().color(color))
                .data(data),
        );
    }
    let n = report.requests.len();
    ChartSpec {
        id: "waterfall",
        title: "Per-request waterfall".into(),
        caption: if n > MAX_DRAWN_REQUESTS {
            format!("{MAX_DRAWN_REQUESTS} of {n} requests, evenly sampled.")
        } else {
            format!("{n} requests; grey is time the browser held the request before sending it.")
        },
        chart,
    }
}

/// P50/P95 per-token ITL at each output position, with the fitted slope.
fn itl_by_position(ok: &[&RequestRecord], agg: &Aggregates) -> Option<ChartSpec> {
    let per_req: Vec<Vec<f64>> = ok.iter().map(|r| r.metrics.per_token_itl()).collect();
    let longest = per_req.iter().map(Vec::len).max()?;
    if longest < 8 {
        return None;
    }
    // Positions are bucketed so a 4,000-token run still draws ≤ 200 points.
    let bucket = longest.div_ceil(200).max(1);
    let mut p50 = Vec::new();
    let mut p95 = Vec::new();
    for start in (0..longest).step_by(bucket) {
        let v: Vec<f64> = per_req
            .iter()
            .flat_map(|g| g.iter().skip(start).take(bucket).copied())
            .collect();
        if let Some(s) = Summary::of(&v) {
            let pos = (start + 1) as f64 + (bucket as f64 - 1.0) / 2.0;
            p50.push(xy(pos, s.p50));
            p95.push(xy(pos, s.p95));
        }
    }
    let mut chart = base(Trigger::Axis)
        .title(title("ITL against output position"))
        .x_axis(value_axis("output token position").scale(false))
        .y_axis(value_axis("ms"))
        .series(Line::new().name("P50").show_symbol(false).data(p50))
        .series(Line::new().name("P95").show_symbol(false).data(p95));
    let caption = match agg.itl_vs_position {
        Some(f) => {
            chart = chart.series(
                Line::new()
                    .name("fit")
                    .show_symbol(false)
                    .line_style(LineStyle::new().type_(LineStyleType::Dashed))
                    .data(vec![
                        xy(1.0, f.intercept + f.slope),
                        xy(longest as f64, f.intercept + f.slope * longest as f64),
                    ]),
            );
            format!(
                "ITL changes {:+.2} ms per 1,000 output tokens (fit over {} gaps): the KV cache grows as the answer does.",
                f.slope * 1000.0,
                f.n
            )
        }
        None => "Too few positions for a slope (needs answers of 64+ tokens).".into(),
    };
    Some(ChartSpec {
        id: "itl-position",
        title: "ITL against output position".into(),
        caption,
        chart,
    })
}

/// TTFT against prompt tokens with the least-squares line.
fn ttft_vs_prompt(ok: &[&RequestRecord], agg: &Aggregates) -> Option<ChartSpec> {
    let fit = agg.ttft_vs_prompt?;
    let pts: Vec<(f64, f64)> = ok
        .iter()
        .filter_map(|r| Some((r.metrics.prompt_tokens? as f64, r.metrics.ttft_ms?)))
        .collect();
    let xmax = pts.iter().map(|p| p.0).fold(0.0, f64::max);
    let chart = base(Trigger::Item)
        .title(title("TTFT against prompt length"))
        .x_axis(value_axis("prompt tokens").scale(false))
        .y_axis(value_axis("TTFT (ms)").scale(false))
        .series(
            Scatter::new()
                .name("requests")
                .symbol_size(6)
                .data(pts.iter().map(|p| xy(p.0, p.1)).collect()),
        )
        .series(
            Line::new()
                .name(format!("fit (R² {:.2})", fit.r2))
                .show_symbol(false)
                .line_style(LineStyle::new().type_(LineStyleType::Dashed))
                .data(vec![
                    xy(0.0, fit.intercept),
                    xy(xmax, fit.intercept + fit.slope * xmax),
                ]),
        );
    Some(ChartSpec {
        id: "ttft-prompt",
        title: "TTFT against prompt length".into(),
        caption: format!(
            "TTFT ≈ {} + {:.3} ms per prompt token (R² {:.2}, {} requests): {:.0} prompt tokens prefilled per second.",
            ms(fit.intercept),
            fit.slope,
            fit.r2,
            fit.n,
            if fit.slope > 0.0 {
                1000.0 / fit.slope
            } else {
                f64::INFINITY
            }
        ),
        chart,
    })
}

/// Latency per level (concurrency, rate) with thresholds and the knee, and throughput.
fn levels(report: &Report, agg: &Aggregates) -> Vec<ChartSpec> {
    let groups: Vec<_> = agg.groups.iter().filter(|g| g.level.is_some()).collect();
    if groups.len() < 2 {
        return Vec::new();
    }
    let log = groups.iter().all(|g| g.level.is_some_and(|l| l > 0.0));
    let level_axis = |name: &str| {
        let a = value_axis(name).scale(false);
        if log {
            a.type_(AxisType::Log).log_base(2)
        } else {
            a
        }
    };
    let line =
        |name: &str, pick: &dyn Fn(&ttft_core::report::GroupStats) -> Option<f64>, axis: f64| {
            Line::new()
                .name(name)
                .y_axis_index(axis)
                .symbol(Symbol::Circle)
                .data(
                    groups
                        .iter()
                        .filter_map(|g| Some(xy(g.level?, pick(g)?)))
                        .collect(),
                )
        };
    let th = report.thresholds;
    let mut ttft_p50 = line("TTFT P50", &|g| g.ttft.map(|s| s.p50), 0.0);
    if let Some(k) = agg.knee_level {
        ttft_p50 = ttft_p50.mark_line(marks(vec![vline(&format!("knee at {k}"), k)], "#333"));
    }
    let chart = base(Trigger::Axis)
        .title(title("Latency against load"))
        .x_axis(level_axis("level (concurrency or rate)"))
        .y_axis(value_axis("TTFT (ms)").scale(false))
        .y_axis(value_axis("ITL (ms)").scale(false))
        .series(ttft_p50)
        .series(
            line("TTFT P95", &|g| g.ttft.map(|s| s.p95), 0.0)
                .line_style(LineStyle::new().type_(LineStyleType::Dashed))
                .mark_line(marks(
                    vec![hline(
                        &format!("TTFT P95 limit {}", ms(th.p95_ttft_ms)),
                        th.p95_ttft_ms,
                    )],
                    THRESHOLD,
                )),
        )
        .series(line("ITL P50", &|g| g.itl.map(|s| s.p50), 1.0))
        .series(
            line("ITL P95", &|g| g.itl.map(|s| s.p95), 1.0)
                .line_style(LineStyle::new().type_(LineStyleType::Dashed))
                .mark_line(marks(
                    vec![hline(&format!("ITL limit {}", ms(th.itl_ms)), th.itl_ms)],
                    THRESHOLD,
                )),
        );
    let throughput = base(Trigger::Axis)
        .title(title("Throughput against load"))
        .x_axis(level_axis("level (concurrency or rate)"))
        .y_axis(value_axis("output tokens / s").scale(false))
        .series(line(
            "aggregate tokens/s",
            &|g| g.throughput_tokens_per_s,
            0.0,
        ));
    vec![
        ChartSpec {
            id: "levels",
            title: "Latency against load".into(),
            caption: match agg.knee_level {
                Some(k) => format!(
                    "Latency bends at level {k}: P50 TTFT or ITL above {}× the first level's.",
                    agg.knee_factor
                ),
                None => format!(
                    "No knee: P50 latency stays within {}× the first level's.",
                    agg.knee_factor
                ),
            },
            chart,
        },
        ChartSpec {
            id: "throughput",
            title: "Throughput against load".into(),
            caption: "Where throughput stops rising while ITL keeps climbing, added load only adds waiting.".into(),
            chart: throughput,
        },
    ]
}

/// Multi-turn agent: TTFT per round against the growing prompt.
fn rounds(report: &Report, agg: &Aggregates) -> Option<ChartSpec> {
    if agg.groups.len() < 2 {
        return None;
    }
    let labels: Vec<String> = agg.groups.iter().map(|g| g.group.clone()).collect();
    let prompt: Vec<charming::datatype::DataPoint> = agg
        .groups
        .iter()
        .map(|g| {
            let v: Vec<f64> = report
                .measured()
                .filter(|r| r.group == g.group)
                .filter_map(|r| r.metrics.prompt_tokens.map(|p| p as f64))
                .collect();
            Summary::of(&v).map_or(0.0, |s| s.p50).into()
        })
        .collect();
    let pick = |f: fn(&Summary) -> f64| -> Vec<charming::datatype::DataPoint> {
        agg.groups
            .iter()
            .map(|g| round(g.ttft.as_ref().map_or(0.0, f)).into())
            .collect()
    };
    let chart = base(Trigger::Axis)
        .title(title("Multi-turn: TTFT per round"))
        .x_axis(category_axis("round", labels))
        .y_axis(value_axis("TTFT (ms)").scale(false))
        .y_axis(value_axis("prompt tokens").scale(false))
        .series(Bar::new().name("TTFT P50").data(pick(|s| s.p50)))
        .series(Bar::new().name("TTFT P95").data(pick(|s| s.p95)))
        .series(
            Line::new()
                .name("prompt tokens (P50)")
                .y_axis_index(1)
                .data(prompt),
        );
    let first = agg.groups.first().and_then(|g| g.ttft).map(|s| s.p50);
    let last = agg.groups.last().and_then(|g| g.ttft).map(|s| s.p50);
    Some(ChartSpec {
        id: "rounds",
        title: "Multi-turn: TTFT per round".into(),
        caption: match (first, last) {
            (Some(a), Some(b)) => format!(
                "TTFT P50 goes from {} in the first round to {} in the last as the conversation grows.",
                ms(a),
                ms(b)
            ),
            _ => String::new(),
        },
        chart,
    })
}

/// Agent JSON: when the answer became usable, against first token and end of stream.
fn json_valid(ok: &[&RequestRecord], agg: &Aggregates) -> Option<ChartSpec> {
    let s = agg.json_valid?;
    let valid: Vec<f64> = ok
        .iter()
        .filter_map(|r| r.metrics.json_valid_ms())
        .collect();
    let ttft: Vec<f64> = ok.iter().filter_map(|r| r.metrics.ttft_ms).collect();
    let e2e: Vec<f64> = ok.iter().filter_map(|r| r.metrics.e2e_ms).collect();
    let chart = cdf_chart("Agent: time to valid JSON")
        .series(cdf_line("first token", &ttft))
        .series(cdf_line("valid JSON", &valid))
        .series(cdf_line("end of stream", &e2e));
    Some(ChartSpec {
        id: "json-valid",
        title: "Agent: time to valid JSON".into(),
        caption: format!(
            "An agent can act at valid JSON, not at the first token: P50 {} after the request ({} of {} requests produced valid JSON).",
            ms(s.p50),
            valid.len(),
            ok.len()
        ),
        chart,
    })
}
