//! The client-health verdict: could the browser itself have added time to this run's figures?
//!
//! While a run goes, the page records [`HealthSamples`]: a repeating timer's lateness (each
//! sample is `(due, late)`: when the timer was due, ms from the run's start, and how late it
//! fired, ms), the intervals the tab was hidden (`visibilitychange`; an interval with no end
//! ends at the run's end) and the run's length. [`assess`] reads them with the
//! report's measured requests (not warm-up): each request *streams* over its window
//! `[start_ms, start_ms + e2e_ms]` (when E2E is missing, its last known time: TTFT, else TTFB,
//! else its start), on the same run clock as the samples.
//!
//! Three causes, each with a bound `up_to_ms` on what it may have added to a request's times:
//!
//! - **Main-thread lag** ([`CauseKind::MainThreadLag`]). A timer due at `d` that fires `L` ms
//!   late means the page's thread was busy over `[d, d + L]`: a read resolving then is
//!   stamped at most `L` late when reads are stamped *on the page*. Only samples whose busy
//!   interval meets a streaming window count (lag between requests delays no stamp), and
//!   samples that meet a hidden interval are left to the hidden-tab cause (a hidden tab's
//!   timers are throttled on purpose). `lag_p50_ms`, `lag_p99_ms`, `lag_max_ms` are the type-7
//!   percentiles and maximum of those samples' lateness (negative lateness is taken as 0,
//!   non-finite samples are dropped). The cause is raised when `lag_p99_ms >`
//!   [`LAG_BUDGET_MS`] (one frame: an isolated spike among a hundred samples does not raise
//!   it, `lag_max_ms` still shows it). Its bound is `lag_max_ms`, the worst lag that met a
//!   streaming window (a stamp taken during it is late by at most that much; it lengthens a
//!   TTFT or a gap and shortens the next gap), and it counts the requests whose window met a
//!   sample later than the budget. When the report's `stamping` says a stamping worker
//!   stamped the reads (`"1 stamping worker"`, not `"the page (…)"`), the page's lag delays
//!   only drawing: the cause stays, as a note, with `up_to_ms` 0 and a sentence saying the
//!   stamps were taken in a worker. A report that does not say is taken as stamped on the
//!   page. Lag shorter than the timer's period between two samples can go unseen.
//! - **Hidden tab** ([`CauseKind::HiddenTab`]). A hidden tab's timers are throttled (to once a
//!   second or less in Chromium, once a minute after minutes hidden) and its work deferred;
//!   any stamp taken while hidden may be late by as long as the tab stayed hidden.
//!   `hidden_ms` is the length of the union of the hidden intervals within `[0, run end]`;
//!   a request streamed while hidden when its window overlaps that union for a positive time,
//!   and the bound is the longest such overlap of one request. Hidden time while nothing
//!   streamed is a note (`up_to_ms` 0): sends may have left late, no stamp was taken.
//! - **Connection queue** ([`CauseKind::ConnectionQueue`]). `browser_queue_ms` (Resource
//!   Timing `requestStart − startTime`) is time the browser held a request after t0, waiting
//!   for one of its connections to the origin (6 per origin over HTTP/1.1) or for one to
//!   open: it is in that request's TTFT, never in its gaps. `queue_p99_ms` is the type-7 P99
//!   of the measured requests' queue times (negative ones taken as 0); the cause is raised
//!   when it exceeds [`QUEUE_BUDGET_MS`], and its bound is that P99.
//!
//! The verdict is [`Verdict::MayHaveAdded`] with the largest bound of the causes when that
//! bound is above 0, else [`Verdict::Healthy`] (causes with a bound of 0 are notes that leave
//! the figures alone). So a run is healthy when the lag P99 while streaming is ≤ 16 ms (or
//! stamps were taken in a worker), no request streamed while the tab was hidden, and the
//! queue P99 is ≤ 5 ms. Nothing here panics on bad input: NaN, infinite or negative values
//! are dropped or clamped as said.

use serde::{Deserialize, Serialize};

