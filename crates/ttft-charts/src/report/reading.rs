//! How one answer read: the text delivered and the text a reader at the report's reading speed
//! has read over time, against the expected pace, with the reader waits marked. Drawn for the
//! request with the median TTFT ([`Report::median_replay`]) from the core's
//! [`ReadingExperience::curves`].

use charming::element::{Label, LineStyle, LineStyleType, MarkLine, MarkLineData, MarkLineVariant};
use charming::element::{Symbol, Trigger};
use charming::series::Line;
use ttft_core::experience::ReadingExperience;
use ttft_core::report::Report;

use crate::ChartSpec;
use crate::sample::{KEEPS_PEAKS, MAX_POINTS, min_max_buckets, sampled_note};
use crate::style::{THRESHOLD, base, ms, round, title, value_axis, xy};
use ttft_core::record_experience::reading_arrivals;
use ttft_core::run_stats::RunStats;

/// Delivered against readable text of the median-TTFT request; `None` when no successful
/// request holds text to read.
pub(super) fn reading(report: &Report) -> Option<ChartSpec> {
    let record = report.median_replay()?;
    let cfg = &report.experience.reading;
    let arrivals = reading_arrivals(record, cfg);
    let curves = ReadingExperience::curves(&arrivals, cfg)?;
    let score = ReadingExperience::of(&arrivals, cfg)?;
    // Reading time in seconds against ms from the request's start; a long answer's curves
    // are thinned to their peaks and steps.
    let mut shown = 0;
    let mut total = 0;
    let mut points = |curve: &[(f64, f64)]| -> Vec<charming::datatype::DataPoint> {
        let kept = min_max_buckets(curve, MAX_POINTS);
        shown = shown.max(kept.len());
        total = total.max(curve.len());
        kept.iter().map(|&(t, r)| xy(t, r / 1000.0)).collect()
    };
    let (delivered, read, expected) = (
        points(&curves.delivered),
        points(&curves.readable),
        points(&curves.expected),
    );
    let note = sampled_note(shown, total, "points", KEEPS_PEAKS)
        .map(|n| format!(" Longest line: {n}."))
        .unwrap_or_default();
    let waits: Vec<MarkLineVariant> = curves
        .waits
        .iter()
        .map(|&(from, until, read)| {
            let y = round(read / 1000.0);
            MarkLineVariant::StartToEnd(
                MarkLineData::new()
                    .name(format!("wait {}", ms(until - from)))
                    .coord(vec![round(from), y]),
                MarkLineData::new().coord(vec![round(until), y]),
            )
        })
        .collect();
    let mut readable = Line::new().name("read").show_symbol(false).data(read);
    if !waits.is_empty() {
        readable = readable.mark_line(
            MarkLine::new()
                .silent(true)
                .symbol(vec![Symbol::None])
                .label(Label::new().formatter("{b}"))
                .line_style(LineStyle::new().color(THRESHOLD).width(4.0))
                .data(waits),
        );
    }
    let chart = base(Trigger::Axis)
        .title(title("Delivered and read text of the median request"))
        .x_axis(value_axis("ms since the request was sent").scale(false))
        .y_axis(value_axis("s of reading").scale(false))
        .series(
            Line::new()
                .name("delivered")
                .show_symbol(false)
                .data(delivered),
        )
        .series(readable)
        .series(
            Line::new()
                .name("expected")
                .show_symbol(false)
                .line_style(LineStyle::new().type_(LineStyleType::Dashed))
                .data(expected),
        );
    let waited = match score.waits {
        0 => "never waits for text".to_owned(),
        1 => format!("waits once, {}", ms(score.wait_total_ms)),
        n => format!(
            "waits {n} times, {} in all (longest {})",
            ms(score.wait_total_ms),
            ms(score.wait_longest_ms)
        ),
    };
    Some(ChartSpec {
        id: "reading",
        title: "Delivered and read text of the median request".into(),
        caption: format!(
            "Request #{} (median TTFT): a reader at {} words/s expecting the first word at {} {}; reading QoE {:.2}.{note}",
            record.index,
            cfg.words_per_s,
            ms(cfg.expected_ttft_ms),
            waited,
            score.qoe
        ),
        chart,
    })
}
