//! The captures and runs of the core's `tests/it/timeline_file.rs` (and their share links): a
//! browser's run with its raw captures kept, and Locust workers' timeline files.

use crate::WALL0;
use ttft_core::capture::{Capture, CaptureEnd, CapturedHead};
use ttft_core::metrics::MetricsConfig;
use ttft_core::report::{EndpointInfo, Report, RequestRecord};
use ttft_core::timeline::{Outcome, Read};
use ttft_core::timeline_file::{
    MergeOptions, Merged, RawCapture, RequestInfo, TimelineError, TimelineLine, Vantage,
    merge_files,
};

/// An OpenAI chat chunk (SSE event) of `text`.
pub fn chunk(text: &str) -> String {
    format!(
        "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{text}\"}}}}]}}\n\n"
    )
}

/// The last chunk (stop, usage: 12 prompt and 6 completion tokens) and `[DONE]`.
pub const DONE: &str = "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":6,\"total_tokens\":18}}\n\ndata: [DONE]\n\n";

/// A streamed answer sent at `sent` (ms, dyadic so every difference is exact): head after
/// 2 ms, the first token after `ttft`, then one read per chunk `gap` apart (some reads split
/// a chunk, one carries two), the end 0.5 ms after the last read.
pub fn streamed(sent: f64, ttft: f64, gap: f64) -> Capture {
    let pieces = [
        chunk("Sure"),
        chunk(", here"),
        chunk(" is the") + &chunk(" answer"),
        chunk(" in"),
        chunk(" full."),
        DONE.to_owned(),
    ];
    let mut body = Vec::new();
    let mut reads = Vec::new();
    let mut at = sent + ttft;
    for (k, p) in pieces.iter().enumerate() {
        let bytes = p.as_bytes();
        if k == 1 {
            // One chunk in two reads.
            let half = bytes.len() / 2;
            reads.push(Read {
                at,
                bytes: half as u32,
            });
            reads.push(Read {
                at: at + 0.25,
                bytes: (bytes.len() - half) as u32,
            });
        } else {
            reads.push(Read {
                at,
                bytes: bytes.len() as u32,
            });
        }
        body.extend_from_slice(bytes);
        at += gap;
    }
    Capture {
        sent_at: sent,
        head: Some(CapturedHead {
            at: sent + 2.0,
            status: 200,
            content_type: Some("text/event-stream".into()),
        }),
        body,
        reads,
        end: CaptureEnd::Finished { at: at + 0.5 },
    }
}

/// A request sent at `sent` (ms) answered 503 ("overloaded") after 3 ms.
pub fn http_error(sent: f64) -> Capture {
    Capture {
        sent_at: sent,
        head: Some(CapturedHead {
            at: sent + 3.0,
            status: 503,
            content_type: Some("application/json".into()),
        }),
        body: Vec::new(),
        reads: Vec::new(),
        end: CaptureEnd::HttpError {
            at: sent + 4.0,
            body: r#"{"error":{"message":"overloaded"}}"#.into(),
        },
    }
}

/// A [`streamed`] answer sent at `sent` (ms) cut after its first two reads by a timeout.
pub fn timed_out(sent: f64) -> Capture {
    let mut c = streamed(sent, 100.0, 20.0);
    // Cut after the first two reads.
    let keep: u32 = c.reads[..2].iter().map(|r| r.bytes).sum();
    c.reads.truncate(2);
    c.body.truncate(keep as usize);
    c.end = CaptureEnd::Failed {
        at: sent + 500.0,
        outcome: Outcome::Timeout {
            message: "no byte for 30 s".into(),
        },
    };
    c
}

/// A record made as the studio's pool makes it (recorder, metrics, raw capture kept), the
/// run starting at the first send (`run_start` 1000 ms).
pub fn record(
    index: u32,
    group: &str,
    level: Option<f64>,
    warmup: bool,
    c: Capture,
) -> RequestRecord {
    let tl = c.record(None).expect("a whole capture");
    RequestRecord {
        warmup,
        start_ms: c.sent_at - 1000.0,
        server_request_id: Some(format!("sim-{index:06}")),
        sent_epoch_ms: Some(WALL0 + c.sent_at),
        protocol: Some("http/1.1".into()),
        browser_queue_ms: Some(0.5),
        raw: Some(RawCapture::new(c.clone(), WALL0 + c.sent_at)),
        ..RequestRecord::from_timeline(index, group.into(), level, &tl, &MetricsConfig::default())
    }
}

/// The browser's run: a warm-up, then 5 requests at 1 and 5 at 4 in flight (one 503, one
/// timed out), raw captures kept, starting at [`WALL0`] + 1 s.
pub fn browser_run() -> Report {
    let mut requests = vec![record(
        0,
        "c=1",
        Some(1.0),
        true,
        streamed(1000.0, 90.0, 12.5),
    )];
    let mut i = 1;
    for (level, base) in [(1.0, 1200.0), (4.0, 2400.0)] {
        for k in 0..5 {
            let sent = base + 32.0 * f64::from(k);
            let c = match k {
                3 if level == 4.0 => http_error(sent),
                4 if level == 4.0 => timed_out(sent),
                _ => streamed(sent, 80.0 + 16.0 * level + f64::from(k), 10.0 + level),
            };
            requests.push(record(i, &format!("c={level}"), Some(level), false, c));
            i += 1;
        }
    }
    let endpoint = EndpointInfo {
        base_url: "http://127.0.0.1:8080".into(),
        model: "sim-fast".into(),
        dialect: None,
    };
    Report::new(
        "2026-11-30T22:41:07Z-sim-fast",
        endpoint,
        "concurrency_sweep",
    )
    .created_at(WALL0 + 1000.0)
    .with_clock_resolution(Some(0.005))
    .with_requests(requests)
}

/// A Locust worker `worker` on `host`, with Python's 1 ns clock.
pub fn locust(worker: &str, host: &str) -> Vantage {
    Vantage {
        client: "locust".into(),
        worker: worker.into(),
        host: host.into(),
        clock_resolution_ms: Some(0.000_001),
        agent: Some("locust 2.47.0, python 3.11.2".into()),
    }
}

/// A worker file: requests `indexes` of `worker`, sent 64 ms apart from `sent0` on its
/// monotonic clock, whose wall clock reads `wall_offset` + monotonic.
pub fn worker_file(worker: &str, indexes: &[u32], sent0: f64, wall_offset: f64) -> String {
    let mut out = String::new();
    for &index in indexes {
        let sent = sent0 + 64.0 * f64::from(index);
        let line = TimelineLine::new(
            "run-a",
            locust(worker, worker.split(':').next().unwrap()),
            RequestInfo {
                index,
                api: Some(ttft_core::Dialect::OpenAiChat),
                url: "http://127.0.0.1:8080/v1/chat/completions".into(),
                model: "sim-fast".into(),
                group: "c=16".into(),
                level: Some(16.0),
                turn: None,
                prompt_tokens: Some(512),
                warmup: false,
                choices: None,
            },
            RawCapture::new(streamed(sent, 100.0, 20.0), wall_offset + sent),
        );
        out.push_str(&line.to_json());
        out.push('\n');
    }
    out
}

/// The timeline files `(name, text)` merged with the default options.
pub fn merge(files: &[(&str, String)]) -> Result<Merged, TimelineError> {
    let files: Vec<(String, String)> = files
        .iter()
        .map(|(n, t)| ((*n).to_owned(), t.clone()))
        .collect();
    merge_files(&files, &MergeOptions::default())
}
