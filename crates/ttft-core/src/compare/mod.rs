//! Comparing 2–4 runs: which is better on each metric, by how much, and the lesson of total
//! latency against first token made explicit.
//!
//! A user reading a stream sees nothing until the first token, then one token per TPOT. So the
//! tokens visible at time `t` are `1 + (t − TTFT) / TPOT` for `t ≥ TTFT`. Two runs whose lines
//! cross trade first-token latency against decode speed: 0.8 s + 65 ms/token is ahead of
//! 3.5 s + 40 ms/token until token 109 (7.8 s), which most chat answers never reach.
//!
//! **How sure**: every figure has its interval ([`crate::run_intervals`]) and every run's
//! difference from the first one has its own ([`crate::differences`]), Holm-corrected over the
//! table. The lesson ([`lesson`]) states a difference only when its interval excludes
//! zero, and otherwise says how many requests per side would tell one.
//!
//! **Which run a reader prefers** is the one with the higher median reading QoE
//! ([`crate::experience`]; the P10, then the mean, break a tie), when that difference is told
//! from noise, and the lesson says why the other one loses: its first word comes later than the
//! reader expected, or it leaves the reader waiting mid-answer, or its text falls behind the
//! reading pace.

pub mod lesson;

use serde::{Deserialize, Serialize};

use crate::differences::{Confidence, DiffCell, difference, mark_table};
use crate::report::{Aggregates, Report};
use crate::review::tally_both;
use crate::run_intervals::{Figure, PerRequest, RunSamples, Share, paired};
use crate::stats::Summary;
use crate::uncertainty::Estimate;

/// Which direction is better for a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    /// Latencies.
    Lower,
    /// Rates, goodput.
    Higher,
}

/// Unit of a metric's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Milliseconds.
    Ms,
    /// Tokens per second.
    TokensPerS,
    /// A fraction 0–1.
    Fraction,
    /// A score 0–1 (reading QoE), shown with two decimals.
    Score,
}

/// One metric across the compared runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricRow {
    /// Label.
    pub metric: String,
    /// Unit.
    pub unit: Unit,
    /// Better direction.
    pub better: Better,
    /// Value per run (same order as the runs).
    pub values: Vec<Option<f64>>,
    /// Index of the best run, when at least two runs have a value.
    pub best: Option<usize>,
    /// Per run: how much worse than the best, relative (0.25 = 25 % worse); `None` for the
    /// best run or a missing value.
    pub worse_by: Vec<Option<f64>>,
    /// The figure behind the row, when it is a statistic with an interval (`None` for a
    /// maximum and a derived rate).
    #[serde(default)]
    pub figure: Option<Figure>,
    /// Per run: the value with its interval, or how many requests it needs for one.
    #[serde(default)]
    pub estimates: Vec<Option<Estimate>>,
    /// Per run: its difference from the first run, Holm-corrected over the table (`None` for
    /// the first run and where either run has no value).
    #[serde(default)]
    pub differences: Vec<Option<DiffCell>>,
}

/// Where a run with a faster first token is overtaken by one with faster decoding.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Crossover {
    /// The run ahead at first.
    pub early: usize,
    /// The run that catches up.
    pub late: usize,
    /// Token position at which they are level.
    pub at_token: f64,
    /// Time at which they are level (ms).
    pub at_ms: f64,
}

/// The comparison of runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Metrics, one row each.
    pub rows: Vec<MetricRow>,
    /// Run with the lowest TTFT P50.
    pub first_token_winner: Option<usize>,
    /// Run with the lowest E2E P50.
    pub finish_winner: Option<usize>,
    /// Where the first-token winner is overtaken, if it is.
    pub crossover: Option<Crossover>,
    /// Run a reader prefers (highest reading QoE P50), when at least two runs have one and
    /// they differ by at least [`QOE_NOTICEABLE`].
    #[serde(default)]
    pub reader_winner: Option<usize>,
    /// The conclusion in one or two sentences: each comparison in it states its interval, or
    /// says the runs cannot be told apart and how many requests would tell them.
    pub lesson: String,
    /// What the table's intervals and marks mean.
    #[serde(default)]
    pub table_note: String,
    /// The level and the difference to detect the comparison was made with.
    #[serde(default)]
    pub confidence: Confidence,
    /// When the runs are repeats of one scenario: how far their medians moved between repeats.
    #[serde(default)]
    pub repeat_spread: Option<String>,
}

