//! A run's figures per time window ([`ttft_core::time_slices`]): the windows partition the run
//! and every count sums to the run's, the load figures add up (requests in flight over time are
//! the requests' durations), a slow start is found and left out of the headline with a
//! sentence that says so, a run that never settles says that, and warm-up is marked by count
//! or by time.

use ttft_core::report::{Report, RequestRecord};
use ttft_core::run_stats::RunStats;
use ttft_core::time_slices::{
    MIN_STEADY_WINDOWS, NoSteadyState, Warmup, mark_warmup, restrict_to_steady, steady_state,
    time_slices, window_ms_for,
};
use ttft_core::timeline::Outcome;
use ttft_core::uncertainty::DEFAULT_LEVEL;
use ttft_fixtures::report_file::{record, report};

/// A request sent at `start` ms: first token at `ttft`, then `tokens − 1` more every `itl` ms.
fn sent(index: u32, start: f64, ttft: f64, itl: f64, tokens: usize) -> RequestRecord {
    let mut r = record(index, ttft, itl, tokens);
    r.start_ms = start;
    r
}

/// A run of a request every `every` ms for `seconds`, each with TTFT `ttft(start)` times a
/// seeded noise of ±15 %, 10 tokens 20 ms apart.
fn run(seconds: f64, every: f64, seed: u64, ttft: impl Fn(f64) -> f64) -> Report {
    let mut rng = fastrand::Rng::with_seed(seed);
    let n = (seconds * 1e3 / every) as u32;
    let requests = (0..n)
        .map(|i| {
            let start = f64::from(i) * every;
            let noise = 1.0 + 0.3 * (rng.f64() - 0.5);
            sent(i, start, ttft(start) * noise, 20.0, 10)
        })
        .collect();
    report(requests)
}

#[test]
fn the_window_length_is_round_and_cuts_a_run_into_ten_to_twenty() {
    assert_eq!(window_ms_for(60_000.0), 5_000.0);
    assert_eq!(window_ms_for(600_000.0), 30_000.0);
    assert_eq!(window_ms_for(3_000.0), 1_000.0, "the shortest window");
    assert_eq!(window_ms_for(f64::NAN), 1_000.0);
    for d in [10_000.0f64, 35_000.0, 100_500.0, 3.6e6, 7.2e7] {
        let n = (d / window_ms_for(d)).ceil();
        assert!((8.0..=20.0).contains(&n), "{d} ms: {n} windows");
    }
}

