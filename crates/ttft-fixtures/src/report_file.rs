//! The run of the core's `tests/it/report_file.rs` (its share links: the share crate's
//! `tests/it/travels.rs`): one run of plain streamed requests, with a title that needs quoting.

use ttft_core::metrics::MetricsConfig;
use ttft_core::report::{EndpointInfo, Report, RequestRecord};
use ttft_core::timeline::RequestRecorder;

/// A request whose first token arrives at `ttft` ms, then `n - 1` more every `itl` ms.
pub fn record(index: u32, ttft: f64, itl: f64, n: usize) -> RequestRecord {
    let mut r = RequestRecorder::new(0.0, None, None);
    r.on_headers(1.0, 200, Some("text/event-stream"));
    for i in 0..n {
        let chunk = format!(
            "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"w{i} \"}}}}]}}\n\n"
        );
        r.on_read(ttft + itl * i as f64, chunk.as_bytes());
    }
    let end = ttft + itl * n as f64;
    r.on_read(end, b"data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
    let tl = r.finish(end);
    RequestRecord::from_timeline(index, "c=1".into(), None, &tl, &MetricsConfig::default())
}

/// A run of `records` ("a, \"quoted\" run", model-a), made at 1.7e12 ms with a 5 µs clock.
pub fn report(records: Vec<RequestRecord>) -> Report {
    let endpoint = EndpointInfo {
        base_url: "http://127.0.0.1:8080".into(),
        model: "model-a".into(),
        dialect: None,
    };
    Report::new("a, \"quoted\" run", endpoint, "chat")
        .created_at(1.7e12)
        .with_clock_resolution(Some(0.005))
        .with_settings(serde_json::json!({"requests": records.len()}))
        .with_requests(records)
}
