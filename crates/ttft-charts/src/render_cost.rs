//! The rendering lab's chart (#31): each strategy's render cost per update against the
//! answer's length so far ([`ttft_core::paint::render_cost_by_length`]), where *re-render
//! all*'s cost climbs with the answer and *incremental*'s stays flat. Each strategy's points
//! are thinned to [`crate::MAX_POINTS`] / 4 with every peak and step kept.

use charming::element::Trigger;
use charming::series::Scatter;
use ttft_core::paint::{PaintTrace, render_cost_by_length, render_cost_ends};

use crate::ChartSpec;
use crate::sample::{KEEPS_PEAKS, MAX_POINTS, min_max_buckets, sampled_note};
use crate::style::{base, legend_of, palette, title, value_axis, xy};

/// The chart of `traces` (one per strategy, named by their `strategy`); `None` without an
/// update.
pub fn render_cost_chart(traces: &[(&str, &PaintTrace)]) -> Option<ChartSpec> {
    if traces.iter().all(|(_, t)| t.updates.is_empty()) {
        return None;
    }
    let cap = MAX_POINTS / traces.len().max(1);
    let mut chart = base(Trigger::Item)
        .title(title("Render cost against answer length"))
        .legend(legend_of(
            traces.iter().map(|(n, _)| (*n).to_owned()).collect(),
        ))
        .x_axis(value_axis("characters shown (bytes)").scale(false))
        .y_axis(value_axis("render cost per update (ms)").scale(false));
    let mut ends = Vec::new();
    let mut notes = Vec::new();
    for (i, (name, trace)) in traces.iter().enumerate() {
        let all: Vec<(f64, f64)> = render_cost_by_length(trace)
            .into_iter()
            .map(|(len, ms)| (len as f64, ms))
            .collect();
        let shown = min_max_buckets(&all, cap);
        if let Some(n) = sampled_note(
            shown.len(),
            all.len(),
            &format!("{name} updates"),
            KEEPS_PEAKS,
        ) {
            notes.push(n);
        }
        chart = chart.series(
            Scatter::new()
                .name(*name)
                .symbol_size(4)
                .item_style(charming::element::ItemStyle::new().color(palette(i)))
                .data(shown.iter().map(|p| xy(p.0, p.1)).collect()),
        );
        if let Some((start, end)) = render_cost_ends(trace) {
            ends.push(format!("{name} {start:.2} → {end:.2} ms"));
        }
    }
    let notes = if notes.is_empty() {
        String::new()
    } else {
        format!(" {}.", notes.join("; "))
    };
    Some(ChartSpec {
        id: "render-cost",
        title: "Render cost against answer length".into(),
        caption: format!(
            "What each update cost the main thread as the answer grew; median cost of the first fifth of updates → the last fifth: {}. A cost that climbs with the answer is re-rendering all of it on every chunk.{notes}",
            if ends.is_empty() {
                "fewer than 10 updates".to_owned()
            } else {
                ends.join(", ")
            }
        ),
        chart,
    })
}
