//! The runs of the core's `tests/it/user_figures.rs` (time to second token, per-user output and
//! prefill tokens/s) and of the share crate's `tests/it/travels.rs` module of that name:
//! streamed requests with known arrivals, with or without the usage that reports prompt tokens.

use ttft_core::metrics::MetricsConfig;
use ttft_core::report::{EndpointInfo, Report, RequestRecord};
use ttft_core::timeline::{RequestRecorder, RequestTimeline};

/// A streamed chat request: one content chunk per arrival at `arrivals` (ms from t0), then its
/// end at `end` (the finish chunk, a usage chunk when `prompt` is given, `[DONE]`). The usage
/// reports `prompt` prompt tokens and one completion token per arrival; without it the tokens
/// are the studio's estimate (one per chunk).
pub fn timeline(arrivals: &[f64], end: f64, prompt: Option<u64>) -> RequestTimeline {
    let mut r = RequestRecorder::new(0.0, None, None);
    r.on_headers(
        arrivals.first().map_or(1.0, |a| a * 0.5),
        200,
        Some("text/event-stream"),
    );
    for (i, at) in arrivals.iter().enumerate() {
        let chunk = format!(
            "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"w{i} \"}}}}]}}\n\n"
        );
        r.on_read(*at, chunk.as_bytes());
    }
    let usage = prompt.map_or(String::new(), |p| {
        format!(
            "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{{\"prompt_tokens\":{p},\"completion_tokens\":{},\"total_tokens\":{}}}}}\n\n",
            arrivals.len(),
            p + arrivals.len() as u64
        )
    });
    let tail = format!(
        "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"stop\"}}]}}\n\n{usage}data: [DONE]\n\n"
    );
    r.on_read(end, tail.as_bytes());
    r.finish(end)
}

/// [`timeline`] as a measured request of group `c=1`, sent at `start_ms`.
pub fn record(
    index: u32,
    start_ms: f64,
    arrivals: &[f64],
    end: f64,
    prompt: Option<u64>,
) -> RequestRecord {
    let tl = timeline(arrivals, end, prompt);
    let mut r =
        RequestRecord::from_timeline(index, "c=1".into(), None, &tl, &MetricsConfig::default());
    r.start_ms = start_ms;
    r
}

/// A run of `n` requests, one after another: request `i`'s first token at `ttft_ms` plus up to
/// 30 % more (spread by `i`), its second `first_gap_ms` (up to twice that) later, then six more
/// every `gap_ms` (± 20 %), its stream ending 5 ms after its last token; its usage reports
/// `prompt` prompt tokens when given.
pub fn run(
    title: &str,
    n: u32,
    (ttft_ms, first_gap_ms, gap_ms): (f64, f64, f64),
    prompt: Option<u64>,
) -> Report {
    // A fixed spread by index (golden-ratio steps): every value of a run differs, no two
    // runs of different sizes share a pattern.
    let spread = |i: u32, k: f64| (f64::from(i) * 0.618_034 * k).fract();
    let records = (0..n)
        .map(|i| {
            let mut at = ttft_ms * (1.0 + 0.3 * spread(i, 1.0));
            let mut arrivals = vec![at];
            at += first_gap_ms * (1.0 + spread(i, 2.0));
            arrivals.push(at);
            for j in 0..6u32 {
                at += gap_ms * (0.8 + 0.4 * spread(i * 7 + j, 3.0));
                arrivals.push(at);
            }
            record(i, f64::from(i) * 1000.0, &arrivals, at + 5.0, prompt)
        })
        .collect();
    let endpoint = EndpointInfo {
        base_url: "http://127.0.0.1:8080".into(),
        model: "model-a".into(),
        dialect: None,
    };
    Report::new(title, endpoint, "chat")
        .created_at(1.7e12)
        .with_clock_resolution(Some(0.005))
        .with_settings(serde_json::json!({ "requests": n }))
        .with_requests(records)
}
