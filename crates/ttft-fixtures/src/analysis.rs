//! The synthetic requests of the core's `tests/it/analysis.rs` (and of the share crate's
//! `tests/it/legacy.rs`, which opens their older links).

use ttft_core::metrics::MetricsConfig;
use ttft_core::report::{EndpointInfo, Report, RequestRecord};
use ttft_core::timeline::{RequestRecorder, RequestTimeline};

/// A synthetic request: TTFT `ttft`, then `n` tokens every `itl` ms, one per chunk.
pub fn synthetic(ttft: f64, itl: f64, n: usize, text: &str) -> RequestTimeline {
    let mut r = RequestRecorder::new(0.0, None, None);
    r.on_headers(ttft * 0.5, 200, Some("text/event-stream"));
    r.on_read(ttft - 1.0, b"data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n");
    for i in 0..n {
        let piece = if i == 0 {
            text.to_owned()
        } else {
            format!(" w{i}")
        };
        let c = format!(
            "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{piece}\"}}}}]}}\n\n"
        );
        r.on_read(ttft + itl * i as f64, c.as_bytes());
    }
    let end = ttft + itl * (n as f64 - 1.0) + 1.0;
    r.on_read(end, format!("data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"stop\"}}],\"usage\":{{\"prompt_tokens\":10,\"completion_tokens\":{n},\"total_tokens\":0}}}}\n\ndata: [DONE]\n\n").as_bytes());
    r.finish(end)
}

/// A run ("t", model-a, 5 µs clock) of `(group, level, timeline)` requests, indexed in order.
pub fn report_of(reqs: Vec<(String, Option<f64>, RequestTimeline)>) -> Report {
    let cfg = MetricsConfig::default();
    let endpoint = EndpointInfo {
        base_url: "http://127.0.0.1:1".into(),
        model: "model-a".into(),
        dialect: None,
    };
    Report::new("t", endpoint, "chat")
        .with_clock_resolution(Some(0.005))
        .with_settings(serde_json::json!({}))
        .with_requests(
            reqs.into_iter()
                .enumerate()
                .map(|(i, (group, level, tl))| {
                    RequestRecord::from_timeline(i as u32, group, level, &tl, &cfg)
                })
                .collect(),
        )
}
