//! The comparison's lesson in words ([`crate::compare`]): which run users will feel is faster,
//! which finishes first, which a reader prefers. Each claim is made only when its difference is
//! told from noise (its interval excludes zero, Holm-corrected), and states that interval;
//! otherwise the sentence says the runs cannot be told apart, and how many requests per side
//! would show the chosen difference.

use super::{Better, Crossover, MetricRow};
use crate::differences::{Confidence, DiffCell, difference, mark_table};
use crate::format::{ms, ms_range};
use crate::report::Aggregates;
use crate::run_intervals::RunSamples;
use crate::uncertainty::Interval;

/// A later first word than this (ms) is noticed by a reader: about one word at 4 words/s.
const LATE_START_NOTICED_MS: f64 = 250.0;

/// The lesson and the run a reader prefers, when that preference is told from noise.
pub(crate) struct Verdict {
    /// The sentences.
    pub text: String,
    /// The run a reader prefers.
    pub reader_winner: Option<usize>,
}

/// Where the best run of a figure stands against its closest rival.
struct Standing {
    /// The run with the best value.
    leader: usize,
    /// Its closest rival.
    rival: usize,
    /// How much better the leader is (positive), with its interval.
    advantage: f64,
    /// Its interval, oriented like `advantage`.
    interval: Option<Interval>,
    /// Whether the leader is told from every other run.
    clear: bool,
    /// Requests per side that would show the chosen difference (or give an interval).
    needs: Option<usize>,
    /// Leader's and rival's values.
    values: (f64, f64),
}

/// Turns a difference `b − a` into the leader's advantage over the rival.
fn oriented(cell: &DiffCell, leader_is_b: bool, better: Better) -> (f64, Option<Interval>) {
    let flip = matches!(better, Better::Lower) == leader_is_b;
    let sign = if flip { -1.0 } else { 1.0 };
    let interval = cell.interval.map(|i| {
        let (a, b) = (sign * i.lo, sign * i.hi);
        Interval {
            lo: a.min(b),
            hi: a.max(b),
            level: i.level,
        }
    });
    (sign * cell.estimate, interval)
}

/// The standing of a row's best run: with two runs from the table's (Holm-corrected) cell;
/// with more, against each other run, Holm-corrected over those comparisons.
fn standing(row: &MetricRow, samples: &[RunSamples], confidence: Confidence) -> Option<Standing> {
    let leader = row.best?;
    let value = |i: usize| row.values.get(i).copied().flatten();
    if row.values.len() == 2 {
        let cell = row.differences.get(1).copied().flatten()?;
        let rival = 1 - leader;
        let (advantage, interval) = oriented(&cell, leader == 1, row.better);
        return Some(Standing {
            leader,
            rival,
            advantage,
            interval,
            clear: cell.different,
            needs: cell.needs_per_side,
            values: (value(leader)?, value(rival)?),
        });
    }
    let figure = row.figure?;
    let mut cells: Vec<(usize, DiffCell)> = (0..samples.len())
        .filter(|j| *j != leader && value(*j).is_some())
        .filter_map(|j| {
            let pairs = super::pairs_for(&samples[leader], &samples[j], figure);
            Some((
                j,
                difference(
                    &samples[leader],
                    &samples[j],
                    figure,
                    pairs.as_deref(),
                    confidence,
                )?,
            ))
        })
        .collect();
    mark_table(cells.iter_mut().map(|(_, c)| c), confidence.level);
    let clear = !cells.is_empty() && cells.iter().all(|(_, c)| c.different);
    let (rival, cell) = cells
        .iter()
        .min_by(|a, b| a.1.estimate.abs().total_cmp(&b.1.estimate.abs()))?;
    let (advantage, interval) = oriented(cell, false, row.better);
    Some(Standing {
        leader,
        rival: *rival,
        advantage,
        interval,
        clear,
        needs: cell.needs_per_side,
        values: (value(leader)?, value(*rival)?),
    })
}

fn level_pct(confidence: Confidence) -> String {
    format!("{:.0} %", confidence.level * 100.0)
}

