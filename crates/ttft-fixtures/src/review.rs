//! The runs of the core's `tests/it/review.rs` (and their share links): streamed requests with
//! replay, and the blind votes two runs keep of each other.

use ttft_core::client_health::HealthSamples;
use ttft_core::metrics::MetricsConfig;
use ttft_core::report::{EndpointInfo, Report, RequestRecord};
use ttft_core::review::{BlindVote, Preference};
use ttft_core::slo::SloSet;
use ttft_core::timeline::RequestRecorder;

/// One streamed request as the studio records it (with replay): headers at `ttft / 2`, the
/// first word at `ttft`, then a word every `itl` ms, `words` in all.
pub fn request(index: u32, ttft: f64, itl: f64, words: usize) -> RequestRecord {
    let mut r = RequestRecorder::new(0.0, None, None);
    r.on_headers(ttft * 0.5, 200, Some("text/event-stream"));
    let mut at = ttft;
    for w in 0..words {
        let chunk = format!(
            "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\" w{w}\"}}}}]}}\n\n"
        );
        r.on_read(at, chunk.as_bytes());
        at += itl;
    }
    let end = at - itl + 1.0;
    r.on_read(end, b"data: [DONE]\n\n");
    let tl = r.finish(end);
    RequestRecord::from_timeline(index, "chat".into(), None, &tl, &MetricsConfig::default())
}

/// A run titled `title`, made at `created`, of requests `(index, ttft)` (50 ms per word, 20 words).
pub fn run(title: &str, created: f64, requests: &[(u32, f64)]) -> Report {
    Report::new(title, EndpointInfo::default(), "chat")
        .created_at(created)
        .with_requests(
            requests
                .iter()
                .map(|&(i, ttft)| request(i, ttft, 50.0, 20))
                .collect(),
        )
}

/// A vote at `at` (unix ms) kept by both runs, each from its own side: for `a` (`Some(true)`),
/// for `b` (`Some(false)`) or the same (`None`).
pub fn vote(a: &mut Report, b: &mut Report, at: f64, for_a: Option<bool>) {
    let mk = |other: &Report, p| BlindVote {
        at_unix_ms: at,
        opponent: other.title.clone(),
        opponent_created_unix_ms: other.created_unix_ms,
        this_request: 0,
        other_request: 0,
        preferred: p,
    };
    let (pa, pb) = match for_a {
        Some(true) => (Preference::This, Preference::Other),
        Some(false) => (Preference::Other, Preference::This),
        None => (Preference::Same, Preference::Same),
    };
    let (va, vb) = (mk(b, pa), mk(a, pb));
    a.votes.push(va);
    b.votes.push(vb);
}

/// Gives `a` a chosen SLO set (TTFT p99 ≤ 400 ms, E2E p50 ≤ 9 s) and the client-health verdict of
/// a run whose page once lagged 300 ms behind its 50 ms timer.
pub fn judge(a: &mut Report) {
    a.slo = SloSet::parse("ttft p99 <= 400ms, e2e p50 <= 9000ms").unwrap();
    let samples = HealthSamples {
        lag: vec![(100.0, 2.0), (150.0, 300.0)],
        timer_period_ms: 50.0,
        hidden: vec![],
        run_ms: 2000.0,
    };
    a.client_health = Some(ttft_core::client_health::assess(a, &samples));
}
