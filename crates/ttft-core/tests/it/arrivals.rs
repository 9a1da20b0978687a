//! Load shapes ([`ttft_core::arrivals`]) and their plans: seeded simulations of the gaps'
//! mean and spread, ramps and steps against their planned rate, determinism, the planned
//! curve, the achieved-rate bins and their interval, and how a scenario's settings become
//! planned sends.

use ttft_core::arrivals::{
    Curve, LoadShape, LoadShapeError, planned_curve, planned_sends, rate_bins,
};
use ttft_core::scenario::{Arm, DEFAULT_ARRIVAL_SEED, ScenarioConfig, ScenarioError, ScenarioKind};

/// Gaps between successive sends, the first from the phase's start.
fn gaps(sends: &[f64]) -> Vec<f64> {
    let mut prev = 0.0;
    sends
        .iter()
        .map(|&t| {
            let g = t - prev;
            prev = t;
            g
        })
        .collect()
}

/// Mean and coefficient of variation (sample standard deviation over mean).
fn mean_cv(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt() / mean)
}

fn lanes(from: u32, to: u32, over_s: f64, curve: Curve) -> LoadShape {
    LoadShape::ConcurrencyRamp {
        from,
        to,
        over_s,
        curve,
    }
}

fn gamma(rate_per_s: f64, burstiness: f64) -> LoadShape {
    LoadShape::Gamma {
        rate_per_s,
        burstiness,
    }
}

// With n = 50,000 gaps the standard error of the mean gap is CV/√n: 0.45 % at CV 1 and 0.9 %
// at CV 2. The sample CV's is about √((κ − 1)/4n) from the sample variance (κ the gaps'
// kurtosis: 9 for exponential gaps, 3 + 6/b for gamma gaps of shape b, 27 at b = 0.25) joined
// with the mean's: about 0.8 % at b = 1 and 1.5 % at b = 0.25. The tolerances below are more
// than 5 of those standard errors, so a correct sampler fails them with a chance under 1e-6,
// and a wrong shape (CV 1 for b = 0.25, or the scale 1/rate instead of 1/(rate·b), a mean 4×
// off) fails them by far.
const N: usize = 50_000;

#[test]
fn burstiness_sets_the_gaps_spread_and_keeps_their_mean() {
    // (rate, burstiness, the CV 1/√b, tolerances of the mean and the CV)
    for (rate, b, want_cv, mean_tol, cv_tol) in [
        (4.0, 1.0, 1.0, 0.03, 0.05),
        (10.0, 0.25, 2.0, 0.05, 0.08),
        (10.0, 4.0, 0.5, 0.03, 0.03),
    ] {
        let sends = planned_sends(&gamma(rate, b), N, 5).unwrap();
        let (mean, cv) = mean_cv(&gaps(&sends));
        let want_mean = 1e3 / rate;
        eprintln!("burstiness {b}: mean gap {mean:.2} ms ({want_mean}), CV {cv:.4} ({want_cv})");
        assert!(
            (mean / want_mean - 1.0).abs() < mean_tol,
            "burstiness {b}: mean gap {mean} ms at {rate} req/s"
        );
        assert!(
            (cv / want_cv - 1.0).abs() < cv_tol,
            "burstiness {b}: gap CV {cv}, want 1/√b = {want_cv}"
        );
    }
    // Burstiness 1 is the Poisson shape itself: the same draws, the same plan.
    assert_eq!(
        planned_sends(&LoadShape::Poisson { rate_per_s: 4.0 }, 500, 3).unwrap(),
        planned_sends(&gamma(4.0, 1.0), 500, 3).unwrap()
    );
}