type Pick = fn(&Aggregates) -> Option<f64>;

fn p50(s: Option<Summary>) -> Option<f64> {
    s.map(|s| s.p50)
}

const fn pct(of: PerRequest, pct: u8) -> Option<Figure> {
    Some(Figure::Percentile { of, pct })
}

/// Each row: name, unit, better direction, its value from the aggregates, and the figure
/// whose interval and differences it has (`None`: a maximum or a derived rate, which has no
/// interval; the table says so).
const METRICS: &[(&str, Unit, Better, Pick, Option<Figure>)] = &[
    (
        "TTFT P50",
        Unit::Ms,
        Better::Lower,
        |a| p50(a.ttft),
        pct(PerRequest::Ttft, 50),
    ),
    (
        "TTFT P95",
        Unit::Ms,
        Better::Lower,
        |a| a.ttft.map(|s| s.p95),
        pct(PerRequest::Ttft, 95),
    ),
    (
        "Meaningful first token P50",
        Unit::Ms,
        Better::Lower,
        |a| p50(a.meaningful),
        pct(PerRequest::Meaningful, 50),
    ),
    (
        "Time to second token P50",
        Unit::Ms,
        Better::Lower,
        |a| p50(a.ttst),
        pct(PerRequest::Ttst, 50),
    ),
    (
        "ITL P50",
        Unit::Ms,
        Better::Lower,
        |a| p50(a.itl),
        Some(Figure::Itl { pct: 50 }),
    ),
    (
        "ITL P95",
        Unit::Ms,
        Better::Lower,
        |a| a.itl.map(|s| s.p95),
        Some(Figure::Itl { pct: 95 }),
    ),
    (
        "ITL P99",
        Unit::Ms,
        Better::Lower,
        |a| a.itl.map(|s| s.p99),
        Some(Figure::Itl { pct: 99 }),
    ),
    (
        "TPOT P50",
        Unit::Ms,
        Better::Lower,
        |a| p50(a.tpot),
        pct(PerRequest::Tpot, 50),
    ),
    (
        "E2E (total latency) P50",
        Unit::Ms,
        Better::Lower,
        |a| p50(a.e2e),
        pct(PerRequest::E2e, 50),
    ),
    (
        "Time to valid JSON P50",
        Unit::Ms,
        Better::Lower,
        |a| p50(a.json_valid),
        pct(PerRequest::JsonValid, 50),
    ),
    (
        "Decode rate P50",
        Unit::TokensPerS,
        Better::Higher,
        |a| p50(a.tokens_per_s),
        pct(PerRequest::DecodeRate, 50),
    ),
    (
        "Per-user output tokens/s P50",
        Unit::TokensPerS,
        Better::Higher,
        |a| p50(a.user_output_tokens_per_s),
        pct(PerRequest::UserOutputRate, 50),
    ),
    (
        "Per-user prefill tokens/s P50",
        Unit::TokensPerS,
        Better::Higher,
        |a| p50(a.prefill_tokens_per_s),
        pct(PerRequest::PrefillRate, 50),
    ),
    (
        "Goodput",
        Unit::Fraction,
        Better::Higher,
        |a| (a.count > 0).then_some(a.goodput),
        Some(Figure::Share { of: Share::Goodput }),
    ),
    (
        "Reading QoE P50",
        Unit::Score,
        Better::Higher,
        |a| a.experience.qoe_p50,
        pct(PerRequest::Qoe, 50),
    ),
    (
        "Reading QoE P10",
        Unit::Score,
        Better::Higher,
        |a| a.experience.qoe_p10,
        pct(PerRequest::Qoe, 10),
    ),
    (
        "Requests with reader waits",
        Unit::Fraction,
        Better::Lower,
        reader_wait_share,
        Some(Figure::Share {
            of: Share::ReaderWaits,
        }),
    ),
    (
        "Longest reader wait",
        Unit::Ms,
        Better::Lower,
        longest_wait,
        None,
    ),
    (
        "Fluidity P99 miss rate",
        Unit::Fraction,
        Better::Lower,
        |a| a.experience.fluidity_p99_miss_rate,
        pct(PerRequest::FluidityMiss, 99),
    ),
    (
        "Fluid token rate",
        Unit::TokensPerS,
        Better::Higher,
        |a| a.experience.fluid_token_rate,
        None,
    ),
];

