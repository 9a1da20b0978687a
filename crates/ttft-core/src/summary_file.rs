//! A run's summary, the export of its headline figures with how sure each is: every figure,
//! its interval at the chosen level ([`crate::run_intervals`]) or the requests it needs for
//! one, or why it has none. [`summary_rows`] is what the headline tiles and both files read;
//! [`summary_csv`] writes one header line and one row (`ttft_p50_ms, ttft_p50_lo_ms,
//! ttft_p50_hi_ms, ttft_p50_needs, …, confidence_level`), [`summary_json`] the same figures
//! with an `intervals` object. Nothing here is stored: the report file keeps no interval, so
//! a report opened from a file or a link has them recomputed.
//!
//! **Per window.** The run's time slices ([`crate::time_slices`], windows of the length it
//! picks) go with it: [`summary_json`] holds a `windows` array and the `steady_state` found (or
//! why there is none), [`windows_csv`] the same windows one row each. Each window has its start
//! and end (ms from the run's start), its requests, TTFT and per-gap ITL P50 and P99 with their
//! interval bounds (`_lo`, `_hi`) or the requests an interval needs (`_needs`), output tokens
//! per second and requests in flight ([`window_columns`]).
//!
//! **What was painted.** When the live chat surface drew the run's answers, [`summary_json`]
//! holds `painted`: the paint headline ([`crate::report::painted::paint_headline`]: strategy,
//! answers drawn, first answer token arrived and painted, what painting added, each a P50 with
//! its interval; the arrival-to-paint lag's P50 and P99; frames); `null` otherwise.

use serde_json::{Map, Value, json};

use crate::report::{Aggregates, Report};
use crate::run_intervals::{Figure, PerRequest, RunSamples, Share};
use crate::run_stats::RunStats;
use crate::stats::Summary;
use crate::time_slices::{TimeSlices, TimeWindow, steady_state, time_slices};
use crate::uncertainty::{Estimate, sane_level};

/// What a figure's numbers are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryUnit {
    /// Milliseconds.
    Ms,
    /// Tokens per second.
    TokensPerS,
    /// A share 0–1.
    Fraction,
    /// A score 0–1.
    Score,
}

impl SummaryUnit {
    /// The column names' suffix (`_ms`, `_tok_s`, none for shares and scores).
    fn suffix(self) -> &'static str {
        match self {
            SummaryUnit::Ms => "_ms",
            SummaryUnit::TokensPerS => "_tok_s",
            SummaryUnit::Fraction | SummaryUnit::Score => "",
        }
    }
}

/// Why a figure has no interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoInterval {
    /// Too few requests: this many would give one.
    Needs(usize),
    /// A maximum: no interval describes it.
    Maximum,
    /// A rate derived from the deadlines, not a statistic of a sample.
    DerivedRate,
    /// A share link that left out per-gap timings: the gaps are not the run's.
    GapsNotInLink,
    /// An imported file with summary figures only.
    NoPerRequestValues,
}

impl NoInterval {
    /// In words, for a tooltip or a file.
    pub fn describe(self) -> String {
        match self {
            NoInterval::Needs(n) => format!("needs {n} requests for an interval"),
            NoInterval::Maximum => "no interval (a maximum)".to_owned(),
            NoInterval::DerivedRate => "no interval (a derived rate)".to_owned(),
            NoInterval::GapsNotInLink => "gaps not in the link: no interval".to_owned(),
            NoInterval::NoPerRequestValues => {
                "the file holds no per-request values: no interval".to_owned()
            }
        }
    }
}

/// One headline figure with how sure it is.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRow {
    /// The column name without its unit (`ttft_p50`).
    pub key: &'static str,
    /// Its unit.
    pub unit: SummaryUnit,
    /// The figure as the headline shows it (the run's aggregates).
    pub value: Option<f64>,
    /// The statistic behind it, when it is one.
    pub figure: Option<Figure>,
    /// Its estimate, with its interval when there is one.
    pub estimate: Option<Estimate>,
    /// Why there is no interval, when there is a value but none.
    pub no_interval: Option<NoInterval>,
}

impl SummaryRow {
    /// The value's column name (`ttft_p50_ms`).
    pub fn column(&self) -> String {
        format!("{}{}", self.key, self.unit.suffix())
    }