/// `“A” shows its first token 2.70 s sooner than “B” (95 % interval 2.60–2.90 s)`.
fn told(s: &Standing, names: &[&str], what: &str, confidence: Confidence) -> String {
    let interval = s.interval.map_or(String::new(), |i| {
        format!(
            " ({} interval {})",
            level_pct(confidence),
            ms_range(i.lo, i.hi)
        )
    });
    format!(
        "“{}” {what} {} sooner than “{}”{interval}",
        name(names, s.leader),
        ms(s.advantage),
        name(names, s.rival)
    )
}

/// `first tokens cannot be told apart (medians 812 ms vs 845 ms; …)`.
fn untold(s: &Standing, names: &[&str], noun: &str, confidence: Confidence) -> String {
    let interval = s.interval.map_or(String::new(), |i| {
        format!(
            "; the {} interval of the difference, {}, {}",
            level_pct(confidence),
            ms_range(i.lo, i.hi),
            about_zero(i)
        )
    });
    format!(
        "{noun} cannot be told apart (“{}” {} vs “{}” {}{interval}{})",
        name(names, s.leader),
        ms(s.values.0),
        name(names, s.rival),
        ms(s.values.1),
        advice(s, confidence)
    )
}

/// Why the interval of a difference not told from noise does not tell it: it includes zero,
/// or it excludes zero only before Holm's correction over the table.
fn about_zero(i: Interval) -> &'static str {
    if i.lo <= 0.0 && i.hi >= 0.0 {
        "includes zero"
    } else {
        "excludes zero only before the correction for the table's many comparisons"
    }
}

/// What more requests would show, for a difference not told from noise.
fn advice(s: &Standing, confidence: Confidence) -> String {
    match (s.needs, s.interval) {
        (Some(n), Some(_)) => format!(
            "; about {n} requests per side would show a {:.0} % difference",
            confidence.detect * 100.0
        ),
        (Some(n), None) => format!("; too few requests for an interval: run at least {n} per side"),
        (None, _) => String::new(),
    }
}

fn name<'a>(names: &[&'a str], i: usize) -> &'a str {
    names.get(i).copied().unwrap_or("?")
}

/// The lesson of a comparison (see the module doc).
pub(crate) fn lesson(
    names: &[&str],
    aggs: &[Aggregates],
    samples: &[RunSamples],
    rows: &[MetricRow],
    crossover: Option<Crossover>,
    confidence: Confidence,
) -> Verdict {
    let stand = |metric: &str| {
        rows.iter()
            .find(|r| r.metric == metric)
            .and_then(|r| standing(r, samples, confidence))
    };
    let (first, finish) = (stand("TTFT P50"), stand("E2E (total latency) P50"));
    let mut text = match (&first, &finish) {
        (Some(t), Some(e)) if t.clear && e.clear && t.leader != e.leader => {
            let mut text = format!(
                "{}, but {}: users will feel “{}” is faster. Total latency lies.",
                told(e, names, "finishes", confidence),
                told(t, names, "shows its first token", confidence),
                name(names, t.leader)
            );
            let decode_clear = stand("TPOT P50").is_some_and(|d| d.clear);
            if let Some(c) = crossover.filter(|c| c.early == t.leader && decode_clear) {
                text.push_str(&format!(
                    " “{}” only catches up at token {:.0} ({}); answers shorter than that are seen sooner on “{}”.",
                    name(names, c.late),
                    c.at_token.ceil(),
                    ms(c.at_ms),
                    name(names, c.early)
                ));
            }
            text
        }
        (Some(t), Some(e)) if t.clear && e.clear => format!(
            "{}, and it finishes first too ({} sooner{}).",
            told(t, names, "shows its first token", confidence),
            ms(e.advantage),
            e.interval.map_or(String::new(), |i| format!(
                ", {} interval {}",
                level_pct(confidence),
                ms_range(i.lo, i.hi)
            ))
        ),
        (Some(t), Some(e)) if t.clear => format!(
            "{}; total latency {}.",
            told(t, names, "shows its first token", confidence),
            untold(e, names, "", confidence).trim_start()
        ),
        (Some(t), Some(e)) if e.clear => format!(
            "{}; first tokens {}.",
            told(e, names, "finishes", confidence),
            untold(t, names, "", confidence).trim_start()
        ),
        (Some(t), Some(e)) => format!(
            "No difference is told from noise yet: first tokens {}; total latency {}.",
            untold(t, names, "", confidence).trim_start(),
            untold(e, names, "", confidence).trim_start()
        ),
        (Some(t), None) if t.clear => {
            format!("{}.", told(t, names, "shows its first token", confidence))
        }
        (Some(t), None) => format!(
            "First tokens {}.",
            untold(t, names, "", confidence).trim_start()
        ),
        _ => String::from("Not enough successful requests to compare."),
    };
    let reader = rows
        .iter()
        .find(|r| r.metric == "Reading QoE P50")
        .and_then(|r| standing(r, samples, confidence));
    let mut reader_winner = None;
    if let Some(q) = reader {
        text.push(' ');
        if q.clear {
            reader_winner = Some(q.leader);
            text.push_str(&reader_prefers(&q, names, aggs, confidence));
        } else {
            let interval = q.interval.map_or(String::new(), |i| {
                format!(
                    "; {} interval of the difference {:.2} to {:.2}",
                    level_pct(confidence),
                    i.lo + 0.0,
                    i.hi + 0.0
                )
            });
            text.push_str(&format!(
                "A reader could not tell “{}” and “{}” apart on this evidence: reading QoE {:.2} vs {:.2}{interval}{}.",
                name(names, q.leader),
                name(names, q.rival),
                q.values.0,
                q.values.1,
                advice(&q, confidence)
            ));
        }
    }
    Verdict {
        text,
        reader_winner,
    }
}