use crate::format::ms;
use crate::report::Report;
pub use crate::report::health::{CauseKind, ClientHealth, HealthCause, Verdict};
use crate::stats::{percentile_sorted, sorted};

/// Lag the page may show while requests stream, ms: one frame at 60 Hz (16.7 ms, rounded
/// down). A timer firing later than this more than 1 % of the time means the main thread was
/// blocked for whole frames (long tasks, garbage collection, layout), not the few
/// milliseconds of timer clamping and scheduling every page has.
pub const LAG_BUDGET_MS: f64 = 16.0;

/// Browser queue time a request may have, ms: connection reuse on an open connection costs
/// well under a millisecond; above 5 ms the request waited for a connection (the browser's
/// per-origin limit) or for one to be opened, which adds to TTFT.
pub const QUEUE_BUDGET_MS: f64 = 5.0;

/// What the page recorded about itself during a run (all times ms from the run's start).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HealthSamples {
    /// `(due, late)`: when a lag timer was due, and how late it fired (ms).
    pub lag: Vec<(f64, f64)>,
    /// The lag timer's period (ms).
    pub timer_period_ms: f64,
    /// `(from, to)` intervals the tab was hidden; a `to` that is not finite (an interval still
    /// open) ends at the run's end.
    pub hidden: Vec<(f64, f64)>,
    /// Length of the run (ms).
    pub run_ms: f64,
}

fn requests(n: usize) -> String {
    format!("{n} request{}", if n == 1 { "" } else { "s" })
}

