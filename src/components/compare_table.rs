//! The compare table's rows: each run's figure with, smaller, its interval (or the requests it
//! needs for one, or why it has none), and each later run's difference from the first run with
//! its interval and relative size, marked `≠` when the core tells it from noise and `≈` when
//! it does not. Everything shown is the core's ([`ttft_core::compare::MetricRow`]: estimates
//! and Holm-corrected differences); this only formats it.
//!
//! For tests: each cell is `data-testid="compare-cell"` with `data-run`, `data-lo`/`data-hi`
//! (its interval, in the figure's unit), `data-different` (later runs: its difference from the
//! first is told from noise; the first run: it is told from every other run) and
//! `data-needs`; each difference is `data-testid="compare-diff"` with `data-lo`/`data-hi`,
//! `data-different`, `data-rel-lo`/`data-rel-hi` (relative to the first run's value, as
//! fractions) and `data-needs-per-side`. A best run keeps the `best` class; it is highlighted
//! (`told`) only when its difference is told from noise.

use leptos::prelude::*;
use ttft_core::compare::{Better, MetricRow, Unit};
use ttft_core::differences::{Confidence, DiffCell};
use ttft_core::run_intervals::{Figure, RunSamples};
use ttft_core::uncertainty::Estimate;

use crate::format::{ms, pct, per_s, score};

/// A value in its unit.
pub fn value(unit: Unit, v: Option<f64>) -> String {
    match unit {
        Unit::Ms => ms(v),
        Unit::TokensPerS => per_s(v),
        Unit::Fraction => v.map_or("—".into(), pct),
        Unit::Score => score(v),
    }
}

/// An interval in the figure's unit: `780–845 ms`, `93–99%`, `0.91–0.95`, `71.0–75.2/s`.
pub fn range(unit: Unit, lo: f64, hi: f64) -> String {
    match unit {
        Unit::Ms => ttft_core::format::ms_range(lo, hi),
        Unit::TokensPerS => format!("{lo:.1}–{hi:.1}/s"),
        Unit::Fraction => format!("{:.0}–{:.0}%", lo * 100.0, hi * 100.0),
        Unit::Score => format!("{lo:.2}–{hi:.2}"),
    }
}

/// A signed number with its sign always written (`+8.1`, `−3.0`).
fn signed(x: f64, decimals: usize) -> String {
    let s = format!("{:.*}", decimals, x.abs());
    if x < 0.0 && s.chars().any(|c| c.is_ascii_digit() && c != '0') {
        format!("−{s}")
    } else {
        format!("+{s}")
    }
}

/// A difference and its interval's bounds in one scale, the unit after the difference:
/// `("+12.3 ms", "+8.1", "+16.0")`; shares in percentage points.
fn diff_texts(unit: Unit, d: f64, lo: Option<f64>, hi: Option<f64>) -> (String, String, String) {
    let (scale, decimals, suffix) = match unit {
        Unit::Ms => {
            let big = [Some(d), lo, hi]
                .into_iter()
                .flatten()
                .any(|x| x.abs() >= 1000.0);
            if big {
                (1e-3, 2, " s")
            } else {
                (1.0, 1, " ms")
            }
        }
        Unit::TokensPerS => (1.0, 1, "/s"),
        Unit::Fraction => (100.0, 1, " pts"),
        Unit::Score => (1.0, 2, ""),
    };
    let f = |x: Option<f64>| x.map_or(String::new(), |x| signed(x * scale, decimals));
    (format!("{}{suffix}", f(Some(d))), f(lo), f(hi))
}

/// Why a row's figure has no interval, when it is not a statistic.
fn not_a_statistic(metric: &str) -> &'static str {
    if metric.starts_with("Longest") {
        "no interval (a maximum)"
    } else {
        "no interval (a derived rate)"
    }
}

/// What a run's cell says of its interval, in words (the tooltip).
fn interval_sentence(
    row: &MetricRow,
    estimate: Option<&Estimate>,
    samples: &RunSamples,
    has_value: bool,
) -> String {
    let gaps = matches!(row.figure, Some(Figure::Itl { .. }));
    match (row.figure, estimate) {
        (None, _) => not_a_statistic(&row.metric).to_owned(),
        (Some(_), Some(e)) => match (e.interval, e.needs) {
            (Some(i), _) => format!(
                "{:.0} % interval {} from {}{} requests",
                i.level * 100.0,
                range(row.unit, i.lo, i.hi),
                if gaps { "the gaps of " } else { "" },
                e.n
            ),
            (None, Some(n)) => format!("needs {n} requests for an interval (has {})", e.n),
            (None, None) => "no interval".to_owned(),
        },
        (Some(_), None) if gaps && samples.gaps_left_out => {
            "gaps not in the link: no interval".to_owned()
        }
        (Some(_), None) if has_value => {
            "the file holds no per-request values: no interval".to_owned()
        }
        (Some(_), None) => String::new(),
    }
}