/// "A reader prefers …", with why the other run loses: a first word noticeably later (when
/// that outweighs its longer waits), reader waits mid-answer, or text slower than reading.
fn reader_prefers(
    q: &Standing,
    names: &[&str],
    aggs: &[Aggregates],
    confidence: Confidence,
) -> String {
    let (w, l) = (q.leader, q.rival);
    let (ew, el) = (&aggs[w].experience, &aggs[l].experience);
    let first = |a: &Aggregates| a.first_answer.or(a.ttft).map(|s| s.p50);
    let late_start = match (first(&aggs[w]), first(&aggs[l])) {
        (Some(fw), Some(fl)) if fl > fw => fl - fw,
        _ => 0.0,
    };
    let worse_wait = el.wait_longest_ms.unwrap_or(0.0) - ew.wait_longest_ms.unwrap_or(0.0);
    let why = if late_start >= LATE_START_NOTICED_MS && late_start >= worse_wait {
        format!(
            "“{}” keeps them waiting {} before the first word",
            name(names, l),
            ms(first(&aggs[l]).unwrap_or(0.0))
        )
    } else if worse_wait > 0.0 {
        format!(
            "“{}” leaves them waiting mid-answer (up to {}, in {} of {} requests)",
            name(names, l),
            ms(el.wait_longest_ms.unwrap_or(0.0)),
            el.with_waits,
            el.reading_requests
        )
    } else {
        format!(
            "“{}” delivers its text slower than they read",
            name(names, l)
        )
    };
    let interval = q.interval.map_or(String::new(), |i| {
        format!(
            ", {} interval {:.2}–{:.2}",
            level_pct(confidence),
            i.lo,
            i.hi
        )
    });
    format!(
        "A reader prefers “{}”: reading QoE {:.2} vs {:.2} (difference {:.2}{interval}), because {why}.",
        name(names, w),
        q.values.0,
        q.values.1,
        q.advantage
    )
}

/// The article's point about two runs in one sentence, from their comparison: which shows its
/// first words first and which finishes its answer first, each with its interval (the tour's
/// guide, #29).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirstWordsAndFinish {
    /// The sentence, without its closing punctuation: `model-b finishes its answer 2.08 s
    /// sooner (95 % interval 1.35–2.09 s), yet model-a shows its first words 2.69 s earlier
    /// (2.63–2.69 s)`. A difference not told from noise is said to be so, with its interval
    /// and the requests per side that would tell it; none is claimed whose interval holds zero.
    pub text: String,
    /// Whether total latency lies here: one run is told to finish first, the other to show
    /// its first words first.
    pub trade_off: bool,
}