    /// How the interval was computed, in words.
    pub fn method(&self) -> Option<&'static str> {
        Some(match self.figure? {
            Figure::Percentile { .. } => "order statistics (distribution-free)",
            Figure::Itl { .. } => "cluster bootstrap over requests (seeded)",
            Figure::Share { .. } => "Wilson score",
        })
    }
}

type Pick = fn(&Aggregates) -> Option<f64>;

/// A figure's definition: key, unit, value, statistic, and why it has none when it is not one.
type Definition = (
    &'static str,
    SummaryUnit,
    Pick,
    Option<Figure>,
    Option<NoInterval>,
);

fn p(s: Option<Summary>, f: fn(&Summary) -> f64) -> Option<f64> {
    s.as_ref().map(f)
}

const fn pct(of: PerRequest, pct: u8) -> Option<Figure> {
    Some(Figure::Percentile { of, pct })
}

/// Every headline figure: key, unit, value, statistic (`None`: a maximum or a derived rate,
/// said by `NoInterval`).
const FIGURES: &[Definition] = &[
    (
        "ttfb_p50",
        SummaryUnit::Ms,
        |a| p(a.ttfb, |s| s.p50),
        pct(PerRequest::Ttfb, 50),
        None,
    ),
    (
        "ttft_p50",
        SummaryUnit::Ms,
        |a| p(a.ttft, |s| s.p50),
        pct(PerRequest::Ttft, 50),
        None,
    ),
    (
        "ttft_p95",
        SummaryUnit::Ms,
        |a| p(a.ttft, |s| s.p95),
        pct(PerRequest::Ttft, 95),
        None,
    ),
    (
        "ttft_p99",
        SummaryUnit::Ms,
        |a| p(a.ttft, |s| s.p99),
        pct(PerRequest::Ttft, 99),
        None,
    ),
    (
        "first_answer_p50",
        SummaryUnit::Ms,
        |a| p(a.first_answer, |s| s.p50),
        pct(PerRequest::FirstAnswer, 50),
        None,
    ),
    (
        "meaningful_p50",
        SummaryUnit::Ms,
        |a| p(a.meaningful, |s| s.p50),
        pct(PerRequest::Meaningful, 50),
        None,
    ),
    (
        "ttst_p50",
        SummaryUnit::Ms,
        |a| p(a.ttst, |s| s.p50),
        pct(PerRequest::Ttst, 50),
        None,
    ),
    (
        "ttst_p90",
        SummaryUnit::Ms,
        |a| p(a.ttst, |s| s.p90),
        pct(PerRequest::Ttst, 90),
        None,
    ),
    (
        "ttst_p99",
        SummaryUnit::Ms,
        |a| p(a.ttst, |s| s.p99),
        pct(PerRequest::Ttst, 99),
        None,
    ),
    (
        "itl_p50",
        SummaryUnit::Ms,
        |a| p(a.itl, |s| s.p50),
        Some(Figure::Itl { pct: 50 }),
        None,
    ),
    (
        "itl_p95",
        SummaryUnit::Ms,
        |a| p(a.itl, |s| s.p95),
        Some(Figure::Itl { pct: 95 }),
        None,
    ),
    (
        "itl_p99",
        SummaryUnit::Ms,
        |a| p(a.itl, |s| s.p99),
        Some(Figure::Itl { pct: 99 }),
        None,
    ),
    (
        "tpot_p50",
        SummaryUnit::Ms,
        |a| p(a.tpot, |s| s.p50),
        pct(PerRequest::Tpot, 50),
        None,
    ),
    (
        "e2e_p50",
        SummaryUnit::Ms,
        |a| p(a.e2e, |s| s.p50),
        pct(PerRequest::E2e, 50),
        None,
    ),
    (
        "e2e_p95",
        SummaryUnit::Ms,
        |a| p(a.e2e, |s| s.p95),
        pct(PerRequest::E2e, 95),
        None,
    ),
    (
        "decode_rate_p50",
        SummaryUnit::TokensPerS,
        |a| p(a.tokens_per_s, |s| s.p50),
        pct(PerRequest::DecodeRate, 50),
        None,
    ),
    (
        "output_per_user_p50",
        SummaryUnit::TokensPerS,
        |a| p(a.user_output_tokens_per_s, |s| s.p50),
        pct(PerRequest::UserOutputRate, 50),
        None,
    ),
    (
        "output_per_user_p90",
        SummaryUnit::TokensPerS,
        |a| p(a.user_output_tokens_per_s, |s| s.p90),
        pct(PerRequest::UserOutputRate, 90),
        None,
    ),
    (
        "output_per_user_p99",
        SummaryUnit::TokensPerS,
        |a| p(a.user_output_tokens_per_s, |s| s.p99),
        pct(PerRequest::UserOutputRate, 99),
        None,
    ),
    (
        "prefill_per_user_p50",
        SummaryUnit::TokensPerS,
        |a| p(a.prefill_tokens_per_s, |s| s.p50),
        pct(PerRequest::PrefillRate, 50),
        None,
    ),
    (
        "prefill_per_user_p90",
        SummaryUnit::TokensPerS,
        |a| p(a.prefill_tokens_per_s, |s| s.p90),
        pct(PerRequest::PrefillRate, 90),
        None,
    ),
    (
        "prefill_per_user_p99",
        SummaryUnit::TokensPerS,
        |a| p(a.prefill_tokens_per_s, |s| s.p99),
        pct(PerRequest::PrefillRate, 99),
        None,
    ),
    (
        "json_valid_p50",
        SummaryUnit::Ms,
        |a| p(a.json_valid, |s| s.p50),
        pct(PerRequest::JsonValid, 50),
        None,
    ),
    (
        "goodput",
        SummaryUnit::Fraction,
        |a| (a.count > 0).then_some(a.goodput),
        Some(Figure::Share { of: Share::Goodput }),
        None,
    ),
    (
        "error_rate",
        SummaryUnit::Fraction,
        |a| (a.judged() > 0).then(|| a.failed() as f64 / a.judged() as f64),
        Some(Figure::Share { of: Share::Errors }),
        None,
    ),
    (
        "qoe_p50",
        SummaryUnit::Score,
        |a| a.experience.qoe_p50,
        pct(PerRequest::Qoe, 50),
        None,
    ),
    (
        "qoe_p10",
        SummaryUnit::Score,
        |a| a.experience.qoe_p10,
        pct(PerRequest::Qoe, 10),
        None,
    ),
    (
        "reader_waits",
        SummaryUnit::Fraction,
        |a| {
            let e = &a.experience;
            (e.reading_requests > 0).then(|| e.with_waits as f64 / e.reading_requests as f64)
        },
        Some(Figure::Share {
            of: Share::ReaderWaits,
        }),
        None,
    ),
    (
        "longest_reader_wait",
        SummaryUnit::Ms,
        |a| {
            let e = &a.experience;
            (e.reading_requests > 0).then(|| e.wait_longest_ms.unwrap_or(0.0))
        },
        None,
        Some(NoInterval::Maximum),
    ),
    (
        "fluidity_miss_p99",
        SummaryUnit::Fraction,
        |a| a.experience.fluidity_p99_miss_rate,
        pct(PerRequest::FluidityMiss, 99),
        None,
    ),
    (
        "fluid_token_rate",
        SummaryUnit::TokensPerS,
        |a| a.experience.fluid_token_rate,
        None,
        Some(NoInterval::DerivedRate),
    ),
];

