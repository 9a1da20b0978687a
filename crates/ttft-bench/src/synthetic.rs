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

/// `n` requests resampled from a real run (`template`, recorded from the reference endpoint):
/// each takes a random successful request's group, text pieces and token count, a TTFT drawn
/// from the run's TTFTs and every gap drawn independently from that request's own gaps, and
/// is recorded through the real measurement path. Real jitter, no repeated byte patterns (a
/// tiled copy would flatter a compressor).
pub fn resampled_report(template: &Report, n: usize, seed: u64) -> Report {
    let mut rng = Rng(seed.max(1));
    let pool: Vec<&RequestRecord> = template
        .measured()
        .filter(|r| r.outcome.is_ok() && r.replay.len() > 1 && r.metrics.ttft_ms.is_some())
        .collect();
    assert!(
        !pool.is_empty(),
        "the template run has no successful streamed request"
    );
    let ttfts: Vec<f64> = pool.iter().filter_map(|r| r.metrics.ttft_ms).collect();
    let cfg = MetricsConfig::default();
    let pick = |rng: &mut Rng, len: usize| (rng.next() * len as f64) as usize % len;
    let mut requests = Vec::with_capacity(n);
    for i in 0..n {
        let t = pool[pick(&mut rng, pool.len())];
        let gaps: Vec<f64> = t
            .replay
            .windows(2)
            .map(|w| w[1].at_ms - w[0].at_ms)
            .filter(|g| *g > 0.0)
            .collect();
        let ttft = ttfts[pick(&mut rng, ttfts.len())];
        let mut rec = RequestRecorder::new(0.0, None, None);
        rec.on_headers(
            t.metrics.ttfb_ms.unwrap_or(ttft * 0.5).min(ttft),
            200,
            Some("text/event-stream"),
        );
        let mut at = ttft;
        for (k, piece) in t.replay.iter().enumerate() {
            if k > 0 && !gaps.is_empty() {
                at += gaps[pick(&mut rng, gaps.len())];
            }
            let text = serde_json::to_string(&piece.text).expect("text serializes");
            let field = if piece.kind == 'r' {
                "reasoning_content"
            } else {
                "content"
            };
            rec.on_read(
                at,
                format!(
                    "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"{field}\":{text}}}}}]}}\n\n"
                )
                .as_bytes(),
            );
        }
        let end = at + 0.3;
        rec.on_read(end, format!("data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"length\"}}],\"usage\":{{\"prompt_tokens\":{},\"completion_tokens\":{},\"total_tokens\":0}}}}\n\ndata: [DONE]\n\n", t.metrics.prompt_tokens.unwrap_or(0), t.metrics.output_tokens).as_bytes());
        let tl = rec.finish(end + 0.2);
        requests.push(RequestRecord {
            start_ms: i as f64 * 7.0 + rng.next(),
            browser_queue_ms: t.browser_queue_ms,
            protocol: t.protocol.clone(),
            ..RequestRecord::from_timeline(i as u32, t.group.clone(), t.level, &tl, &cfg)
        });
    }
    Report::new(
        format!("{n} requests resampled from {}", template.title),
        template.endpoint.clone(),
        template.scenario.clone(),
    )
    .created_at(template.created_unix_ms)
    .with_clock_resolution(template.clock_resolution_ms)
    .with_settings(template.settings.clone())
    .with_requests(requests)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ttft_core::run_stats::RunStats;
    use ttft_share::{ShareOptions, decode, encode};

    #[test]
    fn resampled_reports_keep_the_template_s_timings() {
        let template = synthetic_report(20, 30, 3);
        let report = resampled_report(&template, 200, 5);
        assert_eq!(report.requests.len(), 200);
        let (a, b) = (report.aggregates(), template.aggregates());
        let (ai, bi) = (a.itl.unwrap(), b.itl.unwrap());
        // Gaps come from the template's: the same range, a similar middle.
        assert!(ai.min >= bi.min - 1e-9 && ai.max <= bi.max + 1e-9);
        assert!(
            (ai.p50 - bi.p50).abs() < 0.2 * bi.p50,
            "{} vs {}",
            ai.p50,
            bi.p50
        );
        let (at, bt) = (a.ttft.unwrap(), b.ttft.unwrap());
        assert!(at.min >= bt.min - 1e-9 && at.max <= bt.max + 1e-9);
    }

    #[test]
    fn synthetic_reports_share_and_reopen() {
        for n in [100, 1000] {
            let report = synthetic_report(n, 100, 11);
            let link = encode(&report, &ShareOptions::default());
            let back = decode(&link.text).unwrap();
            eprintln!(
                "{n}: {} chars, {} requests kept, gaps for {}",
                link.text.len(),
                link.requests_kept,
                link.gaps_kept_for
            );
            assert_eq!(back.aggregates().count, report.aggregates().count);
        }
    }
}
