//! Links of older studios keep opening: each frozen reader of `ttft_share::legacy` with links an
//! older studio wrote (`tests/data/links/`, see its README): r1 (the report's JSON under
//! DEFLATE), r2 (the measurement columns under DEFLATE), r3's first layout (all but the gaps
//! under DEFLATE) and r3's second layout with the first context models (the nearest arrival of
//! the other streams). The old writers still make such links (the golden ones, `golden.rs`), and
//! each opens as the current link of the same run does.

use crate::common::*;
use ttft_core::report::{Report, ReportFileError};
use ttft_core::run_stats::RunStats;
use ttft_fixtures::analysis::{report_of, synthetic};
use ttft_share::{ShareError, ShareOptions};

/// A golden link of `tests/data/links` (`golden.rs` checks it byte for byte).
fn golden_link(name: &str) -> String {
    let path = format!("{}/tests/data/links/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

// ----- r1: the report's JSON under DEFLATE ----------------------------------------------------

#[test]
fn r1_links_keep_opening() {
    let report = random_report(3, 30);
    let compact = ttft_share::compact_for_share(&report, 5);
    let r1 = ttft_share::encode_r1(&compact);
    assert!(r1.starts_with("r1."));
    assert_eq!(
        ttft_share::decode(&format!("http://x/#share={r1}")).unwrap(),
        compact
    );
}
/// The golden r1 link (written by `encode_r1` before the codec moved) opens as the compact copy
/// it was made of, exactly.
#[test]
fn the_golden_r1_link_opens_as_its_compact_copy() {
    let compact = ttft_share::compact_for_share(&random_report(7, 100), 5);
    let opened = ttft_share::decode(&golden_link("golden-random-7-100.r1.txt")).unwrap();
    assert_eq!(opened, compact);
}

#[test]
fn r1_links_round_trip_compact_and_refuse_bad_links() {
    let reqs = (0..100)
        .map(|i| {
            (
                "c=1".to_owned(),
                Some(1.0),
                synthetic(800.0 + i as f64, 65.0, 60, "Sure, here's the answer:"),
            )
        })
        .collect();
    let report = report_of(reqs);
    let full = ttft_share::encode_r1(&report);
    assert_eq!(ttft_share::decode(&full).unwrap(), report);
    let compact = ttft_share::compact_for_share(&report, 5);
    let link = ttft_share::encode_r1(&compact);
    let back = ttft_share::decode(&format!("http://127.0.0.1:8080/#share={link}")).unwrap();
    assert_eq!(back, compact);
    // Numbers survive compaction to the microsecond (times are rounded to 1 µs).
    let (a, b) = (back.aggregates(), report.aggregates());
    for (x, y) in [
        (a.ttft, b.ttft),
        (a.itl, b.itl),
        (a.tpot, b.tpot),
        (a.e2e, b.e2e),
        (a.meaningful, b.meaningful),
    ] {
        let (x, y) = (x.unwrap(), y.unwrap());
        assert_eq!(x.count, y.count);
        for (u, v) in [
            (x.p50, y.p50),
            (x.p95, y.p95),
            (x.p99, y.p99),
            (x.max, y.max),
        ] {
            assert!((u - v).abs() <= 0.001, "{u} vs {v}");
        }
    }
    assert_eq!(a.groups.len(), b.groups.len());
    assert_eq!(a.goodput, b.goodput);
    assert!(
        link.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
    );
    println!(
        "share link for a 100-request report: {} bytes (full: {} bytes)",
        link.len(),
        full.len()
    );
    assert!(link.len() < full.len());
    assert_eq!(ttft_share::decode(""), Err(ShareError::Empty));
    assert_eq!(ttft_share::decode("x1.abc"), Err(ShareError::BadPrefix));
    assert!(matches!(
        ttft_share::decode("r1.ab$c"),
        Err(ShareError::Base64(_))
    ));
    assert_eq!(
        ttft_share::decode(&link[..link.len() / 2]),
        Err(ShareError::Inflate)
    );
    assert_eq!(
        ttft_share::decode(&ttft_share::encode_r1(&Report {
            version: 99,
            ..report.clone()
        })),
        Err(ShareError::Report(ReportFileError::NewerVersion(99)))
    );
    // A decompression bomb is refused.
    let bomb = miniz_oxide::deflate::compress_to_vec(&vec![b' '; 40 * 1024 * 1024], 9);
    use base64::Engine;
    let bomb = format!(
        "r1.{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bomb)
    );
    assert_eq!(ttft_share::decode(&bomb), Err(ShareError::TooLarge));
}

// ----- r2 and r3's first layout: DEFLATE ------------------------------------------------------

#[test]
fn links_made_before_clients_still_open_with_the_probe_s_headline() {
    for old in [
        include_str!("../data/links/probe-under-load-before-clients.r3.txt"),
        include_str!("../data/links/probe-under-load-before-clients.r2.txt"),
    ] {
        let back = ttft_share::decode(old).expect("an older link opens");
        assert_eq!(back.requests.len(), 75);
        // No client per request: no probe under load; its carried headline is the probe's.
        assert!(back.requests.iter().all(|r| r.client.is_none()));
        assert!(!back.is_probe_under_load());
        let shared = back.shared.as_ref().unwrap();
        assert!(shared.headline.is_some());
        let agg = back.aggregates();
        assert_eq!(agg.count, 25);
        assert_eq!(agg.ttft.unwrap().min, 75.0);
        assert!(
            shared
                .left_out
                .iter()
                .any(|l| l.contains("which client measured each request")),
            "{:?}",
            shared.left_out
        );
    }
}

/// The golden r2 and first-layout r3 links of runs that fit whole open as the same report as the
/// golden r3 link of the same run (an r2 link says it is one).
#[test]
fn golden_r2_and_first_layout_links_open_as_the_current_link_of_their_run() {
    for run in ["random-7-100", "random-3-30-whole", "batched-1-48"] {
        let current = ttft_share::decode(&golden_link(&format!("golden-{run}.r3.txt"))).unwrap();
        let first_layout =
            ttft_share::decode(&golden_link(&format!("golden-{run}.r3-deflate.txt"))).unwrap();
        assert_eq!(first_layout, current, "{run}");
        let mut r2 = ttft_share::decode(&golden_link(&format!("golden-{run}.r2.txt"))).unwrap();
        assert_eq!(r2.shared.as_ref().unwrap().format, "r2");
        r2.shared.as_mut().unwrap().format = "r3".into();
        assert_eq!(r2, current, "{run}");
    }
}

// ----- r3's second layout, first context models ---------------------------------------------

#[test]
fn a_link_of_the_first_models_still_opens_and_the_refined_ones_code_its_run_shorter() {
    use base64::Engine;
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    // A real run's link, made by the studio before the refined models (tests/data/links).
    let old = include_str!("../data/links/reference-100-first-models.r3.txt").trim();
    assert_eq!(&engine.decode(&old[3..]).unwrap()[..2], &[0, 1]);
    let back = ttft_share::decode(old).expect("an older link opens");
    let agg = back.aggregates();
    assert_eq!(agg.count, 100);
    // The figures of the report it was made from, within the link's 0.1 ms.
    close("ttft p50", agg.ttft.map(|s| s.p50), Some(33.225), 0.05);
    close("itl p50", agg.itl.map(|s| s.p50), Some(20.19), 0.05);
    assert_eq!(agg.itl.unwrap().count, 9900);
    // The same run now: the same figures, and a link at least a twentieth shorter (the
    // gaps against each step's latest arrival, the text primed, the columns refined).
    let link = ttft_share::encode(&back, &ShareOptions::default());
    assert_eq!(&engine.decode(&link.text[3..]).unwrap()[..2], &[0, 5]);
    assert!(
        link.text.len() * 20 < old.len() * 19,
        "{} characters now, {} before",
        link.text.len(),
        old.len()
    );
    let again = ttft_share::decode(&link.text).unwrap();
    same_headline(&again.aggregates(), &agg, 0.1);
    damaged_r3_links_fail(&link.text, 20);
}

/// A request the client cut at its own end of run keeps its kind through a link (outcome code
/// 7, after the older codes), and an `aborted` an older client wrote for its own cut ("stopped
/// by Locust") opens as cut too; any other `aborted` stays aborted.
#[test]
fn requests_cut_by_the_client_keep_their_kind_through_a_link() {
    use ttft_core::timeline::Outcome;
    let mut report = random_report(3, 30);
    report.requests[0].outcome = Outcome::CutByClient {
        message: "stopped by Locust (the run's end, -t or a stop): partial data kept".into(),
    };
    report.requests[1].outcome = Outcome::Aborted {
        message: "stopped by Locust".into(),
    };
    report.requests[2].outcome = Outcome::Aborted {
        message: "the proxy reset the stream".into(),
    };
    let options = ttft_share::ShareOptions {
        max_chars: None,
        ..ttft_share::ShareOptions::default()
    };
    for text in [
        ttft_share::encode(&report, &options).text,
        ttft_share::encode_r2(&report, &options).text,
    ] {
        let opened = ttft_share::decode(&text).unwrap();
        let kinds: Vec<&str> = opened.requests[..3]
            .iter()
            .map(|r| r.outcome.kind())
            .collect();
        assert_eq!(kinds, ["cut_by_client", "cut_by_client", "aborted"]);
    }
}