/// Every headline figure of a run with its interval at `level`: `agg` is its aggregates (with
/// the experience scores, or those rows have no value) and `samples` [`RunSamples::of`] the
/// same report.
pub fn summary_rows(agg: &Aggregates, samples: &RunSamples, level: f64) -> Vec<SummaryRow> {
    let level = sane_level(level);
    FIGURES
        .iter()
        .map(|(key, unit, pick, figure, fixed)| {
            let value = pick(agg);
            let estimate = figure.and_then(|f| samples.estimate(f, level));
            let no_interval = match (value, estimate) {
                (None, _) => None,
                (Some(_), Some(e)) if e.interval.is_some() => None,
                (Some(_), Some(e)) => e.needs.map(NoInterval::Needs),
                (Some(_), None) => Some(match figure {
                    None => fixed.unwrap_or(NoInterval::Maximum),
                    Some(Figure::Itl { .. }) if samples.gaps_left_out => NoInterval::GapsNotInLink,
                    Some(_) => NoInterval::NoPerRequestValues,
                }),
            };
            SummaryRow {
                key,
                unit: *unit,
                value,
                figure: *figure,
                estimate,
                no_interval,
            }
        })
        .collect()
}

/// [`summary_rows`] of a report, computing its aggregates and samples.
pub fn report_summary_rows(report: &Report, level: f64) -> Vec<SummaryRow> {
    let agg = report.aggregates();
    let samples = RunSamples::of(report, &agg);
    summary_rows(&agg, &samples, level)
}