/// Sends of `sends` in each bin against what the shape plans there: within 4.5 standard
/// deviations of a Poisson count (√expected) plus one for the bins' edges. A sampler that
/// ignored the ramp (the start rate throughout) misses the later bins by tens of deviations.
fn assert_follows_plan(shape: &LoadShape, sends: &[f64], bin_ms: f64) {
    let until = *sends.last().unwrap();
    let bins = rate_bins(sends, 0.0, until, bin_ms, 0.95);
    assert!(bins.len() >= 8, "{} bins", bins.len());
    let mut covered = 0;
    for b in &bins {
        let expected = shape.expected_sends(b.start_ms, b.end_ms).unwrap();
        let tol = 4.5 * expected.sqrt() + 1.0;
        assert!(
            (b.sends as f64 - expected).abs() <= tol,
            "{}: {} sends in {:.0}–{:.0} ms, planned {expected:.1}",
            shape.describe(),
            b.sends,
            b.start_ms,
            b.end_ms
        );
        let planned_rate = expected / ((b.end_ms - b.start_ms) / 1e3);
        covered += usize::from(b.interval.unwrap().contains(planned_rate));
    }
    // The achieved rate's 95 % interval holds the planned rate in most bins (the last one
    // ends at the last send, so it may miss).
    assert!(
        covered * 10 >= bins.len() * 8,
        "{}: the interval held the planned rate in {covered} of {} bins",
        shape.describe(),
        bins.len()
    );
}

#[test]
fn ramps_send_at_their_planned_rate_over_time() {
    let linear = LoadShape::Ramp {
        from_per_s: 2.0,
        to_per_s: 20.0,
        over_s: 60.0,
        curve: Curve::Linear,
        burstiness: 1.0,
    };
    // The planned rate and its integral, against the closed forms.
    assert!((linear.rate_per_s_at(30_000.0).unwrap() - 11.0).abs() < 1e-9);
    assert!((linear.rate_per_s_at(90_000.0).unwrap() - 20.0).abs() < 1e-9);
    assert!((linear.expected_sends(0.0, 60_000.0).unwrap() - 660.0).abs() < 1e-6);
    let sends = planned_sends(&linear, 900, 21).unwrap();
    assert_follows_plan(&linear, &sends, 6_000.0);
    // 660 sends are planned during the ramp, the rest at 20 req/s after it.
    let during = sends.iter().filter(|t| **t <= 60_000.0).count();
    assert!(
        (during as f64 - 660.0).abs() < 4.5 * 660f64.sqrt(),
        "{during} during the ramp"
    );

    let exponential = LoadShape::Ramp {
        from_per_s: 1.0,
        to_per_s: 32.0,
        over_s: 50.0,
        curve: Curve::Exponential,
        burstiness: 1.0,
    };
    assert!((exponential.rate_per_s_at(25_000.0).unwrap() - 32f64.sqrt()).abs() < 1e-9);
    // ∫ e^(g t) over 50 s with g = ln 32 / 50: 31 / g.
    let integral = 31.0 / (32f64.ln() / 50.0);
    assert!((exponential.expected_sends(0.0, 50_000.0).unwrap() - integral).abs() < 1e-6);
    let sends = planned_sends(&exponential, 700, 22).unwrap();
    assert_follows_plan(&exponential, &sends, 5_000.0);

    // A burstier ramp keeps its planned rate on average too (wider tolerance: gamma gaps of
    // shape 0.5 double a count's variance, so test larger bins).
    let bursty = LoadShape::Ramp {
        from_per_s: 5.0,
        to_per_s: 20.0,
        over_s: 40.0,
        curve: Curve::Linear,
        burstiness: 0.5,
    };
    let sends = planned_sends(&bursty, 2_000, 23).unwrap();
    let until = *sends.last().unwrap();
    let expected = bursty.expected_sends(0.0, until).unwrap();
    assert!((expected - 2_000.0).abs() < 4.5 * (2.0 * 2_000f64).sqrt());
}

