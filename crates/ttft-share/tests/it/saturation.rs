//! What the saturation stop did travels with a run's link (#32): a run stopped on the evidence
//! opens with it (times to 1 µs) in every format; a run it did not watch writes nothing, so its
//! link is as before, and links made before the stop open without it.

use crate::common::*;
use ttft_core::report::saturation::{Saturation, SaturationCheck, SaturationWindow};
use ttft_core::uncertainty::Interval;
use ttft_share::ShareOptions;

fn stopped() -> SaturationCheck {
    let window = |i: usize, p50: f64| SaturationWindow {
        start_ms: 1_234.567_891 + i as f64 * 2_500.0,
        end_ms: 1_234.567_891 + (i + 1) as f64 * 2_500.0,
        ttft_p50_ms: p50,
        ttft_p50_interval: Some(Interval {
            lo: p50 * 0.8,
            hi: p50 * 1.3,
            level: 0.95,
        }),
        completed: 17 + i,
        planned: 27.5,
    };
    SaturationCheck::Stopped(Saturation {
        at_ms: 14_734.5,
        window_ms: 2_500.0,
        windows: (0..5).map(|i| window(i, 400.0 * (i + 1) as f64)).collect(),
        trend_s: 10,
        trend_p: 0.008,
        duration_ms: 1_800.25,
        sent_per_s: 11.0,
        completed_per_s: 7.2,
        completed_interval: Some(Interval {
            lo: 6.0,
            hi: 8.6,
            level: 0.95,
        }),
    })
}

#[test]
fn a_link_carries_what_the_saturation_stop_did() {
    let options = ShareOptions {
        max_chars: None,
        ..ShareOptions::default()
    };
    for check in [stopped(), SaturationCheck::Off] {
        let mut report = random_report(12, 20);
        report.saturation = Some(check.clone());
        for text in [
            ttft_share::encode(&report, &options).text,
            ttft_share::encode_r2(&report, &options).text,
            ttft_share::encode_r3_deflate(&report, &options).text,
            ttft_share::encode_r1(&ttft_share::compact_for_share(&report, 5)),
        ] {
            let back = ttft_share::decode(&text).unwrap().saturation;
            let back = back.unwrap_or_else(|| panic!("{} lost it", &text[..3]));
            match (&back, &check) {
                (SaturationCheck::Stopped(b), SaturationCheck::Stopped(a)) => {
                    assert_eq!(b.windows.len(), a.windows.len());
                    for (x, y) in b.windows.iter().zip(&a.windows) {
                        assert!((x.start_ms - y.start_ms).abs() <= 0.001, "{}", &text[..3]);
                        assert_eq!(x.ttft_p50_ms, y.ttft_p50_ms);
                        assert_eq!(x.completed, y.completed);
                    }
                    assert_eq!(b.sentence(20), a.sentence(20));
                }
                _ => assert_eq!(back, check),
            }
        }
    }
    // A run the stop did not watch writes nothing for it: its link is as before.
    let plain = random_report(12, 20);
    let mut with = plain.clone();
    with.saturation = Some(stopped());
    let (a, b) = (
        ttft_share::encode(&plain, &options).text,
        ttft_share::encode(&with, &options).text,
    );
    assert!(a.len() < b.len());
    assert_eq!(ttft_share::decode(&a).unwrap().saturation, None);
}

#[test]
fn links_made_before_the_stop_open_without_it() {
    for (name, opened) in older_links() {
        assert_eq!(opened.saturation, None, "{name}");
    }
}