fn number(v: Option<f64>) -> String {
    v.filter(|x| x.is_finite())
        .map_or(String::new(), |x| format!("{x:.4}"))
}

fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// The summary as CSV: a header line and one row of the run's title, model, requests and
/// `confidence_level`, then per figure its value, interval bounds (`_lo`, `_hi`, empty without
/// an interval) and the requests it needs for one (`_needs`, empty when it has one).
pub fn summary_csv(report: &Report, level: f64) -> String {
    let level = sane_level(level);
    let rows = report_summary_rows(report, level);
    let mut head = vec![
        "title".to_owned(),
        "model".to_owned(),
        "requests".to_owned(),
        "confidence_level".to_owned(),
    ];
    let mut cells = vec![
        quoted(&report.title),
        quoted(&report.endpoint.model),
        report.headline_requests().count().to_string(),
        format!("{level}"),
    ];
    for r in &rows {
        let s = r.unit.suffix();
        head.extend([
            r.column(),
            format!("{}_lo{s}", r.key),
            format!("{}_hi{s}", r.key),
            format!("{}_needs", r.key),
        ]);
        let interval = r.estimate.and_then(|e| e.interval);
        let needs = match r.no_interval {
            Some(NoInterval::Needs(n)) => n.to_string(),
            _ => String::new(),
        };
        cells.extend([
            number(r.value),
            number(interval.map(|i| i.lo)),
            number(interval.map(|i| i.hi)),
            needs,
        ]);
    }
    format!("{}\n{}\n", head.join(","), cells.join(","))
}

/// The summary as JSON: the run, `confidence_level`, `figures` (column → value) and
/// `intervals` (column → `{lo, hi, level, n, method}`, or `{needs}` / `{none}` saying why
/// there is none).
pub fn summary_json(report: &Report, level: f64) -> String {
    let level = sane_level(level);
    let rows = report_summary_rows(report, level);
    let mut figures = Map::new();
    let mut intervals = Map::new();
    for r in rows.iter().filter(|r| r.value.is_some()) {
        figures.insert(r.column(), json!(r.value));
        let entry = match (r.estimate.and_then(|e| e.interval), r.no_interval) {
            (Some(i), _) => json!({
                "lo": i.lo,
                "hi": i.hi,
                "level": i.level,
                "n": r.estimate.map(|e| e.n),
                "method": r.method(),
            }),
            (None, Some(NoInterval::Needs(n))) => json!({
                "needs": n,
                "n": r.estimate.map(|e| e.n),
                "none": NoInterval::Needs(n).describe(),
            }),
            (None, why) => json!({ "none": why.map(NoInterval::describe) }),
        };
        intervals.insert(r.column(), entry);
    }
    let slices = time_slices(report, None, level);
    let steady = match steady_state(&slices) {
        Ok(s) => json!({
            "start_ms": s.start_ms,
            "end_ms": s.end_ms,
            "first_window": s.first_window,
            "excluded_requests": s.excluded_requests,
            "sentence": s.sentence(),
        }),
        Err(why) => json!({ "none": why.to_string() }),
    };
    let out = json!({
        "title": report.title,
        "model": report.endpoint.model,
        "requests": report.headline_requests().count(),
        "confidence_level": level,
        "figures": Value::Object(figures),
        "intervals": Value::Object(intervals),
        "window_ms": slices.window_ms,
        "windows": windows_json(&slices),
        "steady_state": steady,
        // What the live surface painted (its P50s with intervals at `level`), when it drew.
        "painted": crate::report::painted::paint_headline(report, level),
    });
    serde_json::to_string_pretty(&out).expect("a summary always serializes")
}

/// A window's figure as a value: a count or a number (`None`: the window has none).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cell {
    /// A count.
    Count(usize),
    /// A number.
    Number(Option<f64>),
}

