//! Planned vs achieved send rate of an open-loop run (a load shape, a trace): the plan's sends
//! per second and the actual sends of the same requests per second, each bin's achieved rate
//! with its exact Poisson interval ([`ttft_core::schedule::rate_chart`]), drawn as dashed
//! bounds in the achieved line's colour. None for a closed-loop run (nothing planned).

use charming::element::{LineStyle, LineStyleType, Symbol, Trigger};
use charming::series::Line;
use ttft_core::report::Report;
use ttft_core::schedule::{RateCompared, rate_chart as rate_bins};
use ttft_core::time_slices::window_ms_for;

use crate::ChartSpec;
use crate::style::{PALETTE, base, level_text, round, title, value_axis, xy};

/// Where a bin is drawn: its middle, in seconds of the run.
fn at(b: &RateCompared) -> f64 {
    (b.achieved.start_ms + b.achieved.end_ms) / 2e3
}

/// A line of one value per bin (bins without it are left out).
fn per_bin(name: &str, bins: &[RateCompared], pick: impl Fn(&RateCompared) -> Option<f64>) -> Line {
    Line::new().name(name).data(
        bins.iter()
            .filter_map(|b| Some(xy(at(b), pick(b)?)))
            .collect(),
    )
}

/// The span of a run's planned and actual sends (ms), for the bin length.
fn send_span(report: &Report) -> Option<f64> {
    let times = report
        .measured()
        .filter_map(|r| r.planned_ms.map(|p| [p, r.start_ms]))
        .flatten()
        .filter(|t| t.is_finite());
    let (lo, hi) = times.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), t| {
        (lo.min(t), hi.max(t))
    });
    (hi > lo).then_some(hi - lo)
}

/// The planned-vs-achieved rate chart (`rate-chart`) of a run whose requests carry planned
/// sends, in bins of a round length (as the time slices' windows, [`window_ms_for`] the span of
/// the sends), the achieved rate's interval at `level`; `None` when nothing was planned.
pub fn rate_chart(report: &Report, level: f64) -> Option<ChartSpec> {
    let bin_ms = window_ms_for(send_span(report)?);
    let bins = rate_bins(report, bin_ms, level);
    if bins.is_empty() {
        return None;
    }
    let width = bins[0].achieved.end_ms - bins[0].achieved.start_ms;
    let band = level_text(level);
    let bound = |name: String, pick: fn(&RateCompared) -> Option<f64>| {
        per_bin(&name, &bins, pick).show_symbol(false).line_style(
            LineStyle::new()
                .type_(LineStyleType::Dashed)
                .width(1)
                .color(PALETTE[1]),
        )
    };
    let sent: usize = bins.iter().map(|b| b.achieved.sends).sum();
    let outside = bins
        .iter()
        .filter(|b| {
            b.achieved
                .interval
                .is_some_and(|i| b.planned_per_s < i.lo || b.planned_per_s > i.hi)
        })
        .count();
    let chart = base(Trigger::Axis)
        .title(title("Planned vs achieved rate"))
        .x_axis(value_axis("time in run (s)").scale(false))
        .y_axis(value_axis("requests sent / s").scale(false))
        .series(
            per_bin("planned", &bins, |b| Some(b.planned_per_s))
                .symbol(Symbol::None)
                .line_style(LineStyle::new().width(2).color(PALETTE[0])),
        )
        .series(
            per_bin("achieved", &bins, |b| Some(b.achieved.per_s))
                .symbol(Symbol::Circle)
                .line_style(LineStyle::new().color(PALETTE[1])),
        )
        .series(bound(format!("achieved · {band} interval, low"), |b| {
            b.achieved.interval.map(|i| i.lo)
        }))
        .series(bound(format!("achieved · {band} interval, high"), |b| {
            b.achieved.interval.map(|i| i.hi)
        }));
    Some(ChartSpec {
        id: "rate-chart",
        title: "Planned vs achieved rate".into(),
        caption: format!(
            "Sends per second of the {sent} planned requests in {} s bins: as planned, and as they actually went; dashed: each bin's {band} interval of the achieved rate (exact Poisson). The planned rate lies outside it in {outside} of {} bins.",
            round(width / 1e3),
            bins.len(),
        ),
        chart,
    })
}
