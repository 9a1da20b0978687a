//! Synthetic reports with realistic shape (jittered TTFT and gaps, prose tokens, usage), built
//! through the real measurement path (SSE bytes → recorder → metrics), for benchmarks of chart
//! rendering and share-link size at sizes no quick browser run reaches.

use ttft_core::metrics::MetricsConfig;
use ttft_core::report::{EndpointInfo, Report, RequestRecord};
use ttft_core::timeline::RequestRecorder;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

const WORDS: &[&str] = &[
    " the",
    " cache",
    " decode",
    " step",
    " reads",
    " every",
    " weight",
    " once",
    ",",
    " and",
    " batching",
    " keeps",
    " the",
    " GPU",
    " busy",
    ".",
    " Latency",
    " grows",
    " with",
    " load",
];

/// `n` chat requests of `tokens` tokens each, at concurrency levels cycling through 1–8.
pub fn synthetic_report(n: usize, tokens: usize, seed: u64) -> Report {
    let mut rng = Rng(seed.max(1));
    let cfg = MetricsConfig::default();
    let mut requests = Vec::with_capacity(n);
    for i in 0..n {
        let level = [1.0, 2.0, 4.0, 8.0][i % 4];
        let mut rec = RequestRecorder::new(0.0, None, None);
        let ttft = 180.0 + 40.0 * level + 60.0 * rng.next();
        rec.on_headers(ttft * 0.3, 200, Some("text/event-stream"));
        let mut at = ttft;
        for k in 0..tokens {
            let word = WORDS[(rng.next() * WORDS.len() as f64) as usize % WORDS.len()];
            let chunk = format!(
                "data: {{\"id\":\"c{i}\",\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{word}\"}}}}]}}\n\n"
            );
            rec.on_read(at, chunk.as_bytes());
            let stall = if rng.next() < 0.002 { 400.0 } else { 0.0 };
            at += 18.0 + 2.0 * level + 6.0 * rng.next() + 0.01 * k as f64 + stall;
        }
        rec.on_read(at, format!("data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"length\"}}],\"usage\":{{\"prompt_tokens\":{},\"completion_tokens\":{tokens},\"total_tokens\":0}}}}\n\ndata: [DONE]\n\n", 120 + (i % 7) * 40).as_bytes());
        let tl = rec.finish(at + 0.5);
        requests.push(RequestRecord {
            start_ms: i as f64 * 7.0,
            browser_queue_ms: Some(0.2 + rng.next()),
            server_request_id: Some(format!("req-{i:06}")),
            ..RequestRecord::from_timeline(i as u32, format!("c={level}"), Some(level), &tl, &cfg)
        });
    }
    let endpoint = EndpointInfo {
        base_url: "http://127.0.0.1:8080".into(),
        model: "model-a".into(),
        dialect: None,
    };
    Report::new(
        format!("synthetic · {n} requests"),
        endpoint,
        "concurrency_sweep",
    )
    .created_at(1.78e12)
    .with_clock_resolution(Some(0.005))
    .with_settings(serde_json::json!({ "synthetic": true }))
    .with_requests(requests)
}