/// An estimate's value, interval bounds and the requests an interval needs, as four columns
/// named `{key}{unit}`, `{key}_lo{unit}`, `{key}_hi{unit}`, `{key}_needs`.
fn estimate_columns(key: &str, unit: &str, e: Option<Estimate>) -> [(String, Cell); 4] {
    let i = e.and_then(|e| e.interval);
    [
        (format!("{key}{unit}"), Cell::Number(e.map(|e| e.value))),
        (format!("{key}_lo{unit}"), Cell::Number(i.map(|i| i.lo))),
        (format!("{key}_hi{unit}"), Cell::Number(i.map(|i| i.hi))),
        (
            format!("{key}_needs"),
            match e.and_then(|e| e.needs) {
                Some(n) if i.is_none() => Cell::Count(n),
                _ => Cell::Number(None),
            },
        ),
    ]
}

/// A window's columns, in order: `window`, `start_ms`, `end_ms`, `requests` (sent in it),
/// `measured` (headline requests sent in it, the latency figures' sample), `failed`,
/// `completed`, TTFT P50 and P99 and per-gap ITL P50 and P99 (each with `_lo`, `_hi`,
/// `_needs`), `output_tokens_per_s`, `in_flight_mean`, `in_flight_max`.
pub fn window_columns(w: &TimeWindow) -> Vec<(String, Cell)> {
    let mut out = vec![
        ("window".to_owned(), Cell::Count(w.index)),
        ("start_ms".to_owned(), Cell::Number(Some(w.start_ms))),
        ("end_ms".to_owned(), Cell::Number(Some(w.end_ms))),
        ("requests".to_owned(), Cell::Count(w.started)),
        ("measured".to_owned(), Cell::Count(w.measured)),
        ("failed".to_owned(), Cell::Count(w.failed)),
        ("completed".to_owned(), Cell::Count(w.completed)),
    ];
    out.extend(estimate_columns("ttft_p50", "_ms", w.ttft_p50));
    out.extend(estimate_columns("ttft_p99", "_ms", w.ttft_p99));
    out.extend(estimate_columns("itl_p50", "_ms", w.itl_p50));
    out.extend(estimate_columns("itl_p99", "_ms", w.itl_p99));
    out.extend([
        (
            "output_tokens_per_s".to_owned(),
            Cell::Number(w.output_tokens_per_s()),
        ),
        (
            "in_flight_mean".to_owned(),
            Cell::Number(Some(w.in_flight_mean)),
        ),
        (
            "in_flight_max".to_owned(),
            Cell::Count(w.in_flight_max as usize),
        ),
    ]);
    out
}

/// The windows as a JSON array of objects ([`window_columns`]; `null` where a window has no
/// figure).
pub fn windows_json(slices: &TimeSlices) -> Value {
    Value::Array(
        slices
            .windows
            .iter()
            .map(|w| {
                Value::Object(
                    window_columns(w)
                        .into_iter()
                        .map(|(k, c)| {
                            let v = match c {
                                Cell::Count(n) => json!(n),
                                Cell::Number(x) => json!(x.filter(|x| x.is_finite())),
                            };
                            (k, v)
                        })
                        .collect(),
                )
            })
            .collect(),
    )
}

/// The run's time slices as CSV ([`window_columns`], one row a window; empty cells where a
/// window has no figure), intervals at `level`, windows of the length [`time_slices`] picks.
pub fn windows_csv(report: &Report, level: f64) -> String {
    let slices = time_slices(report, None, sane_level(level));
    let head = slices
        .windows
        .first()
        .map_or_else(|| window_columns(&empty_window()), window_columns);
    let mut out = head
        .iter()
        .map(|(k, _)| k.as_str())
        .collect::<Vec<_>>()
        .join(",");
    out.push('\n');
    for w in &slices.windows {
        let cells: Vec<String> = window_columns(w)
            .into_iter()
            .map(|(_, c)| match c {
                Cell::Count(n) => n.to_string(),
                Cell::Number(x) => number(x),
            })
            .collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

/// A window without requests, for the header of a run without windows.
fn empty_window() -> TimeWindow {
    TimeWindow {
        index: 0,
        start_ms: 0.0,
        end_ms: 0.0,
        started: 0,
        measured: 0,
        failed: 0,
        ttft_p50: None,
        ttft_p99: None,
        itl_p50: None,
        itl_p99: None,
        completed: 0,
        output_tokens: 0.0,
        in_flight_mean: 0.0,
        in_flight_max: 0,
    }
}