/// Sorts and merges intervals (each `from ≤ to`) into disjoint ones.
fn merge(mut v: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(v.len());
    for (a, b) in v {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// Whether `[a, b]` meets one of the disjoint sorted `intervals` (closed, as `strict` false)
/// or overlaps one for a positive time (`strict` true).
fn meets(intervals: &[(f64, f64)], a: f64, b: f64, strict: bool) -> bool {
    // The first interval that ends after `a` (or at it, `strict` false): of those that can
    // meet `[a, b]`, the one with the smallest start.
    let i = if strict {
        intervals.partition_point(|w| w.1 <= a)
    } else {
        intervals.partition_point(|w| w.1 < a)
    };
    intervals
        .get(i)
        .is_some_and(|w| if strict { w.0 < b } else { w.0 <= b })
}

/// Length of `[a, b]` ∩ the disjoint sorted `intervals`.
fn overlap(intervals: &[(f64, f64)], a: f64, b: f64) -> f64 {
    let i = intervals.partition_point(|w| w.1 <= a);
    intervals[i..]
        .iter()
        .take_while(|w| w.0 < b)
        .map(|w| (w.1.min(b) - w.0.max(a)).max(0.0))
        .sum()
}

/// Assesses a run from its report and the page's samples (rules in the module doc).
pub fn assess(report: &Report, samples: &HealthSamples) -> ClientHealth {
    // Streaming windows of the measured requests.
    let windows: Vec<(f64, f64)> = report
        .measured()
        .filter(|r| r.start_ms.is_finite())
        .map(|r| {
            let m = &r.metrics;
            let dur = [m.e2e_ms, m.ttft_ms, m.ttfb_ms]
                .into_iter()
                .flatten()
                .find(|d| d.is_finite())
                .unwrap_or(0.0)
                .max(0.0);
            (r.start_ms, r.start_ms + dur)
        })
        .collect();
    let streaming = merge(windows.clone());

    // The run's end: its length, or (when that is not a usable number) the latest time
    // anything was recorded.
    let run_end = if samples.run_ms.is_finite() && samples.run_ms > 0.0 {
        samples.run_ms
    } else {
        let ends = windows.iter().map(|w| w.1);
        let lags = samples.lag.iter().map(|&(d, l)| d + l.max(0.0));
        let hidden = samples.hidden.iter().flat_map(|&(a, b)| [a, b]);
        ends.chain(lags)
            .chain(hidden)
            .filter(|x| x.is_finite())
            .fold(0.0, f64::max)
    };

    // Hidden time within [0, run end].
    let hidden = merge(
        samples
            .hidden
            .iter()
            .filter(|(a, _)| !a.is_nan())
            .map(|&(a, b)| {
                // An open interval (no finite end) runs to the run's end.
                let b = if b.is_nan() || b == f64::INFINITY {
                    run_end
                } else {
                    b.min(run_end)
                };
                (a.max(0.0), b)
            })
            .filter(|(a, b)| a < b)
            .collect(),
    );
    let hidden_ms: f64 = hidden.iter().map(|(a, b)| b - a).sum();

    // Lag samples that met a streaming window, outside hidden time, sorted by due time.
    let mut lag: Vec<(f64, f64)> = samples
        .lag
        .iter()
        .filter(|(d, l)| d.is_finite() && l.is_finite())
        .map(|&(d, l)| (d, l.max(0.0)))
        .filter(|&(d, l)| !meets(&hidden, d, d + l, true))
        .filter(|&(d, l)| meets(&streaming, d, d + l, false))
        .collect();
    lag.sort_by(|a, b| a.0.total_cmp(&b.0));
    let late = sorted(&lag.iter().map(|s| s.1).collect::<Vec<_>>());
    let lag_p50_ms = percentile_sorted(&late, 50.0).unwrap_or(0.0);
    let lag_p99_ms = percentile_sorted(&late, 99.0).unwrap_or(0.0);
    let lag_max_ms = late.last().copied().unwrap_or(0.0);

    let mut causes = Vec::new();

    if lag_p99_ms > LAG_BUDGET_MS {
        // Requests whose window met a sample later than the budget.
        let affected = windows
            .iter()
            .filter(|&&(s, e)| {
                let from = lag.partition_point(|x| x.0 < s - lag_max_ms);
                lag[from..]
                    .iter()
                    .take_while(|x| x.0 <= e)
                    .any(|&(d, l)| d + l >= s && l > LAG_BUDGET_MS)
            })
            .count();
        let period = if samples.timer_period_ms.is_finite() && samples.timer_period_ms > 0.0 {
            format!(" (due every {})", ms(samples.timer_period_ms))
        } else {
            String::new()
        };
        let seen = format!(
            "timers fired up to {} late while {} streamed",
            ms(lag_max_ms),
            requests(affected)
        );
        let stamping = report.stamping.as_deref().unwrap_or("");
        let in_worker =
            !stamping.trim_start().starts_with("the page") && stamping.contains("worker");
        causes.push(if in_worker {
            HealthCause {
                kind: CauseKind::MainThreadLag,
                up_to_ms: 0.0,
                sentence: format!(
                    "The page's main thread was busy while requests streamed: its timers{period} \
                     fired up to {} late (P99 {}, above the {} of one frame) while {} \
                     streamed. Reads were stamped in {stamping}, so the stamps are unaffected \
                     (0 ms added); only drawing was delayed.",
                    ms(lag_max_ms),
                    ms(lag_p99_ms),
                    ms(LAG_BUDGET_MS),
                    requests(affected)
                ),
                short: "main thread busy, stamps taken in a worker".into(),
            }
        } else {
            HealthCause {
                kind: CauseKind::MainThreadLag,
                up_to_ms: lag_max_ms,
                sentence: format!(
                    "The page's main thread was busy while requests streamed: its timers{period} \
                     fired up to {} late (P99 {}, above the {} of one frame) while {} \
                     streamed. Reads were stamped on the page, so a stamp may be up to {} \
                     late: added to a TTFT or an ITL gap (and taken from the next gap). \
                     Close other work in this tab, or stamp in a worker.",
                    ms(lag_max_ms),
                    ms(lag_p99_ms),
                    ms(LAG_BUDGET_MS),
                    requests(affected),
                    ms(lag_max_ms)
                ),
                short: format!("main thread busy: {seen}"),
            }
        });
    }

    // Requests that streamed while hidden, and the longest overlap of one.
    let overlaps: Vec<f64> = windows
        .iter()
        .map(|&(s, e)| overlap(&hidden, s, e))
        .filter(|o| *o > 0.0)
        .collect();
    let requests_while_hidden = overlaps.len();
    if hidden_ms > 0.0 {
        let worst = overlaps.iter().copied().fold(0.0, f64::max);
        causes.push(if requests_while_hidden > 0 {
            HealthCause {
                kind: CauseKind::HiddenTab,
                up_to_ms: worst,
                sentence: format!(
                    "The tab was hidden for {} while {} streamed: a hidden tab's timers are \
                     throttled (to once a second or less in Chromium) and its work deferred, \
                     so those requests' times may be off by up to {} (the longest one \
                     streamed while hidden). Keep the tab visible while measuring.",
                    ms(hidden_ms),
                    requests(requests_while_hidden),
                    ms(worst)
                ),
                short: format!(
                    "tab hidden for {} while {} streamed",
                    ms(hidden_ms),
                    requests(requests_while_hidden)
                ),
            }
        } else {
            HealthCause {
                kind: CauseKind::HiddenTab,
                up_to_ms: 0.0,
                sentence: format!(
                    "The tab was hidden for {}, but no request streamed then: no stamp was \
                     affected (sends may have left late).",
                    ms(hidden_ms)
                ),
                short: "tab hidden while nothing streamed".into(),
            }
        });
    }

    let queue: Vec<f64> = report
        .measured()
        .filter_map(|r| r.browser_queue_ms)
        .filter(|q| q.is_finite())
        .map(|q| q.max(0.0))
        .collect();
    let queue = sorted(&queue);
    let queue_p99_ms = percentile_sorted(&queue, 99.0);
    if let Some(p99) = queue_p99_ms.filter(|p| *p > QUEUE_BUDGET_MS) {
        let waited = queue.iter().filter(|q| **q > QUEUE_BUDGET_MS).count();
        let max = queue.last().copied().unwrap_or(p99);
        causes.push(HealthCause {
            kind: CauseKind::ConnectionQueue,
            up_to_ms: p99,
            sentence: format!(
                "{} waited more than {} in the browser before being sent (P99 {}, max {}): \
                 the browser holds a request while its connections to the origin are busy \
                 (6 per origin over HTTP/1.1) or being opened. That wait is part of their \
                 TTFT, not of their ITL, and it is the client's, not the server's.",
                requests(waited),
                ms(QUEUE_BUDGET_MS),
                ms(p99),
                ms(max)
            ),
            short: format!("connection queue: P99 {} before sending", ms(p99)),
        });
    }

    let up_to = causes.iter().map(|c| c.up_to_ms).fold(0.0, f64::max);
    ClientHealth {
        verdict: if up_to > 0.0 {
            Verdict::MayHaveAdded { up_to_ms: up_to }
        } else {
            Verdict::Healthy
        },
        lag_samples: lag.len(),
        lag_p50_ms,
        lag_p99_ms,
        lag_max_ms,
        hidden_ms,
        requests_while_hidden,
        queue_p99_ms,
        causes,
    }
}

/// A few words for the compare view when a run's client may have added time
/// (`measured in a hidden tab`, `heavy main-thread lag`, `connection queue`); `None` when it
/// did not.
pub fn compare_flag(health: &ClientHealth) -> Option<String> {
    let adds = |kind| {
        health
            .causes
            .iter()
            .any(|c| c.kind == kind && c.up_to_ms > 0.0)
    };
    let mut flags = Vec::new();
    if adds(CauseKind::HiddenTab) {
        flags.push("measured in a hidden tab".to_owned());
    }
    if adds(CauseKind::MainThreadLag) {
        flags.push("heavy main-thread lag".to_owned());
    }
    if adds(CauseKind::ConnectionQueue) {
        flags.push(format!(
            "connection queue (P99 {})",
            ms(health.queue_p99_ms.unwrap_or(f64::NAN))
        ));
    }
    (!flags.is_empty()).then(|| flags.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::MetricsConfig;
    use crate::report::RequestRecord;
    use crate::timeline::RequestRecorder;
    use proptest::prelude::*;

    /// A measured request sent at `start` that streams for `e2e` ms.
    fn req(start: f64, e2e: f64, queue: Option<f64>) -> RequestRecord {
        let mut r = RequestRecorder::new(0.0, None, None);
        r.on_headers(1.0, 200, Some("text/event-stream"));
        r.on_read(2.0, b"data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n");
        r.on_read(3.0, b"data: [DONE]\n\n");
        let tl = r.finish(3.0);
        let mut rec =
            RequestRecord::from_timeline(0, "c=1".into(), None, &tl, &MetricsConfig::default());
        rec.start_ms = start;
        rec.metrics.e2e_ms = Some(e2e);
        rec.browser_queue_ms = queue;
        rec
    }

    fn report(stamping: Option<&str>, requests: Vec<RequestRecord>) -> Report {
        let r = Report::new("r", Default::default(), "chat").with_requests(requests);
        match stamping {
            Some(s) => r.with_stamping(s),
            None => r,
        }
    }

    /// Five 100 ms requests at 0, 200, 400, 600, 800 ms.
    fn five() -> Vec<RequestRecord> {
        (0..5)
            .map(|i| req(i as f64 * 200.0, 100.0, Some(0.2)))
            .collect()
    }

    /// A 1 s run sampled every 50 ms with 1 ms of lag.
    fn quiet() -> HealthSamples {
        HealthSamples {
            lag: (0..20).map(|i| (i as f64 * 50.0, 1.0)).collect(),
            timer_period_ms: 50.0,
            hidden: Vec::new(),
            run_ms: 1000.0,
        }
    }

    #[test]
    fn no_lag_is_healthy() {
        let h = assess(&report(Some("the page (test)"), five()), &quiet());
        assert_eq!(h.verdict, Verdict::Healthy);
        assert!(h.causes.is_empty());
        // Samples due at 0, 50, 100 meet [0, 100]; 150 meets nothing; … : 3 per request.
        assert_eq!(h.lag_samples, 15);
        assert_eq!((h.lag_p50_ms, h.lag_p99_ms, h.lag_max_ms), (1.0, 1.0, 1.0));
        assert_eq!(h.queue_p99_ms, Some(0.2));
        assert_eq!(h.headline(), "healthy");
        assert_eq!(compare_flag(&h), None);
    }

    /// The quiet run with the timer due at 450 ms firing 300 ms late: busy over [450, 750],
    /// which meets the requests at 400 ([400, 500]) and 600 ([600, 700]), 2 of 5.
    fn burst() -> HealthSamples {
        let mut s = quiet();
        s.lag[9] = (450.0, 300.0);
        s
    }

    #[test]
    fn a_lag_burst_with_page_stamping_may_have_added_it() {
        let h = assess(&report(Some("the page (no worker)"), five()), &burst());
        assert_eq!(h.verdict, Verdict::MayHaveAdded { up_to_ms: 300.0 });
        // 15 samples met a window, the burst one of them; P99 of fourteen 1s and one 300:
        // 1 + 0.86 × 299.
        assert_eq!(h.lag_samples, 15);
        assert!((h.lag_p99_ms - (1.0 + 0.86 * 299.0)).abs() < 1e-9);
        assert_eq!(h.lag_max_ms, 300.0);
        assert_eq!(h.causes.len(), 1);
        assert_eq!(h.causes[0].kind, CauseKind::MainThreadLag);
        assert_eq!(h.causes[0].up_to_ms, 300.0);
        assert!(h.causes[0].sentence.contains("stamped on the page"));
        assert_eq!(
            h.headline(),
            "the client may have added up to 300 ms (main thread busy: timers fired up to 300 ms \
             late while 2 requests streamed)"
        );
        assert_eq!(compare_flag(&h).as_deref(), Some("heavy main-thread lag"));
        // A report that does not say where it stamped is taken as stamped on the page.
        let h = assess(&report(None, five()), &burst());
        assert_eq!(h.verdict, Verdict::MayHaveAdded { up_to_ms: 300.0 });
    }

    #[test]
    fn a_lag_burst_with_worker_stamping_leaves_stamps_alone() {
        let h = assess(&report(Some("2 stamping workers"), five()), &burst());
        assert_eq!(h.verdict, Verdict::Healthy);
        assert_eq!(h.lag_max_ms, 300.0);
        assert_eq!(h.causes.len(), 1);
        assert_eq!(h.causes[0].kind, CauseKind::MainThreadLag);
        assert_eq!(h.causes[0].up_to_ms, 0.0);
        assert!(
            h.causes[0]
                .sentence
                .contains("stamped in 2 stamping workers")
        );
        assert!(h.causes[0].sentence.contains("stamps are unaffected"));
        assert_eq!(h.headline(), "healthy");
        assert_eq!(compare_flag(&h), None);
    }

    #[test]
    fn lag_between_requests_is_not_counted() {
        let mut s = quiet();
        // Due at 150, 40 ms late: busy over [150, 190], between [0, 100] and [200, 300].
        s.lag[3] = (150.0, 40.0);
        let h = assess(&report(Some("the page (test)"), five()), &s);
        assert_eq!(h.verdict, Verdict::Healthy);
        assert_eq!(h.lag_max_ms, 1.0);
    }

    #[test]
    fn a_hidden_interval_over_a_request_is_flagged() {
        let mut s = quiet();
        // Hidden over [250, 450]: 50 ms of [200, 300] and 50 ms of [400, 500]; the timer
        // samples due at 250, 300, 350 and 400 fall in it and are throttled, not lag.
        s.hidden = vec![(250.0, 450.0)];
        for sample in &mut s.lag[5..=8] {
            sample.1 = 1000.0;
        }
        let h = assess(&report(Some("1 stamping worker"), five()), &s);
        assert_eq!(h.hidden_ms, 200.0);
        assert_eq!(h.requests_while_hidden, 2);
        assert_eq!(h.verdict, Verdict::MayHaveAdded { up_to_ms: 50.0 });
        assert_eq!(h.lag_max_ms, 1.0);
        assert_eq!(h.causes.len(), 1);
        assert_eq!(h.causes[0].kind, CauseKind::HiddenTab);
        assert_eq!(
            h.headline(),
            "the client may have added up to 50.0 ms (tab hidden for 200 ms while 2 requests \
             streamed)"
        );
        assert_eq!(
            compare_flag(&h).as_deref(),
            Some("measured in a hidden tab")
        );
        // An interval still open at the end runs to the run's end; one over nothing is a note.
        s.hidden = vec![(900.0, f64::NAN)];
        let h = assess(&report(Some("1 stamping worker"), five()), &s);
        assert_eq!(h.hidden_ms, 100.0);
        assert_eq!(h.requests_while_hidden, 0);
        assert_eq!(h.verdict, Verdict::Healthy);
        assert_eq!(h.causes[0].up_to_ms, 0.0);
        assert!(h.causes[0].sentence.contains("no request streamed then"));
    }

    #[test]
    fn a_queue_adds_to_ttft() {
        let mut reqs = five();
        reqs[1].browser_queue_ms = Some(40.0);
        reqs[3].browser_queue_ms = Some(-3.0);
        let h = assess(&report(Some("1 stamping worker"), reqs), &quiet());
        // Sorted 0, 0.2, 0.2, 0.2, 40: P99 = 0.2 + 0.96 × 39.8.
        let p99 = 0.2 + 0.96 * 39.8;
        assert!((h.queue_p99_ms.unwrap() - p99).abs() < 1e-9);
        assert_eq!(h.causes.len(), 1);
        assert_eq!(h.causes[0].kind, CauseKind::ConnectionQueue);
        assert!(
            h.causes[0]
                .sentence
                .starts_with("1 request waited more than 5.00 ms")
        );
        assert!(
            h.causes[0]
                .sentence
                .contains("part of their TTFT, not of their ITL")
        );
        assert!(
            matches!(h.verdict, Verdict::MayHaveAdded { up_to_ms } if (up_to_ms - p99).abs() < 1e-9)
        );
        assert_eq!(
            compare_flag(&h).as_deref(),
            Some("connection queue (P99 38.4 ms)")
        );
        // At most 5 ms is fine.
        let mut reqs = five();
        reqs[2].browser_queue_ms = Some(5.0);
        let h = assess(&report(None, reqs), &quiet());
        assert_eq!(h.verdict, Verdict::Healthy);
    }

    #[test]
    fn causes_add_up_in_the_headline() {
        let mut reqs = five();
        reqs[0].browser_queue_ms = Some(30.0);
        let mut s = burst();
        s.hidden = vec![(800.0, 820.0)];
        let h = assess(&report(Some("the page (test)"), reqs), &s);
        assert_eq!(h.causes.len(), 3);
        assert_eq!(h.verdict, Verdict::MayHaveAdded { up_to_ms: 300.0 });
        let line = h.headline();
        assert!(line.starts_with("the client may have added up to 300 ms (main thread busy"));
        assert!(line.contains("; connection queue: P99"));
        assert!(line.ends_with("; tab hidden for 20.0 ms while 1 request streamed)"));
        assert_eq!(
            compare_flag(&h).unwrap().split("; ").count(),
            3,
            "{:?}",
            compare_flag(&h)
        );
    }

    #[test]
    fn empty_samples_and_reports_are_healthy() {
        let h = assess(&report(None, Vec::new()), &HealthSamples::default());
        assert_eq!(h.verdict, Verdict::Healthy);
        assert_eq!((h.lag_samples, h.hidden_ms, h.queue_p99_ms), (0, 0.0, None));
        let h = assess(&report(None, five()), &HealthSamples::default());
        assert_eq!(h.verdict, Verdict::Healthy);
        assert_eq!(h.queue_p99_ms, Some(0.2));
        // Warm-up requests are not measured.
        let mut reqs = five();
        reqs[0].warmup = true;
        reqs[0].browser_queue_ms = Some(900.0);
        assert_eq!(
            assess(&report(None, reqs), &quiet()).verdict,
            Verdict::Healthy
        );
    }

    #[test]
    fn samples_round_trip_as_json() {
        let s = burst();
        let text = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<HealthSamples>(&text).unwrap(), s);
        let h = assess(&report(None, five()), &s);
        let text = serde_json::to_string(&h).unwrap();
        let back = serde_json::from_str::<ClientHealth>(&text).unwrap();
        assert_eq!((back.verdict, back.causes), (h.verdict, h.causes));
    }

    proptest! {
        #[test]
        fn bad_numbers_never_panic(
            lag in proptest::collection::vec((any::<f64>(), any::<f64>()), 0..30),
            hidden in proptest::collection::vec((any::<f64>(), any::<f64>()), 0..5),
            period in any::<f64>(),
            run_ms in any::<f64>(),
            reqs in proptest::collection::vec(
                (any::<f64>(), any::<f64>(), proptest::option::of(any::<f64>())), 0..8),
            stamping in proptest::option::of("[a-z ()]{0,20}"),
        ) {
            let records = reqs.into_iter().map(|(s, e, q)| req(s, e, q)).collect();
            let samples = HealthSamples { lag, timer_period_ms: period, hidden, run_ms };
            let h = assess(&report(stamping.as_deref(), records), &samples);
            prop_assert!(h.hidden_ms >= 0.0, "{h:?}");
            prop_assert!(h.lag_p99_ms >= 0.0 && h.lag_max_ms >= 0.0, "{h:?}");
            for c in &h.causes {
                prop_assert!(c.up_to_ms >= 0.0, "{c:?}");
            }
            match h.verdict {
                Verdict::Healthy => prop_assert!(h.causes.iter().all(|c| c.up_to_ms == 0.0)),
                Verdict::MayHaveAdded { up_to_ms } => prop_assert!(up_to_ms > 0.0),
            }
            prop_assert!(!h.headline().is_empty());
            let _ = compare_flag(&h);
        }
    }
}