/// The share of scored requests whose reader waited mid-answer.
fn reader_wait_share(a: &Aggregates) -> Option<f64> {
    let e = &a.experience;
    (e.reading_requests > 0).then(|| e.with_waits as f64 / e.reading_requests as f64)
}

/// QoE differences below this are not called a preference (the scores print with two
/// decimals).
pub const QOE_NOTICEABLE: f64 = 0.01;

/// The run's longest reader wait, 0 when its readers never waited.
fn longest_wait(a: &Aggregates) -> Option<f64> {
    let e = &a.experience;
    (e.reading_requests > 0).then(|| e.wait_longest_ms.unwrap_or(0.0))
}

/// Per-token time of a run: TPOT P50, else per-token ITL P50.
pub fn per_token_ms(a: &Aggregates) -> Option<f64> {
    p50(a.tpot).or(p50(a.itl))
}

/// Tokens visible at `t_ms` for a stream with this first-token time and per-token time.
pub fn tokens_visible(ttft_ms: f64, per_token_ms: f64, t_ms: f64) -> f64 {
    if t_ms < ttft_ms {
        0.0
    } else if per_token_ms <= 0.0 {
        f64::INFINITY
    } else {
        1.0 + (t_ms - ttft_ms) / per_token_ms
    }
}

/// Where run `early` (lower TTFT) is caught up by run `late` (lower per-token time).
pub fn crossover(
    early: usize,
    late: usize,
    (ttft_early, tok_early): (f64, f64),
    (ttft_late, tok_late): (f64, f64),
) -> Option<Crossover> {
    if ttft_early >= ttft_late || tok_late >= tok_early {
        return None;
    }
    // ttft_e + (k−1)·tok_e = ttft_l + (k−1)·tok_l
    let k = 1.0 + (ttft_late - ttft_early) / (tok_early - tok_late);
    Some(Crossover {
        early,
        late,
        at_token: k,
        at_ms: ttft_early + (k - 1.0) * tok_early,
    })
}

fn argbest(values: &[Option<f64>], better: Better) -> Option<usize> {
    let present: Vec<(usize, f64)> = values
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.filter(|x| x.is_finite()).map(|x| (i, x)))
        .collect();
    if present.len() < 2 {
        return None;
    }
    let pick = present.into_iter().reduce(|a, b| match better {
        Better::Lower if b.1 < a.1 => b,
        Better::Higher if b.1 > a.1 => b,
        _ => a,
    });
    pick.map(|(i, _)| i)
}

/// One table row from its definition: values, best, how much worse, each run's interval and
/// its difference from the first run.
fn metric_row(
    (metric, unit, better, pick, figure): &(&str, Unit, Better, Pick, Option<Figure>),
    aggs: &[Aggregates],
    samples: &[RunSamples],
    confidence: Confidence,
) -> MetricRow {
    let values: Vec<Option<f64>> = aggs.iter().map(pick).collect();
    let best = argbest(&values, *better);
    let worse_by = values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let b = values[best?]?;
            let v = (*v)?;
            if Some(i) == best || b == 0.0 {
                return None;
            }
            Some(match better {
                Better::Lower => (v - b) / b,
                Better::Higher => (b - v) / b,
            })
        })
        .collect();
    let estimates = samples
        .iter()
        .map(|s| s.estimate((*figure)?, confidence.level))
        .collect();
    let differences = (0..samples.len())
        .map(|i| {
            if i == 0 {
                return None;
            }
            let f = (*figure)?;
            let pairs = pairs_for(&samples[0], &samples[i], f);
            difference(&samples[0], &samples[i], f, pairs.as_deref(), confidence)
        })
        .collect();
    MetricRow {
        metric: (*metric).to_owned(),
        unit: *unit,
        better: *better,
        values,
        best,
        worse_by,
        figure: *figure,
        estimates,
        differences,
    }
}