#[test]
fn steps_hold_each_rate_and_pause_at_zero() {
    let steps = LoadShape::Steps {
        rates_per_s: vec![2.0, 10.0, 0.0, 5.0],
        step_s: 20.0,
        burstiness: 1.0,
    };
    // 40 + 200 + 0 planned in the first three steps, then 5 req/s held.
    let sends = planned_sends(&steps, 440, 31).unwrap();
    let count = |a: f64, b: f64| sends.iter().filter(|t| **t > a && **t < b).count() as f64;
    for (i, rate) in [2.0f64, 10.0, 5.0].into_iter().enumerate() {
        let start = [0.0, 20_000.0, 60_000.0][i];
        let expected = rate * 20.0;
        let got = count(start, start + 20_000.0);
        assert!(
            (got - expected).abs() <= 4.5 * expected.sqrt() + 1.0,
            "step at {rate} req/s: {got} sends in 20 s"
        );
    }
    assert_eq!(count(40_000.0, 60_000.0), 0.0, "a step at 0 sends nothing");
    assert_eq!(steps.rate_per_s_at(50_000.0), Some(0.0));
    assert_eq!(
        steps.rate_per_s_at(500_000.0),
        Some(5.0),
        "the last step holds"
    );
    assert_follows_plan(&steps, &sends, 10_000.0);
}

fn every_shape() -> Vec<LoadShape> {
    vec![
        LoadShape::Poisson { rate_per_s: 3.0 },
        gamma(3.0, 0.3),
        LoadShape::Ramp {
            from_per_s: 0.0,
            to_per_s: 8.0,
            over_s: 10.0,
            curve: Curve::Linear,
            burstiness: 2.0,
        },
        LoadShape::Ramp {
            from_per_s: 8.0,
            to_per_s: 1.0,
            over_s: 10.0,
            curve: Curve::Exponential,
            burstiness: 1.0,
        },
        LoadShape::Steps {
            rates_per_s: vec![0.0, 4.0, 1.0],
            step_s: 5.0,
            burstiness: 0.5,
        },
        lanes(1, 6, 10.0, Curve::Exponential),
    ]
}

#[test]
fn plans_are_nondecreasing_and_the_same_for_a_seed() {
    for shape in every_shape() {
        let a = planned_sends(&shape, 300, 42).unwrap();
        let again = planned_sends(&shape, 300, 42).unwrap();
        assert_eq!(
            a,
            again,
            "{}: a seed plans the same sends",
            shape.describe()
        );
        assert!(
            a.windows(2).all(|w| w[0] <= w[1]) && a.iter().all(|t| t.is_finite() && *t >= 0.0),
            "{}: sends go forward",
            shape.describe()
        );
        if shape.is_open_loop() {
            assert_eq!(a.len(), 300);
            assert_ne!(
                a,
                planned_sends(&shape, 300, 43).unwrap(),
                "another seed, another plan"
            );
            // A longer plan starts with the shorter one.
            assert_eq!(planned_sends(&shape, 100, 42).unwrap(), a[..100]);
        }
    }
}

#[test]
fn a_concurrency_ramp_plans_its_lanes_starts() {
    let linear = lanes(2, 10, 40.0, Curve::Linear);
    let starts = planned_sends(&linear, 100, 0).unwrap();
    // Two lanes at once, then one every 5 s: the 10th at 40 s.
    let want: Vec<f64> = [0.0, 0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0, 40.0]
        .iter()
        .map(|s| s * 1e3)
        .collect();
    assert_eq!(starts.len(), 10, "one start per lane");
    for (got, want) in starts.iter().zip(&want) {
        assert!((got - want).abs() < 1e-6, "{starts:?}");
    }
    for (k, &t) in starts.iter().enumerate() {
        assert!(
            linear.lanes_at(t).unwrap() as usize > k,
            "lane {k} runs from {t} ms"
        );
        if t > 0.0 {
            assert_eq!(
                linear.lanes_at(t - 1.0).unwrap() as usize,
                k,
                "lane {k} before {t}"
            );
        }
    }
    assert_eq!(
        planned_sends(&linear, 4, 0).unwrap().len(),
        4,
        "fewer requests than lanes"
    );
    let exponential = lanes(1, 16, 40.0, Curve::Exponential);
    let starts = planned_sends(&exponential, 16, 0).unwrap();
    // Doubling every 10 s: the 2nd lane at 10 s, the 4th at 20 s, the 16th at 40 s.
    for (k, secs) in [(1, 10.0), (3, 20.0), (7, 30.0), (15, 40.0)] {
        assert!(
            (starts[k] - secs * 1e3).abs() < 1e-6,
            "lane {k}: {}",
            starts[k]
        );
    }
    assert_eq!(
        exponential.lanes_at(25_000.0),
        Some(5),
        "16^(25/40) = 5.66 lanes"
    );
    assert_eq!(
        exponential.rate_per_s_at(0.0),
        None,
        "a closed loop plans no rate"
    );
}

