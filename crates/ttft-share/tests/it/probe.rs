//! A probe under load through a share link (the run of `ttft-core`'s `tests/probe.rs`: a browser
//! probe's timeline merged with two Locust workers' files): the link keeps each request's client
//! and the probe's figures, its chart and its finding; it is shorter than the same run's link
//! made before links carried clients (`legacy.rs` opens that one).

use ttft_core::capture::{Capture, CaptureEnd, CapturedHead};
use ttft_core::diagnosis::diagnose;
use ttft_core::probe::{PROBE_CLIENT, probe_under_load};
use ttft_core::run_stats::RunStats;
use ttft_core::timeline::Read;
use ttft_core::timeline_file::{
    MergeOptions, RawCapture, RequestInfo, TimelineLine, Vantage, merge_files,
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
