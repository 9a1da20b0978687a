//! Shared look: palette, axes, lines and the chart skeleton.

use charming::Chart;
use charming::component::{Axis, Grid, Legend, Title};
use charming::datatype::{CompositeValue, DataPoint};
use charming::element::{
    AxisType, Color, LineStyle, LineStyleType, MarkLine, MarkLineData, MarkLineVariant,
    NameLocation, Tooltip, Trigger,
};

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
        .label(charming::element::Label::new().formatter("{b}"))
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
