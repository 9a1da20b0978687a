//! The saturation stop's detector ([`ttft_core::saturation`]) on seeded queue simulations fed
//! as the run loop feeds it (finished requests and the planned send count every 250 ms): it
//! finds an overloaded M/M/1 queue within a bounded number of windows, it rarely fires on
//! stable queues with heavy-tailed TTFT noise (≤ 2 % of 500 runs), never on a ramp that stays
//! within capacity, never when it is off, and its evidence reads as a sentence.

use ttft_core::saturation::{
    Finished, Saturation, SaturationConfig, SaturationDetector, SaturationWindow,
};
use ttft_core::timeline::Outcome;
use ttft_fixtures::report_file::record;

/// Run length of the simulations (ms).
const RUN_MS: f64 = 120_000.0;

/// An exponential draw of mean `mean`.
fn exp(rng: &mut fastrand::Rng, mean: f64) -> f64 {
    -mean * (1.0 - rng.f64()).ln()
}

/// Poisson arrivals (ms) over the run at `rate(t)` per second, by thinning at `max_rate`.
fn arrivals(rng: &mut fastrand::Rng, max_rate: f64, rate: impl Fn(f64) -> f64) -> Vec<f64> {
    let mut out = Vec::new();
    let mut t = 0.0;
    loop {
        t += exp(rng, 1e3 / max_rate);
        if t >= RUN_MS {
            return out;
        }
        if rng.f64() * max_rate < rate(t) {
            out.push(t);
        }
    }
}

/// A single FIFO server with exponential service at `mu` per second (an M/M/1 queue when the
/// arrivals are Poisson): each request's end and TTFT, its wait plus a fifth of its service
/// (the prefill) plus heavy-tailed noise (Lomax, shape 1.5: infinite variance) on the client's
/// side.
fn serve(rng: &mut fastrand::Rng, arrivals: &[f64], mu: f64) -> Vec<Finished> {
    let mean = 1e3 / mu;
    let mut free = 0.0f64;
    let mut out: Vec<Finished> = arrivals
        .iter()
        .map(|&a| {
            let begin = free.max(a);
            let service = exp(rng, mean);
            free = begin + service;
            let noise = 0.3 * mean * ((1.0 - rng.f64()).powf(-1.0 / 1.5) - 1.0);
            let ttft = begin - a + 0.2 * service + noise;
            Finished {
                start_ms: a,
                end_ms: free.max(a + ttft),
                ttft_ms: Some(ttft),
            }
        })
        .collect();
    out.sort_by(|x, y| x.end_ms.total_cmp(&y.end_ms));
    out
}

/// Feeds a run to a detector as the run loop would (every 250 ms: the planned count, the
/// requests that ended), until the run ends and drains; the evidence if it fired.
fn feed(config: SaturationConfig, arrivals: &[f64], done: &[Finished]) -> Option<Saturation> {
    let mut d = SaturationDetector::new(config);
    let (mut sent, mut ended) = (0usize, 0usize);
    let mut now = 0.0;
    while now <= RUN_MS + 10_000.0 {
        now += 250.0;
        while sent < arrivals.len() && arrivals[sent] <= now {
            sent += 1;
        }
        d.planned(now, sent as u64);
        while ended < done.len() && done[ended].end_ms <= now {
            d.observe(done[ended]);
            ended += 1;
        }
        if let Some(s) = d.check(now) {
            return Some(s.clone());
        }
    }
    None
}

/// A seeded run: service rate `mu` per second, arrivals at `rho(t) × mu`.
fn simulate(seed: u64, mu: f64, max_rho: f64, rho: impl Fn(f64) -> f64) -> Option<Saturation> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let arr = arrivals(&mut rng, max_rho * mu, |t| rho(t) * mu);
    let done = serve(&mut rng, &arr, mu);
    feed(SaturationConfig::for_rate(max_rho * mu), &arr, &done)
}

/// The runs of `runs` seeds that fired, `(seed, when)`: each draws its settings from its
/// seed plus `salt` and is simulated by `run`.
fn fired(
    runs: u64,
    salt: u64,
    run: impl Fn(u64, &mut fastrand::Rng) -> Option<Saturation>,
) -> Vec<(u64, f64)> {
    (0..runs)
        .filter_map(|seed| {
            let mut rng = fastrand::Rng::with_seed(salt + seed);
            run(seed, &mut rng).map(|s| (seed, s.at_ms))
        })
        .collect()
}