/// Whether run `i`'s figure is told from noise: a later run's difference from the first; for
/// the first run, its difference from every other run with one.
fn told(row: &MetricRow, i: usize) -> bool {
    if i > 0 {
        return row
            .differences
            .get(i)
            .copied()
            .flatten()
            .is_some_and(|d| d.different);
    }
    let others: Vec<&DiffCell> = row.differences.iter().skip(1).flatten().collect();
    !others.is_empty() && others.iter().all(|d| d.different)
}

/// A later run's difference from the first run: `+12.3 ms [+8.1, +16.0] (+10 %) ≠`, or `≈`
/// with what would tell it.
fn diff_view(row: &MetricRow, d: &DiffCell, first: &str, confidence: Confidence) -> AnyView {
    let lo = d.interval.map(|i| i.lo);
    let hi = d.interval.map(|i| i.hi);
    let (est, lo_t, hi_t) = diff_texts(row.unit, d.estimate, lo, hi);
    let rel = d.relative();
    let rel_text = rel.map_or(String::new(), |(r, _)| {
        format!(" ({} %)", signed(r * 100.0, 0))
    });
    let bounds = d
        .interval
        .map_or(String::new(), |_| format!(" [{lo_t}, {hi_t}]"));
    let detect = (confidence.detect * 100.0).round();
    let (mark, why) = if d.different {
        (
            "≠",
            format!(
                "told from noise: its {:.0} % interval excludes zero after Holm's correction over the table (adjusted p = {:.3})",
                confidence.level * 100.0,
                d.adjusted_p.unwrap_or(0.0)
            ),
        )
    } else {
        let advice = match (d.interval, d.needs_per_side) {
            (Some(_), Some(n)) => format!(
                "cannot be told from noise; about {n} requests per side would show a {detect:.0} % difference"
            ),
            (None, Some(n)) => format!(
                "cannot be told from noise: no interval yet; {n} requests per side would give one"
            ),
            _ => "cannot be told from noise".to_owned(),
        };
        ("≈", advice)
    };
    let title = format!(
        "Difference from “{first}”: {why}. Method: {}.",
        d.method.describe()
    );
    let rel_lo = rel.and_then(|(_, i)| i).map(|i| i.lo.to_string());
    let rel_hi = rel.and_then(|(_, i)| i).map(|i| i.hi.to_string());
    view! {
        <span class="diff" class:different=d.different data-testid="compare-diff"
            data-lo=lo.map(|x| x.to_string()) data-hi=hi.map(|x| x.to_string())
            data-different=d.different.to_string() data-rel-lo=rel_lo data-rel-hi=rel_hi
            data-needs-per-side=d.needs_per_side.map(|n| n.to_string()) title=title>
            {format!("{est}{bounds}{rel_text} ")}<span class="mark">{mark}</span>
        </span>
    }
    .into_any()
}

/// One metric's row of the compare table.
pub fn row_view(
    row: &MetricRow,
    samples: &[RunSamples],
    first: &str,
    confidence: Confidence,
) -> AnyView {
    let arrow = match row.better {
        Better::Lower => "lower is better",
        Better::Higher => "higher is better",
    };
    let cells = row
        .values
        .iter()
        .zip(&row.worse_by)
        .enumerate()
        .map(|(i, (v, w))| {
            let is_best = row.best == Some(i);
            let sure = told(row, i);
            let delta = w
                .map(|w| {
                    let w = if row.better == Better::Lower { w } else { -w };
                    format!(" ({:+.0} %)", w * 100.0)
                })
                .unwrap_or_default();
            let estimate = row.estimates.get(i).copied().flatten();
            let interval = estimate.and_then(|e| e.interval);
            let needs = estimate.and_then(|e| e.interval.is_none().then_some(e.needs).flatten());
            let empty = RunSamples::default();
            let sentence = interval_sentence(
                row,
                estimate.as_ref(),
                samples.get(i).unwrap_or(&empty),
                v.is_some(),
            );
            let small = match (interval, needs) {
                _ if v.is_none() => String::new(),
                (Some(iv), _) => format!("[{}]", range(row.unit, iv.lo, iv.hi)),
                (None, Some(n)) => format!("needs {n} requests"),
                (None, None) => String::new(),
            };
            let diff = row
                .differences
                .get(i)
                .copied()
                .flatten()
                .map(|d| diff_view(row, &d, first, confidence));
            view! {
                <td class:best=is_best class:told=is_best && sure data-testid="compare-cell"
                    data-run=i.to_string() data-lo=interval.map(|iv| iv.lo.to_string())
                    data-hi=interval.map(|iv| iv.hi.to_string()) data-different=sure.to_string()
                    data-needs=needs.map(|n| n.to_string()) title=sentence>
                    {value(row.unit, *v)}{delta}" "
                    {(!small.is_empty()).then(|| view! { <span class="interval">{small}</span> })}
                    {diff}
                </td>
            }
        })
        .collect_view();
    view! {
        <tr data-metric=row.metric.clone()>
            <td title=arrow>{row.metric.clone()}</td>
            {cells}
        </tr>
    }
    .into_any()
}
