//! ttft-charts: what the studio draws, as data.
//!
//! Turns a [`Report`] (or several, for a comparison) and the [`Aggregates`] the core computed
//! into charming [`Chart`] options: TTFT and ITL histograms and CDFs, the per-request waterfall,
//! ITL against output position, TTFT against prompt length with its fit, concurrency curves with
//! thresholds and the knee, time to valid JSON, multi-turn rounds, a run over time from its time
//! slices, and the comparison overlays.
//! No rendering and no statistics of its own: numbers come from `ttft-core`, drawing is ECharts'
//! job in the browser. Options are plain serde data, so they are snapshot-tested natively.
//!
//! Large runs stay quick to draw: no series carries more than [`MAX_POINTS`] points (the
//! waterfall [`MAX_DRAWN_REQUESTS`] requests, CDF lines 200 points); above that a chart draws a
//! sample that keeps the extremes and percentiles ([`sample`]) and its caption says
//! "N of M … shown". Points are `[x, y]` arrays, the options compact JSON, and bar and scatter
//! series of more than [`LARGE_SERIES`] points use ECharts' large mode (one path per series).

mod compare;
pub mod render_cost;
mod report;
pub mod sample;
mod style;

pub use charming::Chart;
pub use compare::compare_charts;
pub use render_cost::render_cost_chart;
pub use report::{
    load_charts, rate_chart, report_charts, report_charts_before_slo, report_charts_with_slo,
    time_slices_charts,
};

/// One chart: a stable id (for the DOM, tests and file names), a title and the options.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartSpec {
    /// Stable id, e.g. `ttft-hist`.
    pub id: &'static str,
    /// Title.
    pub title: String,
    /// What to read from it, one sentence.
    pub caption: String,
    /// ECharts options.
    pub chart: Chart,
}

impl ChartSpec {
    /// The options as compact JSON (what `setOption` receives), with [`LARGE_SERIES`] applied.
    pub fn options_json(&self) -> String {
        // Plain serde data: no charming raw (JavaScript) strings are used, so no
        // post-processing beyond the large mode is needed.
        let mut options =
            serde_json::to_value(&self.chart).expect("chart options are plain serde data");
        large_mode(&mut options);
        options.to_string()
    }
}

/// Bar and scatter series with more points than this are drawn in ECharts' large mode: the
/// points or bars of a series as one path (a 200-request waterfall or a 1,000-point scatter
/// draws 3–6× faster), without per-point hover styles.
pub const LARGE_SERIES: usize = 100;

/// Sets `large` (and the threshold) on the bar and scatter series above [`LARGE_SERIES`]
/// points; charming has no setter for it.
fn large_mode(options: &mut serde_json::Value) {
    let Some(series) = options
        .get_mut("series")
        .and_then(serde_json::Value::as_array_mut)
    else {
        return;
    };
    for s in series {
        let points = s["data"].as_array().map_or(0, Vec::len);
        if matches!(s["type"].as_str(), Some("bar" | "scatter")) && points > LARGE_SERIES {
            s["large"] = true.into();
            s["largeThreshold"] = LARGE_SERIES.into();
        }
    }
}

/// Requests drawn one by one in the waterfall at most; above it a sample that keeps the extremes
/// and the percentiles, said in the caption.
pub const MAX_DRAWN_REQUESTS: usize = 200;

pub use sample::MAX_POINTS;

pub use ttft_core::{Aggregates, Report};
