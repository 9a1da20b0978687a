//! The conversations of the core's `tests/it/prompt_cache.rs` (and their share links): rounds
//! whose usage reports cached prompt tokens, or not.

use ttft_core::metrics::MetricsConfig;
use ttft_core::report::{EndpointInfo, Report, RequestRecord};
use ttft_core::timeline::{RequestRecorder, RequestTimeline};

/// A timeline of an SSE stream read as `(ms, bytes)`.
pub fn timeline(reads: &[(f64, &str)]) -> RequestTimeline {
    let mut r = RequestRecorder::new(0.0, None, None);
    r.on_headers(0.5, 200, Some("text/event-stream"));
    for (at, body) in reads {
        r.on_read(*at, body.as_bytes());
    }
    r.finish(reads.last().map_or(1.0, |x| x.0) + 1.0)
}

/// A successful request of `round` with a first token at `ttft` ms and the given usage.
pub fn round_request(
    index: u32,
    round: u32,
    ttft: f64,
    prompt: u64,
    cached: Option<u64>,
) -> RequestRecord {
    let details = cached
        .map(|c| format!(",\"prompt_tokens_details\":{{\"cached_tokens\":{c}}}"))
        .unwrap_or_default();
    let usage = format!(
        "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{{\"prompt_tokens\":{prompt},\"completion_tokens\":2,\"total_tokens\":{}{details}}}}}\n\ndata: [DONE]\n\n",
        prompt + 2
    );
    let tl = timeline(&[
        (
            ttft,
            "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Sure\"}}]}\n\n",
        ),
        (
            ttft + 20.0,
            "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" thing\"},\"finish_reason\":\"stop\"}]}\n\n",
        ),
        (ttft + 21.0, &usage),
    ]);
    RequestRecord::from_timeline(
        index,
        format!("round {round}"),
        Some(f64::from(round)),
        &tl,
        &MetricsConfig::default(),
    )
}

/// A run of `scenario` with a request per round `(ttft, prompt tokens, cached tokens)`.
pub fn conversation(scenario: &str, rounds: &[(f64, u64, Option<u64>)]) -> Report {
    let endpoint = EndpointInfo {
        base_url: "http://127.0.0.1:1".into(),
        model: "m".into(),
        dialect: None,
    };
    Report::new("cache", endpoint, scenario).with_requests(
        rounds
            .iter()
            .enumerate()
            .map(|(i, &(ttft, prompt, cached))| {
                round_request(i as u32, i as u32 + 1, ttft, prompt, cached)
            })
            .collect(),
    )
}

/// The shared-prefix conversation whose cached tokens travel in report files and links: a cold
/// first round (0 of 1600 cached), a second that hit the cache (1600 of 1700, 100 written) and a
/// third whose server reported nothing.
pub fn cached_conversation() -> Report {
    let mut r = conversation(
        "shared_prefix",
        &[
            (800.0, 1600, Some(0)),
            (60.0, 1700, Some(1600)),
            (62.0, 1800, None),
        ],
    );
    r.requests[1].metrics.cache_write_tokens = Some(100);
    r
}
