//! Schedule lag ([`ttft_core::schedule`]): the lag figure of constructed runs, the finding
//! above its bound only, the planned-vs-achieved chart's data, and the seeded coverage of the
//! lag percentiles' intervals.

use ttft_core::diagnosis::{Severity, diagnose};
use ttft_core::report::{Report, RequestRecord};
use ttft_core::run_stats::RunStats;
use ttft_core::schedule::{
    LAG_BOUND_MS, lag_figures, lag_finding, rate_chart, report_finding, schedule_lag,
};
use ttft_core::uncertainty::DEFAULT_LEVEL;
use ttft_fixtures::report_file::{record, report};

/// A run whose measured requests were planned every `gap_ms` and went `lags[k]` late, with a
/// planned warm-up sent very late and a closed-loop request (no plan) besides.
fn run_with_lags(lags: &[f64], gap_ms: f64) -> Report {
    let base = record(0, 200.0, 20.0, 4);
    let mut records = vec![RequestRecord {
        warmup: true,
        planned_ms: Some(0.0),
        start_ms: 5_000.0,
        ..base.clone()
    }];
    records.extend(lags.iter().enumerate().map(|(k, lag)| {
        let planned = 1_000.0 + gap_ms * k as f64;
        RequestRecord {
            index: k as u32 + 1,
            planned_ms: Some(planned),
            start_ms: planned + lag,
            ..base.clone()
        }
    }));
    records.push(RequestRecord {
        index: lags.len() as u32 + 1,
        start_ms: 9_999_999.0,
        planned_ms: None,
        ..base
    });
    report(records)
}

/// Type-7 percentile, written out independently of the core's.
fn type7(values: &[f64], p: f64) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let h = (v.len() - 1) as f64 * p;
    let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
    v[lo] + (h - lo as f64) * (v[hi] - v[lo])
}

#[test]
fn the_lag_figure_reads_the_measured_planned_requests() {
    // 100 requests 0–99 ms late, in a scrambled order.
    let lags: Vec<f64> = (0..100).map(|k| f64::from((k * 37) % 100)).collect();
    let run = run_with_lags(&lags, 100.0);
    let lag = schedule_lag(&run, DEFAULT_LEVEL).unwrap();
    assert_eq!(
        lag.planned, 100,
        "the warm-up and the closed-loop request are left out"
    );
    assert!((lag.p50_ms.value - type7(&lags, 0.5)).abs() < 1e-9);
    assert!((lag.p99_ms.value - type7(&lags, 0.99)).abs() < 1e-9);
    assert_eq!(lag.max_ms, 99.0);
    let p50 = lag
        .p50_ms
        .interval
        .expect("100 requests give a median an interval");
    assert!(p50.lo <= lag.p50_ms.value && lag.p50_ms.value <= p50.hi);
    // A P99 of 100 requests has no interval: it says how many it needs.
    assert!(lag.p99_ms.interval.is_none());
    assert_eq!(lag.p99_ms.needs, Some(368));
    // 51–99 ms late: 49 of 100 beyond 50 ms.
    assert!((lag.late.value - 0.49).abs() < 1e-12);
    assert!(lag.late.interval.unwrap().contains(0.49));
    assert_eq!(lag.bound_ms, LAG_BOUND_MS);
    // A run without planned sends has no lag figure and no finding (older reports too).
    let closed = report(vec![record(0, 200.0, 20.0, 4)]);
    assert!(schedule_lag(&closed, DEFAULT_LEVEL).is_none());
    assert!(report_finding(&closed).is_none());
}

