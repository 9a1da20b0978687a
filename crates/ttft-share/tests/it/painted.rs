//! What the live surface painted travels with a run's link (#31): the strategy and each drawn
//! answer's figures (times to 1 µs) in every format, the same paint headline on the reader's
//! side; a long run's per-chunk lags thinned to the link's budget and said so; a run drawn
//! with the surface off writes nothing.

use crate::common::*;
use ttft_core::paint::{PaintFigures, PaintSource, PaintedRequest, PaintedRun};
use ttft_core::report::painted::paint_headline;
use ttft_share::ShareOptions;

/// Figures of an answer painted `delay` ms after its first arrival, with `chunks` lags.
fn figures(first: f64, delay: f64, chunks: usize) -> PaintFigures {
    PaintFigures {
        source: PaintSource::FrameEstimate,
        first_painted_ms: Some(first + delay),
        first_painted_meaningful_ms: Some(first + delay + 40.123_456_7),
        lags_ms: (0..chunks)
            .map(|k| 8.0 + (k % 7) as f64 * 1.234_567)
            .collect(),
        long_frames: 1,
        dropped_frames: 2,
        frames: 300,
        busy_share: Some(0.061_234_5),
    }
}

/// `report` with every measured request drawn, `chunks` lags each.
fn drawn(mut report: ttft_core::report::Report, chunks: usize) -> ttft_core::report::Report {
    let requests = report
        .requests
        .iter()
        .filter(|r| !r.warmup)
        .filter_map(|r| {
            Some(PaintedRequest {
                index: r.index,
                figures: figures(r.metrics.first_answer_ms?, 9.876_543, chunks),
            })
        })
        .collect();
    report.painted = Some(PaintedRun {
        strategy: "rerender-all".into(),
        requests,
    });
    report
}

#[test]
fn a_link_carries_what_the_surface_painted() {
    let options = ShareOptions {
        max_chars: None,
        ..ShareOptions::default()
    };
    let report = drawn(random_report(31, 16), 50);
    let drawn_count = report.painted.as_ref().unwrap().requests.len();
    assert!(drawn_count > 0);
    let before = paint_headline(&report, 0.95).unwrap();
    for text in [
        ttft_share::encode(&report, &options).text,
        ttft_share::encode_r2(&report, &options).text,
        ttft_share::encode_r3_deflate(&report, &options).text,
    ] {
        let back = ttft_share::decode(&text).unwrap();
        let painted = back
            .painted
            .as_ref()
            .unwrap_or_else(|| panic!("{} lost it", &text[..3]));
        assert_eq!(painted.strategy, "rerender-all");
        assert_eq!(painted.requests.len(), drawn_count);
        for (a, b) in painted
            .requests
            .iter()
            .zip(&report.painted.as_ref().unwrap().requests)
        {
            assert_eq!(a.index, b.index);
            assert_eq!(
                a.figures.lags_ms.len(),
                50,
                "under the budget every lag travels"
            );
            let (x, y) = (
                a.figures.first_painted_ms.unwrap(),
                b.figures.first_painted_ms.unwrap(),
            );
            assert!((x - y).abs() <= 0.000_5, "{x} vs {y}");
        }
        let after = paint_headline(&back, 0.95).expect("the reader sees the paint headline");
        assert_eq!(after.drawn, before.drawn);
        assert!((after.painted.unwrap().value - before.painted.unwrap().value).abs() <= 0.05);
        assert!(
            (after.first_paint_delay.unwrap().value - before.first_paint_delay.unwrap().value)
                .abs()
                <= 0.1,
            "the delay is against the request's first answer token, kept to the link's precision"
        );
    }
    // With the surface off nothing is written.
    let plain = random_report(31, 16);
    let text = ttft_share::encode(&plain, &options).text;
    assert_eq!(ttft_share::decode(&text).unwrap().painted, None);
    assert!(text.len() < ttft_share::encode(&report, &options).text.len());
}

#[test]
fn a_long_runs_lags_are_thinned_and_the_link_says_so() {
    let options = ShareOptions {
        max_chars: None,
        ..ShareOptions::default()
    };
    let report = drawn(random_report(32, 40), 2_000);
    let total: usize = report
        .painted
        .as_ref()
        .unwrap()
        .requests
        .iter()
        .map(|p| p.figures.lags_ms.len())
        .sum();
    assert!(total > 4_000);
    let back = ttft_share::decode(&ttft_share::encode(&report, &options).text).unwrap();
    let painted = back.painted.unwrap();
    let travel: usize = painted
        .requests
        .iter()
        .map(|p| p.figures.lags_ms.len())
        .sum();
    assert!(travel <= 4_000, "{travel} lags travel");
    for p in &painted.requests {
        let lags = &p.figures.lags_ms;
        assert!(lags.len() >= 2);
        assert!((lags[0] - 8.0).abs() < 1e-9, "the first lag is kept");
    }
    let left_out = back.shared.unwrap().left_out.join("; ");
    assert!(
        left_out.contains(&format!("paint lags beyond {travel} of {total}")),
        "{left_out}"
    );
}