/// Which run leads on a latency row of two runs, by how much and with what interval
/// (oriented so a lead is positive); `None` unless the lead is told from noise (marked
/// different, its interval clear of zero).
fn told_lead(cell: &DiffCell) -> Option<(usize, f64, Interval)> {
    let i = cell.interval?;
    let (leader, by, lo, hi) = if cell.estimate < 0.0 {
        (1, -cell.estimate, -i.hi, -i.lo)
    } else {
        (0, cell.estimate, i.lo, i.hi)
    };
    (cell.different && lo > 0.0 && by > 0.0).then_some((
        leader,
        by,
        Interval {
            lo,
            hi,
            level: i.level,
        },
    ))
}

/// `first words cannot be told apart yet (model-a 812 ms vs model-b 845 ms; the 95 % interval
/// of the difference, −20 to 70 ms, includes zero; about 40 requests per side would show a
/// 10 % difference)`.
fn untold_pair(row: &MetricRow, names: &[&str], noun: &str, confidence: Confidence) -> String {
    let value = |i: usize| row.values.get(i).copied().flatten().map_or("—".into(), ms);
    let cell = row.differences.get(1).copied().flatten();
    let interval = cell.and_then(|c| c.interval).map_or(String::new(), |i| {
        format!(
            "; the {} interval of the difference, {}, {}",
            level_pct(confidence),
            ms_range(i.lo, i.hi),
            about_zero(i)
        )
    });
    let advice = match cell.map(|c| (c.needs_per_side, c.interval.is_some())) {
        Some((Some(n), true)) => format!(
            "; about {n} requests per side would show a {:.0} % difference",
            confidence.detect * 100.0
        ),
        Some((Some(n), false)) => {
            format!("; too few requests for an interval: run at least {n} per side")
        }
        _ => String::new(),
    };
    format!(
        "{noun} cannot be told apart yet ({} {} vs {} {}{interval}{advice})",
        name(names, 0),
        value(0),
        name(names, 1),
        value(1)
    )
}

/// [`FirstWordsAndFinish`] of a comparison of two runs named `names`, from its TTFT P50 and
/// E2E P50 rows; `None` when it has no such rows (or not two runs).
pub fn first_words_and_finish(
    names: &[&str],
    rows: &[MetricRow],
    confidence: Confidence,
) -> Option<FirstWordsAndFinish> {
    let row = |m: &str| rows.iter().find(|r| r.metric == m && r.values.len() == 2);
    let (first, finish) = (row("TTFT P50")?, row("E2E (total latency) P50")?);
    let lead = |r: &MetricRow| {
        r.differences
            .get(1)
            .copied()
            .flatten()
            .and_then(|c| told_lead(&c))
    };
    let pct = level_pct(confidence);
    let (first_lead, finish_lead) = (lead(first), lead(finish));
    let text = match (first_lead, finish_lead) {
        (Some((f, fb, fi)), Some((e, eb, ei))) if f != e => format!(
            "{} finishes its answer {} sooner ({pct} interval {}), yet {} shows its first words {} earlier ({})",
            name(names, e),
            ms(eb),
            ms_range(ei.lo, ei.hi),
            name(names, f),
            ms(fb),
            ms_range(fi.lo, fi.hi)
        ),
        (Some((f, fb, fi)), Some((_, eb, ei))) => format!(
            "{} shows its first words {} earlier ({pct} interval {}) and finishes its answer {} sooner ({})",
            name(names, f),
            ms(fb),
            ms_range(fi.lo, fi.hi),
            ms(eb),
            ms_range(ei.lo, ei.hi)
        ),
        (Some((f, fb, fi)), None) => format!(
            "{} shows its first words {} earlier ({pct} interval {}); whole answers {}",
            name(names, f),
            ms(fb),
            ms_range(fi.lo, fi.hi),
            untold_pair(finish, names, "", confidence).trim_start()
        ),
        (None, Some((e, eb, ei))) => format!(
            "{} finishes its answer {} sooner ({pct} interval {}); first words {}",
            name(names, e),
            ms(eb),
            ms_range(ei.lo, ei.hi),
            untold_pair(first, names, "", confidence).trim_start()
        ),
        (None, None) => format!(
            "{}; {}",
            untold_pair(first, names, "First words", confidence),
            untold_pair(finish, names, "whole answers", confidence)
        ),
    };
    Some(FirstWordsAndFinish {
        text,
        trade_off: matches!((first_lead, finish_lead), (Some((f, ..)), Some((e, ..))) if f != e),
    })
}
