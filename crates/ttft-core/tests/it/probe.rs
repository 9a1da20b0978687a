//! A probe under load: a browser probe's timeline merged with Locust workers' files keeps each
//! request's client, the headline is the probe's, the load in flight at each probe send is
//! counted from the load's own send and end times, and the finding says how the probe's TTFT
//! moved with the load (and holds back when it did not, or without enough probe requests).
//! Exported as a timeline and merged again it is the same run (its share links:
//! `crates/ttft-share/tests/probe.rs`).

use ttft_core::diagnosis::diagnose;
use ttft_core::probe::probe_under_load;
use ttft_core::run_stats::RunStats;
use ttft_core::timeline_file::{MergeOptions, TimelineLine, Vantage, export, merge_files};
use ttft_fixtures::probe::files;

#[test]
fn the_probe_is_the_headline_and_its_ttft_is_placed_on_the_load() {
    let merged = merge_files(
        &files(|load| 50.0 + 25.0 * f64::from(load), 25),
        &MergeOptions::default(),
    )
    .expect("merges");
    let report = &merged.report;
    assert!(
        merged.report.import_notes.is_empty(),
        "{:?}",
        report.import_notes
    );
    assert_eq!(
        report.vantage.as_deref(),
        Some("browser + locust (2 workers on 1 host)")
    );
    // The probe's scenario, not the load's level.
    assert_eq!(report.scenario, "chat");
    assert!(report.is_probe_under_load());
    let probe_n = report
        .requests
        .iter()
        .filter(|r| r.client.as_deref() == Some("browser"))
        .count();
    assert_eq!(probe_n, 25);
    assert_eq!(report.requests.len(), 25 + 2 * 25);
    // Headline: the probe's 25 requests only.
    let agg = report.aggregates();
    assert_eq!(agg.count, 25);
    assert_eq!(agg.ttft.unwrap().min, 75.0);
    let p = probe_under_load(report).expect("a probe under load");
    assert_eq!((p.probe_count, p.load_count), (25, 50));
    assert_eq!(p.load_client, "locust");
    assert_eq!(p.peak_in_flight, 9);
    for q in &p.points {
        let expected = 1 + 2 * (q.start_ms / 2000.0).floor() as u32;
        assert_eq!(q.load_in_flight, expected, "at {} ms", q.start_ms);
        assert_eq!(q.ttft_ms, Some(50.0 + 25.0 * f64::from(expected)));
    }
    // The load ends with its last request: 10 s.
    assert_eq!(p.load_timeline.last(), Some(&(10_000.0, 0)));
    assert_eq!(p.ttft_by_load.len(), 3);
    let (lo, hi) = (p.ttft_by_load[0], p.ttft_by_load[2]);
    assert_eq!((lo.from, lo.to, lo.count), (1, 3, 8));
    assert_eq!((hi.from, hi.to, hi.count), (7, 9, 9));
    let f = diagnose(report, &agg);
    let probe = f
        .iter()
        .find(|f| f.id == "probe_under_load")
        .expect("the finding");
    assert_eq!(
        probe.title,
        "The probe's TTFT rose from 75.0 ms at ≤3 in flight to 275 ms at ≥7 in flight (×3.7): per request by 150 ms (95 % interval 150–200 ms)"
    );
    // Each band's median with its interval.
    assert!(
        probe
            .evidence
            .starts_with("probe P50 TTFT 75.0 ms (95 % interval 75.0–125 ms) over its 8 requests"),
        "{}",
        probe.evidence
    );
    assert!(
        probe
            .evidence
            .contains("50 locust requests, at most 9 in flight"),
        "{}",
        probe.evidence
    );
    // The client survives the report file.
    let back: ttft_core::Report =
        serde_json::from_str(&serde_json::to_string(report).unwrap()).unwrap();
    assert_eq!(
        back.requests
            .iter()
            .map(|r| r.client.clone())
            .collect::<Vec<_>>(),
        report
            .requests
            .iter()
            .map(|r| r.client.clone())
            .collect::<Vec<_>>()
    );
}

#[test]
fn a_flat_probe_holds_and_too_few_probes_say_nothing() {
    let merged = merge_files(&files(|_| 80.0, 25), &MergeOptions::default()).unwrap();
    let agg = merged.report.aggregates();
    let f = diagnose(&merged.report, &agg);
    let probe = f
        .iter()
        .find(|f| f.id == "probe_under_load")
        .expect("the finding");
    assert_eq!(
        probe.title,
        "The probe's TTFT held under load: 80.0 ms at ≤3 in flight, 80.0 ms at ≥7; per request the difference is 0.00 ms (95 % interval 0.00–0.00 ms), not a ×1.5 rise"
    );
    let merged = merge_files(
        &files(|l| f64::from(l) * 100.0, 5),
        &MergeOptions::default(),
    )
    .unwrap();
    let agg = merged.report.aggregates();
    assert!(
        diagnose(&merged.report, &agg)
            .iter()
            .all(|f| f.id != "probe_under_load")
    );
    assert!(
        probe_under_load(&merged.report)
            .unwrap()
            .ttft_by_load
            .is_empty()
    );
}

/// The same means as the rising probe above (50 + 25 ms per load request in flight), each
/// TTFT times e^u with u uniform in ±1.2 (seeded).
fn noisy(seed: u64, probes: u32) -> ttft_core::Report {
    let rng = std::cell::RefCell::new(fastrand::Rng::with_seed(seed));
    let ttft = |load: u32| {
        let u = (rng.borrow_mut().f64() - 0.5) * 2.4;
        (50.0 + 25.0 * f64::from(load)) * u.exp()
    };
    merge_files(&files(ttft, probes), &MergeOptions::default())
        .unwrap()
        .report
}

