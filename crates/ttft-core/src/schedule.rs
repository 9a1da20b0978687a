//! Open-loop fidelity: whether the client kept to the plan. Each request of an open-loop plan
//! (a load shape, a trace) carries its planned send ([`RequestRecord::planned_ms`]); its
//! *schedule lag* is `start_ms − planned_ms`, how late it actually went. A run's lag figure
//! ([`ScheduleLag`]) is its P50 and P99 with the order-statistic intervals every percentile
//! of the studio has (or how many requests one needs), its maximum, and the share of requests
//! more than [`LAG_BOUND_MS`] late with its Wilson interval. Above the bound at P99, a
//! finding says the client fell behind ([`lag_finding`]); the "planned vs achieved rate"
//! chart's data is [`rate_chart`].
//!
//! **Why 50 ms.** A stamping worker that keeps up sends within a few ms of its plan: its
//! timer fires late by the event loop's turn (about 1–4 ms; browsers clamp nested timers to
//! 4 ms). 50 ms is more than ten times that, so a P99 above it is not timer jitter: the
//! client could not send on time (every lane busy at the planned time, a throttled
//! background tab, whose timers fire at most once a second, or a loaded machine). It is also
//! the scale of the TTFT differences the studio compares, and a whole mean gap at 20 requests
//! a second: sends that late bunch up behind the delay, so the server saw a smoother, lower
//! load than the plan, and figures measured "at" the planned rate are not.

use serde::{Deserialize, Serialize};

use crate::arrivals::{RateBin, rate_bins};
use crate::finding::{Finding, Severity};
use crate::format::{ms, ms_range};
use crate::report::{PROBE_CLIENT, Report, RequestRecord};
use crate::stats::sorted;
use crate::uncertainty::proportion::proportion_estimate;
use crate::uncertainty::quantile::percentile_estimate;
use crate::uncertainty::{DEFAULT_LEVEL, Estimate};

/// A request sent more than this late (ms) is late; a P99 lag above it is a finding.
pub const LAG_BOUND_MS: f64 = 50.0;

/// How late the planned requests of a run went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScheduleLag {
    /// Requests with a planned send.
    pub planned: usize,
    /// Median lag (ms) with its interval.
    pub p50_ms: Estimate,
    /// P99 lag (ms) with its interval, or the requests it needs.
    pub p99_ms: Estimate,
    /// The largest lag (ms).
    pub max_ms: f64,
    /// The share of planned requests more than [`ScheduleLag::bound_ms`] late, with its
    /// interval.
    pub late: Estimate,
    /// What counted as late (ms).
    pub bound_ms: f64,
}

/// The lag (ms) of each request that had a planned send, in order.
pub fn lags_ms<'a>(records: impl IntoIterator<Item = &'a RequestRecord>) -> Vec<f64> {
    records
        .into_iter()
        .filter_map(|r| r.planned_ms.map(|p| r.start_ms - p))
        .filter(|l| l.is_finite())
        .collect()
}

/// The lag figure of plain lags (ms), a request late when more than `bound_ms` late;
/// intervals at `level`. `None` without a lag.
pub fn lag_figures(lags: &[f64], bound_ms: f64, level: f64) -> Option<ScheduleLag> {
    let s = sorted(lags);
    let p50_ms = percentile_estimate(&s, 0.5, level)?;
    let p99_ms = percentile_estimate(&s, 0.99, level)?;
    let late = s.iter().filter(|l| **l > bound_ms).count();
    Some(ScheduleLag {
        planned: s.len(),
        p50_ms,
        p99_ms,
        max_ms: s.last().copied().unwrap_or(0.0),
        late: proportion_estimate(late, s.len(), level)?,
        bound_ms,
    })
}

/// The lag figure of a run's measured requests (warm-ups are never planned) at `level`, a
/// request late beyond [`LAG_BOUND_MS`]; `None` when none was planned (a closed loop, an
/// older report).
pub fn schedule_lag(report: &Report, level: f64) -> Option<ScheduleLag> {
    lag_figures(&lags_ms(report.measured()), LAG_BOUND_MS, level)
}

