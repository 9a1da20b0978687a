//! Where the time of each request went: the per-request waterfall (wait before sending, browser
//! queue, headers, first token, streaming; above [`MAX_DRAWN_REQUESTS`] a sample spread over the
//! run that keeps the fastest, slowest and percentile TTFTs and the longest request) and
//! per-token ITL against output position with its fitted slope.

use charming::element::{ItemStyle, LineStyle, LineStyleType, Trigger};
use charming::series::{Bar, Line};
use ttft_core::report::{Aggregates, Report, RequestRecord};
use ttft_core::stats::percentile_sorted;

use crate::sample::sorted;
use crate::style::{base, category_axis, round, title, value_axis, xy};
use crate::{ChartSpec, MAX_DRAWN_REQUESTS};

/// Indices of the requests the waterfall draws: all up to `cap`; above it, the requests with
/// the fastest and slowest TTFT, the ones at the TTFT's P50/P90/P95/P99 (nearest rank) and the
/// longest one (E2E), then the rest of the `cap` evenly spread over the run. In run order.
pub(crate) fn drawn(requests: &[RequestRecord], cap: usize) -> Vec<usize> {
    let n = requests.len();
    if n <= cap {
        return (0..n).collect();
    }
    let mut by_ttft: Vec<(f64, usize)> = requests
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.metrics.ttft_ms.map(|t| (t, i)))
        .collect();
    by_ttft.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut keep: Vec<usize> = Vec::new();
    if let Some(last) = by_ttft.len().checked_sub(1) {
        for p in [0.0, 0.5, 0.9, 0.95, 0.99, 1.0] {
            keep.push(by_ttft[(last as f64 * p).round() as usize].1);
        }
    }
    let longest = (0..n)
        .filter_map(|i| requests[i].metrics.e2e_ms.map(|e| (e, i)))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    keep.extend(longest.map(|(_, i)| i));
    keep.sort_unstable();
    keep.dedup();
    keep.truncate(cap);
    // The rest evenly over the requests not already kept.
    let rest: Vec<usize> = (0..n).filter(|i| keep.binary_search(i).is_err()).collect();
    let more = cap - keep.len();
    keep.extend((0..more).map(|k| rest[k * rest.len() / more]));
    keep.sort_unstable();
    keep
}

/// Per-request waterfall: wait before sending, browser queue, headers, first token, streaming.
pub(super) fn waterfall(report: &Report) -> ChartSpec {
    let reqs: Vec<&RequestRecord> = drawn(&report.requests, MAX_DRAWN_REQUESTS)
        .into_iter()
        .map(|i| &report.requests[i])
        .collect();
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
        caption: if reqs.len() < n {
            format!(
                "{} of {n} requests shown: spread over the run, with the fastest and slowest TTFT, the P50/P90/P95/P99 TTFT and the longest request among them; grey is time the browser held a request before sending it.",
                reqs.len()
            )
        } else {
            format!("{n} requests; grey is time the browser held the request before sending it.")
        },
        chart,
    }
}

/// P50/P95 per-token ITL at each output position (`per_req`: each successful request's per-token
/// gaps), with the fitted slope.
pub(super) fn itl_by_position(per_req: &[Vec<f64>], agg: &Aggregates) -> Option<ChartSpec> {
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
        // Sorted once (unstable: ~2× faster than a summary's stable sort on 10,000 values);
        // the percentiles are the core's.
        let v = sorted(&v);
        if let (Some(a), Some(b)) = (percentile_sorted(&v, 50.0), percentile_sorted(&v, 95.0)) {
            let pos = (start + 1) as f64 + (bucket as f64 - 1.0) / 2.0;
            p50.push(xy(pos, a));
            p95.push(xy(pos, b));
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