#[test]
fn windows_partition_the_run_and_their_counts_sum_to_the_runs() {
    let mut rng = fastrand::Rng::with_seed(32);
    let mut requests: Vec<RequestRecord> = (0..300)
        .map(|i| {
            let start = rng.f64() * 58_000.0;
            sent(
                i,
                start,
                100.0 + 400.0 * rng.f64(),
                10.0 + 40.0 * rng.f64(),
                2 + rng.usize(..40),
            )
        })
        .collect();
    for r in requests.iter_mut().step_by(17) {
        r.outcome = Outcome::HttpError {
            status: 500,
            message: "overloaded".into(),
        };
    }
    mark_warmup(&mut requests, Warmup::Count(12));
    let run = report(requests);
    let agg = run.aggregates();
    let slices = time_slices(&run, None, DEFAULT_LEVEL);
    let w = &slices.windows;
    assert_eq!(slices.window_ms, 5_000.0);
    let first = run
        .requests
        .iter()
        .map(|r| r.start_ms)
        .fold(f64::MAX, f64::min);
    let last_end = run
        .requests
        .iter()
        .map(|r| r.start_ms + r.metrics.e2e_ms.unwrap())
        .fold(0.0, f64::max);
    assert_eq!((slices.origin_ms, w[0].start_ms), (first, first));
    assert_eq!(w.last().unwrap().end_ms, last_end);
    assert_eq!(w.len(), ((last_end - first) / 5_000.0).ceil() as usize);
    for (i, pair) in w.windows(2).enumerate() {
        assert_eq!(pair[0].end_ms, pair[1].start_ms);
        assert_eq!(pair[0].index, i);
    }
    let sum =
        |f: &dyn Fn(&ttft_core::time_slices::TimeWindow) -> usize| w.iter().map(f).sum::<usize>();
    assert_eq!(sum(&|x| x.started), 300, "every request sent in one window");
    assert_eq!(
        sum(&|x| x.completed),
        300,
        "every request ended in one window"
    );
    assert_eq!(sum(&|x| x.measured), agg.count, "the headline's requests");
    assert_eq!(agg.count, 288);
    assert_eq!(sum(&|x| x.failed), agg.failed());
    let tokens: f64 = w.iter().map(|x| x.output_tokens).sum();
    let ok_tokens: u64 = run
        .requests
        .iter()
        .filter(|r| r.outcome.is_ok())
        .map(|r| r.metrics.output_tokens)
        .sum();
    assert!(
        (tokens - ok_tokens as f64).abs() < 1e-6,
        "{tokens} vs {ok_tokens}"
    );
    // Requests in flight over time are the requests' durations (Little's law, exactly).
    let busy: f64 = w.iter().map(|x| x.in_flight_mean * x.duration_ms()).sum();
    let durations: f64 = run.requests.iter().map(|r| r.metrics.e2e_ms.unwrap()).sum();
    assert!(
        (busy - durations).abs() < 1e-6 * durations,
        "{busy} vs {durations}"
    );
    for x in w {
        assert!(f64::from(x.in_flight_max) >= x.in_flight_mean);
        let starts = run
            .requests
            .iter()
            .filter(|r| r.start_ms >= x.start_ms && r.start_ms < x.end_ms)
            .count();
        assert!(starts == x.started || x.index + 1 == w.len());
        if x.measured < 10 {
            continue; // the drain after the last send
        }
        // ~25 requests a window: a median with its interval, a P99 that says what it needs.
        let p50 = x.ttft_p50.expect("a median");
        assert!(
            p50.interval.is_some_and(|i| i.contains(p50.value)),
            "{p50:?}"
        );
        let p99 = x.ttft_p99.expect("a P99");
        assert_eq!((p99.interval, p99.needs), (None, Some(368)));
        let itl = x.itl_p50.expect("an ITL median");
        assert_eq!(
            itl.needs,
            Some(40),
            "per-gap ITL needs 40 requests: {itl:?}"
        );
    }
    // A window given: 10 s.
    let tens = time_slices(&run, Some(10_000.0), DEFAULT_LEVEL);
    assert_eq!(
        tens.windows.len(),
        ((last_end - first) / 10_000.0).ceil() as usize
    );
    assert_eq!(tens.windows.iter().map(|x| x.started).sum::<usize>(), 300);
}

#[test]
fn a_window_with_enough_requests_gets_an_itl_interval_clustered_by_request() {
    // 60 requests in one second each with its own gap: the ITL median's interval comes from
    // resampling requests, so it spans their gaps, not the pooled gaps' spread.
    let run = report(
        (0..60)
            .map(|i| sent(i, f64::from(i) * 16.0, 200.0, 20.0 + f64::from(i % 10), 20))
            .collect(),
    );
    let slices = time_slices(&run, Some(10_000.0), DEFAULT_LEVEL);
    assert_eq!(slices.windows.len(), 1);
    let itl = slices.windows[0].itl_p50.unwrap();
    let i = itl.interval.expect("60 requests give an ITL interval");
    assert_eq!(itl.n, 60);
    assert!(
        i.lo >= 20.0 && i.hi <= 29.0 && i.contains(itl.value),
        "{itl:?}"
    );
}