/// An estimate in words: `812 ms (95 % interval 790–850 ms)`, or `… (needs 368 requests for
/// an interval)`.
fn with_interval(e: &Estimate) -> String {
    match (e.interval, e.needs) {
        (Some(i), _) => format!(
            "{} ({:.0} % interval {})",
            ms(e.value),
            i.level * 100.0,
            ms_range(i.lo, i.hi)
        ),
        (None, Some(n)) => format!("{} (needs {n} requests for an interval)", ms(e.value)),
        (None, None) => ms(e.value),
    }
}

/// `the browser fell behind the plan` when the P99 lag is above the bound: the numbers, and
/// where to send the load from. `client` names who sent (`the browser`, `locust`). A
/// problem when even the median request was late, else a warning.
pub fn lag_finding(lag: &ScheduleLag, client: &str) -> Option<Finding> {
    if lag.p99_ms.value <= lag.bound_ms {
        return None;
    }
    let late = &lag.late;
    let share = late.interval.map_or_else(String::new, |i| {
        format!(
            " ({:.0} % interval {:.0}–{:.0} %)",
            i.level * 100.0,
            i.lo * 100.0,
            i.hi * 100.0
        )
    });
    let browser = client == "the browser";
    Some(Finding {
        id: "schedule_lag".into(),
        severity: if lag.p50_ms.value > lag.bound_ms {
            Severity::Problem
        } else {
            Severity::Warning
        },
        title: format!(
            "{} fell behind the plan: P99 schedule lag {}",
            capitalised(client),
            ms(lag.p99_ms.value)
        ),
        evidence: format!(
            "P99 lag {}, P50 {}, max {}; {:.1} %{share} of {} planned requests went more than {} late",
            with_interval(&lag.p99_ms),
            with_interval(&lag.p50_ms),
            ms(lag.max_ms),
            late.value * 100.0,
            lag.planned,
            ms(lag.bound_ms),
        ),
        advice: if browser {
            "The server saw a lower, smoother load than planned. Move the load to Locust workers (Export → locustfile), or raise the concurrency so a lane is free at every planned send, and keep the tab in front."
        } else {
            "The server saw a lower, smoother load than planned. Add workers, or raise the concurrency so a lane is free at every planned send."
        }
        .into(),
    })
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// Who sent a run's planned requests, in words: `the browser` (the studio's own or a
/// `browser` vantage), the one other client's name, or `the clients`.
fn sender(report: &Report) -> String {
    let mut names = report
        .measured()
        .filter(|r| r.planned_ms.is_some())
        .map(|r| r.client.as_deref().unwrap_or(PROBE_CLIENT));
    let Some(first) = names.next() else {
        return "the browser".into();
    };
    if names.any(|n| n != first) {
        "the clients".into()
    } else if first == PROBE_CLIENT {
        "the browser".into()
    } else {
        first.to_owned()
    }
}

/// The run's `schedule_lag` finding ([`lag_finding`] at the default level), if any.
pub fn report_finding(report: &Report) -> Option<Finding> {
    let lag = schedule_lag(report, DEFAULT_LEVEL)?;
    lag_finding(&lag, &sender(report))
}

/// One bin of the "planned vs achieved rate" chart.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RateCompared {
    /// The planned sends in the bin, as a rate (no interval: the plan is what it is).
    pub planned_per_s: f64,
    /// The actual sends of the same requests in the bin, as a rate with its interval.
    pub achieved: RateBin,
}

/// The planned and achieved send rates of a run's planned requests, in bins of about `bin_ms`
/// over the run's time axis (ms from its start, from the first planned or actual send to the
/// last), the achieved rate's interval at `level`. Empty when no request was planned.
pub fn rate_chart(report: &Report, bin_ms: f64, level: f64) -> Vec<RateCompared> {
    let (planned, actual): (Vec<f64>, Vec<f64>) = report
        .measured()
        .filter_map(|r| r.planned_ms.map(|p| (p, r.start_ms)))
        .filter(|(p, a)| p.is_finite() && a.is_finite())
        .unzip();
    let from = planned
        .iter()
        .chain(&actual)
        .copied()
        .fold(f64::INFINITY, f64::min);
    let until = planned
        .iter()
        .chain(&actual)
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    let plan = rate_bins(&planned, from, until, bin_ms, level);
    rate_bins(&actual, from, until, bin_ms, level)
        .into_iter()
        .zip(plan)
        .map(|(achieved, p)| RateCompared {
            planned_per_s: p.per_s,
            achieved,
        })
        .collect()
}
