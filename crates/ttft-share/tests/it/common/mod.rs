//! What the share tests have in common: deterministic random runs recorded through the real
//! path (SSE bytes → recorder → metrics), runs on a server's shared steps and probes under load,
//! and the checks that an opened link keeps a run's headline within its precision.

#![allow(dead_code)] // Each test file uses some of these.

use ttft_core::experience::ExperienceSummary;
use ttft_core::metrics::MetricsConfig;
use ttft_core::report::{Aggregates, EndpointInfo, Report, RequestRecord};
use ttft_core::stats::Summary;
use ttft_core::timeline::RequestRecorder;

/// xorshift64*: deterministic per seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.unit() * n as f64) as usize % n.max(1)
    }
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
}

pub const WORDS: &[&str] = &[
    " the",
    " cache",
    " decode",
    "step",
    " reads",
    ",",
    " weights",
    ".",
    " 批处理",
    "让",
    " GPU",
    " busy",
    "\\n",
];

pub fn chunk(delta: &str, choice: u32) -> String {
    format!(
        "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":{choice},\"delta\":{delta}}}]}}\n\n"
    )
}

/// The kinds of request a random run mixes.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    Prose,
    Reasoning,
    Agent,
    Tools,
    TwoChoices,
    HttpError,
    Truncated,
}

