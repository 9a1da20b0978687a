//! A probe under load: a browser probe's timeline merged with Locust workers' files keeps each
//! request's client, the headline is the probe's, the load in flight at each probe send is
//! counted from the load's own send and end times, and the finding says how the probe's TTFT
//! moved with the load (and holds back when it did not, or without enough probe requests).
//! Exported as a timeline and merged again it is the same run (its share links:
//! `crates/ttft-share/tests/probe.rs`).

use ttft_core::capture::{Capture, CaptureEnd, CapturedHead};
use ttft_core::diagnosis::diagnose;
use ttft_core::probe::{PROBE_CLIENT, probe_under_load};
use ttft_core::run_stats::RunStats;
use ttft_core::timeline::Read;
use ttft_core::timeline_file::{
    MergeOptions, RawCapture, RequestInfo, TimelineLine, Vantage, export, merge_files,
};

const WALL0: f64 = 1_764_542_467_000.0;

/// Sent at `sent` (ms), first token after `ttft`, four more tokens 10 ms apart, so the request
/// lasts `ttft + 40.5` ms.
fn streamed(sent: f64, ttft: f64) -> Capture {
    let mut body = Vec::new();
    let mut reads = Vec::new();
    let mut at = sent + ttft;
    for k in 0..5 {
        let piece = format!(
            "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"w{k} \"}}}}]}}\n\n"
        ) + if k == 4 {
            "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
        } else {
            ""
        };
        reads.push(Read {
            at,
            bytes: piece.len() as u32,
        });
        body.extend_from_slice(piece.as_bytes());
        at += 10.0;
    }
    Capture {
        sent_at: sent,
        head: Some(CapturedHead {
            at: sent + 1.0,
            status: 200,
            content_type: Some("text/event-stream".into()),
        }),
        body,
        reads,
        end: CaptureEnd::Finished { at: at - 9.5 },
    }
}

/// Each process reads its own monotonic clock (a tab's `performance.now()` counts from its page
/// load, a Python worker's `perf_counter()` from its machine's boot), so their readings of one
/// instant differ; the lines' wall clocks agree.
fn clock_origin(worker: &str) -> f64 {
    match worker {
        "tab" => 3_210.5,
        "host-a:100" => 7_200_000.0,
        _ => 93_600_000.25,
    }
}

/// The line of a request `worker` sent at `sent` (ms from the run's start) whose first token
/// came `ttft` later ([`streamed`]), on the worker's own monotonic clock.
fn line(client: &str, worker: &str, index: u32, level: f64, sent: f64, ttft: f64) -> String {
    let c = streamed(clock_origin(worker) + sent, ttft);
    let vantage = Vantage {
        client: client.into(),
        worker: worker.into(),
        host: "host-a".into(),
        clock_resolution_ms: Some(0.001),
        agent: None,
    };
    let request = RequestInfo {
        index,
        api: None,
        url: "http://127.0.0.1:8080/v1/chat/completions".into(),
        model: "sim-fast".into(),
        group: format!("c={level}"),
        level: Some(level),
        turn: None,
        prompt_tokens: None,
        warmup: false,
    };
    let wall = WALL0 + sent;
    TimelineLine::new(
        if client == PROBE_CLIENT {
            "probe"
        } else {
            "locust-run"
        },
        vantage,
        request,
        RawCapture::new(c, wall),
    )
    .to_json()
        + "\n"
}

/// Two Locust workers whose load steps up every 2 s (1, 3, 5, 7, 9 requests in flight, each
/// request 1 s long, back to back), and a probe sending every 400 ms whose TTFT is
/// `probe_ttft(load)`.
fn files(probe_ttft: impl Fn(u32) -> f64, probes: u32) -> Vec<(String, String)> {
    let mut workers = [String::new(), String::new()];
    let mut index = [0u32; 2];
    let mut slot = 0usize;
    for step in 0..5u32 {
        let users = 1 + 2 * step;
        for u in 0..users {
            let w = (slot + u as usize) % 2;
            for k in 0..2u32 {
                // 1000 ms long: TTFT 959.5 ms, then 4 gaps and the end.
                let sent = 2000.0 * f64::from(step) + 1000.0 * f64::from(k);
                workers[w].push_str(&line(
                    "locust",
                    &format!("host-a:{}", 100 + w),
                    index[w],
                    8.0,
                    sent,
                    959.5,
                ));
                index[w] += 1;
            }
        }
        slot += users as usize;
    }
    let mut probe = String::new();
    for i in 0..probes {
        let sent = 100.0 + 400.0 * f64::from(i);
        let load = 1 + 2 * (sent / 2000.0).floor() as u32;
        probe.push_str(&line(PROBE_CLIENT, "tab", i, 1.0, sent, probe_ttft(load)));
    }
    vec![
        ("probe.jsonl".into(), probe),
        ("w100.jsonl".into(), workers[0].clone()),
        ("w101.jsonl".into(), workers[1].clone()),
    ]
}

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
    assert!(
        probe.title.starts_with(
            "The probe's TTFT rose from 75.0 ms at ≤3 in flight to 275 ms at ≥7 in flight (×3.7)"
        ),
        "{}",
        probe.title
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
    assert!(
        probe.title.starts_with("The probe's TTFT held under load"),
        "{}",
        probe.title
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
