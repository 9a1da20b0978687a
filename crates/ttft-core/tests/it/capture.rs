//! A capture (bytes + times from whichever client stamped them) replays into the same timeline
//! as feeding the recorder read by read; damaged captures are refused; a report says which
//! transports its requests used.

use proptest::prelude::*;
use ttft_core::capture::{Capture, CaptureEnd, CapturedHead};
use ttft_core::metrics::MetricsConfig;
use ttft_core::report::{EndpointInfo, Report, RequestRecord};
use ttft_core::run_stats::RunStats;
use ttft_core::timeline::{Outcome, Read, RequestRecorder};

fn stream(tokens: usize) -> Vec<u8> {
    let mut s =
        String::from("data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}\n\n");
    for i in 0..tokens {
        s.push_str(&format!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"t{i} \"}}}}]}}\n\n"
        ));
    }
    s.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
    s.into_bytes()
}

/// Splits `body` at `cuts` (sorted, deduplicated offsets) into reads 1.5 ms apart from 40 ms.
fn capture_of(body: &[u8], cuts: &[usize], end: CaptureEnd) -> Capture {
    let mut reads = Vec::new();
    let mut last = 0;
    for (k, &c) in cuts.iter().chain(std::iter::once(&body.len())).enumerate() {
        if c > last {
            reads.push(Read {
                at: 40.0 + 1.5 * k as f64,
                bytes: (c - last) as u32,
            });
            last = c;
        }
    }
    Capture {
        sent_at: 10.0,
        head: Some(CapturedHead {
            at: 12.0,
            status: 200,
            content_type: Some("text/event-stream".into()),
        }),
        body: body.to_vec(),
        reads,
        end,
    }
}

proptest! {
    #[test]
    fn replaying_a_capture_equals_feeding_the_reads_as_they_came(
        tokens in 0usize..30,
        raw_cuts in proptest::collection::vec(0usize..4000, 0..40),
    ) {
        let body = stream(tokens);
        let mut cuts: Vec<usize> = raw_cuts.into_iter().filter(|c| *c < body.len()).collect();
        cuts.sort_unstable();
        cuts.dedup();
        let end_at = 500.0;
        let capture = capture_of(&body, &cuts, CaptureEnd::Finished { at: end_at });
        let mut rec = RequestRecorder::new(10.0, None, None);
        rec.on_headers(12.0, 200, Some("text/event-stream"));
        let mut offset = 0;
        for r in &capture.reads {
            rec.on_read(r.at, &body[offset..offset + r.bytes as usize]);
            offset += r.bytes as usize;
        }
        let direct = rec.finish(end_at);
        let replayed = capture.record(None).unwrap();
        prop_assert_eq!(&replayed, &direct);
        let m = RequestRecord::from_timeline(0, "c=1".into(), None, &replayed, &MetricsConfig::default());
        prop_assert_eq!(m.metrics.output_tokens as usize, tokens);
    }
}

#[test]
fn a_capture_whose_reads_do_not_fit_its_body_is_refused_with_advice() {
    let body = stream(3);
    let mut c = capture_of(&body, &[10, 50], CaptureEnd::Finished { at: 90.0 });
    c.reads[1].bytes += 7;
    let err = c.record(None).unwrap_err();
    assert_eq!(err.body_bytes, body.len() as u64);
    assert_eq!(err.read_bytes, body.len() as u64 + 7);
    assert!(err.to_string().contains("record the run again"), "{err}");
}

#[test]
fn http_errors_and_failures_keep_what_was_read() {
    let mut c = capture_of(
        b"",
        &[],
        CaptureEnd::HttpError {
            at: 20.0,
            body: r#"{"error":{"message":"model not found"}}"#.into(),
        },
    );
    c.head.as_mut().unwrap().status = 404;
    let tl = c.record(None).unwrap();
    match &tl.outcome {
        Outcome::HttpError { status, message } => {
            assert_eq!(*status, 404);
            assert!(message.contains("model not found"), "{message}");
        }
        o => panic!("expected an HTTP error, got {o:?}"),
    }

    let body = stream(5);
    let half = body.len() / 2;
    let mut c = capture_of(
        &body[..half],
        &[half / 2],
        CaptureEnd::Failed {
            at: 70.0,
            outcome: Outcome::Aborted {
                message: "cancelled".into(),
            },
        },
    );
    c.head.as_mut().unwrap().status = 200;
    let tl = c.record(None).unwrap();
    assert_eq!(tl.outcome.kind(), "aborted");
    assert_eq!(tl.bytes(), half as u64);
    assert!(
        tl.events.iter().any(|e| e.event.is_output()),
        "partial output kept"
    );
}

#[test]
fn a_report_names_the_transports_its_measured_requests_used() {
    let tl = capture_of(&stream(2), &[], CaptureEnd::Finished { at: 60.0 })
        .record(None)
        .unwrap();
    let record = |protocol: Option<&str>, warmup: bool| RequestRecord {
        protocol: protocol.map(str::to_owned),
        warmup,
        ..RequestRecord::from_timeline(0, "c=1".into(), None, &tl, &MetricsConfig::default())
    };
    let endpoint = EndpointInfo {
        base_url: "https://127.0.0.1:8443".into(),
        model: "m".into(),
        dialect: None,
    };
    let report = Report::new("r", endpoint, "chat").with_requests(vec![
        record(Some("http/1.1"), true),
        record(Some("h2"), false),
        record(Some("h2"), false),
        record(None, false),
        record(Some("http/1.1"), false),
    ]);
    assert_eq!(
        report.transports(),
        vec![
            ("HTTP/2".to_owned(), 2),
            ("HTTP/1.1".to_owned(), 1),
            ("unknown".to_owned(), 1)
        ]
    );
}
