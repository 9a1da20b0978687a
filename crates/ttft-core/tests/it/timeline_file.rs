//! Timeline files (`ttft-timeline/1`): a run exported and merged back gives the same figures;
//! worker files merge with exact counts and unique indexes; duplicates, missing requests,
//! clock trouble and bad lines are reported (with file and line); no input panics.

use proptest::prelude::*;
use ttft_core::run_stats::RunStats;
use ttft_core::timeline::Read;
use ttft_core::timeline_file::{
    FORMAT, RawCapture, RequestInfo, TimelineError, TimelineLine, Vantage, export,
    looks_like_timeline,
};
use ttft_fixtures::WALL0;
use ttft_fixtures::timeline_file::{
    DONE, browser_run, chunk, locust, merge, streamed, timed_out, worker_file,
};

fn browser() -> Vantage {
    Vantage::browser(Some(0.005), Some("test".into()))
}

#[test]
fn an_exported_run_merges_back_with_identical_figures() {
    let report = browser_run();
    let text = export(&report, &browser());
    assert_eq!(text.lines().count(), report.requests.len());
    assert!(
        text.lines()
            .all(|l| l.contains(r#""format":"ttft-timeline/1""#))
    );
    assert!(
        text.contains(r#""warmup":true"#),
        "the warm-up is exported, flagged"
    );
    assert!(text.contains(r#""url":"http://127.0.0.1:8080/v1/chat/completions""#));

    let merged = merge(&[("tab.jsonl", text)]).unwrap();
    let back = &merged.report;
    assert!(merged.bad_lines.is_empty(), "{:?}", merged.bad_lines);
    assert_eq!(
        (merged.lines_read, merged.duplicates),
        (report.requests.len(), 0)
    );
    assert!(merged.missing.is_empty() && merged.skew.is_none());
    assert_eq!(back.aggregates(), report.aggregates());
    assert_eq!(back.title, report.title);
    assert_eq!(back.endpoint, report.endpoint);
    assert_eq!(back.vantage.as_deref(), Some("browser"));
    assert_eq!(back.clock_resolution_ms, Some(0.005));
    assert_eq!(back.created_unix_ms, WALL0 + 1000.0);
    assert_eq!(back.requests.len(), report.requests.len());
    for (a, b) in report.requests.iter().zip(&back.requests) {
        assert_eq!(a.index, b.index);
        assert_eq!(a.metrics, b.metrics, "request {}", a.index);
        assert_eq!(a.outcome, b.outcome);
        assert_eq!(a.replay, b.replay);
        assert_eq!(
            (&a.group, a.level, a.warmup, a.start_ms),
            (&b.group, b.level, b.warmup, b.start_ms)
        );
        assert_eq!(
            (&a.server_request_id, &a.protocol, a.browser_queue_ms),
            (&b.server_request_id, &b.protocol, b.browser_queue_ms)
        );
        assert_eq!(a.sent_epoch_ms, b.sent_epoch_ms);
        assert_eq!(a.raw, b.raw);
    }
    // Exporting the merged run again gives the same lines.
    let again = export(back, &browser());
    assert_eq!(again, export(&report, &browser()));
}

#[test]
fn the_report_keeps_raw_captures() {
    let report = browser_run();
    let json = report.to_json_pretty();
    assert!(json.contains("\"raw\""));
    let read = ttft_core::report::read_json(json.as_bytes()).unwrap();
    assert_eq!(read, report);
    // A record without a capture exports nothing.
    let mut bare = report.clone();
    bare.requests[0].raw = None;
    assert_eq!(
        export(&bare, &browser()).lines().count(),
        report.requests.len() - 1
    );
}

#[test]
fn two_worker_files_merge_into_one_run_with_unique_indexes() {
    let a = worker_file("host-a:101", &[0, 1, 2, 3, 4], 5000.0, WALL0);
    // Worker b's monotonic clock has another origin; its wall clock agrees (starts 32 ms later).
    let b = worker_file(
        "host-b:202",
        &[0, 1, 2],
        90_000.0,
        WALL0 - 90_000.0 + 5032.0,
    );
    let merged = merge(&[("a.jsonl", a), ("b.jsonl", b)]).unwrap();
    let r = &merged.report;
    assert_eq!(r.requests.len(), 8);
    assert_eq!(r.aggregates().count, 8);
    let mut idx: Vec<u32> = r.requests.iter().map(|q| q.index).collect();
    idx.sort_unstable();
    assert_eq!(idx, (0..8).collect::<Vec<_>>());
    assert_eq!((merged.duplicates, merged.missing.len()), (0, 0));
    assert!(merged.skew.is_none(), "{:?}", merged.skew);
    // On one time axis: a0 at 0, b0 at 32, a1 at 64, b1 at 96, …
    let starts: Vec<f64> = r.requests.iter().map(|q| q.start_ms).collect();
    assert_eq!(
        starts,
        vec![0.0, 32.0, 64.0, 96.0, 128.0, 160.0, 192.0, 256.0]
    );
    assert!(
        r.requests
            .iter()
            .all(|q| q.group == "c=16" && q.level == Some(16.0))
    );
    assert_eq!(r.vantage.as_deref(), Some("locust (2 workers on 2 hosts)"));
    assert_eq!(merged.vantages.len(), 2);
    assert_eq!(r.endpoint.base_url, "http://127.0.0.1:8080");
    assert_eq!(r.title, "run-a");
    assert_eq!(r.scenario, "chat");
    assert_eq!(r.created_unix_ms, WALL0 + 5000.0);
}

#[test]
fn a_file_imported_twice_counts_duplicates_and_keeps_each_request_once() {
    let a = worker_file("host-a:101", &[0, 1, 2, 3], 5000.0, WALL0);
    let once = merge(&[("a.jsonl", a.clone())]).unwrap();
    let twice = merge(&[("a.jsonl", a.clone()), ("a copy.jsonl", a)]).unwrap();
    assert_eq!(twice.duplicates, 4);
    assert_eq!(twice.lines_read, 8);
    assert_eq!(twice.report.requests.len(), 4);
    assert_eq!(twice.report.aggregates(), once.report.aggregates());
    assert!(once.report.import_notes.is_empty());
    assert_eq!(
        twice.report.import_notes,
        vec![
            "4 duplicated line(s) dropped (the same worker's request read twice, e.g. a file imported twice)"
        ]
    );
}

#[test]
fn a_gap_in_a_worker_s_indexes_is_counted_as_missing() {
    let a = worker_file("host-a:101", &[0, 1, 2, 3], 5000.0, WALL0);
    // Worker b was killed: 2, 3 and 5 were in flight and lost.
    let b = worker_file("host-b:202", &[0, 1, 4, 6], 5016.0, WALL0);
    let merged = merge(&[("a.jsonl", a), ("b.jsonl", b)]).unwrap();
    assert_eq!(merged.missing, vec![("host-b:202".to_owned(), 3)]);
    assert_eq!(merged.report.requests.len(), 8, "nothing invented");
    // The report says so itself (it travels with the run).
    let notes = &merged.report.import_notes;
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with("worker host-b:202 lost 3 request(s)"),
        "{notes:?}"
    );
}

#[test]
fn clocks_that_step_or_disagree_are_flagged() {
    // b's wall clock is 60 s ahead of a's: the workers seem to start a minute apart while
    // neither ever pauses longer than 64 ms.
    let a = worker_file("host-a:101", &[0, 1, 2, 3], 5000.0, WALL0);
    let b = worker_file("host-b:202", &[0, 1, 2, 3], 5000.0, WALL0 + 60_000.0);
    let skew = merge(&[("a", a.clone()), ("b", b)]).unwrap().skew.unwrap();
    assert_eq!(skew.start_spread_ms, Some(60_000.0));
    assert!(skew.stepped.is_empty());
    assert!(skew.message.contains("60.0 s"), "{}", skew.message);
    // 4 s apart: within the tolerance, not flagged.
    let c = worker_file("host-c:303", &[0, 1, 2, 3], 5000.0, WALL0 + 4_000.0);
    assert!(merge(&[("a", a.clone()), ("c", c)]).unwrap().skew.is_none());
    // 6 s apart in a slow run whose workers pause 12.8 s between requests: not flagged.
    let slow_a = worker_file("host-a:101", &[0, 200], 5000.0, WALL0);
    let slow_b = worker_file("host-b:202", &[0, 200], 5000.0, WALL0 + 6_000.0);
    assert!(
        merge(&[("a", slow_a), ("b", slow_b)])
            .unwrap()
            .skew
            .is_none()
    );
    // A wall clock stepped by 200 ms between two requests of one worker.
    let mut lines: Vec<TimelineLine> = a.lines().map(|l| TimelineLine::parse(l).unwrap()).collect();
    lines[2].capture.sent_wall_ms += 200.0;
    lines[3].capture.sent_wall_ms += 200.0;
    let stepped: String = lines.iter().map(|l| l.to_json() + "\n").collect();
    let skew = merge(&[("a", stepped)]).unwrap().skew.unwrap();
    assert_eq!(skew.stepped, vec![("host-a:101".to_owned(), 200.0)]);
    assert_eq!(skew.start_spread_ms, None);
}

#[test]
fn bad_lines_are_reported_with_file_and_line_and_the_others_kept() {
    let good = worker_file("host-a:101", &[0, 1, 2], 5000.0, WALL0);
    let mut good_lines = good.lines().map(str::to_owned);
    let first = good_lines.next().unwrap();
    let second = good_lines.next().unwrap();
    let third = good_lines.next().unwrap();
    let line: serde_json::Value = serde_json::from_str(&third).unwrap();
    let wrong_format = {
        let mut v = line.clone();
        v["format"] = "ttft-timeline/2".into();
        v.to_string()
    };
    let short_reads = {
        let mut v = line.clone();
        v["reads"][0][1] = 1.into();
        v.to_string()
    };
    let bad_b64 = {
        let mut v = line.clone();
        v.as_object_mut().unwrap().remove("body");
        v["body_b64"] = "not base64 at all!".into();
        v.to_string()
    };
    // A body that is not UTF-8 travels as body_b64 and is kept: its bytes reach the core.
    let mut latin1 = streamed(9000.0, 100.0, 20.0);
    latin1.body.extend_from_slice(b": caf\xe9\n\n");
    latin1.reads.push(Read {
        at: 9300.0,
        bytes: 8,
    });
    let raw = RawCapture::new(latin1.clone(), WALL0 + 9000.0);
    assert!(raw.body.is_none() && raw.body_b64.is_some());
    assert_eq!(raw.to_capture().unwrap(), latin1);
    let mut parsed = TimelineLine::parse(&third).unwrap();
    parsed.request.index = 3;
    parsed.capture = raw;
    let not_utf8 = parsed.to_json();
    assert!(not_utf8.contains("\"body_b64\"") && !not_utf8.contains("\"body\""));
    let file = [
        first.as_str(),
        "{\"format\":\"ttft-timeline/1\",", // cut
        "",                                 // blank lines are skipped
        &second,
        &wrong_format,
        r#"{"version":1,"requests":[]}"#,
        &short_reads,
        &bad_b64,
        &not_utf8,
    ]
    .join("\n");
    let merged = merge(&[("w.jsonl", file)]).unwrap();
    let bad: Vec<(usize, &str)> = merged
        .bad_lines
        .iter()
        .map(|e| (e.line, e.message.as_str()))
        .collect();
    assert_eq!(
        bad.iter().map(|b| b.0).collect::<Vec<_>>(),
        vec![2, 5, 6, 7, 8]
    );
    assert!(bad[0].1.starts_with("not JSON"), "{}", bad[0].1);
    assert!(bad[1].1.contains("ttft-timeline/2"), "{}", bad[1].1);
    assert!(bad[2].1.contains("no \"format\""), "{}", bad[2].1);
    assert!(bad[3].1.contains("record the run again"), "{}", bad[3].1);
    assert!(bad[4].1.contains("base64"), "{}", bad[4].1);
    assert!(merged.bad_lines.iter().all(|e| e.file == "w.jsonl"));
    assert!(merged.bad_lines[0].to_string().starts_with("w.jsonl:2: "));
    assert_eq!(merged.lines_read, 3);
    assert_eq!(merged.report.requests.len(), 3);
    assert_eq!(merged.missing, vec![("host-a:101".to_owned(), 1)]);
    let kept = merged
        .report
        .requests
        .iter()
        .find(|r| r.raw.as_ref().is_some_and(|c| c.body_b64.is_some()))
        .expect("the non-UTF-8 line is kept");
    assert_eq!(kept.raw.as_ref().unwrap().to_capture().unwrap(), latin1);
}

#[test]
fn a_file_without_one_good_line_or_no_file_is_an_error_that_says_what_a_file_holds() {
    let good = worker_file("host-a:101", &[0], 5000.0, WALL0);
    let err = merge(&[("a.jsonl", good), ("notes.txt", "hello\n\n".into())]).unwrap_err();
    assert!(matches!(&err, TimelineError::NoLines { file, .. } if file == "notes.txt"));
    let message = err.to_string();
    assert!(
        message.contains("notes.txt") && message.contains(FORMAT),
        "{message}"
    );
    assert!(message.contains("not JSON"), "{message}");
    assert!(matches!(
        merge(&[("empty.jsonl", String::new())]),
        Err(TimelineError::NoLines {
            first_problem: None,
            ..
        })
    ));
    assert_eq!(merge(&[]).unwrap_err(), TimelineError::NoFiles);
}

#[test]
fn a_line_reads_back_exactly_and_both_bodies_are_refused() {
    let line = TimelineLine::new(
        "r",
        locust("h:1", "h"),
        RequestInfo {
            index: 7,
            api: None,
            url: "http://x/v1/messages".into(),
            model: "m".into(),
            group: "turn 3".into(),
            level: Some(3.0),
            turn: Some(3),
            prompt_tokens: None,
            warmup: false,
            choices: None,
        },
        RawCapture::new(timed_out(10.125), WALL0 + 0.001),
    );
    let json = line.to_json();
    assert!(!json.contains('\n'));
    assert_eq!(TimelineLine::parse(&json).unwrap(), line);
    assert_eq!(line.to_capture().unwrap(), timed_out(10.125));
    let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
    v["body_b64"] = "".into();
    assert_eq!(
        TimelineLine::parse(&v.to_string()),
        Err(TimelineError::TwoBodies)
    );
    // Unknown fields are ignored; optional ones may be absent.
    let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
    v["recorder_extra"] = 1.into();
    for k in ["server_request_id", "protocol", "browser_queue_ms"] {
        v.as_object_mut().unwrap().remove(k);
    }
    v["request"].as_object_mut().unwrap().remove("turn");
    let back = TimelineLine::parse(&v.to_string()).unwrap();
    assert_eq!(back.request.turn, None);
    assert_eq!(back.capture, line.capture);
}

proptest! {
    #[test]
    fn garbage_never_panics(
        bytes in proptest::collection::vec(any::<u8>(), 0..400),
        cut in 0usize..2000,
        flip in 0usize..2000,
    ) {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let _ = merge(&[("garbage", text.clone())]);
        // A real file cut or with one byte changed anywhere.
        let real = worker_file("host-a:101", &[0, 1], 5000.0, WALL0);
        let mut damaged = real.clone().into_bytes();
        let at = flip % damaged.len();
        damaged[at] = bytes.first().copied().unwrap_or(b'"');
        let damaged = String::from_utf8_lossy(&damaged).into_owned();
        let cut_text: String = real.chars().take(cut % real.len()).collect();
        for t in [damaged, cut_text, format!("{real}{text}")] {
            if let Ok(m) = merge(&[("x", t)]) {
                prop_assert!(m.report.requests.len() <= 2 + usize::from(!text.is_empty()));
                let _ = m.report.aggregates();
            }
        }
    }

    #[test]
    fn any_values_in_a_well_formed_line_never_panic(
        index in any::<u32>(),
        level in proptest::option::of(any::<f64>()),
        times in proptest::collection::vec(
            prop_oneof![-1e300f64..1e300, Just(f64::MAX), Just(-f64::MAX), Just(0.0), 0.0f64..1e4],
            6,
        ),
        cuts in proptest::collection::vec(any::<usize>(), 0..6),
        status in any::<u16>(),
        text in ".{0,40}",
        end in 0usize..3,
    ) {
        // A body the reads add up to, cut anywhere, read at any times.
        let body = chunk("x") + &text + "\n\n" + DONE;
        let mut at: Vec<usize> = cuts.iter().map(|c| c % (body.len() + 1)).collect();
        at.push(body.len());
        at.sort_unstable();
        let mut last = 0;
        let mut reads = Vec::new();
        for (k, c) in at.into_iter().enumerate() {
            reads.push(serde_json::json!([times[k % times.len()], c - last]));
            last = c;
        }
        let end = match end {
            0 => serde_json::json!({"kind": "finished", "at_ms": times[3]}),
            1 => serde_json::json!({"kind": "http_error", "at_ms": times[3], "body": text}),
            _ => serde_json::json!({"kind": "failed", "at_ms": times[3],
                                    "outcome": {"kind": "network_error", "message": text}}),
        };
        let line = serde_json::json!({
            "format": FORMAT, "run": "r",
            "vantage": {"client": "x", "worker": "w", "host": "h"},
            "request": {"index": index, "url": "u", "model": "m", "group": "g",
                        "level": level.filter(|l| l.is_finite())},
            "sent_wall_ms": times[0], "sent_ms": times[1],
            "head": {"at_ms": times[2], "status": status, "content_type": "text/event-stream"},
            "reads": reads, "body": body, "end": end,
        });
        let other = worker_file("host-a:101", &[0], 5000.0, WALL0);
        let m = merge(&[("x", line.to_string()), ("y", other)]);
        prop_assert!(m.is_ok(), "{:?}", m.err());
        let m = m.unwrap();
        prop_assert_eq!(m.report.requests.len(), 2);
        let _ = m.report.aggregates();
        let _ = export(&m.report, &browser());
    }
}

#[test]
fn an_importer_tells_timeline_files_from_reports() {
    let timeline = export(&browser_run(), &browser());
    assert!(looks_like_timeline(&timeline));
    assert!(looks_like_timeline(&format!("\n  \n{timeline}")));
    assert!(!looks_like_timeline(&browser_run().to_json_pretty()));
    assert!(!looks_like_timeline(
        &serde_json::to_string(&browser_run()).unwrap()
    ));
    assert!(!looks_like_timeline(r#"{"format":"something-else/1"}"#));
    assert!(!looks_like_timeline(""));
}

#[test]
fn a_master_s_ledger_counts_what_a_killed_worker_never_wrote() {
    let a = worker_file("host-a:101", &[0, 1, 2, 3], 5000.0, WALL0);
    // Worker b was killed with 0..=5 started: its last two (4 and 5) left no line, and no gap
    // in its indexes shows them.
    let b = worker_file("host-b:202", &[0, 1, 2, 3], 5016.0, WALL0);
    let without = merge(&[("a.jsonl", a.clone()), ("b.jsonl", b.clone())]).unwrap();
    assert!(without.missing.is_empty());
    let ledger = serde_json::json!({
        "format": "ttft-ledger/1", "run": "run-a",
        "started": {"host-a:101": 4, "host-b:202": 6, "host-c:303": 2}
    })
    .to_string();
    assert!(
        looks_like_timeline(&ledger),
        "an importer hands it to the merge"
    );
    let merged = merge(&[
        ("a.jsonl", a),
        ("run-a-master-h-1.ledger.json", ledger.clone()),
        ("b.jsonl", b),
    ])
    .unwrap();
    assert_eq!(
        merged.missing,
        vec![("host-b:202".to_owned(), 2), ("host-c:303".to_owned(), 2)],
        "b lost its last two, c (no file at all) everything it started"
    );
    assert_eq!(merged.report.requests.len(), 8, "nothing invented");
    assert_eq!(merged.report.import_notes.len(), 2);
    assert!(
        matches!(
            merge(&[("run-a-master-h-1.ledger.json", ledger)]),
            Err(TimelineError::OnlyLedgers)
        ),
        "a ledger alone holds no request"
    );
}

#[test]
fn comparing_runs_of_different_clients_says_what_each_includes() {
    use ttft_core::compare::vantage_note;
    assert_eq!(vantage_note(&[("a", None), ("b", None)]), None);
    let same = Some("locust (2 workers on 1 host)");
    assert_eq!(vantage_note(&[("a", same), ("b", same)]), None);
    let note = vantage_note(&[("browser run", None), ("locust run", same)]).unwrap();
    assert!(
        note.contains("browser run: the browser (this studio)")
            && note.contains("locust run: locust (2 workers on 1 host)"),
        "{note}"
    );
    assert!(
        note.contains("the GIL") && note.contains("event loop"),
        "{note}"
    );
}

#[test]
fn planned_sends_travel_as_the_lines_lag() {
    // The measured requests of the browser's run were planned 0.5–4.5 ms before they went;
    // the warm-up had no plan.
    let mut report = browser_run();
    for (k, r) in report.requests.iter_mut().enumerate().skip(1) {
        r.planned_ms = Some(r.start_ms - 0.5 - (k % 5) as f64);
    }
    let text = export(&report, &browser());
    let lines: Vec<TimelineLine> = text
        .lines()
        .map(|l| TimelineLine::parse(l).unwrap())
        .collect();
    assert!(lines[0].planned_ms.is_none() && !text.lines().next().unwrap().contains("planned_ms"));
    for (r, line) in report.requests.iter().zip(&lines).skip(1) {
        // On the line's own clock: its lag is the record's.
        let lag = line.capture.sent_ms - line.planned_ms.unwrap();
        assert!((lag - (r.start_ms - r.planned_ms.unwrap())).abs() < 1e-9);
    }
    let back = merge(&[("tab.jsonl", text)]).unwrap().report;
    for (a, b) in report.requests.iter().zip(&back.requests) {
        match (a.planned_ms, b.planned_ms) {
            (Some(x), Some(y)) => assert!((x - y).abs() < 1e-6, "{x} vs {y}"),
            (x, y) => assert_eq!(x, y),
        }
    }
    // A line from before planned sends reads as unplanned.
    let old = worker_file("host-a:1", &[0], 500.0, WALL0);
    let merged = merge(&[("old.jsonl", old)]).unwrap().report;
    assert_eq!(merged.requests[0].planned_ms, None);
}
