//! The planned-vs-achieved send rate of an open-loop run (a load shape, a trace), drawn from
//! the chart `ttft-charts` builds of the core's bins ([`ttft_core::schedule::rate_chart`]).
//! Nothing for a closed-loop run.

use std::sync::Arc;

use leptos::prelude::*;
use ttft_core::report::Report;

use crate::state::use_studio;

/// The chart (`rate-chart`, its series' names in `data-series`), only for a run whose requests
/// carry planned sends.
#[component]
pub fn RateChart(
    /// The run.
    report: Arc<Report>,
) -> impl IntoView {
    let level = use_studio().confidence.get_untracked().level;
    let started = crate::browser::clock::now_ms();
    ttft_charts::rate_chart(&report, level).map(|spec| {
        let options: serde_json::Value =
            serde_json::from_str(&spec.options_json()).unwrap_or_default();
        let series: Vec<&str> = options["series"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s["name"].as_str())
            .collect();
        let series = series.join("|");
        let stem = report.title.replace([' ', ':', '·', '/'], "_");
        view! {
            <section data-testid="rate-chart" data-series=series>
                <h3>"Planned vs achieved rate"</h3>
                <crate::components::charts::ChartGrid specs=RwSignal::new(vec![spec]) file_stem=stem testid="rate-chart-grid" started_ms=started />
            </section>
        }
    })
}