/// One request recorded through the real path (SSE bytes → recorder → metrics).
pub fn request(
    rng: &mut Rng,
    index: u32,
    kind: Kind,
    level: f64,
    cfg: &MetricsConfig,
) -> RequestRecord {
    let mut rec = RequestRecorder::new(0.0, None, None);
    let ttft = 40.0 + 30.0 * level + 400.0 * rng.unit();
    let group = format!("c={level}");
    if let Kind::HttpError = kind {
        rec.on_headers(ttft, 503, Some("application/json"));
        rec.on_read(ttft + 1.0, br#"{"error":{"message":"overloaded"}}"#);
        let tl = rec.finish(ttft + 1.5);
        return RequestRecord::from_timeline(index, group, Some(level), &tl, cfg);
    }
    rec.on_headers(ttft * 0.4, 200, Some("text/event-stream"));
    rec.on_read(
        ttft * 0.5,
        chunk(r#"{"role":"assistant","content":""}"#, 0).as_bytes(),
    );
    let tokens = 5 + rng.below(60);
    let mut at = ttft;
    let gap = 8.0 + 3.0 * level;
    let usage = rng.chance(0.7);
    if let Kind::Reasoning = kind {
        for _ in 0..3 + rng.below(5) {
            rec.on_read(at, chunk(r#"{"reasoning_content":" think"}"#, 0).as_bytes());
            at += gap + 4.0 * rng.unit();
        }
    }
    if let Kind::Tools = kind {
        let parts = [
            r#"{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]}"#,
            r#"{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}"#,
            r#"{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}"#,
        ];
        for p in parts {
            rec.on_read(at, chunk(p, 0).as_bytes());
            at += gap + 4.0 * rng.unit();
        }
    } else {
        let opener = rng.chance(0.3);
        for k in 0..tokens {
            let word = if opener && k == 0 {
                "Sure, here's the answer:"
            } else if let Kind::Agent = kind {
                [
                    "{\\\"city\\\":",
                    " \\\"Paris\\\",",
                    " \\\"days\\\": 3}",
                    " ok",
                ][k.min(3)]
            } else {
                WORDS[rng.below(WORDS.len())]
            };
            let content = format!(r#"{{"content":"{word}"}}"#);
            let mut bytes = chunk(&content, 0);
            if let Kind::TwoChoices = kind {
                bytes += &chunk(&content, 1);
            }
            if usage && rng.chance(0.2) {
                // Several tokens in one read, as servers coalesce them.
                bytes += &chunk(&content, 0);
            }
            rec.on_read(at, bytes.as_bytes());
            let stall = if rng.chance(0.01) { 400.0 } else { 0.0 };
            at += gap + 6.0 * rng.unit() + stall;
        }
    }
    if let Kind::Truncated = kind {
        let tl = rec.finish(at);
        return RequestRecord::from_timeline(index, group, Some(level), &tl, cfg);
    }
    let finish = chunk(r#"{}"#, 0).replace("}}]}", "},\"finish_reason\":\"stop\"}]}");
    rec.on_read(at, finish.as_bytes());
    if usage {
        let done = format!(
            "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{{\"prompt_tokens\":{},\"completion_tokens\":{},\"total_tokens\":0}}}}\n\n",
            100 + 50 * (index % 5),
            tokens + tokens / 5
        );
        rec.on_read(at + 0.3, done.as_bytes());
    }
    rec.on_read(at + 0.4, b"data: [DONE]\n\n");
    let tl = rec.finish(at + 0.5);
    RequestRecord {
        start_ms: f64::from(index) * 13.7 + rng.unit(),
        browser_queue_ms: rng.chance(0.5).then(|| rng.unit() * 3.0),
        server_request_id: Some(format!("req-{index}-{}", rng.below(1 << 20))),
        sent_epoch_ms: Some(1.78e12 + f64::from(index)),
        protocol: Some(if rng.chance(0.5) { "h2" } else { "http/1.1" }.to_owned()),
        warmup: index == 0 && rng.chance(0.5),
        ..RequestRecord::from_timeline(index, group, Some(level), &tl, cfg)
    }
}

/// A random run: `n` requests over a sweep of levels (or multi-turn rounds), mixing kinds.
pub fn random_report(seed: u64, n: usize) -> Report {
    let mut rng = Rng(seed.max(1));
    let mut cfg = MetricsConfig::default();
    let agent = rng.chance(0.3);
    cfg.track_json = agent;
    let rounds = rng.chance(0.3);
    let requests = (0..n)
        .map(|i| {
            let level = if rounds {
                (i % 4 + 1) as f64
            } else {
                [1.0, 2.0, 4.0, 8.0][i % 4]
            };
            let kind = match rng.below(10) {
                0 => Kind::Reasoning,
                1 => Kind::Tools,
                2 => Kind::TwoChoices,
                3 => Kind::HttpError,
                4 => Kind::Truncated,
                _ if agent => Kind::Agent,
                _ => Kind::Prose,
            };
            let mut r = request(&mut rng, i as u32, kind, level, &cfg);
            if rounds {
                r.group = format!("round {level}");
            }
            r
        })
        .collect();
    Report::new(
        format!("random run {seed}"),
        EndpointInfo {
            base_url: "http://127.0.0.1:8080".into(),
            model: "model-a".into(),
            dialect: None,
        },
        if rounds {
            "multi_turn"
        } else {
            "concurrency_sweep"
        },
    )
    .created_at(1.78e12)
    .with_clock_resolution(Some(0.005))
    .with_stamping("1 stamping worker")
    .with_settings(serde_json::json!({ "seed": seed }))
    .with_requests(requests)
}

pub fn close(what: &str, a: Option<f64>, b: Option<f64>, tolerance: f64) {
    match (a, b) {
        (Some(a), Some(b)) => assert!(
            (a - b).abs() <= tolerance + 1e-9 * a.abs().max(b.abs()),
            "{what}: {a} vs {b} (tolerance {tolerance})"
        ),
        (a, b) => assert_eq!(a.is_some(), b.is_some(), "{what}: {a:?} vs {b:?}"),
    }
}

pub fn close_summary(what: &str, a: &Option<Summary>, b: &Option<Summary>, tolerance: f64) {
    assert_eq!(a.is_some(), b.is_some(), "{what}");
    if let (Some(a), Some(b)) = (a, b) {
        assert_eq!(a.count, b.count, "{what} count");
        for (name, x, y) in [
            ("min", a.min, b.min),
            ("p50", a.p50, b.p50),
            ("p90", a.p90, b.p90),
            ("p95", a.p95, b.p95),
            ("p99", a.p99, b.p99),
            ("max", a.max, b.max),
            ("mean", a.mean, b.mean),
        ] {
            close(&format!("{what} {name}"), Some(x), Some(y), tolerance);
        }
    }
}

/// Every headline figure of `a` within `q` (the link's precision) of `b`'s.
pub fn same_headline(a: &Aggregates, b: &Aggregates, q: f64) {
    assert_eq!(a.count, b.count);
    assert_eq!(a.errors, b.errors);
    // A time is within q/2; a difference of two times (a gap, TPOT's span) within q.
    close_summary("ttfb", &a.ttfb, &b.ttfb, q / 2.0);
    close_summary("ttft", &a.ttft, &b.ttft, q / 2.0);
    close_summary("first answer", &a.first_answer, &b.first_answer, q / 2.0);
    close_summary("meaningful", &a.meaningful, &b.meaningful, q / 2.0);
    close_summary("e2e", &a.e2e, &b.e2e, q / 2.0);
    close_summary("itl", &a.itl, &b.itl, q);
    close_summary("chunk gaps", &a.chunk_gaps, &b.chunk_gaps, q);
    close_summary("tpot", &a.tpot, &b.tpot, q);
    close_summary("json valid", &a.json_valid, &b.json_valid, q / 2.0);
    close_summary("browser queue", &a.browser_queue, &b.browser_queue, q / 2.0);
    if let (Some(x), Some(y)) = (&a.tokens_per_s, &b.tokens_per_s) {
        close("decode rate p50", Some(x.p50), Some(y.p50), y.p50 * 0.01);
    }
    assert_eq!(a.goodput, b.goodput);
    assert_eq!(a.reasoning_first, b.reasoning_first);
    assert_eq!(a.tool_call_first, b.tool_call_first);
    assert_eq!(a.coalesced, b.coalesced);
    assert_eq!(a.with_stalls, b.with_stalls);
    assert_eq!(a.with_openers, b.with_openers);
    assert_eq!(a.not_streamed, b.not_streamed);
    assert_eq!(a.tokens_from_server, b.tokens_from_server);
    close("opener cost", a.opener_cost_ms, b.opener_cost_ms, q);
    assert_eq!(a.groups.len(), b.groups.len());
    for (g, h) in a.groups.iter().zip(&b.groups) {
        assert_eq!(
            (g.group.as_str(), g.level, g.count),
            (h.group.as_str(), h.level, h.count)
        );
        close_summary(&format!("{} ttft", g.group), &g.ttft, &h.ttft, q / 2.0);
        close_summary(&format!("{} itl", g.group), &g.itl, &h.itl, q);
        if let (Some(x), Some(y)) = (g.throughput_tokens_per_s, h.throughput_tokens_per_s) {
            close("throughput", Some(x), Some(y), y * 0.01);
        }
    }
    same_experience(&a.experience, &b.experience, q);
}

/// The experience scores: counts equal, QoE within 0.01, waits within q, and the fluidity
/// figures (thresholded counts: a token q/2 later may cross a deadline) within 0.02.
pub fn same_experience(a: &ExperienceSummary, b: &ExperienceSummary, q: f64) {
    assert_eq!(a.fluidity_requests, b.fluidity_requests);
    assert_eq!(a.reading_requests, b.reading_requests);
    assert_eq!(a.fluid_requests, b.fluid_requests);
    close("qoe p50", a.qoe_p50, b.qoe_p50, 0.01);
    close("qoe p10", a.qoe_p10, b.qoe_p10, 0.01);
    close("longest wait", a.wait_longest_ms, b.wait_longest_ms, q);
    close(
        "fluidity p99 miss",
        a.fluidity_p99_miss_rate,
        b.fluidity_p99_miss_rate,
        0.02,
    );
    close("fluidity mean", a.fluidity_mean, b.fluidity_mean, 0.02);
    if let (Some(x), Some(y)) = (a.fluid_token_rate, b.fluid_token_rate) {
        close("fluid token rate", Some(x), Some(y), y * 0.02);
    }
}

/// A random run merged from timeline files as a probe under load: every third request the
/// browser's probe, the others a Locust load.
pub fn probe_report(seed: u64, n: usize) -> Report {
    let mut report = random_report(seed, n);
    for r in &mut report.requests {
        r.client = Some(
            if r.index % 3 == 0 {
                "browser"
            } else {
                "locust"
            }
            .into(),
        );
    }
    report
}

/// Every single-byte corruption of an r3 link decodes or fails cleanly; every cut fails.
pub fn damaged_r3_links_fail(link: &str, rounds: usize) {
    use base64::Engine;
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    assert!(link.starts_with("r3."));
    assert!(ttft_share::decode(&link[..link.len() / 2]).is_err());
    let raw = engine.decode(&link[3..]).unwrap();
    // Every single-byte corruption decodes or fails cleanly; every cut fails.
    let mut rng = Rng(98);
    for _ in 0..rounds {
        let mut bad = raw.clone();
        let i = rng.below(bad.len());
        bad[i] = (rng.unit() * 256.0) as u8;
        let _ = ttft_share::decode(&format!("r3.{}", engine.encode(&bad)));
        let cut = rng.below(raw.len() - 8);
        assert!(
            ttft_share::decode(&format!("r3.{}", engine.encode(&raw[..cut]))).is_err(),
            "cut at {cut} of {}",
            raw.len()
        );
    }
    // A DEFLATE length past the end, and one that overflows.
    for junk in [&[0x7F, 1, 2][..], &[0xFF; 12][..], &[][..]] {
        assert!(ttft_share::decode(&format!("r3.{}", engine.encode(junk))).is_err());
    }
}

/// A run whose streams get their tokens on one server's steps (18–26 ms each, each read a
/// little after its step), as a continuously batching server sends them: `n` requests, 8 at a
/// time.
pub fn batched_report(seed: u64, n: usize) -> Report {
    let mut rng = Rng(seed.max(1));
    let cfg = MetricsConfig::default();
    let mut steps = vec![0.0f64];
    while steps.len() < 80 * (n / 8 + 2) {
        let last = steps[steps.len() - 1];
        steps.push(last + 18.0 + 8.0 * rng.unit());
    }
    let requests = (0..n)
        .map(|i| {
            let start = (i / 8) as f64 * 900.0 + 3.0 * rng.unit();
            let mut rec = RequestRecorder::new(0.0, None, None);
            let first = start + 60.0 + 40.0 * rng.unit();
            let mut j = steps.iter().position(|t| *t >= first).unwrap_or(0);
            rec.on_headers(steps[j] - start - 1.0, 200, Some("text/event-stream"));
            let mut at = 0.0;
            for k in 0..40 {
                let word = WORDS[rng.below(WORDS.len())];
                at = steps[j] - start + 0.3 * rng.unit() + if rng.chance(0.02) { 5.0 } else { 0.0 };
                rec.on_read(
                    at,
                    chunk(&format!(r#"{{"content":"{word}"}}"#), 0).as_bytes(),
                );
                j += if k % 13 == 12 { 2 } else { 1 };
            }
            rec.on_read(at + 0.5, b"data: [DONE]\n\n");
            let tl = rec.finish(at + 0.7);
            RequestRecord {
                start_ms: start,
                ..RequestRecord::from_timeline(i as u32, "c=8".into(), Some(8.0), &tl, &cfg)
            }
        })
        .collect();
    Report::new(
        format!("batched run {seed}"),
        EndpointInfo {
            base_url: "http://127.0.0.1:8080".into(),
            model: "model-a".into(),
            dialect: None,
        },
        "chat",
    )
    .with_requests(requests)
}

/// The golden links of every format made before the newer header fields (the opener list,
/// the saturation stop), each opened: `(file name, report)`.
pub fn older_links() -> Vec<(&'static str, Report)> {
    [
        "golden-random-7-100.r1.txt",
        "golden-random-7-100.r2.txt",
        "golden-random-7-100.r3.txt",
        "golden-random-7-100.r3-deflate.txt",
        "reference-100-first-models.r3.txt",
    ]
    .into_iter()
    .map(|name| {
        let path = format!("{}/tests/data/links/{name}", env!("CARGO_MANIFEST_DIR"));
        let link = std::fs::read_to_string(&path).unwrap();
        let opened = ttft_share::decode(&link).unwrap_or_else(|e| panic!("{name}: {e}"));
        (name, opened)
    })
    .collect()
}
