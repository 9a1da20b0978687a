//! What was painted, when (#31): a request's paint figures from its surface's updates and its
//! chunks' arrivals, a run's lag with intervals, and render cost against answer length.

use ttft_core::paint::{
    ContentChunk, LongFrame, PaintError, PaintSource, PaintTrace, PaintedUpdate, figures,
    render_cost_by_length, render_cost_ends, render_cost_growth, run_lag,
};

/// A trace of `updates` `(text_end, released, painted, render)`.
fn trace(updates: &[(usize, f64, f64, f64)]) -> PaintTrace {
    PaintTrace {
        strategy: "rerender-all".into(),
        source: PaintSource::FrameEstimate,
        updates: updates
            .iter()
            .map(
                |&(text_end, released_ms, painted_ms, render_ms)| PaintedUpdate {
                    text_end,
                    released_ms,
                    painted_ms,
                    render_ms,
                },
            )
            .collect(),
        long_frames: vec![
            LongFrame {
                start_ms: 900.0,
                duration_ms: 72.0,
                spent_on: Some("markdown render".into()),
            },
            LongFrame {
                start_ms: 1_200.0,
                duration_ms: 40.0,
                spent_on: None,
            },
        ],
        frames: 90,
        dropped_frames: 3,
        busy_ms: 300.0,
        span_ms: 1_500.0,
    }
}

fn chunk(at_ms: f64, text_end: usize) -> ContentChunk {
    ContentChunk { at_ms, text_end }
}

#[test]
fn figures_follow_each_chunk_to_the_first_paint_that_shows_it() {
    // "Sure! " (6 bytes) is an opener; the meaningful text starts at byte 6.
    let chunks = [
        chunk(780.0, 6),
        chunk(800.0, 12),
        chunk(820.0, 20),
        chunk(900.0, 26),
    ];
    let t = trace(&[
        (6, 781.0, 796.0, 1.0),
        (20, 821.0, 830.0, 2.0), // shows the 2nd and 3rd chunks together
    ]);
    let f = figures(&t, &chunks, Some(6)).unwrap();
    assert_eq!(f.first_painted_ms, Some(796.0));
    assert_eq!(f.first_painted_meaningful_ms, Some(830.0));
    // The last chunk was never shown (the surface stopped): no lag for it.
    assert_eq!(f.lags_ms, vec![16.0, 30.0, 10.0]);
    assert_eq!(f.long_frames, 1, "40 ms is no long frame");
    assert_eq!((f.frames, f.dropped_frames), (90, 3));
    assert!((f.busy_share.unwrap() - 0.2).abs() < 1e-12);
    // Without an opener, the first painted token is the meaningful one.
    let plain = figures(&t, &chunks, None).unwrap();
    assert_eq!(plain.first_painted_meaningful_ms, Some(796.0));
}

#[test]
fn a_paint_before_its_text_arrived_is_refused_and_says_why() {
    let t = trace(&[(10, 100.0, 150.0, 1.0)]);
    let e = figures(&t, &[chunk(200.0, 10)], None).unwrap_err();
    assert!(matches!(e, PaintError::BeforeArrival { .. }));
    assert!(e.to_string().contains("one clock"), "{e}");
}

#[test]
fn render_cost_growth_tells_rerendering_all_from_incremental() {
    // Re-rendering all: the cost grows with the text; incremental: flat.
    let growing: Vec<_> = (1..=100)
        .map(|i| {
            (
                i * 80,
                f64::from(i as u32) * 10.0,
                f64::from(i as u32) * 10.0 + 5.0,
                0.05 * i as f64,
            )
        })
        .collect();
    let flat: Vec<_> = (1..=100)
        .map(|i| {
            (
                i * 80,
                f64::from(i as u32) * 10.0,
                f64::from(i as u32) * 10.0 + 5.0,
                0.3,
            )
        })
        .collect();
    assert!(render_cost_growth(&trace(&growing)).unwrap() > 5.0);
    assert!((render_cost_growth(&trace(&flat)).unwrap() - 1.0).abs() < 1e-9);
    assert!(render_cost_growth(&trace(&growing[..5])).is_none());
    assert_eq!(render_cost_by_length(&trace(&growing))[99], (8_000, 5.0));
    // The ends are the medians of the first and last 20 updates: updates 11 and 91 (1-based).
    let (start, end) = render_cost_ends(&trace(&growing)).unwrap();
    assert!(
        (start - 0.55).abs() < 1e-9 && (end - 4.55).abs() < 1e-9,
        "{start} {end}"
    );
    assert!(render_cost_ends(&trace(&growing[..9])).is_none());
}

/// A lag drawn from a shifted log-normal (a frame's wait plus a skewed tail), seeded.
fn lag(rng: &mut fastrand::Rng) -> f64 {
    let (u, v) = (1.0 - rng.f64(), rng.f64());
    let z = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
    8.0 + (1.5 + 0.7 * z).exp()
}

#[test]
fn the_run_lag_intervals_cover_the_true_percentiles() {
    let (true50, true99) = (
        8.0 + 1.5f64.exp(),
        8.0 + (1.5 + 0.7 * 2.326_347_874_040_840_8f64).exp(),
    );
    let mut rng = fastrand::Rng::with_seed(31);
    let runs = 1_000;
    let (mut c50, mut c99) = (0, 0);
    for _ in 0..runs {
        // 8 requests of 60 chunks each, independent here.
        let requests: Vec<_> = (0..8)
            .map(|_| {
                let chunks: Vec<ContentChunk> = (1..=60)
                    .map(|i| chunk(100.0 * f64::from(i), i as usize * 4))
                    .collect();
                let updates: Vec<_> = chunks
                    .iter()
                    .map(|c| (c.text_end, c.at_ms, c.at_ms + lag(&mut rng), 0.2))
                    .collect();
                figures(&trace(&updates), &chunks, None).unwrap()
            })
            .collect();
        let l = run_lag(&requests, 0.95).unwrap();
        assert_eq!(l.chunks, 480);
        c50 += usize::from(l.p50_ms.interval.unwrap().contains(true50));
        c99 += usize::from(l.p99_ms.interval.unwrap().contains(true99));
    }
    eprintln!("paint lag coverage: P50 {c50}, P99 {c99} of {runs}");
    assert!(c50 * 100 >= runs * 93, "P50 covered in {c50} of {runs}");
    assert!(c99 * 100 >= runs * 93, "P99 covered in {c99} of {runs}");
    // Too few chunks for a P99 interval: it says how many it needs.
    let few = figures(&trace(&[(4, 1.0, 9.0, 0.1)]), &[chunk(1.0, 4)], None).unwrap();
    let l = run_lag([&few], 0.95).unwrap();
    assert!(l.p99_ms.interval.is_none() && l.p99_ms.needs.is_some());
}
