//! The probe under load of the core's `tests/it/probe.rs` (and its share links): a browser
//! probe's timeline file and two Locust workers' files.

use crate::WALL0;
use ttft_core::capture::{Capture, CaptureEnd, CapturedHead};
use ttft_core::probe::PROBE_CLIENT;
use ttft_core::timeline::Read;
use ttft_core::timeline_file::{RawCapture, RequestInfo, TimelineLine, Vantage};

/// Sent at `sent` (ms), first token after `ttft`, four more tokens 10 ms apart, so the request
/// lasts `ttft + 40.5` ms.
pub fn streamed(sent: f64, ttft: f64) -> Capture {
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
pub fn clock_origin(worker: &str) -> f64 {
    match worker {
        "tab" => 3_210.5,
        "host-a:100" => 7_200_000.0,
        _ => 93_600_000.25,
    }
}

/// The line of a request `worker` sent at `sent` (ms from the run's start) whose first token
/// came `ttft` later ([`streamed`]), on the worker's own monotonic clock.
pub fn line(client: &str, worker: &str, index: u32, level: f64, sent: f64, ttft: f64) -> String {
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
        choices: None,
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
pub fn files(probe_ttft: impl Fn(u32) -> f64, probes: u32) -> Vec<(String, String)> {
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