/// The values of requests that pair up between two interleaved runs, for a median's figure;
/// `None` when they do not pair up.
pub fn pairs_for(a: &RunSamples, b: &RunSamples, figure: Figure) -> Option<Vec<(f64, f64)>> {
    match figure {
        Figure::Percentile { of, pct: 50 } => {
            let pairs = paired(a, b, of);
            (pairs.len() >= crate::differences::MIN_PAIRS).then_some(pairs)
        }
        _ => None,
    }
}

/// Compares runs (2–4 of them, named by what differs between them) on every headline metric,
/// each run's figures with their intervals and each one's difference from the first run,
/// Holm-corrected over the table; the lesson claims only what the intervals support.
pub fn compare(
    names: &[&str],
    aggs: &[Aggregates],
    samples: &[RunSamples],
    confidence: Confidence,
) -> Comparison {
    let mut rows: Vec<MetricRow> = METRICS
        .iter()
        .map(|m| metric_row(m, aggs, samples, confidence))
        .collect();
    mark_table(
        rows.iter_mut()
            .flat_map(|r| r.differences.iter_mut().flatten()),
        confidence.level,
    );
    let tested = rows
        .iter()
        .flat_map(|r| r.differences.iter().flatten())
        .filter(|c| c.p_value.is_some())
        .count();
    let row = |name: &str| rows.iter().find(|r| r.metric == name);
    let first_token_winner = row("TTFT P50").and_then(|r| r.best);
    let finish_winner = row("E2E (total latency) P50").and_then(|r| r.best);
    let line = |i: usize| Some((p50(aggs[i].ttft)?, per_token_ms(&aggs[i])?));
    let crossover = first_token_winner.and_then(|early| {
        (0..aggs.len())
            .filter(|&late| late != early)
            .filter_map(|late| crossover(early, late, line(early)?, line(late)?))
            .min_by(|a, b| a.at_ms.total_cmp(&b.at_ms))
    });
    let verdict = lesson::lesson(names, aggs, samples, &rows, crossover, confidence);
    Comparison {
        table_note: table_note(tested, confidence),
        rows,
        first_token_winner,
        finish_winner,
        crossover,
        reader_winner: verdict.reader_winner,
        lesson: verdict.text,
        confidence,
        repeat_spread: None,
    }
}

/// What the table's marks mean, in one sentence.
fn table_note(tested: usize, confidence: Confidence) -> String {
    let level = (confidence.level * 100.0).round();
    let risk = 100.0 - level;
    format!(
        "Each figure shows its {level:.0} % interval; each difference is from the first run, with its interval. A difference is marked only when its interval excludes zero after Holm's correction over the table's {tested} differences, so the chance that any mark in the table is noise stays at or below {risk:.0} %. “≈” marks figures that cannot be told apart, with the requests per side that would show a {:.0} % difference.",
        confidence.detect * 100.0
    )
}

/// [`compare`] from the reports themselves: each run's aggregates and samples, then the
/// comparison (the aggregates are returned for the charts).
pub fn compare_reports(
    names: &[&str],
    reports: &[&Report],
    confidence: Confidence,
) -> (Vec<Aggregates>, Vec<RunSamples>, Comparison) {
    let (aggs, samples): (Vec<Aggregates>, Vec<RunSamples>) = reports
        .iter()
        .map(|r| crate::run_intervals::aggregates_and_samples(r))
        .unzip();
    let mut cmp = compare(names, &aggs, &samples, confidence);
    cmp.repeat_spread = repeat_spread(reports, &cmp.rows);
    (aggs, samples, cmp)
}

