//! Where the time of each request went: the per-request waterfall (wait before sending, browser
//! queue, headers, first token, streaming; sampled above [`MAX_DRAWN_REQUESTS`]) and per-token
//! ITL against output position with its fitted slope.

use charming::element::{ItemStyle, LineStyle, LineStyleType, Trigger};
use charming::series::{Bar, Line};
use ttft_core::report::{Aggregates, Report, RequestRecord};
use ttft_core::stats::Summary;

use crate::style::{base, category_axis, round, title, value_axis, xy};
use crate::{ChartSpec, MAX_DRAWN_REQUESTS};

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
pub(super) fn waterfall(report: &Report) -> ChartSpec {
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
pub(super) fn itl_by_position(ok: &[&RequestRecord], agg: &Aggregates) -> Option<ChartSpec> {
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
