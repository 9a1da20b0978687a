//! The saturation stop wired to a run's plan ([`ttft_core::saturation_guard`]), fed as the run
//! loop feeds it: a plan made by the scenario (Poisson arrivals at the form's rate, one warm-up
//! first), a seeded FIFO server serving it, batches of finished requests every 250 ms and the
//! timer's checks at [`SaturationGuard::next_check_ms`]. An overloaded server stops the run
//! before the plan's last send, with the evidence on the run's clock; a stable one never does;
//! a server that stops answering is judged by the timer alone; the stop's setting off never
//! stops; closed loops and concurrency ramps get no guard.

use ttft_core::arrivals::LoadShape;
use ttft_core::report::RequestRecord;
use ttft_core::report::saturation::{Saturation, SaturationCheck};
use ttft_core::saturation_guard::SaturationGuard;
use ttft_core::scenario::{Phase, ScenarioConfig};
use ttft_fixtures::report_file::record;

/// The run's measured plan starts this long after the run (its warm-up).
const WARMUP_MS: f64 = 1_500.0;

/// A chat run's plan: `requests` Poisson sends at `rate` per second after one warm-up.
fn plan(rate: f64, requests: u32, seed: u64) -> Vec<Phase> {
    let sc = ScenarioConfig {
        rate_per_s: rate,
        requests,
        warmup: 1,
        seed: Some(seed),
        ..ScenarioConfig::default()
    };
    sc.plan("sim-slow", None).unwrap()
}

/// The measured requests' planned sends on the run's clock.
fn sends(phases: &[Phase]) -> Vec<f64> {
    let mut v: Vec<f64> = phases
        .iter()
        .flat_map(|p| &p.jobs)
        .filter(|j| !j.warmup)
        .filter_map(|j| j.planned_ms)
        .map(|p| WARMUP_MS + p)
        .collect();
    v.sort_by(f64::total_cmp);
    v
}

/// A FIFO server with exponential service at `mu` per second that serves until `stall_ms`
/// and then answers nothing: each request's record (sent at its planned time; TTFT its wait
/// plus a fifth of its service), in the order they end; the warm-up's first.
fn serve(seed: u64, sends: &[f64], mu: f64, stall_ms: f64) -> Vec<RequestRecord> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let template = record(0, 100.0, 10.0, 4);
    let mut warm = template.clone();
    warm.warmup = true;
    warm.metrics.e2e_ms = Some(WARMUP_MS - 10.0);
    let mut free = 0.0f64;
    let mut out = vec![warm];
    for (i, &a) in sends.iter().enumerate() {
        let begin = free.max(a);
        let service = -(1e3 / mu) * (1.0 - rng.f64()).ln();
        free = begin + service;
        if free > stall_ms {
            continue;
        }
        let mut r = template.clone();
        r.index = i as u32 + 1;
        r.start_ms = a;
        r.planned_ms = Some(a);
        r.metrics.ttft_ms = Some(begin - a + 0.2 * service);
        r.metrics.e2e_ms = Some(free - a);
        out.push(r);
    }
    out.sort_by(|x, y| end(x).total_cmp(&end(y)));
    out
}

/// A plan of 600 sends at 12/s into a server that completes 7/s, and what it served.
fn overloaded(seed: u64) -> (Vec<Phase>, Vec<f64>, Vec<RequestRecord>) {
    let phases = plan(12.0, 600, seed);
    let s = sends(&phases);
    let done = serve(seed, &s, 7.0, f64::INFINITY);
    (phases, s, done)
}

fn end(r: &RequestRecord) -> f64 {
    r.start_ms + r.metrics.e2e_ms.unwrap_or(0.0)
}

/// What the run loop saw: the evidence and when, and the requests the plan had sent by then.
struct Stop {
    evidence: Saturation,
    at_ms: f64,
    sent: usize,
}

/// Drives `guard` as the run loop does until `until_ms`: the warm-up's end starts the measured
/// plan; every 250 ms the requests that ended are handed on as a batch and the guard asked,
/// and (when `timer`) the timer asks at each [`SaturationGuard::next_check_ms`].
fn drive(
    guard: &mut SaturationGuard,
    sends: &[f64],
    done: &[RequestRecord],
    until_ms: f64,
    timer: bool,
) -> Option<Stop> {
    let mut next = 0;
    let mut at = if timer {
        guard.next_check_ms(0.0)
    } else {
        f64::INFINITY
    };
    let mut t = 0.0;
    while t < until_ms {
        t += 250.0;
        if t >= WARMUP_MS {
            guard.started(WARMUP_MS);
        }
        let mut fired = None;
        while at <= t {
            fired = fired.or_else(|| guard.check(at).map(|s| (s, at)));
            at = guard.next_check_ms(at + 1.0).max(at + 1.0);
        }
        let before = next;
        while next < done.len() && end(&done[next]) <= t {
            guard.finished(&done[next]);
            next += 1;
        }
        // The pool hands a batch on only when a request finished.
        if next > before {
            fired = fired.or_else(|| guard.check(t).map(|s| (s, t)));
        }
        if let Some((evidence, at_ms)) = fired {
            let sent = sends.iter().filter(|s| **s <= at_ms).count();
            return Some(Stop {
                evidence,
                at_ms,
                sent,
            });
        }
    }
    None
}