#[test]
fn the_planned_curve_draws_jumps_and_ramps() {
    let steps = LoadShape::Steps {
        rates_per_s: vec![2.0, 6.0],
        step_s: 10.0,
        burstiness: 1.0,
    };
    let curve = planned_curve(&steps, 30_000.0);
    assert_eq!(
        curve,
        [
            (0.0, 2.0),
            (10_000.0, 2.0),
            (10_000.0, 6.0),
            (30_000.0, 6.0)
        ]
    );
    let ramp = LoadShape::Ramp {
        from_per_s: 1.0,
        to_per_s: 16.0,
        over_s: 20.0,
        curve: Curve::Exponential,
        burstiness: 1.0,
    };
    let curve = planned_curve(&ramp, 10_000.0);
    assert_eq!(curve.len(), 33, "an exponential ramp is sampled");
    assert!(curve.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
    assert!(
        (curve.last().unwrap().1 - 4.0).abs() < 1e-9,
        "16^(10/20) = 4 req/s at 10 s"
    );
    let lanes = lanes(1, 3, 10.0, Curve::Linear);
    assert_eq!(
        planned_curve(&lanes, 20_000.0),
        [
            (0.0, 1.0),
            (5_000.0, 1.0),
            (5_000.0, 2.0),
            (10_000.0, 2.0),
            (10_000.0, 3.0),
            (20_000.0, 3.0)
        ]
    );
}

#[test]
fn rate_bins_count_every_send_once_in_whole_bins() {
    let sends = [0.0, 100.0, 999.0, 1_000.0, 2_500.0, 3_000.0, 4_000.0];
    let bins = rate_bins(&sends, 0.0, 3_000.0, 1_000.0, 0.95);
    let counts: Vec<usize> = bins.iter().map(|b| b.sends).collect();
    assert_eq!(
        counts,
        [3, 1, 2],
        "a send at the end counts in the last bin, later ones in none"
    );
    assert!((bins[0].per_s - 3.0).abs() < 1e-9);
    // 3.5 s in bins of about 2 s: two bins of 1.75 s, not one of 2 s and a sliver.
    let widths: Vec<f64> = rate_bins(&sends, 0.0, 3_500.0, 2_000.0, 0.95)
        .iter()
        .map(|b| b.end_ms - b.start_ms)
        .collect();
    assert_eq!(widths, [1_750.0, 1_750.0]);
    assert!(rate_bins(&sends, 5.0, 5.0, 1_000.0, 0.95).is_empty());
    assert!(rate_bins(&sends, 0.0, 1_000.0, f64::NAN, 0.95).is_empty());
    let empty = rate_bins(&[], 0.0, 1_000.0, 1_000.0, 0.95);
    assert_eq!((empty[0].sends, empty[0].interval.unwrap().lo), (0, 0.0));
}

#[test]
fn the_achieved_rate_interval_covers_the_true_rate() {
    // 3,000 seeded Poisson runs at 5 req/s, counted over 10 s: the exact 95 % interval is
    // conservative, so it covers 5 req/s at least 95 % of the time (95.2 % over 20,000 runs);
    // 93 % leaves room for the simulation's own error (3,000 runs: a standard error of 0.4 %).
    let shape = LoadShape::Poisson { rate_per_s: 5.0 };
    let runs = 3_000;
    let covered = (0..runs)
        .filter(|&seed| {
            let sends = planned_sends(&shape, 120, seed).unwrap();
            let bin = rate_bins(&sends, 0.0, 10_000.0, 10_000.0, 0.95)[0];
            bin.interval.unwrap().contains(5.0)
        })
        .count();
    eprintln!("achieved-rate interval coverage: {covered} of {runs}");
    assert!(
        covered * 100 >= runs as usize * 93,
        "covered {covered} of {runs}"
    );
}

#[test]
fn bad_shapes_say_what_to_change() {
    let cases: Vec<(LoadShape, &str)> = vec![
        (
            LoadShape::Poisson { rate_per_s: 0.0 },
            "positive number of requests",
        ),
        (gamma(f64::NAN, 1.0), "positive number of requests"),
        (gamma(2.0, 0.0), "burstiness"),
        (gamma(2.0, 5_000.0), "burstiness"),
        (
            LoadShape::Ramp {
                from_per_s: 0.0,
                to_per_s: 4.0,
                over_s: 10.0,
                curve: Curve::Exponential,
                burstiness: 1.0,
            },
            "ramp linearly",
        ),
        (
            LoadShape::Ramp {
                from_per_s: 1.0,
                to_per_s: 0.0,
                over_s: 10.0,
                curve: Curve::Linear,
                burstiness: 1.0,
            },
            "target rate",
        ),
        (
            LoadShape::Ramp {
                from_per_s: 1.0,
                to_per_s: 2.0,
                over_s: -1.0,
                curve: Curve::Linear,
                burstiness: 1.0,
            },
            "positive number of seconds",
        ),
        (
            LoadShape::Steps {
                rates_per_s: vec![],
                step_s: 1.0,
                burstiness: 1.0,
            },
            "at least one step",
        ),
        (
            LoadShape::Steps {
                rates_per_s: vec![1.0, 0.0],
                step_s: 1.0,
                burstiness: 1.0,
            },
            "last step",
        ),
        (
            LoadShape::Steps {
                rates_per_s: vec![-1.0, 2.0],
                step_s: 1.0,
                burstiness: 1.0,
            },
            "0 or more",
        ),
        (lanes(4, 2, 1.0, Curve::Linear), "from 4 to 2"),
    ];
    for (shape, says) in cases {
        let err = planned_sends(&shape, 10, 0).unwrap_err();
        assert!(err.to_string().contains(says), "{shape:?}: {err}");
        assert!(planned_curve(&shape, 1_000.0).is_empty());
    }
    assert_eq!(
        lanes(4, 2, 1.0, Curve::Linear).lanes_at(0.0),
        None,
        "an unchecked shape gives no lanes and no panic"
    );
}

#[test]
fn shapes_read_from_settings_json() {
    let read = |s: &str| serde_json::from_str::<LoadShape>(s).unwrap();
    assert_eq!(
        read(r#"{"shape":"ramp","from_per_s":1,"to_per_s":8,"over_s":60}"#),
        LoadShape::Ramp {
            from_per_s: 1.0,
            to_per_s: 8.0,
            over_s: 60.0,
            curve: Curve::Linear,
            burstiness: 1.0
        },
        "curve and burstiness may be left out"
    );
    for shape in every_shape() {
        let json = serde_json::to_string(&shape).unwrap();
        assert_eq!(read(&json), shape, "{json}");
    }
    assert_eq!(
        serde_json::to_value(gamma(2.0, 0.5)).unwrap(),
        serde_json::json!({"shape": "gamma", "rate_per_s": 2.0, "burstiness": 0.5})
    );
}

/// The planned sends of a plan's measured jobs, in order.
fn planned_of(c: &ScenarioConfig) -> (Vec<Option<f64>>, Vec<Option<f64>>) {
    let phases = c.plan("m", None).unwrap();
    let (warm, measured): (Vec<_>, Vec<_>) =
        phases.iter().flat_map(|p| &p.jobs).partition(|j| j.warmup);
    (
        warm.iter().map(|j| j.planned_ms).collect(),
        measured.iter().map(|j| j.planned_ms).collect(),
    )
}

#[test]
fn a_scenario_plans_its_measured_requests_and_keeps_old_settings() {
    // Settings from before load shapes: a Poisson rate plans Poisson sends with the default
    // seed, the warm-ups stay closed-loop.
    let mut old = serde_json::to_value(ScenarioConfig::default()).unwrap();
    assert!(
        old.get("load").is_none(),
        "settings without a shape do not name one"
    );
    old["rate_per_s"] = serde_json::json!(2.0);
    old["requests"] = serde_json::json!(20);
    let old: ScenarioConfig = serde_json::from_value(old).unwrap();
    let (warm, measured) = planned_of(&old);
    assert!(!warm.is_empty() && warm.iter().all(Option::is_none));
    let want = planned_sends(
        &LoadShape::Poisson { rate_per_s: 2.0 },
        20,
        DEFAULT_ARRIVAL_SEED,
    )
    .unwrap();
    assert_eq!(measured, want.into_iter().map(Some).collect::<Vec<_>>());
    // Rate 0 is a closed loop, as before.
    let closed = ScenarioConfig::default();
    assert!(planned_of(&closed).1.iter().all(Option::is_none));
    // A shape overrides the rate; the scenario's seed seeds it.
    let shaped = ScenarioConfig {
        load: Some(gamma(5.0, 0.25)),
        seed: Some(9),
        requests: 30,
        ..old.clone()
    };
    let want = planned_sends(&gamma(5.0, 0.25), 30, 9).unwrap();
    assert_eq!(
        planned_of(&shaped).1,
        want.into_iter().map(Some).collect::<Vec<_>>()
    );
    let phases = shaped.plan("m", None).unwrap();
    assert_eq!(phases.last().unwrap().rate_per_s, 5.0);
    // A bad shape is the plan's error.
    let bad = ScenarioConfig {
        load: Some(gamma(5.0, -1.0)),
        ..old
    };
    assert!(matches!(
        bad.plan("m", None),
        Err(ScenarioError::Load(LoadShapeError::BadBurstiness(_)))
    ));
}

#[test]
fn a_concurrency_ramp_starts_lanes_and_an_ab_run_shares_one_plan() {
    let ramp = ScenarioConfig {
        load: Some(lanes(1, 4, 3.0, Curve::Linear)),
        requests: 10,
        warmup: 0,
        ..ScenarioConfig::default()
    };
    let phases = ramp.plan("m", None).unwrap();
    assert_eq!(
        phases[0].concurrency, 4,
        "the ramp's target is the concurrency"
    );
    assert_eq!(phases[0].rate_per_s, 0.0, "a closed loop");
    let planned: Vec<Option<f64>> = phases[0].jobs.iter().map(|j| j.planned_ms).collect();
    assert_eq!(
        planned,
        [Some(0.0), Some(1_000.0), Some(2_000.0), Some(3_000.0)]
            .into_iter()
            .chain([None; 6])
            .collect::<Vec<_>>()
    );
    // Two arms interleaved follow one plan over the whole run: A0 B0 A1 B1 … go one after
    // another at the shape's rate, not in pairs at each arm's own times.
    let ab = ScenarioConfig {
        kind: ScenarioKind::Chat,
        load: Some(LoadShape::Poisson { rate_per_s: 4.0 }),
        requests: 6,
        arms: vec![
            Arm {
                model: "a".into(),
                ..Arm::default()
            },
            Arm {
                model: "b".into(),
                ..Arm::default()
            },
        ],
        ..ScenarioConfig::default()
    };
    let phases = ab.plan_arms(&["a".into(), "b".into()], None).unwrap();
    let measured: Vec<f64> = phases
        .iter()
        .flat_map(|p| &p.jobs)
        .filter(|j| !j.warmup)
        .map(|j| j.planned_ms.unwrap())
        .collect();
    let want = planned_sends(
        &LoadShape::Poisson { rate_per_s: 4.0 },
        12,
        DEFAULT_ARRIVAL_SEED,
    )
    .unwrap();
    assert_eq!(measured, want);
}