/// The repeat set a run belongs to (its id), when it is one of several repeats.
fn repeat_id(r: &Report) -> Option<&str> {
    let g = r.group.as_ref()?;
    match (&g.repeat, g.kind) {
        (Some(rep), _) => Some(rep.id.as_str()),
        (None, crate::report::GroupKind::Repeats) => Some(g.id.as_str()),
        _ => None,
    }
}

/// When every compared run is a repeat of one scenario: how far the headline medians moved
/// between the repeats, in one sentence (the spread a rerun shows, beside each figure's
/// interval).
fn repeat_spread(reports: &[&Report], rows: &[MetricRow]) -> Option<String> {
    let first = repeat_id(reports.first()?)?;
    if reports.len() < 2 || !reports.iter().all(|r| repeat_id(r) == Some(first)) {
        return None;
    }
    let parts: Vec<String> = ["TTFT P50", "ITL P50", "E2E (total latency) P50", "TTFT P95"]
        .iter()
        .filter_map(|m| {
            let row = rows.iter().find(|r| r.metric == *m)?;
            let v: Vec<f64> = row.values.iter().flatten().copied().collect();
            let (lo, hi) = v
                .iter()
                .fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(*x), b.max(*x)));
            let mid = crate::stats::percentile(&v, 50.0)?;
            (v.len() >= 2 && mid > 0.0).then(|| {
                format!(
                    "{m} {} ({:.0} % of its median)",
                    crate::format::ms_range(lo, hi),
                    (hi - lo) / mid * 100.0
                )
            })
        })
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "Between these {} repeats of one scenario: {}. A difference between configurations smaller than that is within what a rerun moves.",
            reports.len(),
            parts.join("; ")
        )
    })
}

/// When the runs compared were measured by different clients, what each one's times include,
/// in words: `(title, vantage)` per run, `None` for a run measured in this studio's browser
/// tab. Nothing when every run has the same vantage.
pub fn vantage_note(runs: &[(&str, Option<&str>)]) -> Option<String> {
    fn of(v: Option<&str>) -> &str {
        v.unwrap_or("the browser (this studio)")
    }
    let first = of(runs.first()?.1);
    if runs.iter().all(|(_, v)| of(*v) == first) {
        return None;
    }
    let who: Vec<String> = runs
        .iter()
        .map(|(title, v)| format!("{title}: {}", of(*v)))
        .collect();
    Some(format!(
        "Measured by different clients ({}). Each client's times include its own delays: a browser's its network process and event loop, a Python client's (Locust, benchmark tools) its scheduling (gevent, the GIL, garbage collection). Differences of a few ms may be the clients', not the servers'; compare runs of one client for those.",
        who.join("; ")
    ))
}

/// The blind review votes between the compared runs ([`crate::review`]), to set beside the
/// reading QoE and fluidity rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VoteSummary {
    /// Per run (same order as the runs): votes it won against the other compared runs.
    pub wins: Vec<u32>,
    /// Votes that found no difference.
    pub same: u32,
    /// Votes cast between the compared runs.
    pub total: u32,
    /// The run that won the most votes, when one did (a lead, conclusive or not: see
    /// `conclusive`).
    pub winner: Option<usize>,
    /// Whether the reading QoE prefers the same run ([`Comparison::reader_winner`]): `None`
    /// when either side has no preference to compare, and whenever the votes are not
    /// conclusive.
    pub agrees: Option<bool>,
    /// The reading in one sentence.
    pub sentence: String,
    /// The exact binomial test's p-value on the decisive votes ([`crate::review::vote_test`]);
    /// with more than two runs, the winner's votes won against its votes lost, multiplied by
    /// the number of runs (Bonferroni: any of them could have been the winner), capped at 1.
    /// `None` without decisive votes, or with more than two runs and no single winner.
    #[serde(default)]
    pub p_value: Option<f64>,
    /// Whether the votes show a preference at [`crate::review::VOTE_LEVEL`] (95 %).
    #[serde(default)]
    pub conclusive: bool,
    /// When not conclusive: about how many more decisive votes would tell a 70/30 preference
    /// ([`crate::review::VoteTest::more_votes_for`]); `None` when conclusive, or when more than
    /// [`crate::review::MAX_PLANNED_VOTES`] would be needed.
    #[serde(default)]
    pub more_votes: Option<u32>,
}

