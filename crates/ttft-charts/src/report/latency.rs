//! Latency distributions of one run: TTFT and per-token ITL histograms (with P50/P95/P99 and
//! the threshold), TTFB/TTFT/meaningful-first-token CDFs, and per-token against per-arrival ITL
//! CDFs. The CDF helpers are shared with the agent chart. Histograms count every value; CDF lines
//! above [`CDF_POINTS`] values draw a sample that keeps the min, max and percentiles, and the
//! caption says so. Neither sorts a series.

use charming::Chart;
use charming::element::{Step, Trigger};
use charming::series::{Bar, Line};
use ttft_core::report::{Aggregates, RequestRecord};
use ttft_core::stats::Summary;

use crate::ChartSpec;
use crate::sample::{KEEPS_PERCENTILES, histogram, quantile_ranks, sampled_note};
use crate::style::{
    THRESHOLD, band_caption, base, cdf_band, cdf_line_in, cdf_points, legend_of, marks, ms,
    nice_bounds, palette, round, title, value_axis, vline, xy,
};

/// Points kept per CDF line.
pub(super) const CDF_POINTS: usize = 200;

fn bins_for(n: usize) -> usize {
    ((n as f64).sqrt().ceil() as usize).clamp(5, 40)
}

/// Histogram on a value axis (bars at bin centres), with P50/P95/P99 and the threshold; every
/// value counted.
pub(super) fn latency_histogram(
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
        .x_axis({
            let (lo, hi) = nice_bounds(lo, hi);
            value_axis("ms").min(round(lo)).max(round(hi))
        })
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

/// A CDF line (its [`CDF_POINTS`] sample when larger).
pub(super) fn cdf_line(name: &str, values: &[f64]) -> Line {
    Line::new()
        .name(name)
        .show_symbol(false)
        .step(Step::End)
        .data(cdf_points(values, CDF_POINTS))
}

/// The caption's note when the largest of these CDF lines (of `counts` values each) is a
/// sample: `" Largest line: 200 of 99000 points shown (…kept)."`.
pub(super) fn cdf_note(counts: impl IntoIterator<Item = usize>) -> String {
    let total = counts.into_iter().max().unwrap_or(0);
    let shown = quantile_ranks(total, CDF_POINTS).len();
    sampled_note(shown, total, "points", KEEPS_PERCENTILES)
        .map(|n| format!(" Largest line: {n}."))
        .unwrap_or_default()
}

/// Per-request CDF lines, each in its colour with its DKW band at `level` (the legend names the
/// lines; a band is in its line's colour), and how many values each has.
pub(super) fn banded_cdf(
    mut chart: Chart,
    lines: &[(&str, Vec<f64>)],
    level: f64,
) -> (Chart, Vec<usize>) {
    let mut counts = Vec::new();
    let mut names = Vec::new();
    for (i, (name, v)) in lines.iter().filter(|(_, v)| !v.is_empty()).enumerate() {
        let color = palette(i);
        counts.push(v.len());
        names.push((*name).to_owned());
        chart = chart.series(cdf_line_in(name, v, CDF_POINTS, color));
        for band in cdf_band(name, v, CDF_POINTS, level, color) {
            chart = chart.series(band);
        }
    }
    (chart.legend(legend_of(names)), counts)
}

pub(super) fn cdf_chart(name: &str) -> Chart {
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

/// TTFB, TTFT and meaningful first token as CDFs, each with its DKW band at `level`: the gaps
/// between the lines are server queueing/prefill and the cost of boilerplate openers.
pub(super) fn first_token_cdf(ok: &[&RequestRecord], agg: &Aggregates, level: f64) -> ChartSpec {
    let pick = |f: fn(&RequestRecord) -> Option<f64>| ok.iter().filter_map(|r| f(r)).collect();
    let lines = [
        ("TTFB (headers)", pick(|r| r.metrics.ttfb_ms)),
        ("TTFT", pick(|r| r.metrics.ttft_ms)),
        ("meaningful first token", pick(|r| r.metrics.meaningful_ms)),
    ];
    let (chart, counts) = banded_cdf(
        cdf_chart("First byte, first token, first meaningful token"),
        &lines,
        level,
    );
    let mut caption = match (agg.ttfb, agg.ttft, agg.meaningful) {
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
    caption.push_str(&band_caption(level));
    caption.push_str(&cdf_note(counts));
    ChartSpec {
        id: "ttft-cdf",
        title: "First byte, first token, first meaningful token".into(),
        caption,
        chart,
    }
}

/// Per-token ITL and per-arrival gaps as CDFs: apart when chunks carry several tokens. No
/// band: the gaps of one request are not independent draws, which the DKW band assumes.
pub(super) fn itl_cdf(ok: &[&RequestRecord], itl: &[f64]) -> ChartSpec {
    let mut chart = cdf_chart("Inter-token latency CDF").series(cdf_line("per token", itl));
    let coalesced = ok.iter().any(|r| r.metrics.coalesced);
    let mut counts = vec![itl.len()];
    if coalesced {
        let gaps: Vec<f64> = ok
            .iter()
            .flat_map(|r| r.metrics.itl_ms.iter().copied())
            .collect();
        counts.push(gaps.len());
        chart = chart.series(cdf_line("per chunk arrival", &gaps));
    }
    let caption = if coalesced {
        "Chunks carry several tokens: the per-arrival line is what a naive tool calls ITL."
    } else {
        "One token per chunk: per-token and per-arrival gaps are the same."
    };
    ChartSpec {
        id: "itl-cdf",
        title: "Inter-token latency CDF".into(),
        caption: format!(
            "{caption} No band: the gaps of one request are not independent draws.{}",
            cdf_note(counts)
        ),
        chart,
    }
}