#[test]
fn a_noisy_probe_with_few_requests_claims_no_rise() {
    // Nine probe requests, three a third: no interval, so no rise, whatever the medians.
    for seed in 0..10 {
        let r = noisy(seed, 9);
        let f = diagnose(&r, &r.aggregates());
        let probe = f.iter().find(|f| f.id == "probe_under_load").unwrap();
        assert!(
            probe
                .title
                .starts_with("Cannot tell yet whether the probe's TTFT rises under load: ")
                && probe
                    .title
                    .ends_with("; too few requests for an interval: at least 4 per band"),
            "{}",
            probe.title
        );
    }
    // Twelve (four a third): a rise is stated only with its interval; otherwise the finding
    // says how many probe requests per third would tell.
    let mut untold = 0;
    for seed in 0..20 {
        let r = noisy(seed, 12);
        let f = diagnose(&r, &r.aggregates());
        let probe = f.iter().find(|f| f.id == "probe_under_load").unwrap();
        if probe.title.contains(" rose ") {
            assert!(probe.title.contains("(95 % interval "), "{}", probe.title);
        } else {
            untold += 1;
            assert!(
                probe.title.starts_with("Cannot tell yet")
                    && probe
                        .title
                        .contains(" requests per band would show a 10 % difference"),
                "{}",
                probe.title
            );
        }
    }
    assert!(untold >= 10, "{untold} of 20 untold");
}

#[test]
fn one_client_alone_is_no_probe_under_load() {
    let all = files(|_| 80.0, 10);
    let merged = merge_files(&all[1..], &MergeOptions::default()).unwrap();
    assert!(!merged.report.is_probe_under_load());
    assert!(probe_under_load(&merged.report).is_none());
    assert_eq!(merged.report.aggregates().count, 50);
    let merged = merge_files(&all[..1], &MergeOptions::default()).unwrap();
    assert!(!merged.report.is_probe_under_load());
    assert_eq!(merged.report.aggregates().count, 10);
}

/// The lines of timeline files, sorted by (run, worker, index): what a set of files says,
/// whichever file or order each line came in.
fn lines_of<'a>(texts: impl IntoIterator<Item = &'a str>) -> Vec<TimelineLine> {
    let mut lines: Vec<TimelineLine> = texts
        .into_iter()
        .flat_map(str::lines)
        .map(|l| TimelineLine::parse(l).expect("a good line"))
        .collect();
    lines.sort_by(|a, b| {
        (&a.run, &a.vantage.worker, a.request.index).cmp(&(
            &b.run,
            &b.vantage.worker,
            b.request.index,
        ))
    });
    lines
}

#[test]
fn a_merged_probe_run_exported_and_merged_again_is_the_same_run() {
    let originals = files(|load| 50.0 + 25.0 * f64::from(load), 25);
    let first = merge_files(&originals, &MergeOptions::default()).expect("merges");
    assert!(first.report.is_probe_under_load());
    // What the report's Export timeline hands over: the browser's vantage, a fallback only.
    let fallback = Vantage::browser(Some(0.005), Some("ttft-studio".into()));
    let text = export(&first.report, &fallback);
    // Every line is written back as it was read: its worker, index and clocks.
    let who = |lines: &[TimelineLine]| -> Vec<(String, String, u32, f64)> {
        lines
            .iter()
            .map(|l| {
                let v = &l.vantage;
                (
                    v.client.clone(),
                    v.worker.clone(),
                    l.request.index,
                    l.capture.sent_ms,
                )
            })
            .collect()
    };
    assert_eq!(
        who(&lines_of(text.lines())),
        who(&lines_of(originals.iter().map(|f| f.1.as_str())))
    );
    assert_eq!(
        lines_of(text.lines()),
        lines_of(originals.iter().map(|f| f.1.as_str()))
    );
    let again = merge_files(
        &[("export.jsonl".into(), text.clone())],
        &MergeOptions::default(),
    )
    .expect("merges again");
    // No lost requests (indexes are the workers' own), no stepped or disagreeing clocks.
    assert!(
        again.report.import_notes.is_empty(),
        "{:?}",
        again.report.import_notes
    );
    assert!(again.missing.is_empty() && again.skew.is_none() && again.duplicates == 0);
    assert_eq!(again.vantages, first.vantages);
    assert_eq!(again.report.vantage, first.report.vantage);
    assert_eq!(again.report.title, first.report.title);
    assert_eq!(again.report.endpoint, first.report.endpoint);
    assert_eq!(again.report.scenario, first.report.scenario);
    assert!(again.report.is_probe_under_load());
    assert_eq!(again.report.requests.len(), first.report.requests.len());
    for (a, b) in first.report.requests.iter().zip(&again.report.requests) {
        assert_eq!(a.client, b.client, "request {}", a.index);
        assert_eq!(a.start_ms, b.start_ms, "request {}", a.index);
        assert_eq!(a.metrics, b.metrics, "request {}", a.index);
        assert_eq!(
            (&a.group, a.level, a.warmup, &a.outcome),
            (&b.group, b.level, b.warmup, &b.outcome)
        );
    }
    assert_eq!(again.report.aggregates(), first.report.aggregates());
    assert_eq!(
        probe_under_load(&again.report),
        probe_under_load(&first.report)
    );
    // And its export is the same file again.
    assert_eq!(export(&again.report, &fallback), text);
    // The files in another order merge into the same run.
    let reversed: Vec<(String, String)> = originals.iter().rev().cloned().collect();
    let other = merge_files(&reversed, &MergeOptions::default()).unwrap();
    assert_eq!(other.report.requests, first.report.requests);
    assert_eq!(
        (&other.report.title, &other.report.vantage, &other.vantages),
        (&first.report.title, &first.report.vantage, &first.vantages)
    );
}