/// Figures a disagreement sends the reader to, when they side with the reviewers.
const VOTE_CLUES: &[&str] = &[
    "TTFT P50",
    "Meaningful first token P50",
    "E2E (total latency) P50",
    "Requests with reader waits",
    "Longest reader wait",
    "Fluidity P99 miss rate",
    "Fluid token rate",
];

/// Per run, votes won and votes lost against the other runs, and the votes that found no
/// difference: every pair, counted from both runs' records.
fn vote_tallies(reports: &[&Report]) -> (Vec<u32>, Vec<u32>, u32) {
    let n = reports.len();
    let (mut wins, mut losses, mut same) = (vec![0u32; n], vec![0u32; n], 0);
    for i in 0..n {
        for j in i + 1..n {
            let t = tally_both(reports[i], reports[j]);
            wins[i] += t.for_a;
            wins[j] += t.for_b;
            losses[i] += t.for_b;
            losses[j] += t.for_a;
            same += t.same;
        }
    }
    (wins, losses, same)
}

/// What the votes say among more than two runs: the winner's votes won against its votes lost,
/// tested at a level shared by the runs (Bonferroni), and the lead of the sentence.
fn many_runs_verdict(
    name: &dyn Fn(usize) -> String,
    (wins, losses, same): (&[u32], &[u32], u32),
    winner: Option<usize>,
) -> (Option<crate::review::VoteTest>, String) {
    use crate::review::{VOTE_LEVEL, p_text, same_note, vote_test};
    let n = wins.len();
    let each: Vec<String> = (0..n)
        .map(|i| format!("“{}” {}", name(i), wins[i]))
        .collect();
    let record = format!("(votes won: {})", each.join(", "));
    let note = same_note(same);
    let Some(w) = winner else {
        if wins.iter().all(|w| *w == 0) {
            return (
                None,
                format!(
                    "Reviewers found no difference in {same} vote{}",
                    if same == 1 { "" } else { "s" }
                ),
            );
        }
        return (
            None,
            format!("Reviewers were split {record}{note}: no run won the most votes"),
        );
    };
    let t = vote_test(wins[w], losses[w], 1.0 - (1.0 - VOTE_LEVEL) / n as f64);
    let p = p_text((t.p_value * n as f64).min(1.0));
    let of = format!(
        "it won {} of its {} decisive votes, {p} allowing for {n} runs",
        wins[w],
        t.decisive()
    );
    let lead = if t.conclusive {
        format!(
            "Reviewers preferred “{}” {record}{note} ({of}; {})",
            name(w),
            t.share_text()
        )
    } else {
        format!(
            "Reviewers leaned towards “{}” {record}{note}, not yet conclusive ({of}): {}",
            name(w),
            t.more_votes_text(&format!(" with “{}”", name(w)))
        )
    };
    (Some(t), lead)
}

