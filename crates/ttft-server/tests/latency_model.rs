//! The latency model's properties, in virtual time (no sleeping): TTFT grows with prompt length
//! and queue depth, ITL with batch size and output position, preemption re-prefills, and the
//! schedule is deterministic.

use std::collections::HashMap;

use ttft_server::sim::profile::profiles;
use ttft_server::sim::scheduler::{LatencyModel, SchedEvent, Scheduler};

/// Simulates arrivals `(at_ms, prompt_tokens, output_tokens)`; returns per request the token
/// times and the number of preemptions.
fn simulate(model: &LatencyModel, arrivals: &[(f64, u32, u32)]) -> Vec<(Vec<f64>, u32)> {
    let mut s = Scheduler::new(model.clone());
    let mut now = 0.0;
    let mut next = 0;
    let mut tokens: HashMap<u64, Vec<f64>> = HashMap::new();
    let mut preempted: HashMap<u64, u32> = HashMap::new();
    loop {
        while next < arrivals.len() && arrivals[next].0 <= now {
            s.submit(next as u64, arrivals[next].1, arrivals[next].2)
                .unwrap();
            next += 1;
        }
        let Some(step) = s.plan() else {
            if next == arrivals.len() {
                break;
            }
            now = arrivals[next].0;
            continue;
        };
        now += step.duration_ms;
        for ev in s.complete(&step) {
            match ev {
                SchedEvent::Token { id, .. } => tokens.entry(id).or_default().push(now),
                SchedEvent::Preempted { id } => *preempted.entry(id).or_default() += 1,
                SchedEvent::Finished { .. } => {}
            }
        }
    }
    (0..arrivals.len() as u64)
        .map(|i| {
            (
                tokens.remove(&i).unwrap_or_default(),
                preempted.get(&i).copied().unwrap_or(0),
            )
        })
        .collect()
}

fn model(name: &str) -> LatencyModel {
    profiles()
        .into_iter()
        .find(|p| p.name == name)
        .unwrap()
        .latency
}

fn ttft(arrival: f64, t: &[f64]) -> f64 {
    t[0] - arrival
}

fn mean_itl(t: &[f64]) -> f64 {
    (t[t.len() - 1] - t[0]) / (t.len() - 1) as f64
}

#[test]
fn article_profiles_match_their_targets_at_low_load() {
    let a = simulate(&model("model-a"), &[(0.0, 200, 100)]);
    let b = simulate(&model("model-b"), &[(0.0, 200, 100)]);
    let (ta, tb) = (ttft(0.0, &a[0].0), ttft(0.0, &b[0].0));
    assert!((750.0..850.0).contains(&ta), "model-a TTFT {ta}");
    assert!((3400.0..3600.0).contains(&tb), "model-b TTFT {tb}");
    let (ia, ib) = (mean_itl(&a[0].0), mean_itl(&b[0].0));
    assert!((60.0..70.0).contains(&ia), "model-a ITL {ia}");
    assert!((37.0..43.0).contains(&ib), "model-b ITL {ib}");
    // The article's point: B finishes earlier for long answers yet starts 2.7 s later.
    let long_a = simulate(&model("model-a"), &[(0.0, 200, 400)]);
    let long_b = simulate(&model("model-b"), &[(0.0, 200, 400)]);
    assert!(long_b[0].0.last() < long_a[0].0.last());
}

#[test]
fn ttft_grows_with_prompt_length() {
    let m = model("sim-fast");
    let t: Vec<f64> = [100, 1000, 5000, 20000]
        .iter()
        .map(|p| ttft(0.0, &simulate(&m, &[(0.0, *p, 4)])[0].0))
        .collect();
    assert!(t.windows(2).all(|w| w[1] > w[0]), "{t:?}");
}

#[test]
fn ttft_grows_with_queue_depth() {
    let m = LatencyModel {
        max_batch: 2,
        ..model("sim-fast")
    };
    let arrivals: Vec<(f64, u32, u32)> = (0..8).map(|_| (0.0, 200, 30)).collect();
    let r = simulate(&m, &arrivals);
    let t: Vec<f64> = r.iter().map(|(t, _)| ttft(0.0, t)).collect();
    assert!(
        t[7] > t[0] * 3.0,
        "the last of 8 waits for three batches of 2: {t:?}"
    );
    assert!(t.windows(2).all(|w| w[1] >= w[0]));
}

#[test]
fn itl_grows_with_batch_size() {
    let m = model("sim-fast");
    let itl_at = |c: usize| {
        let r = simulate(&m, &vec![(0.0, 100, 50); c]);
        mean_itl(&r[0].0)
    };
    let (i1, i8, i32) = (itl_at(1), itl_at(8), itl_at(32));
    assert!(i1 < i8 && i8 < i32, "{i1} {i8} {i32}");
}

#[test]
fn itl_grows_with_output_position() {
    let m = LatencyModel {
        decode_ms_per_kv_ktok: 2.0,
        ..model("sim-fast")
    };
    let r = simulate(&m, &[(0.0, 100, 3000)]);
    let t = &r[0].0;
    let early = t[11] - t[10];
    let late = t[2990] - t[2989];
    assert!(
        late > early + 4.0,
        "gap grows with the KV length: {early} → {late}"
    );
}