#[test]
fn an_overloaded_queue_is_found_within_a_bounded_number_of_windows() {
    let mut missed = Vec::new();
    let mut fired_at = Vec::new();
    for seed in 0..100 {
        let mut rng = fastrand::Rng::with_seed(10_000 + seed);
        let (mu, rho) = (4.0 + 16.0 * rng.f64(), 1.3 + 0.7 * rng.f64());
        match simulate(seed, mu, rho, |_| rho) {
            Some(s) => {
                fired_at.push(s.at_ms / s.window_ms);
                assert!(s.completed_per_s < s.sent_per_s * 0.9, "{s:?}");
                let m: Vec<f64> = s.windows.iter().map(|w| w.ttft_p50_ms).collect();
                assert!(m[m.len() - 1] > 1.5 * m[0], "{m:?}");
            }
            None => missed.push((seed, mu, rho)),
        }
    }
    fired_at.sort_by(f64::total_cmp);
    let first_judgement = fired_at.iter().filter(|w| **w < 6.0).count();
    let latest = fired_at.last().copied().unwrap_or(0.0);
    eprintln!(
        "overloaded queues: {first_judgement} of 100 found at the first judgement (after 5 windows), the latest after {latest:.1}; missed {missed:?}"
    );
    assert!(missed.is_empty(), "missed {missed:?}");
    assert!(
        first_judgement >= 60,
        "{first_judgement} of 100 at the first judgement"
    );
    assert!(latest <= 15.0, "the latest fired after {latest:.1} windows");
}

#[test]
fn stable_queues_with_heavy_tailed_ttft_rarely_fire() {
    let fired = fired(500, 20_000, |seed, rng| {
        let (mu, rho) = (4.0 + 16.0 * rng.f64(), 0.5 + 0.3 * rng.f64());
        simulate(seed, mu, rho, |_| rho)
    });
    eprintln!("stable queues: {} of 500 fired: {fired:?}", fired.len());
    assert!(
        fired.len() <= 10,
        "{} of 500 stable runs fired",
        fired.len()
    );
    // What keeps them quiet is the completions: TTFT's trend alone would fire on many.
    let ttft_only = SaturationConfig {
        min_deficit: f64::NEG_INFINITY,
        deficit_z: f64::NEG_INFINITY,
        ..SaturationConfig::default()
    };
    let trend_alone = (0..500)
        .filter(|&seed| {
            let mut rng = fastrand::Rng::with_seed(20_000 + seed);
            let (mu, rho) = (4.0 + 16.0 * rng.f64(), 0.5 + 0.3 * rng.f64());
            let mut rng = fastrand::Rng::with_seed(seed);
            let arr = arrivals(&mut rng, rho * mu, |_| rho * mu);
            let done = serve(&mut rng, &arr, mu);
            let config = SaturationConfig {
                window_ms: SaturationConfig::for_rate(rho * mu).window_ms,
                ..ttft_only
            };
            feed(config, &arr, &done).is_some()
        })
        .count();
    eprintln!("stable queues: the TTFT trend alone fires on {trend_alone} of 500");
    assert!(
        trend_alone > 25,
        "the simulation is too kind: {trend_alone}"
    );
}

#[test]
fn a_ramp_within_capacity_does_not_fire() {
    let fired = fired(200, 30_000, |seed, rng| {
        let mu = 4.0 + 16.0 * rng.f64();
        simulate(seed, mu, 0.85, |t| 0.2 + 0.65 * t / RUN_MS)
    });
    eprintln!("ramps to 85 %: {} of 200 fired: {fired:?}", fired.len());
    assert!(fired.is_empty(), "{fired:?}");
    // A ramp past capacity fires once it is past: not before the rate crosses the service rate.
    let (mu, top) = (10.0, 2.0);
    let ramp = |t: f64| 0.5 + (top - 0.5) * t / RUN_MS;
    let s = simulate(7, mu, top, ramp).expect("fires past capacity");
    let crossing = (1.0 - 0.5) / (top - 0.5) * RUN_MS;
    assert!(
        s.at_ms > crossing,
        "fired at {} ms, before the crossing at {crossing} ms",
        s.at_ms
    );
}

/// A server that serves every request at once (a batching engine far from its limit): each
/// takes 4–20 s (lognormal, median 8 s), and its TTFT grows with the requests in flight at its
/// send, so while an open loop fills it up, TTFT rises and completions lag the sends.
fn fill_up(rng: &mut fastrand::Rng, arrivals: &[f64]) -> Vec<Finished> {
    use statrs::distribution::{ContinuousCDF, Normal};
    let z = Normal::standard();
    let mut ends: Vec<f64> = Vec::new();
    let mut out: Vec<Finished> = arrivals
        .iter()
        .map(|&a| {
            let in_flight = ends.iter().filter(|e| **e > a).count() as f64;
            let e2e = 8_000.0 * (0.35 * z.inverse_cdf(rng.f64().clamp(1e-9, 1.0 - 1e-9))).exp();
            let ttft = 150.0 * (1.0 + in_flight / 20.0) * (0.8 + 0.4 * rng.f64());
            ends.push(a + e2e.max(ttft + 1.0));
            Finished {
                start_ms: a,
                end_ms: a + e2e.max(ttft + 1.0),
                ttft_ms: Some(ttft),
            }
        })
        .collect();
    out.sort_by(|x, y| x.end_ms.total_cmp(&y.end_ms));
    out
}