#[test]
fn a_run_with_a_slow_first_ten_seconds_gets_a_steady_state_after_it() {
    let slow_start = run(60.0, 100.0, 7, |t| if t < 10_000.0 { 900.0 } else { 300.0 });
    let slices = time_slices(&slow_start, None, DEFAULT_LEVEL);
    // 60.4 s from the first send to the last end: 12 windows of sends and the drain.
    assert_eq!((slices.window_ms, slices.windows.len()), (5_000.0, 13));
    let steady = steady_state(&slices).expect("a steady state");
    assert_eq!((steady.first_window, steady.last_window), (2, 11));
    assert_eq!((steady.ttft_from, steady.throughput_from), (2, 0));
    assert_eq!((steady.start_ms, steady.excluded_ms), (10_000.0, 10_000.0));
    assert_eq!(steady.excluded_requests, 100);
    let sentence = steady.sentence();
    assert!(
        sentence.starts_with(
            "Warm-up excluded: the first 10.0 s, 100 requests, before TTFT settled (from there on, every 5 s window's median TTFT and completions stay within ±20 % of the rest of the run's)."
        ),
        "{sentence}"
    );
    // The headline restricted to it: the last 500 requests, the slow ones kept as warm-up.
    let before = slow_start.aggregates();
    let restricted = restrict_to_steady(&slow_start, &steady);
    let after = restricted.aggregates();
    assert_eq!((before.count, after.count), (600, 500));
    assert_eq!(restricted.requests.len(), 600);
    let p99 = |a: &ttft_core::report::Aggregates| a.ttft.unwrap().p99;
    assert!(
        p99(&before) > 900.0 && p99(&after) < 350.0,
        "{} {}",
        p99(&before),
        p99(&after)
    );
    // A link that carried its run's headline has it recomputed from the steady requests.
    let mut linked = slow_start.clone();
    linked.shared = Some(ttft_core::report::SharedFrom {
        format: "r3".into(),
        precision_ms: 0.1,
        left_out: Vec::new(),
        headline: Some(Box::new(before.clone())),
    });
    assert_eq!(linked.aggregates().count, 600);
    let linked = restrict_to_steady(&linked, &steady);
    assert_eq!(linked.aggregates().count, 500);
    assert!(p99(&linked.aggregates()) < 350.0);
    // The same run without the slow start is steady from the start.
    let even = run(60.0, 100.0, 7, |_| 300.0);
    let steady = steady_state(&time_slices(&even, None, DEFAULT_LEVEL)).expect("steady");
    assert_eq!((steady.first_window, steady.excluded_requests), (0, 0));
    assert!(
        steady.sentence().starts_with("Steady from the start"),
        "{}",
        steady.sentence()
    );
}

#[test]
fn seeded_steady_runs_lose_no_warm_up_and_slow_starts_lose_theirs() {
    let (mut cut_even, mut found) = (0, 0);
    for seed in 0..40 {
        let even = run(60.0, 100.0, seed, |_| 300.0);
        let s = steady_state(&time_slices(&even, None, DEFAULT_LEVEL)).expect("steady");
        cut_even += usize::from(s.first_window > 0);
        let slow = run(
            60.0,
            100.0,
            seed,
            |t| if t < 15_000.0 { 600.0 } else { 300.0 },
        );
        let s = steady_state(&time_slices(&slow, None, DEFAULT_LEVEL)).expect("steady");
        found += usize::from(s.first_window == 3);
    }
    assert!(cut_even <= 1, "{cut_even} of 40 steady runs lost windows");
    assert_eq!(found, 40, "a slow first 15 s found in {found} of 40");
}

#[test]
fn a_run_that_never_settles_says_so() {
    // TTFT climbs all run long: no window range keeps within the band.
    let climbing = run(60.0, 100.0, 3, |t| 200.0 + t / 20.0);
    let err = steady_state(&time_slices(&climbing, None, DEFAULT_LEVEL)).unwrap_err();
    assert!(
        matches!(&err, NoSteadyState::NeverSettled { what, .. } if what == "TTFT"),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("the headline keeps every request"),
        "{err}"
    );
    // Three windows cannot tell a warm-up from noise.
    let short = run(3.0, 100.0, 3, |_| 300.0);
    let err = steady_state(&time_slices(&short, None, DEFAULT_LEVEL)).unwrap_err();
    assert_eq!(
        err,
        NoSteadyState::TooFewWindows {
            windows: 3,
            needs: MIN_STEADY_WINDOWS
        }
    );
    // No requests, no windows.
    let empty = report(Vec::new());
    assert!(time_slices(&empty, None, DEFAULT_LEVEL).windows.is_empty());
}

#[test]
fn warm_up_is_marked_by_count_or_by_time() {
    // Sent out of index order: the count goes by send time.
    let starts = [500.0, 100.0, 900.0, 300.0, 700.0, 200.0];
    let mut requests: Vec<RequestRecord> = starts
        .iter()
        .enumerate()
        .map(|(i, s)| sent(i as u32, *s, 100.0, 10.0, 3))
        .collect();
    assert_eq!(mark_warmup(&mut requests, Warmup::Count(3)), 3);
    let warm: Vec<f64> = requests
        .iter()
        .filter(|r| r.warmup)
        .map(|r| r.start_ms)
        .collect();
    assert_eq!(warm, vec![100.0, 300.0, 200.0]);
    assert_eq!(
        mark_warmup(&mut requests, Warmup::Count(3)),
        0,
        "already marked"
    );
    assert_eq!(
        mark_warmup(&mut requests, Warmup::Time(600.0)),
        1,
        "the one at 500 ms"
    );
    let run = report(requests);
    assert_eq!(run.aggregates().count, 2);
}
