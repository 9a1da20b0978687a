//! Latency under load: TTFT against prompt length with its least-squares fit (prefill speed),
//! latency and throughput per level (concurrency or rate) with the thresholds and the knee, and
//! TTFT per round of a multi-turn conversation.

use charming::element::{AxisType, LineStyle, LineStyleType, Symbol, Trigger};
use charming::series::{Bar, Line, Scatter};
use ttft_core::report::{Aggregates, Report, RequestRecord};
use ttft_core::stats::Summary;

use crate::ChartSpec;
use crate::sample::{KEEPS_PERCENTILES, MAX_POINTS, sample_by_value, sampled_note};
use crate::style::{
    THRESHOLD, base, category_axis, hline, marks, ms, round, title, value_axis, vline, xy,
};

/// TTFT against prompt tokens with the least-squares line (fitted by the core over every
/// request); above [`MAX_POINTS`] requests the scatter draws a sample that keeps the fastest,
/// slowest and percentile TTFTs.
pub(super) fn ttft_vs_prompt(ok: &[&RequestRecord], agg: &Aggregates) -> Option<ChartSpec> {
    let fit = agg.ttft_vs_prompt?;
    let all: Vec<(f64, f64)> = ok
        .iter()
        .filter_map(|r| Some((r.metrics.prompt_tokens? as f64, r.metrics.ttft_ms?)))
        .collect();
    let xmax = all.iter().map(|p| p.0).fold(0.0, f64::max);
    let ttfts: Vec<Option<f64>> = all.iter().map(|p| Some(p.1)).collect();
    let pts: Vec<(f64, f64)> = sample_by_value(&ttfts, MAX_POINTS)
        .into_iter()
        .map(|i| all[i])
        .collect();
    let note = sampled_note(pts.len(), all.len(), "requests", KEEPS_PERCENTILES)
        .map(|n| format!(" {n}."))
        .unwrap_or_default();
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
            "TTFT ≈ {} + {:.3} ms per prompt token (R² {:.2}, {} requests): {:.0} prompt tokens prefilled per second.{note}",
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

/// What the load charts know of the run's SLO.
#[derive(Debug, Clone, Copy)]
pub(super) enum SloState<'a> {
    /// Scored by the caller.
    Scored(&'a ttft_core::slo::SloReport),
    /// To be scored here.
    Score,
    /// Not scored yet: drawn without its mark and goodput, and again once it is.
    Pending,
}

/// Latency per level (concurrency, rate) with thresholds and the knee, and throughput.
pub(super) fn levels(report: &Report, agg: &Aggregates, slo: SloState) -> Vec<ChartSpec> {
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
    // The run held to its SLO: the highest level meeting it is marked, and goodput drawn
    // beside throughput.
    let evaluated;
    let slo = match slo {
        SloState::Scored(s) => Some(s),
        SloState::Score => {
            evaluated = ttft_core::slo::evaluate(report, &report.slo);
            Some(&evaluated)
        }
        SloState::Pending => None,
    };
    let mut level_marks = Vec::new();
    if let Some(k) = agg.knee_level {
        level_marks.push(vline(&format!("knee at {k}"), k));
    }
    if let Some(h) = slo.and_then(|s| s.highest_level_meeting) {
        let name = slo.map_or("", |s| s.set.name.as_str());
        level_marks.push(vline(&format!("{name} SLO met up to {h}"), h));
    }
    let mut ttft_p50 = line("TTFT P50", &|g| g.ttft.map(|s| s.p50), 0.0);
    if !level_marks.is_empty() {
        ttft_p50 = ttft_p50.mark_line(marks(level_marks, "#333"));
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
    let mut throughput = base(Trigger::Axis)
        .title(title("Throughput against load"))
        .x_axis(level_axis("level (concurrency or rate)"))
        .y_axis(value_axis("output tokens / s").scale(false))
        .y_axis(value_axis("requests / s").scale(false))
        .series(line(
            "aggregate tokens/s",
            &|g| g.throughput_tokens_per_s,
            0.0,
        ));
    if let Some(slo) = slo {
        let goodput: Vec<_> = slo
            .levels
            .iter()
            .filter_map(|l| Some(xy(l.level?, l.goodput_per_s?)))
            .collect();
        throughput = throughput.series(
            Line::new()
                .name(format!(
                    "goodput: requests/s meeting the {} SLO",
                    slo.set.name
                ))
                .y_axis_index(1.0)
                .symbol(Symbol::Diamond)
                .line_style(LineStyle::new().type_(LineStyleType::Dashed))
                .data(goodput),
        );
    }
    vec![
        ChartSpec {
            id: "levels",
            title: "Latency against load".into(),
            caption: format!(
                "{} {}",
                match (agg.knee_level, ttft_core::diagnosis::knee_told(report, agg)) {
                    (Some(k), Some(false)) => format!(
                        "P50 TTFT or ITL at level {k} passes {}× the first level's, but is not told from noise yet: see the knee finding.",
                        agg.knee_factor
                    ),
                    (Some(k), _) => format!(
                        "Latency bends at level {k}: P50 TTFT or ITL above {}× the first level's, told from noise per request.",
                        agg.knee_factor
                    ),
                    (None, _) => format!(
                        "No knee: P50 latency stays within {}× the first level's.",
                        agg.knee_factor
                    ),
                },
                slo.map_or_else(
                    || "The SLO mark and goodput follow once the SLO is scored.".to_owned(),
                    |s| s.sentence()
                )
            ),
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
pub(super) fn rounds(report: &Report, agg: &Aggregates) -> Option<ChartSpec> {
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
