//! An imported file's own summary figures, each beside the value the studio computes from the
//! same file's requests, and why the two differ: a different percentile method, a different
//! set of requests, or a different definition of the metric.

pub use crate::report::source::{SourceSummary, SummaryFigure};
use crate::report::{Report, RequestRecord};
use crate::stats::{percentile_sorted, sorted};

/// A per-request metric the studio computes from imported requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Metric {
    Ttft,
    /// Every gap between chunks, pooled over the requests (per token).
    Itl,
    /// Each request's mean gap after the first token.
    Tpot,
    E2e,
}

impl Metric {
    pub(super) fn label(self) -> &'static str {
        match self {
            Metric::Ttft => "TTFT",
            Metric::Itl => "ITL",
            Metric::Tpot => "TPOT",
            Metric::E2e => "E2E",
        }
    }
}

/// A statistic of a sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Stat {
    Mean,
    /// A percentile, 0–100 (50 = median).
    P(f64),
}

impl Stat {
    pub(super) fn label(self) -> String {
        match self {
            Stat::Mean => "mean".into(),
            Stat::P(50.0) => "median".into(),
            Stat::P(p) => format!("p{p}"),
        }
    }
}

/// The successful measured requests of a group (all groups when `None`).
pub(super) fn ok_requests<'a>(
    report: &'a Report,
    group: Option<&'a str>,
) -> impl Iterator<Item = &'a RequestRecord> + 'a {
    report
        .measured()
        .filter(move |r| r.outcome.is_ok() && group.is_none_or(|g| r.group == g))
}

/// The studio's sample of a metric over a group's successful measured requests, in request
/// order (the one [`Report::aggregates`] summarises).
pub(super) fn sample(report: &Report, group: Option<&str>, metric: Metric) -> Vec<f64> {
    let mut out = Vec::new();
    for r in ok_requests(report, group) {
        let m = &r.metrics;
        match metric {
            Metric::Ttft => out.extend(m.ttft_ms),
            Metric::Tpot => out.extend(m.tpot_ms),
            Metric::E2e => out.extend(m.e2e_ms),
            Metric::Itl => {
                m.extend_per_token_itl(&mut out);
            }
        }
    }
    out
}

/// The studio's statistic of a sample: the mean, or a percentile interpolated linearly between
/// neighbouring ranks (type 7, [`crate::stats`]).
pub(super) fn ours(values: &[f64], stat: Stat) -> Option<f64> {
    let s = sorted(values);
    if s.is_empty() {
        return None;
    }
    match stat {
        Stat::Mean => Some(s.iter().sum::<f64>() / s.len() as f64),
        Stat::P(p) => percentile_sorted(&s, p),
    }
}

/// Whether two figures are the same up to the rounding of their arithmetic.
pub(super) fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Builds summaries figure by figure.
pub(super) struct Builder<'a> {
    report: &'a Report,
    figures: Vec<SummaryFigure>,
}

impl<'a> Builder<'a> {
    pub(super) fn new(report: &'a Report) -> Self {
        Self {
            report,
            figures: Vec::new(),
        }
    }

    /// Adds a file's figure (already in ms) for a metric and statistic; `explain` gets the
    /// studio's sample and value and says why they agree or differ.
    pub(super) fn add(
        &mut self,
        group: Option<&str>,
        metric: Metric,
        stat: Stat,
        file_value: Option<f64>,
        explain: impl FnOnce(&[f64], Option<f64>, f64) -> String,
    ) {
        let Some(file_value) = file_value.filter(|v| v.is_finite()) else {
            return;
        };
        let values = sample(self.report, group, metric);
        let our = ours(&values, stat);
        let explanation = explain(&values, our, file_value);
        self.figures.push(SummaryFigure {
            group: group.map(str::to_owned),
            metric: format!("{} {}", metric.label(), stat.label()),
            unit: "ms".into(),
            file_value,
            our_value: our,
            explanation,
        });
    }

    pub(super) fn finish(self, tool: impl Into<String>) -> Option<SourceSummary> {
        (!self.figures.is_empty()).then(|| SourceSummary {
            tool: tool.into(),
            figures: self.figures,
        })
    }
}

/// The explanation when a tool uses the studio's own method: the same value, or the
/// tool-specific reason it is not (`otherwise`).
pub(super) fn same_method(
    our: Option<f64>,
    file: f64,
    method: &str,
    otherwise: impl FnOnce() -> String,
) -> String {
    match our {
        Some(o) if same(o, file) => format!("Same value: {method}."),
        None => "The file keeps no per-request value for this metric, so the studio has none to compare.".into(),
        Some(_) => otherwise(),
    }
}