#[test]
fn an_overloaded_server_stops_the_run_before_its_last_send() {
    let mut at = Vec::new();
    for seed in 0..20 {
        let (phases, s, done) = overloaded(seed);
        let mut guard = SaturationGuard::for_plan(&phases, true).unwrap();
        // Windows of about 25 sends at the plan's rate (in whole half seconds, 2 s at least).
        let per_window = guard.config().window_ms / 1e3 * 12.0;
        assert!((20.0..=32.0).contains(&per_window), "{per_window}");
        let stop = drive(&mut guard, &s, &done, 120_000.0, true)
            .unwrap_or_else(|| panic!("seed {seed}: never stopped"));
        assert!(
            stop.sent < s.len(),
            "seed {seed}: stopped after the last send"
        );
        let e = &stop.evidence;
        assert_eq!(e.at_ms, stop.at_ms);
        // On the run's clock: its windows start with the measured plan, after the warm-up.
        assert!(e.windows[0].start_ms >= WARMUP_MS, "{e:?}");
        assert!(
            (e.windows[0].start_ms - WARMUP_MS) % e.window_ms < 1e-6,
            "{e:?}"
        );
        assert!(e.completed_per_s < 0.9 * e.sent_per_s, "{e:?}");
        assert!(
            e.completed_interval
                .is_some_and(|i| i.contains(e.completed_per_s))
        );
        let w = &e.windows;
        assert!(w[w.len() - 1].ttft_p50_ms > 1.5 * w[0].ttft_p50_ms, "{w:?}");
        assert!(w.iter().all(|w| {
            w.ttft_p50_interval
                .is_some_and(|i| i.contains(w.ttft_p50_ms))
        }));
        // It says so once; the report keeps it.
        assert!(guard.check(stop.at_ms + 10_000.0).is_none());
        assert_eq!(guard.outcome(), SaturationCheck::Stopped(e.clone()));
        at.push((stop.at_ms - WARMUP_MS) / e.window_ms);
    }
    at.sort_by(f64::total_cmp);
    eprintln!("overloaded (12/s into 7/s): stopped after {at:?} windows");
    assert!(at[at.len() - 1] <= 12.0, "{at:?}");
}

#[test]
fn a_stable_server_never_stops_the_run() {
    for seed in 0..40 {
        let phases = plan(4.0, 400, 100 + seed);
        let s = sends(&phases);
        let done = serve(100 + seed, &s, 8.0, f64::INFINITY);
        let mut guard = SaturationGuard::for_plan(&phases, true).unwrap();
        let stop = drive(&mut guard, &s, &done, 130_000.0, true);
        assert!(
            stop.is_none(),
            "seed {seed}: {:?}",
            stop.map(|s| s.evidence)
        );
        match guard.outcome() {
            SaturationCheck::Watched {
                windows, needed, ..
            } => assert!(windows >= 2 * needed, "{windows} windows judged"),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn a_server_that_stops_answering_is_judged_by_the_timer() {
    // Overloaded, then silent from the end of the fifth window on: no batch comes after, so
    // only the timer can judge those windows.
    let phases = plan(12.0, 600, 0);
    let s = sends(&phases);
    let guard = SaturationGuard::for_plan(&phases, true).unwrap();
    let silent_from = WARMUP_MS + 5.0 * guard.config().window_ms;
    let done = serve(0, &s, 7.0, silent_from);
    let last_batch = done.iter().map(end).fold(0.0, f64::max);
    let mut g = guard.clone();
    let stop = drive(&mut g, &s, &done, 60_000.0, true).expect("the timer stops it");
    assert!(stop.at_ms > last_batch, "{} ≤ {last_batch}", stop.at_ms);
    assert!(stop.sent < s.len());
    eprintln!(
        "silent after {last_batch:.0} ms: stopped at {:.0} ms by the timer",
        stop.at_ms
    );
    // Asked on batches only, it never would.
    let mut g = guard;
    assert!(drive(&mut g, &s, &done, 60_000.0, false).is_none());
}

#[test]
fn the_stop_off_never_stops_and_says_so() {
    let (phases, s, done) = overloaded(3);
    let mut guard = SaturationGuard::for_plan(&phases, false).unwrap();
    assert!(drive(&mut guard, &s, &done, 120_000.0, true).is_none());
    assert_eq!(guard.outcome(), SaturationCheck::Off);
    assert!(guard.outcome().sentence(600).contains("off"));
}

#[test]
fn closed_loops_and_concurrency_ramps_get_no_guard() {
    let closed = ScenarioConfig::default().plan("m", None).unwrap();
    assert!(SaturationGuard::for_plan(&closed, true).is_none());
    let ramp = ScenarioConfig {
        load: Some(LoadShape::ConcurrencyRamp {
            from: 1,
            to: 4,
            over_s: 10.0,
            curve: Default::default(),
        }),
        requests: 20,
        ..ScenarioConfig::default()
    }
    .plan("m", None)
    .unwrap();
    assert!(SaturationGuard::for_plan(&ramp, true).is_none());
    assert!(SaturationGuard::for_plan(&plan(5.0, 20, 1), true).is_some());
}

#[test]
fn requests_before_the_plan_starts_wait_for_it_and_warm_ups_never_count() {
    let (phases, s, done) = overloaded(9);
    // Every record handed on before the plan's start is known: the same stop as fed live.
    let mut early = SaturationGuard::for_plan(&phases, true).unwrap();
    let mut live = early.clone();
    let live_stop = drive(&mut live, &s, &done, 120_000.0, true).unwrap();
    let cut = done
        .iter()
        .filter(|r| end(r) <= live_stop.at_ms)
        .collect::<Vec<_>>();
    for r in &cut {
        early.finished(r);
    }
    assert!(early.check(live_stop.at_ms).is_none(), "not started yet");
    early.started(WARMUP_MS);
    let late = early.check(live_stop.at_ms).expect("the same evidence");
    assert_eq!(late.windows.len(), live_stop.evidence.windows.len());
    assert_eq!(
        late.windows[0].start_ms,
        live_stop.evidence.windows[0].start_ms
    );
}