#[test]
fn the_finding_appears_only_when_the_p99_lag_is_over_the_bound() {
    // Every request 10 ms late, then one in a hundred 80 ms late: P99 above 50 ms.
    let on_time = run_with_lags(&[10.0; 400], 100.0);
    assert!(report_finding(&on_time).is_none());
    assert!(
        diagnose(&on_time, &on_time.aggregates())
            .iter()
            .all(|f| f.id != "schedule_lag")
    );
    let mut lags = vec![10.0; 400];
    for l in lags.iter_mut().step_by(50) {
        *l = 80.0;
    }
    let behind = run_with_lags(&lags, 100.0);
    let f = report_finding(&behind).expect("a P99 lag of 80 ms is over the bound");
    assert_eq!(
        (f.id.as_str(), f.severity),
        ("schedule_lag", Severity::Warning)
    );
    assert!(
        f.title
            .starts_with("The browser fell behind the plan: P99 schedule lag"),
        "{}",
        f.title
    );
    assert!(
        f.evidence.contains("P99 lag 80.0 ms (95 % interval"),
        "{}",
        f.evidence
    );
    assert!(
        f.evidence.contains("of 400 planned requests"),
        "{}",
        f.evidence
    );
    assert!(f.advice.contains("Export → locustfile"), "{}", f.advice);
    assert!(
        diagnose(&behind, &behind.aggregates())
            .iter()
            .any(|d| d.id == "schedule_lag"),
        "the diagnosis carries it"
    );
    // At the bound exactly it is not over it; with every request late it is a problem.
    let at_bound = lag_figures(&[LAG_BOUND_MS; 50], LAG_BOUND_MS, DEFAULT_LEVEL).unwrap();
    assert!(lag_finding(&at_bound, "the browser").is_none());
    let all_late = lag_figures(&[300.0; 50], LAG_BOUND_MS, DEFAULT_LEVEL).unwrap();
    let f = lag_finding(&all_late, "locust").unwrap();
    assert_eq!(f.severity, Severity::Problem);
    assert!(f.title.starts_with("Locust fell behind"), "{}", f.title);
    assert!(
        f.evidence.contains("needs 368 requests for an interval"),
        "{}",
        f.evidence
    );
    assert!(
        !f.advice.contains("locustfile"),
        "Locust's own lag is not moved to Locust"
    );
}

#[test]
fn the_rate_chart_sets_planned_against_achieved() {
    // Planned every 100 ms (10 req/s) for 20 s; the client stalls for the second half and
    // sends it all at once.
    let n = 200;
    let lags: Vec<f64> = (0..n)
        .map(|k| {
            if k < 100 {
                2.0
            } else {
                10_000.0 - 100.0 * f64::from(k - 100) + 1.0
            }
        })
        .collect();
    let run = run_with_lags(&lags, 100.0);
    let chart = rate_chart(&run, 2_000.0, DEFAULT_LEVEL);
    assert!(chart.len() >= 9, "{} bins", chart.len());
    let planned: usize = chart
        .iter()
        .map(|b| {
            (b.planned_per_s * (b.achieved.end_ms - b.achieved.start_ms) / 1e3).round() as usize
        })
        .sum();
    let achieved: usize = chart.iter().map(|b| b.achieved.sends).sum();
    assert_eq!(
        (planned, achieved),
        (200, 200),
        "every send counted once on each side"
    );
    // The first half keeps to the plan; the second half's bins send nothing until the burst.
    assert!((chart[1].achieved.per_s - chart[1].planned_per_s).abs() < 1.0);
    let middle = &chart[chart.len() / 2 + 1];
    assert!(
        middle.planned_per_s > 8.0 && middle.achieved.sends == 0,
        "{middle:?}"
    );
    assert!(
        chart.last().unwrap().achieved.per_s > 40.0,
        "the burst at the end"
    );
    assert!(rate_chart(&report(vec![record(0, 200.0, 20.0, 4)]), 1_000.0, 0.95).is_empty());
}

/// A lag drawn from a shifted log-normal (2 ms of timer floor plus a skewed tail), from a
/// seeded uniform pair (Box–Muller).
fn lag(rng: &mut fastrand::Rng) -> f64 {
    let (u, v) = (1.0 - rng.f64(), rng.f64());
    let z = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
    2.0 + (1.0 + 0.8 * z).exp()
}

#[test]
fn the_lag_intervals_cover_the_true_percentiles() {
    // True percentiles of 2 + e^(1 + 0.8 Z): the normal's quantiles through the exponential.
    let z50: f64 = 0.0;
    let z99: f64 = 2.326_347_874_040_840_8;
    let (true50, true99) = (2.0 + (1.0 + 0.8 * z50).exp(), 2.0 + (1.0 + 0.8 * z99).exp());
    let mut rng = fastrand::Rng::with_seed(32);
    // 1,000 seeded runs of 800 requests (a P99 needs 368): the order-statistic intervals are
    // exact and conservative (at least 95 %); 93 % leaves room for the simulation's own
    // error (1,000 runs: a standard error of 0.7 %).
    let runs = 1_000;
    let (mut c50, mut c99) = (0, 0);
    for _ in 0..runs {
        let lags: Vec<f64> = (0..800).map(|_| lag(&mut rng)).collect();
        let f = lag_figures(&lags, LAG_BOUND_MS, 0.95).unwrap();
        c50 += usize::from(f.p50_ms.interval.unwrap().contains(true50));
        c99 += usize::from(f.p99_ms.interval.unwrap().contains(true99));
    }
    eprintln!("lag interval coverage: P50 {c50}, P99 {c99} of {runs}");
    assert!(c50 * 100 >= runs * 93, "P50 covered in {c50} of {runs}");
    assert!(c99 * 100 >= runs * 93, "P99 covered in {c99} of {runs}");
}
