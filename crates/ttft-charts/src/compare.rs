//! Charts of 2–4 runs overlaid.

use charming::datatype::DataPoint;
use charming::element::{LineStyle, LineStyleType, Symbol, Trigger};
use charming::series::{Bar, Line};
use ttft_core::compare::{Comparison, per_token_ms, tokens_visible};
use ttft_core::report::{Aggregates, Report};

use crate::ChartSpec;
use crate::style::{
    band_caption, base, category_axis, cdf_band, cdf_line_in, legend_of, marks, palette, round,
    title, value_axis, vline, xy,
};

/// Points per progress line.
const PROGRESS_POINTS: usize = 80;

/// The comparison charts: tokens on screen over time (the lesson), TTFT and ITL CDFs overlaid
/// (TTFT's with each run's DKW band at the comparison's level: requests are independent,
/// gaps are not), headline latencies side by side, and latency per level when every run is a
/// sweep.
pub fn compare_charts(
    titles: &[&str],
    reports: &[&Report],
    aggs: &[Aggregates],
    cmp: &Comparison,
) -> Vec<ChartSpec> {
    let mut out = Vec::new();
    out.extend(progress(titles, aggs, cmp));
    let level = cmp.confidence.level;
    out.extend(overlay_cdf(
        "cmp-ttft-cdf",
        "TTFT CDF",
        titles,
        reports,
        Some(level),
        &|r| {
            r.measured()
                .filter(|q| q.outcome.is_ok())
                .filter_map(|q| q.metrics.ttft_ms)
                .collect()
        },
    ));
    let itl = overlay_cdf(
        "cmp-itl-cdf",
        "Per-token ITL CDF",
        titles,
        reports,
        None,
        &|r| {
            r.measured()
                .filter(|q| q.outcome.is_ok())
                .flat_map(|q| q.metrics.per_token_itl())
                .collect()
        },
    );
    out.extend(itl);
    out.push(headline_bars(titles, aggs));
    out.extend(levels(titles, aggs));
    out
}

/// Tokens visible over time for each run, from its P50 TTFT and P50 time per token, up to its
/// P50 output length: where lines cross, the slower starter overtakes.
fn progress(titles: &[&str], aggs: &[Aggregates], cmp: &Comparison) -> Option<ChartSpec> {
    let lines: Vec<(usize, f64, f64, f64)> = aggs
        .iter()
        .enumerate()
        .filter_map(|(i, a)| {
            let ttft = a.ttft?.p50;
            let tok = per_token_ms(a)?;
            let end = a.e2e.map_or(ttft + 100.0 * tok, |e| e.p50.max(ttft));
            Some((i, ttft, tok, end))
        })
        .collect();
    if lines.len() < 2 {
        return None;
    }
    let horizon = lines.iter().map(|l| l.3).fold(0.0, f64::max) * 1.05;
    let mut chart = base(Trigger::Axis)
        .title(title("Tokens on screen over time"))
        .x_axis(
            value_axis("ms after sending")
                .scale(false)
                .max(round(horizon)),
        )
        .y_axis(value_axis("tokens visible").scale(false));
    for (i, ttft, tok, end) in &lines {
        let mut data = vec![xy(0.0, 0.0), xy(*ttft, 0.0)];
        for k in 0..=PROGRESS_POINTS {
            let t = ttft + (end - ttft) * k as f64 / PROGRESS_POINTS as f64;
            data.push(xy(t, tokens_visible(*ttft, *tok, t)));
        }
        let mut line = Line::new()
            .name(titles.get(*i).copied().unwrap_or("?"))
            .show_symbol(false)
            .data(data);
        if let Some(c) = cmp.crossover.filter(|c| c.early == *i) {
            line = line.mark_line(marks(
                vec![vline(
                    &format!("level at token {:.0}", c.at_token.ceil()),
                    round(c.at_ms),
                )],
                "#333",
            ));
        }
        chart = chart.series(line);
    }
    Some(ChartSpec {
        id: "cmp-progress",
        title: "Tokens on screen over time".into(),
        caption: "Each line starts at the run's P50 TTFT and rises one token per P50 TPOT until its P50 end: where lines cross, the slower starter overtakes.".into(),
        chart,
    })
}

