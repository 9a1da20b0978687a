//! ttft-charts: what the studio draws, as data.
//!
//! Turns a [`Report`] (or several, for a comparison) and the [`Aggregates`] the core computed
//! into charming [`Chart`] options: TTFT and ITL histograms and CDFs, the per-request waterfall,
//! ITL against output position, TTFT against prompt length with its fit, concurrency curves with
//! thresholds and the knee, time to valid JSON, multi-turn rounds, and the comparison overlays.
//! No rendering and no statistics of its own: numbers come from `ttft-core`, drawing is ECharts'
//! job in the browser. Options are plain serde data, so they are snapshot-tested natively.

mod compare;
mod report;
mod style;

pub use charming::Chart;
pub use compare::compare_charts;
pub use report::report_charts;

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
    /// The options as JSON (what `setOption` receives).
    pub fn options_json(&self) -> String {
        self.chart.to_string()
    }
}

/// Requests drawn one by one (waterfall, scatter) at most; above it a sample, said in the caption.
pub const MAX_DRAWN_REQUESTS: usize = 200;

pub use ttft_core::{Aggregates, Report};