#[test]
fn a_server_filling_up_is_not_taken_for_saturation() {
    let fired = fired(100, 40_000, |_, rng| {
        let rate = 2.0 + 8.0 * rng.f64();
        let arr = arrivals(rng, rate, |_| rate);
        let done = fill_up(rng, &arr);
        feed(SaturationConfig::for_rate(rate), &arr, &done)
    });
    eprintln!(
        "servers filling up: {} of 100 fired: {fired:?}",
        fired.len()
    );
    assert!(fired.len() <= 2, "{fired:?}");
}

#[test]
fn the_setting_turns_it_off() {
    let mut rng = fastrand::Rng::with_seed(5);
    let arr = arrivals(&mut rng, 20.0, |_| 20.0);
    let done = serve(&mut rng, &arr, 10.0);
    let on = SaturationConfig::for_rate(20.0);
    assert!(feed(on, &arr, &done).is_some(), "twice the capacity fires");
    let off = SaturationConfig {
        enabled: false,
        ..on
    };
    assert!(feed(off, &arr, &done).is_none());
}

#[test]
fn records_feed_it_as_they_finish() {
    // A request every 100 ms whose wait grows as long as it has been sent: they end every
    // 200 ms, so 10 are sent a second and 5 completed.
    let mut d = SaturationDetector::new(SaturationConfig::default());
    for i in 0..200u32 {
        let start = f64::from(i) * 100.0;
        let ttft = 100.0 + start;
        let mut r = record(i, ttft, 10.0, 5);
        r.start_ms = start;
        d.finished(&r);
    }
    for t in 1..=120 {
        let now = f64::from(t) * 250.0;
        d.planned(now, (now / 100.0) as u64);
        let _ = d.check(now);
    }
    let s = d.verdict().expect("saturated").clone();
    assert_eq!(
        (s.windows.len(), s.at_ms),
        (5, 26_000.0),
        "judged once 25 s and the grace are over"
    );
    let medians: Vec<f64> = s.windows.iter().map(|w| w.ttft_p50_ms).collect();
    assert!(medians.windows(2).all(|p| p[1] > p[0]), "{medians:?}");
    assert_eq!(s.completed_per_s, 5.0);
    // Compared with what was sent one mean request duration earlier (~6.3 s here).
    assert!((6_000.0..6_600.0).contains(&s.duration_ms), "{s:?}");
    let expected = (25_000.0 - s.duration_ms) / 100.0 / 25.0;
    assert!((s.sent_per_s - expected).abs() < 0.1, "{s:?}");
    let sentence = s.sentence(214);
    assert!(sentence.starts_with("TTFT median rose 1.3 → 3.8 → 6.3 → 8.8 → 11.3 s over the last 5 windows of 5 s while 7."), "{sentence}");
    assert!(
        sentence.ends_with(" req/s were sent and 5.0 completed: the server is past saturation; the run stopped, 214 requests kept."),
        "{sentence}"
    );
    // A timeout before the first token counts its whole wait as a lower bound of its TTFT.
    let mut r = record(0, 100.0, 10.0, 5);
    r.outcome = Outcome::Timeout {
        message: "60 s".into(),
    };
    r.metrics.ttft_ms = None;
    r.start_ms = 1_000.0;
    let f = Finished::of(&r);
    assert_eq!(f.ttft_ms, r.metrics.e2e_ms);
    assert_eq!(f.end_ms, 1_000.0 + r.metrics.e2e_ms.unwrap());
}

#[test]
fn the_evidence_reads_as_a_sentence() {
    let window = |i: usize, p50: f64| SaturationWindow {
        start_ms: i as f64 * 5e3,
        end_ms: (i + 1) as f64 * 5e3,
        ttft_p50_ms: p50,
        ttft_p50_interval: None,
        completed: 31,
        planned: 60.0,
    };
    let s = Saturation {
        at_ms: 21_000.0,
        window_ms: 5_000.0,
        windows: vec![
            window(0, 800.0),
            window(1, 2_100.0),
            window(2, 4_600.0),
            window(3, 9_900.0),
        ],
        trend_s: 6,
        trend_p: 0.045,
        duration_ms: 3_000.0,
        sent_per_s: 12.0,
        completed_per_s: 6.3,
        completed_interval: None,
    };
    assert_eq!(
        s.sentence(214),
        "TTFT median rose 0.8 → 2.1 → 4.6 → 9.9 s over the last 4 windows of 5 s while 12.0 req/s were sent and 6.3 completed: the server is past saturation; the run stopped, 214 requests kept."
    );
}
