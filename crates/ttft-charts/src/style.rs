//! Shared look: palette, axes, lines and the chart skeleton.

use charming::Chart;
use charming::component::{Axis, Grid, Legend, Title};
use charming::datatype::{CompositeValue, DataPoint};
use charming::element::{
    AxisType, Color, ItemStyle, LineStyle, LineStyleType, MarkLine, MarkLineData, MarkLineVariant,
    NameLocation, Step, Tooltip, Trigger,
};
use charming::series::Line;

/// Series colours (colour-blind safe, Okabe–Ito).
pub const PALETTE: [&str; 6] = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00",
];

/// Threshold lines.
pub const THRESHOLD: &str = "#D55E00";

/// A chart with the studio's defaults: no animation (a measurement tool redraws exactly and a
/// screenshot never catches a half-drawn bar), axis tooltip, legend at the bottom.
pub fn base(trigger: Trigger) -> Chart {
    Chart::new()
        .animation(false)
        .color(PALETTE.iter().map(|c| Color::from(*c)).collect())
        .tooltip(Tooltip::new().trigger(trigger))
        .legend(Legend::new().bottom(0))
        .grid(Grid::new().left(64).right(48).top(40).bottom(76))
}

/// A title without text duplication (the page shows the title; the PNG needs it too).
pub fn title(text: &str) -> Title {
    Title::new()
        .text(text)
        .left("center")
        .text_style(charming::element::TextStyle::new().font_size(13))
}

/// A value axis with a name in the middle.
pub fn value_axis(name: &str) -> Axis {
    named_axis(AxisType::Value, name, 28).scale(true)
}

/// A category axis.
pub fn category_axis(name: &str, labels: Vec<String>) -> Axis {
    named_axis(AxisType::Category, name, 32).data(labels)
}

/// An axis of `kind` with its name centred, `gap` px from the axis.
fn named_axis(kind: AxisType, name: &str, gap: u32) -> Axis {
    Axis::new()
        .type_(kind)
        .name(name)
        .name_location(NameLocation::Middle)
        .name_gap(gap)
}

/// A point `[x, y]`, rounded to 0.001 so options stay small and stable.
pub fn xy(x: f64, y: f64) -> DataPoint {
    DataPoint::from(CompositeValue::from(vec![round(x), round(y)]))
}

/// `(lo, hi)` widened to round numbers (multiples of a tenth of the span's power of ten), so
/// an axis that starts and ends there prints `14,300` rather than `14,344.103`.
pub fn nice_bounds(lo: f64, hi: f64) -> (f64, f64) {
    let span = hi - lo;
    if !(span.is_finite() && span > 0.0) {
        return (lo, hi);
    }
    let step = 10f64.powf(span.log10().floor()) / 10.0;
    ((lo / step).floor() * step, (hi / step).ceil() * step)
}

