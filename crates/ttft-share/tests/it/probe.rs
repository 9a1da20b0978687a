//! A probe under load through a share link (the run of `ttft-core`'s `tests/probe.rs`: a browser
//! probe's timeline merged with two Locust workers' files): the link keeps each request's client
//! and the probe's figures, its chart and its finding; it is shorter than the same run's link
//! made before links carried clients (`legacy.rs` opens that one).

use ttft_core::diagnosis::diagnose;
use ttft_core::probe::probe_under_load;
use ttft_core::run_stats::RunStats;
use ttft_core::timeline_file::{MergeOptions, merge_files};
use ttft_fixtures::probe::files;

/// `a` within `tolerance` (ms) of `b`.
fn near(what: &str, a: f64, b: f64, tolerance: f64) {
    assert!(
        (a - b).abs() <= tolerance + 1e-9,
        "{what}: {a} vs {b} (tolerance {tolerance})"
    );
}

#[test]
fn a_probe_under_load_link_keeps_each_request_s_client_and_the_probe_s_figures() {
    let merged = merge_files(
        &files(|load| 50.0 + 25.0 * f64::from(load), 25),
        &MergeOptions::default(),
    )
    .unwrap();
    let report = &merged.report;
    let link = ttft_share::encode(report, &ttft_share::ShareOptions::default());
    assert_eq!(link.requests_kept, report.requests.len());
    let back = ttft_share::decode(&link.text).expect("opens");
    let shared = back.shared.as_ref().unwrap();
    // Recomputed from the requests, no headline carried, nothing said missing about clients.
    assert!(shared.headline.is_none());
    assert!(
        shared.left_out.iter().all(|l| !l.contains("client")),
        "{:?}",
        shared.left_out
    );
    let clients = |r: &ttft_core::Report| -> Vec<Option<String>> {
        r.requests.iter().map(|q| q.client.clone()).collect()
    };
    assert_eq!(clients(&back), clients(report));
    assert!(back.is_probe_under_load());
    // The probe's headline and its chart, within the link's step (0.1 ms): a time within half
    // a step, a request's end (its send plus its duration) within one.
    let step = link.precision_ms;
    let (a, b) = (back.aggregates(), report.aggregates());
    assert_eq!(a.count, 25);
    assert_eq!((a.count, a.errors), (b.count, b.errors));
    let (ta, tb) = (a.ttft.unwrap(), b.ttft.unwrap());
    near("ttft p50", ta.p50, tb.p50, step / 2.0);
    near("ttft max", ta.max, tb.max, step / 2.0);
    near("itl p50", a.itl.unwrap().p50, b.itl.unwrap().p50, step);
    let (p, q) = (
        probe_under_load(&back).expect("still a probe under load"),
        probe_under_load(report).unwrap(),
    );
    assert_eq!(
        (
            p.probe_count,
            p.load_count,
            &p.load_client,
            p.peak_in_flight
        ),
        (
            q.probe_count,
            q.load_count,
            &q.load_client,
            q.peak_in_flight
        )
    );
    assert_eq!(p.points.len(), q.points.len());
    for (x, y) in p.points.iter().zip(&q.points) {
        assert_eq!(x.load_in_flight, y.load_in_flight, "at {} ms", y.start_ms);
        near("probe send", x.start_ms, y.start_ms, step / 2.0);
        near(
            "probe ttft",
            x.ttft_ms.unwrap(),
            y.ttft_ms.unwrap(),
            step / 2.0,
        );
    }
    assert_eq!(p.load_timeline.len(), q.load_timeline.len());
    for (x, y) in p.load_timeline.iter().zip(&q.load_timeline) {
        assert_eq!(x.1, y.1);
        near("load step", x.0, y.0, step);
    }
    assert_eq!(p.ttft_by_load.len(), 3);
    for (x, y) in p.ttft_by_load.iter().zip(&q.ttft_by_load) {
        assert_eq!((x.from, x.to, x.count), (y.from, y.to, y.count));
        near("band ttft p50", x.ttft_p50_ms, y.ttft_p50_ms, step / 2.0);
    }
    let finding = |r: &ttft_core::Report| {
        diagnose(r, &r.aggregates())
            .into_iter()
            .find(|f| f.id == "probe_under_load")
            .map(|f| f.title)
    };
    assert_eq!(finding(&back), finding(report));
    // Before links carried clients, the same run's link carried the probe's headline instead
    // and was coded by the first layout alone: the link is shorter now, for both reasons.
    let before = include_str!("../data/links/probe-under-load-before-clients.r3.txt");
    assert!(
        link.text.len() < before.trim().len(),
        "{} characters now, {} before",
        link.text.len(),
        before.trim().len()
    );
}