/// Each run's CDF of `values`, overlaid; with `band` a level, each line with its DKW band.
fn overlay_cdf(
    id: &'static str,
    name: &str,
    titles: &[&str],
    reports: &[&Report],
    band: Option<f64>,
    values: &dyn Fn(&Report) -> Vec<f64>,
) -> Option<ChartSpec> {
    let mut chart = base(Trigger::Axis)
        .title(title(name))
        .x_axis(value_axis("ms"))
        .y_axis(value_axis("% at or below").min(0).max(100).scale(false));
    let mut names = Vec::new();
    for (i, r) in reports.iter().enumerate() {
        let v = values(r);
        if v.is_empty() {
            continue;
        }
        let (run, color) = (titles.get(i).copied().unwrap_or("?"), palette(i));
        names.push(run.to_owned());
        chart = chart.series(cdf_line_in(run, &v, 200, color));
        for line in band.map_or(Vec::new(), |level| cdf_band(run, &v, 200, level, color)) {
            chart = chart.series(line);
        }
    }
    let drawn = names.len();
    let note = match band {
        Some(level) => band_caption(level),
        None => " No band: the gaps of one request are not independent draws.".to_owned(),
    };
    (drawn > 0).then(|| ChartSpec {
        id,
        title: name.into(),
        caption: format!("{drawn} runs overlaid; further left is faster.{note}"),
        chart: chart.legend(legend_of(names)),
    })
}

fn headline_bars(titles: &[&str], aggs: &[Aggregates]) -> ChartSpec {
    type Pick = fn(&Aggregates) -> Option<f64>;
    let metrics: [(&str, Pick); 5] = [
        ("TTFT P50", |a| a.ttft.map(|s| s.p50)),
        ("TTFT P95", |a| a.ttft.map(|s| s.p95)),
        ("Meaningful P50", |a| a.meaningful.map(|s| s.p50)),
        ("E2E P50", |a| a.e2e.map(|s| s.p50)),
        ("E2E P95", |a| a.e2e.map(|s| s.p95)),
    ];
    let mut chart = base(Trigger::Axis)
        .title(title("Waiting vs total latency"))
        .x_axis(category_axis(
            "",
            metrics.iter().map(|m| m.0.to_owned()).collect(),
        ))
        .y_axis(value_axis("ms").scale(false));
    for (i, a) in aggs.iter().enumerate() {
        chart = chart.series(
            Bar::new().name(titles.get(i).copied().unwrap_or("?")).data(
                metrics
                    .iter()
                    .map(|m| DataPoint::from(round(m.1(a).unwrap_or(0.0))))
                    .collect(),
            ),
        );
    }
    ChartSpec {
        id: "cmp-bars",
        title: "Waiting vs total latency".into(),
        caption: format!(
            "Lower is better. TTFT is the wait users feel; E2E is what a throughput benchmark reports ({} runs).",
            aggs.len()
        ),
        chart,
    }
}

fn levels(titles: &[&str], aggs: &[Aggregates]) -> Option<ChartSpec> {
    if !aggs
        .iter()
        .all(|a| a.groups.len() >= 2 && a.groups.iter().all(|g| g.level.is_some()))
    {
        return None;
    }
    let mut chart = base(Trigger::Axis)
        .title(title("ITL P50 and TTFT P50 against load"))
        .x_axis(value_axis("level").scale(false))
        .y_axis(value_axis("ITL P50 (ms)").scale(false))
        .y_axis(value_axis("TTFT P50 (ms)").scale(false));
    for (i, a) in aggs.iter().enumerate() {
        let name = titles.get(i).copied().unwrap_or("?");
        chart = chart
            .series(
                Line::new()
                    .name(format!("{name} · ITL"))
                    .symbol(Symbol::Circle)
                    .data(
                        a.groups
                            .iter()
                            .filter_map(|g| Some(xy(g.level?, g.itl?.p50)))
                            .collect(),
                    ),
            )
            .series(
                Line::new()
                    .name(format!("{name} · TTFT"))
                    .y_axis_index(1)
                    .symbol(Symbol::Triangle)
                    .line_style(LineStyle::new().type_(LineStyleType::Dashed))
                    .data(
                        a.groups
                            .iter()
                            .filter_map(|g| Some(xy(g.level?, g.ttft?.p50)))
                            .collect(),
                    ),
            );
    }
    let knees: Vec<String> = aggs
        .iter()
        .enumerate()
        .map(|(i, a)| {
            format!(
                "{}: {}",
                titles.get(i).copied().unwrap_or("?"),
                a.knee_level
                    .map_or("no knee".into(), |k| format!("knee at {k}"))
            )
        })
        .collect();
    Some(ChartSpec {
        id: "cmp-levels",
        title: "ITL P50 and TTFT P50 against load".into(),
        caption: knees.join(" · "),
        chart,
    })
}