/// What the reading QoE says beside conclusive votes for `v`: whether it agrees, and when not,
/// the figures that side with the reviewers.
fn reading_beside(
    name: &dyn Fn(usize) -> String,
    cmp: &Comparison,
    v: usize,
    qoe_known: bool,
) -> (Option<bool>, String) {
    let qoe = cmp.rows.iter().find(|r| r.metric == "Reading QoE P50");
    let qoe_of = |i: usize| qoe.and_then(|r| r.values.get(i).copied().flatten());
    match cmp.reader_winner {
        Some(r) if r == v => (Some(true), "; reading QoE agrees.".to_owned()),
        Some(r) => {
            let clues: Vec<&str> = VOTE_CLUES
                .iter()
                .copied()
                .filter(|m| {
                    cmp.rows
                        .iter()
                        .any(|row| row.metric == *m && row.best == Some(v))
                })
                .collect();
            let q = |i: usize| qoe_of(i).map_or("—".to_owned(), |q| format!("{q:.2}"));
            let look = match clues.split_last() {
                None => "no headline figure sides with the reviewers: replay the streams they judged and check the reading speed in the experience settings".to_owned(),
                Some((last, [])) => format!(
                    "look at {last}, where “{}” is ahead, and at whether the reading speed in the experience settings fits your reviewers",
                    name(v)
                ),
                Some((last, rest)) => format!(
                    "look at {} and {last}, where “{}” is ahead, and at whether the reading speed in the experience settings fits your reviewers",
                    rest.join(", "),
                    name(v)
                ),
            };
            (
                Some(false),
                format!(
                    "; reading QoE disagrees (it prefers “{}”, {} vs {}): {look}.",
                    name(r),
                    q(r),
                    q(v)
                ),
            )
        }
        None if qoe_known => (None, "; reading QoE cannot tell them apart.".to_owned()),
        None => (
            None,
            "; there is no reading QoE to set beside them.".to_owned(),
        ),
    }
}

/// The blind review votes between the compared runs, named `names` in the sentence
/// ([`crate::naming::distinguishing_names`] in the studio): every pair of them, counted from
/// both runs' records, the exact test of what they show ([`crate::review::vote_test`]) and,
/// only when they are conclusive, whether the reading QoE agrees with them; `None` when no vote
/// was cast.
pub fn vote_summary(names: &[&str], reports: &[&Report], cmp: &Comparison) -> Option<VoteSummary> {
    use crate::review::{TELLING_SHARE, VOTE_LEVEL, vote_test};
    let n = reports.len();
    let (wins, losses, same) = vote_tallies(reports);
    let total = wins.iter().sum::<u32>() + same;
    if total == 0 {
        return None;
    }
    let name = |i: usize| names.get(i).copied().unwrap_or("?").to_owned();
    let most = wins.iter().copied().max().unwrap_or(0);
    let winner = (most > 0 && wins.iter().filter(|w| **w == most).count() == 1)
        .then(|| wins.iter().position(|w| *w == most))
        .flatten();
    let (test, lead) = if n == 2 {
        let t = vote_test(wins[0], wins[1], VOTE_LEVEL);
        (Some(t), t.verdict([&name(0), &name(1)], same))
    } else {
        many_runs_verdict(&name, (&wins, &losses, same), winner)
    };
    let decisive = test.filter(|t| t.decisive() > 0);
    let conclusive = decisive.is_some_and(|t| t.conclusive);
    let qoe = cmp.rows.iter().find(|r| r.metric == "Reading QoE P50");
    let qoe_known = (0..n)
        .filter(|i| {
            qoe.and_then(|r| r.values.get(*i).copied().flatten())
                .is_some()
        })
        .count()
        >= 2;
    let (agrees, reading) = match (winner, cmp.reader_winner) {
        (Some(v), _) if conclusive => reading_beside(&name, cmp, v, qoe_known),
        (_, Some(r)) => (
            None,
            format!(
                "; reading QoE prefers “{}”: the votes cannot yet tell whether reviewers agree.",
                name(r)
            ),
        ),
        _ if qoe_known => (None, "; neither can reading QoE.".to_owned()),
        _ => (
            None,
            "; there is no reading QoE to set beside them.".to_owned(),
        ),
    };
    Some(VoteSummary {
        wins,
        same,
        total,
        winner,
        agrees,
        sentence: format!("{lead}{reading}"),
        p_value: decisive.map(|t| {
            if n == 2 {
                t.p_value
            } else {
                (t.p_value * n as f64).min(1.0)
            }
        }),
        conclusive,
        more_votes: decisive
            .or(test)
            .filter(|t| !t.conclusive)
            .and_then(|t| t.more_votes_for(TELLING_SHARE)),
    })
}