/// Rounds to 0.001.
pub fn round(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// A dashed vertical line at `x` named `name`.
pub fn vline(name: &str, x: impl Into<CompositeValue>) -> MarkLineVariant {
    MarkLineVariant::Simple(MarkLineData::new().name(name).x_axis(x))
}

/// A dashed horizontal line at `y` named `name`.
pub fn hline(name: &str, y: f64) -> MarkLineVariant {
    MarkLineVariant::Simple(MarkLineData::new().name(name).y_axis(round(y)))
}

/// Mark lines drawn dashed with their names as labels.
pub fn marks(lines: Vec<MarkLineVariant>, color: &str) -> MarkLine {
    MarkLine::new()
        .silent(true)
        .symbol(vec![charming::element::Symbol::None])
        // Inside the plot, at the line's top end: a label above the plot would sit on the title.
        .label(
            charming::element::Label::new()
                .formatter("{b}")
                .position(charming::element::LabelPosition::InsideEndTop),
        )
        .line_style(LineStyle::new().type_(LineStyleType::Dashed).color(color))
        .data(lines)
}

pub use ttft_core::format::ms;

/// CDF points as `[x, %]`, starting from 0 % at the smallest value so the first step is drawn;
/// above `max_points` values a sample that keeps the min, max and percentiles
/// ([`crate::sample::cdf`]).
pub fn cdf_points(values: &[f64], max_points: usize) -> Vec<DataPoint> {
    let points = crate::sample::cdf(values, max_points);
    let start = points.first().map(|p| xy(p.0, 0.0));
    start
        .into_iter()
        .chain(points.into_iter().map(|(x, p)| xy(x, p * 100.0)))
        .collect()
}

/// Series colour `i` of [`PALETTE`].
pub fn palette(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// A CDF line of per-request values in `color`, stepped, its [`cdf_points`] sample above
/// `max_points` values.
pub fn cdf_line_in(name: &str, values: &[f64], max_points: usize, color: &str) -> Line {
    Line::new()
        .name(name)
        .show_symbol(false)
        .step(Step::End)
        .line_style(LineStyle::new().color(color))
        .item_style(ItemStyle::new().color(color))
        .data(cdf_points(values, max_points))
}

/// The Dvoretzky–Kiefer–Wolfowitz band around the CDF line of `values` at `level`
/// ([`ttft_core::uncertainty::dkw_epsilon`]): two thin dashed lines in the line's `color`,
/// `F̂ − ε` and `F̂ + ε` clipped to 0–100 %, at the line's points; named `"{name} · 95 % band"`.
/// For independent values only (per-request ones, not pooled gaps). None without values.
pub fn cdf_band(
    name: &str,
    values: &[f64],
    max_points: usize,
    level: f64,
    color: &str,
) -> Vec<Line> {
    let points = crate::sample::cdf(values, max_points);
    // ε is of the values behind the line, not of the points it keeps.
    let n = values.iter().filter(|x| x.is_finite()).count();
    let (Some(eps), Some(first)) = (
        ttft_core::uncertainty::dkw_epsilon(n, level),
        points.first(),
    ) else {
        return Vec::new();
    };
    let x0 = first.0;
    let side = |sign: f64| -> Vec<DataPoint> {
        let start = ttft_core::uncertainty::dkw_band(0.0, eps);
        std::iter::once(xy(x0, 100.0 * if sign < 0.0 { start.0 } else { start.1 }))
            .chain(points.iter().map(|(x, f)| {
                let (lo, hi) = ttft_core::uncertainty::dkw_band(*f, eps);
                xy(*x, 100.0 * if sign < 0.0 { lo } else { hi })
            }))
            .collect()
    };
    let label = band_name(name, level);
    [-1.0, 1.0]
        .into_iter()
        .map(|sign| {
            Line::new()
                .name(label.as_str())
                .show_symbol(false)
                .step(Step::End)
                .silent(true)
                .line_style(
                    LineStyle::new()
                        .color(color)
                        .width(1)
                        .opacity(0.55)
                        .type_(LineStyleType::Dashed),
                )
                .item_style(ItemStyle::new().color(color))
                .data(side(sign))
        })
        .collect()
}

/// A band's series name: `"TTFT · 95 % band"`.
pub fn band_name(name: &str, level: f64) -> String {
    format!("{name} · {} band", level_text(level))
}

/// A level as the captions say it: `95 %`, `99.5 %`.
pub fn level_text(level: f64) -> String {
    let pct = ttft_core::uncertainty::sane_level(level) * 100.0;
    if (pct - pct.round()).abs() < 1e-9 {
        format!("{pct:.0} %")
    } else {
        format!("{pct:.1} %")
    }
}

/// The caption's sentence on the bands.
pub fn band_caption(level: f64) -> String {
    format!(
        " Dashed: {} band of the whole curve (DKW): the true curve lies between its lines everywhere at once, at that confidence.",
        level_text(level)
    )
}

/// The legend of a chart with bands: its main lines only (the bands follow their colours).
pub fn legend_of(names: Vec<String>) -> Legend {
    Legend::new().bottom(0).data(names)
}