#[test]
fn arrivals_stall_running_streams_during_prefill() {
    let m = model("sim-fast");
    let r = simulate(&m, &[(0.0, 100, 40), (100.0, 4000, 5)]);
    let t = &r[0].0;
    let max_gap = t.windows(2).map(|w| w[1] - w[0]).fold(0.0, f64::max);
    assert!(
        max_gap > 2.0 * mean_itl(&t[..5]),
        "a prefill step shows as an ITL spike: {max_gap}"
    );
}

#[test]
fn kv_overflow_preempts_and_reprefills() {
    let m = model("sim-tiny-kv");
    let r = simulate(&m, &[(0.0, 300, 400); 6]);
    let total: u32 = r.iter().map(|(_, p)| *p).sum();
    assert!(total > 0, "2,000 KV tokens cannot hold 6 × 700");
    for (t, _) in &r {
        assert_eq!(t.len(), 400, "every request still completes");
    }
}

#[test]
fn schedule_is_deterministic() {
    let arrivals: Vec<(f64, u32, u32)> = (0..20)
        .map(|i| (i as f64 * 37.0, 100 + i * 50, 20 + i))
        .collect();
    let m = model("sim-tiny-kv");
    assert_eq!(simulate(&m, &arrivals), simulate(&m, &arrivals));
}

#[test]
fn queue_limit_refuses() {
    let mut s = Scheduler::new(LatencyModel {
        max_waiting: 2,
        ..model("sim-fast")
    });
    assert!(s.submit(1, 10, 1).is_ok());
    assert!(s.submit(2, 10, 1).is_ok());
    assert!(s.submit(3, 10, 1).is_err());
}

/// The decode steps (ms) of one request alone with `id`, from its first token on.
fn decode_steps(m: &LatencyModel, id: u64, prompt: u32, out: u32) -> (f64, Vec<f64>) {
    let mut s = Scheduler::new(m.clone());
    s.submit(id, prompt, out).unwrap();
    let mut prefill = 0.0;
    let mut steps = Vec::new();
    while let Some(step) = s.plan() {
        if step.prefill {
            prefill += step.duration_ms;
        } else {
            steps.push(step.duration_ms);
        }
        s.complete(&step);
    }
    (prefill, steps)
}

#[test]
fn the_slower_ab_profile_decodes_exactly_ten_percent_slower_with_the_same_prefill() {
    use ttft_server::sim::profile::AB_SLOWER_FACTOR;
    let (ab, slower, twin) = (
        model("sim-ab"),
        model("sim-ab-slower"),
        model("sim-ab-twin"),
    );
    assert_eq!(twin, ab, "the twin differs in name only");
    assert!(ab.jitter > 0.0 && slower.jitter == ab.jitter && slower.seed == ab.seed);
    assert_eq!(AB_SLOWER_FACTOR, 1.10);
    for id in [0, 1, 7, 1234] {
        let (pa, sa) = decode_steps(&ab, id, 120, 64);
        let (ps, ss) = decode_steps(&slower, id, 120, 64);
        assert_eq!(pa, ps, "prefill identical");
        assert!((140.0..160.0).contains(&pa), "TTFT ≈ 150 ms: {pa}");
        assert_eq!(sa.len(), ss.len());
        for (a, s) in sa.iter().zip(&ss) {
            assert!(
                (s / a - 1.10).abs() < 1e-12,
                "every decode step × 1.10: {a} → {s}"
            );
        }
    }
    // Over many requests, ITL ≈ 20 ms on sim-ab and its ratio 1.10.
    let mean = |m: &LatencyModel| {
        let all: Vec<f64> = (0..200)
            .flat_map(|id| decode_steps(m, id, 120, 32).1)
            .collect();
        all.iter().sum::<f64>() / all.len() as f64
    };
    let (ma, ms) = (mean(&ab), mean(&slower));
    assert!((18.0..22.0).contains(&ma), "ITL ≈ 20 ms: {ma}");
    assert!((ms / ma - 1.10).abs() < 1e-9, "{ms} / {ma}");
}

#[test]
fn jitter_is_deterministic_per_seed_and_request_and_varies_the_steps() {
    let ab = model("sim-ab");
    let (_, once) = decode_steps(&ab, 42, 100, 64);
    let (_, again) = decode_steps(&ab, 42, 100, 64);
    assert_eq!(once, again, "same seed and request id: the same steps");
    let (_, other_request) = decode_steps(&ab, 43, 100, 64);
    assert_ne!(once, other_request);
    let reseeded = LatencyModel {
        seed: 30,
        ..ab.clone()
    };
    assert_ne!(
        decode_steps(&reseeded, 42, 100, 64).1,
        once,
        "another seed, other steps"
    );
    // Steps vary within a request (per-step noise) and request means between requests
    // (per-request speed), each by about the jitter's 10 %.
    let cv = |v: &[f64]| {
        let m = v.iter().sum::<f64>() / v.len() as f64;
        (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt() / m
    };
    let within = cv(&once);
    assert!((0.05..0.16).contains(&within), "per-step CV {within}");
    let means: Vec<f64> = (0..300)
        .map(|id| {
            let s = decode_steps(&ab, id, 100, 64).1;
            s.iter().sum::<f64>() / s.len() as f64
        })
        .collect();
    let between = cv(&means);
    assert!((0.07..0.14).contains(&between), "per-request CV {between}");
    // Without jitter nothing varies: the other profiles keep their exact steps.
    let (_, flat) = decode_steps(&model("sim-fast"), 42, 100, 8);
    assert!(flat.iter().all(|s| (s - flat[0]).abs() < 0.01), "{flat:?}");
}
