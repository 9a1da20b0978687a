//! The server's own view over the run, from its `/metrics` scrapes (`ttft_core::server_metrics`):
//! queue depth and running requests, KV-cache use and the prefix-cache hit rate, on the run's
//! clock (seconds from its start, like the waterfall), so a queue that builds up lines up with
//! the requests that waited in it.

use charming::element::{Symbol, Trigger};
use charming::series::Line;
use ttft_core::server_metrics::{Concept, ServerSeries};

use crate::ChartSpec;
use crate::style::{base, round, title, value_axis, xy};

/// The gauges drawn on the left axis (counts) and on the right (ratios, as %).
const COUNTS: [Concept; 2] = [Concept::QueueDepth, Concept::Running];
const RATIOS: [Concept; 2] = [Concept::KvCacheRatio, Concept::PrefixCacheHitRate];

/// The server's gauges over the run (the report's series, computed once by the caller);
/// `None` without any of those gauges.
pub(super) fn server_metrics(series: &ServerSeries) -> Option<ChartSpec> {
    let line = |concept: Concept, axis: f64, scale: f64| {
        series.series(concept).map(|s| {
            Line::new()
                .name(if scale == 1.0 {
                    concept.label().to_owned()
                } else {
                    format!("{} (%)", concept.label())
                })
                .y_axis_index(axis)
                .symbol(Symbol::Circle)
                .symbol_size(4)
                .data(
                    s.points
                        .iter()
                        .map(|p| xy(round(p.at_ms / 1e3), round(p.value * scale)))
                        .collect(),
                )
        })
    };
    let counts: Vec<Line> = COUNTS.iter().filter_map(|c| line(*c, 0.0, 1.0)).collect();
    let ratios: Vec<Line> = RATIOS.iter().filter_map(|c| line(*c, 1.0, 100.0)).collect();
    if counts.is_empty() && ratios.is_empty() {
        return None;
    }
    let mut chart = base(Trigger::Axis)
        .title(title("The server during the run"))
        .x_axis(value_axis("seconds from the run's start").scale(false))
        .y_axis(value_axis("requests").scale(false))
        .y_axis(value_axis("%").scale(false).max(100));
    for s in counts.into_iter().chain(ratios) {
        chart = chart.series(s);
    }
    let server = series.server.map_or("the server", |s| s.name());
    Some(ChartSpec {
        id: "server-metrics",
        title: "The server during the run".into(),
        caption: format!(
            "What {server} said of itself in {} scrapes of its /metrics (about one a second): requests waiting and running, KV-cache use and prefix-cache hits. A queue that grows while TTFT grows means the wait was in the server, not the network.",
            series.scrapes
        ),
        chart,
    })
}
