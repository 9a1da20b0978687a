//! Share links: r2 keeps a run's measurements and the opened report shows the original's
//! headline within the link's stated precision (r3 of either layout and r2 opening as the same
//! report; streams on one server's steps coding their gaps against each other) — over many random runs with errors, sweeps,
//! multi-turn rounds, agent JSON, tool calls, reasoning, several choices, openers and CJK text —
//! r1 links keep opening, a length limit makes the link keep less and say what (in a probe under
//! load, never a probe request), each request's client is kept, and hostile links (a client
//! index out of range too) fail with an error, never a panic.

use proptest::prelude::*;
use ttft_core::experience::ExperienceSummary;
use ttft_core::metrics::MetricsConfig;
use ttft_core::report::{Aggregates, EndpointInfo, Report, RequestRecord};
use ttft_core::share::{self, ShareError, ShareOptions};
use ttft_core::stats::Summary;
use ttft_core::timeline::RequestRecorder;

/// xorshift64*: deterministic per seed.
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
    fn below(&mut self, n: usize) -> usize {
        (self.unit() * n as f64) as usize % n.max(1)
    }
    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
}

const WORDS: &[&str] = &[
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

fn chunk(delta: &str, choice: u32) -> String {
    format!(
        "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":{choice},\"delta\":{delta}}}]}}\n\n"
    )
}

/// The kinds of request a random run mixes.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Prose,
    Reasoning,
    Agent,
    Tools,
    TwoChoices,
    HttpError,
    Truncated,
}

/// One request recorded through the real path (SSE bytes → recorder → metrics).
fn request(
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
fn random_report(seed: u64, n: usize) -> Report {
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

fn close(what: &str, a: Option<f64>, b: Option<f64>, tolerance: f64) {
    match (a, b) {
        (Some(a), Some(b)) => assert!(
            (a - b).abs() <= tolerance + 1e-9 * a.abs().max(b.abs()),
            "{what}: {a} vs {b} (tolerance {tolerance})"
        ),
        (a, b) => assert_eq!(a.is_some(), b.is_some(), "{what}: {a:?} vs {b:?}"),
    }
}

fn close_summary(what: &str, a: &Option<Summary>, b: &Option<Summary>, tolerance: f64) {
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
fn same_headline(a: &Aggregates, b: &Aggregates, q: f64) {
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
fn same_experience(a: &ExperienceSummary, b: &ExperienceSummary, q: f64) {
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// The opened report's headline equals the original's within the stated precision.
    #[test]
    fn a_link_reopens_with_the_same_headline(seed in 1u64.., n in 1usize..60) {
        let report = random_report(seed, n);
        let options = ShareOptions { max_chars: None, ..ShareOptions::default() };
        let link = share::encode(&report, &options);
        prop_assert!(link.text.starts_with("r3."));
        let back = share::decode(&format!("https://studio.example/#share={}", link.text)).unwrap();
        let shared = back.shared.clone().expect("an opened link says what it is");
        prop_assert_eq!(shared.format.as_str(), "r3");
        // The same measurements in an r2 link (made before r3) open as the same report.
        let r2 = share::encode_r2(&report, &options);
        prop_assert!(r2.text.starts_with("r2."));
        let mut from_r2 = share::decode(&r2.text).unwrap();
        prop_assert_eq!(from_r2.shared.as_ref().map(|s| s.format.clone()), Some("r2".to_owned()));
        from_r2.shared.as_mut().unwrap().format = "r3".into();
        prop_assert_eq!(&from_r2, &back);
        // And in an r3 link of the first layout (all but the gaps under DEFLATE).
        let first = share::encode_r3_deflate(&report, &options);
        prop_assert!(first.text.starts_with("r3."));
        prop_assert_eq!(&share::decode(&first.text).unwrap(), &back);
        prop_assert_eq!(shared.precision_ms, 0.1);
        prop_assert!(shared.headline.is_none());
        prop_assert_eq!(back.requests.len(), report.requests.len());
        prop_assert_eq!(&back.title, &report.title);
        prop_assert_eq!(&back.settings, &report.settings);
        same_headline(&back.aggregates(), &report.aggregates(), 0.1);
        // Replays kept for up to five requests, whole.
        let kept: Vec<&RequestRecord> = back.requests.iter().filter(|r| !r.replay.is_empty()).collect();
        prop_assert!(kept.len() <= 5);
        for r in kept {
            let original = &report.requests[r.index as usize];
            prop_assert_eq!(&r.metrics.text, &original.metrics.text);
            prop_assert_eq!(r.replay.len(), original.replay.len());
            for (p, o) in r.replay.iter().zip(&original.replay) {
                prop_assert_eq!(&p.text, &o.text);
                prop_assert!((p.at_ms - o.at_ms).abs() <= 0.05 + 1e-9);
            }
        }
        // Ids and wall-clock times are left out, and said to be.
        prop_assert!(back.requests.iter().all(|r| r.server_request_id.is_none() && r.sent_epoch_ms.is_none()));
        prop_assert!(shared.left_out.iter().any(|l| l.contains("request ids")));
    }
}

#[test]
fn a_100_request_run_fits_in_a_short_link_and_a_1000_request_run_under_the_limit() {
    let report = random_report(7, 100);
    let link = share::encode(&report, &ShareOptions::default());
    let r1 = share::encode_r1(&share::compact_for_share(&report, 5));
    println!(
        "100 random requests: r3 {} characters, r1 {} characters",
        link.text.len(),
        r1.len()
    );
    assert!(link.text.len() * 2 < r1.len(), "r3 is far shorter than r1");
    let r2 = share::encode_r2(
        &report,
        &ShareOptions {
            max_chars: None,
            ..ShareOptions::default()
        },
    );
    assert!(
        link.text.len() < r2.text.len(),
        "r3 ({}) is shorter than r2 ({})",
        link.text.len(),
        r2.text.len()
    );
    assert!(
        link.text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
    );
    let big = random_report(8, 1000);
    let link = share::encode(&big, &ShareOptions::default());
    assert!(link.text.len() <= 64_000, "{}", link.text.len());
}

/// Asserts that a report opened from a link says it left out `what`.
fn says_left_out(opened: &Report, what: &str) {
    let left_out = &opened.shared.as_ref().expect("opened from a link").left_out;
    assert!(
        left_out.iter().any(|l| l.contains(what)),
        "{what:?} not in {left_out:?}"
    );
}

/// The link of `report` limited to a `part`-th of its whole link's length, checked to fit.
fn link_within(report: &Report, part: f64) -> share::SharedLink {
    let full = share::encode(
        report,
        &ShareOptions {
            max_chars: None,
            ..ShareOptions::default()
        },
    );
    let limit = (full.text.len() as f64 / part) as usize;
    let link = share::encode(
        report,
        &ShareOptions {
            max_chars: Some(limit),
            ..ShareOptions::default()
        },
    );
    assert!(link.text.len() <= limit, "{} > {limit}", link.text.len());
    link
}

#[test]
fn a_length_limit_keeps_less_says_what_and_keeps_the_headline_exact() {
    let report = random_report(11, 400);
    let link = link_within(&report, 4.0);
    assert!(
        link.requests_kept < report.requests.len() || link.gaps_kept_for < report.requests.len()
    );
    let back = share::decode(&link.text).unwrap();
    says_left_out(&back, "the headline figures are the whole run's");
    assert_eq!(back.requests.len(), link.requests_kept);
    // The headline is the whole run's, exactly (to the last digit JSON keeps).
    same_headline(&back.aggregates(), &report.aggregates(), 1e-9);
    // Sharing the opened report again keeps that headline.
    let again = share::decode(&share::encode(&back, &ShareOptions::default()).text).unwrap();
    same_headline(&again.aggregates(), &report.aggregates(), 1e-9);
}

#[test]
fn r1_links_keep_opening() {
    let report = random_report(3, 30);
    let compact = share::compact_for_share(&report, 5);
    let r1 = share::encode_r1(&compact);
    assert!(r1.starts_with("r1."));
    assert_eq!(
        share::decode(&format!("http://x/#share={r1}")).unwrap(),
        compact
    );
}

#[test]
fn damaged_and_hostile_r2_links_fail_with_an_error() {
    use base64::Engine;
    let b64 = |bytes: &[u8]| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(miniz_oxide::deflate::compress_to_vec(bytes, 6))
    };
    let report = random_report(5, 40);
    let link = share::encode_r2(&report, &ShareOptions::default()).text;
    assert_eq!(
        share::decode(&link[..link.len() / 2]),
        Err(ShareError::Inflate)
    );
    assert!(matches!(
        share::decode("r2.ab$c"),
        Err(ShareError::Base64(_))
    ));
    assert_eq!(share::decode("x2.abc"), Err(ShareError::BadPrefix));
    // Valid DEFLATE around bytes that are not an r2 report.
    for junk in [
        &b""[..],
        b"\x02",
        b"\x02\x05{}",
        b"\x02\x02{}\x00",
        b"\x03abc",
    ] {
        assert!(
            matches!(
                share::decode(&format!("r2.{}", b64(junk))),
                Err(ShareError::Damaged(_))
            ),
            "{junk:?}"
        );
    }
    // Every single-byte corruption of a real payload decodes or fails cleanly.
    let packed = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(&link[3..])
        .unwrap();
    let raw = miniz_oxide::inflate::decompress_to_vec(&packed).unwrap();
    let mut rng = Rng(99);
    for _ in 0..2000 {
        let mut bad = raw.clone();
        let i = rng.below(bad.len());
        bad[i] = (rng.unit() * 256.0) as u8;
        let _ = share::decode(&format!("r2.{}", b64(&bad)));
        let cut = rng.below(raw.len());
        assert!(share::decode(&format!("r2.{}", b64(&raw[..cut]))).is_err());
    }
    // A header claiming two million requests over the same few columns.
    let forged = with_header(&raw, |h| h["requests"] = serde_json::json!(2_000_000));
    assert!(matches!(
        share::decode(&format!("r2.{}", b64(&forged))),
        Err(ShareError::Damaged(_))
    ));
}

/// An r2 payload (uncompressed) with the JSON of its header changed by `change`.
fn with_header(raw: &[u8], change: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
    // After the format byte: the header's length (LEB128), then its JSON.
    let (len, at) = {
        let (mut v, mut shift, mut at) = (0usize, 0, 1);
        loop {
            let b = raw[at];
            v |= usize::from(b & 0x7F) << shift;
            shift += 7;
            at += 1;
            if b & 0x80 == 0 {
                break (v, at);
            }
        }
    };
    let mut header: serde_json::Value = serde_json::from_slice(&raw[at..at + len]).unwrap();
    change(&mut header);
    let header = serde_json::to_vec(&header).unwrap();
    let mut forged = vec![2u8];
    let mut n = header.len();
    while n >= 0x80 {
        forged.push((n as u8) | 0x80);
        n >>= 7;
    }
    forged.push(n as u8);
    forged.extend_from_slice(&header);
    forged.extend_from_slice(&raw[at + len..]);
    forged
}

/// A random run merged from timeline files as a probe under load: every third request the
/// browser's probe, the others a Locust load.
fn probe_report(seed: u64, n: usize) -> Report {
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

#[test]
fn links_keep_each_request_s_client_and_a_probe_s_headline() {
    for seed in 1..=12 {
        let report = probe_report(seed, 60);
        assert!(report.is_probe_under_load());
        let options = ShareOptions {
            max_chars: None,
            ..ShareOptions::default()
        };
        for link in [
            share::encode(&report, &options),
            share::encode_r2(&report, &options),
        ] {
            let back = share::decode(&link.text).unwrap();
            let clients: Vec<Option<&str>> =
                back.requests.iter().map(|r| r.client.as_deref()).collect();
            let expected: Vec<Option<&str>> = report
                .requests
                .iter()
                .map(|r| r.client.as_deref())
                .collect();
            assert_eq!(clients, expected, "seed {seed}");
            assert!(back.is_probe_under_load());
            // Recomputed over the probe's requests alone, not carried.
            assert!(back.shared.as_ref().unwrap().headline.is_none());
            same_headline(&back.aggregates(), &report.aggregates(), 0.1);
        }
    }
}

#[test]
fn a_sampled_probe_link_keeps_every_probe_request_and_samples_the_load() {
    let report = probe_report(11, 400);
    let probe = |r: &Report| -> Vec<u32> {
        r.requests
            .iter()
            .filter(|q| q.client.as_deref() == Some("browser"))
            .map(|q| q.index)
            .collect()
    };
    let link = link_within(&report, 2.5);
    let back = share::decode(&link.text).unwrap();
    // Two fifths of the length: the load is sampled.
    assert!(link.requests_kept < report.requests.len());
    assert_eq!(back.requests.len(), link.requests_kept);
    says_left_out(&back, "every probe request");
    // Every probe request, each with its gaps.
    assert_eq!(probe(&back), probe(&report));
    for r in back
        .requests
        .iter()
        .filter(|q| q.client.as_deref() == Some("browser"))
    {
        let original = &report.requests[r.index as usize];
        assert_eq!(r.metrics.itl_ms.len(), original.metrics.itl_ms.len());
    }
    same_headline(&back.aggregates(), &report.aggregates(), 1e-9);
    // A link too short for the probe whole samples it with the load, and still fits.
    let short = share::decode(&link_within(&report, 8.0).text).unwrap();
    assert!(probe(&short).len() < probe(&report).len());
    says_left_out(&short, "every ");
    same_headline(&short.aggregates(), &report.aggregates(), 1e-9);
}

#[test]
fn a_link_naming_a_client_it_does_not_list_is_refused() {
    use base64::Engine;
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let link = share::encode_r2(&probe_report(4, 30), &ShareOptions::default()).text;
    let raw = miniz_oxide::inflate::decompress_to_vec(&engine.decode(&link[3..]).unwrap()).unwrap();
    for clients in [serde_json::json!(["browser"]), serde_json::json!([])] {
        let forged = with_header(&raw, |h| h["clients"] = clients.clone());
        let packed = miniz_oxide::deflate::compress_to_vec(&forged, 6);
        match share::decode(&format!("r2.{}", engine.encode(packed))) {
            Err(ShareError::Damaged(why)) => {
                assert!(why.contains("names client"), "{why}");
                assert!(
                    ShareError::Damaged(why)
                        .to_string()
                        .contains("copy it again in full")
                );
            }
            other => panic!("{clients}: {other:?}"),
        }
    }
}

#[test]
fn damaged_and_hostile_r3_links_fail_with_an_error() {
    let report = random_report(6, 40);
    // (A context-coded payload decodes whole before it is checked: fewer rounds keep the test
    // quick.)
    damaged_r3_links_fail(&share::encode(&report, &ShareOptions::default()).text, 150);
    damaged_r3_links_fail(
        &share::encode_r3_deflate(&report, &ShareOptions::default()).text,
        2000,
    );
    // Second layout (first byte 0, then whether gaps are coded against other streams): each
    // forged payload reaches the check it names and fails with that check's error.
    use base64::Engine;
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let varint = |mut v: u64| {
        let mut out = Vec::new();
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
        out
    };
    // [0, flag, sections, each length, code length, code…]
    let payload = |lengths: &[u64], code_len: u64, code: usize| {
        let mut p = vec![0u8, 0];
        p.extend(varint(lengths.len() as u64));
        lengths.iter().for_each(|l| p.extend(varint(*l)));
        p.extend(varint(code_len));
        p.extend(std::iter::repeat_n(0u8, code));
        p
    };
    let decode = |bytes: &[u8]| share::decode(&format!("r3.{}", engine.encode(bytes)));
    let damaged = |bytes: &[u8], says: &str| match decode(bytes) {
        Err(ShareError::Damaged(m)) => assert!(m.contains(says), "{m:?}, not {says:?}"),
        other => panic!("{:?}: {other:?}", &bytes[..bytes.len().min(16)]),
    };
    let too_large = |bytes: &[u8]| {
        assert!(
            matches!(decode(bytes), Err(ShareError::TooLarge)),
            "{:?}",
            &bytes[..bytes.len().min(16)]
        )
    };
    // No flag; more sections than a payload has.
    assert!(decode(&[0]).is_err());
    damaged(&payload(&[1; 65], 0, 0), "a count larger than the data");
    // A code length past the end.
    damaged(&payload(&[5], 9, 2), "a count larger than the data");
    // More bytes than 4 coded bytes may stand for (64 each).
    damaged(
        &payload(&[4 * 64 + 1], 4, 4),
        "more bytes than its code can hold",
    );
    // Within 32 MiB and its code's expansion, but more than 8 MiB to context-mix: refused
    // before any is decoded.
    let nine_mib = 9 << 20;
    too_large(&payload(
        &[nine_mib],
        nine_mib / 64 + 1,
        (nine_mib / 64 + 1) as usize,
    ));
    // Lengths past 32 MiB.
    too_large(&payload(&[32 << 20, 32 << 20], 32_768, 32_768));
    // A length past 64 bits' worth of varint.
    let mut long = vec![0u8, 0, 1];
    long.extend([0xFF; 11]);
    assert!(decode(&long).is_err());
}

/// Every single-byte corruption of an r3 link decodes or fails cleanly; every cut fails.
fn damaged_r3_links_fail(link: &str, rounds: usize) {
    use base64::Engine;
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    assert!(link.starts_with("r3."));
    assert!(share::decode(&link[..link.len() / 2]).is_err());
    let raw = engine.decode(&link[3..]).unwrap();
    // Every single-byte corruption decodes or fails cleanly; every cut fails.
    let mut rng = Rng(98);
    for _ in 0..rounds {
        let mut bad = raw.clone();
        let i = rng.below(bad.len());
        bad[i] = (rng.unit() * 256.0) as u8;
        let _ = share::decode(&format!("r3.{}", engine.encode(&bad)));
        let cut = rng.below(raw.len() - 8);
        assert!(
            share::decode(&format!("r3.{}", engine.encode(&raw[..cut]))).is_err(),
            "cut at {cut} of {}",
            raw.len()
        );
    }
    // A DEFLATE length past the end, and one that overflows.
    for junk in [&[0x7F, 1, 2][..], &[0xFF; 12][..], &[][..]] {
        assert!(share::decode(&format!("r3.{}", engine.encode(junk))).is_err());
    }
}

/// Prints where the bytes of a link go, part by part (`TTFT_LINK_RUN` = a report's JSON, else
/// a random run of 100 requests): `cargo test -p ttft-core --test share -- --ignored
/// link_breakdown --nocapture`.
#[test]
#[ignore]
fn link_breakdown() {
    let report = match std::env::var_os("TTFT_LINK_RUN") {
        Some(path) => ttft_core::report::read_json(&std::fs::read(path).unwrap()).unwrap(),
        None => random_report(7, 100),
    };
    let (link, parts) = share::breakdown(&report, &ShareOptions::default());
    println!(
        "{} requests: {} characters ({} requests kept, {} replays, {} ms)",
        report.requests.len(),
        link.text.len(),
        link.requests_kept,
        link.replays,
        link.precision_ms
    );
    println!(
        "{:<66} {:>9} {:>9} {:>9}",
        "part", "raw", "coded", "deflated"
    );
    for p in &parts {
        println!(
            "{:<66} {:>9} {:>9.0} {:>9}",
            p.name, p.raw_bytes, p.coded_bytes, p.deflated_alone_bytes
        );
    }
    let old = share::encode_r3_deflate(&report, &ShareOptions::default());
    println!("first r3 layout (DEFLATE): {} characters", old.text.len());
    assert!(share::decode(&link.text).is_ok());
}

/// A run whose streams get their tokens on one server's steps (18–26 ms each, each read a
/// little after its step), as a continuously batching server sends them: `n` requests, 8 at a
/// time.
fn batched_report(seed: u64, n: usize) -> Report {
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

#[test]
fn streams_on_shared_server_steps_code_their_gaps_against_each_other() {
    use base64::Engine;
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let options = ShareOptions {
        max_chars: None,
        ..ShareOptions::default()
    };
    for seed in 1..=4 {
        let report = batched_report(seed, 48);
        let link = share::encode(&report, &options);
        let payload = engine.decode(&link.text[3..]).unwrap();
        // Second layout, refined models, gaps against the latest arrival of each step.
        assert_eq!(&payload[..2], &[0, 5], "seed {seed}");
        let back = share::decode(&link.text).unwrap();
        same_headline(&back.aggregates(), &report.aggregates(), 0.1);
        let mut from_r2 = share::decode(&share::encode_r2(&report, &options).text).unwrap();
        from_r2.shared.as_mut().unwrap().format = "r3".into();
        assert_eq!(from_r2, back, "seed {seed}");
        let first = share::encode_r3_deflate(&report, &options).text;
        assert!(link.text.len() < first.len(), "seed {seed}");
        damaged_r3_links_fail(&link.text, 60);
    }
    // A random run's streams share no steps: each request's gaps are coded on their own.
    let link = share::encode(&random_report(3, 40), &options);
    assert_eq!(engine.decode(&link.text[3..]).unwrap()[1], 3);
}

#[test]
fn a_link_of_the_first_models_still_opens_and_the_refined_ones_code_its_run_shorter() {
    use base64::Engine;
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    // A real run's link, made by the studio before the refined models (tests/data/links).
    let old = include_str!("data/links/reference-100-first-models.r3.txt").trim();
    assert_eq!(&engine.decode(&old[3..]).unwrap()[..2], &[0, 1]);
    let back = share::decode(old).expect("an older link opens");
    let agg = back.aggregates();
    assert_eq!(agg.count, 100);
    // The figures of the report it was made from, within the link's 0.1 ms.
    close("ttft p50", agg.ttft.map(|s| s.p50), Some(33.225), 0.05);
    close("itl p50", agg.itl.map(|s| s.p50), Some(20.19), 0.05);
    assert_eq!(agg.itl.unwrap().count, 9900);
    // The same run now: the same figures, and a link at least a twentieth shorter (the
    // gaps against each step's latest arrival, the text primed, the columns refined).
    let link = share::encode(&back, &ShareOptions::default());
    assert_eq!(&engine.decode(&link.text[3..]).unwrap()[..2], &[0, 5]);
    assert!(
        link.text.len() * 20 < old.len() * 19,
        "{} characters now, {} before",
        link.text.len(),
        old.len()
    );
    let again = share::decode(&link.text).unwrap();
    same_headline(&again.aggregates(), &agg, 0.1);
    damaged_r3_links_fail(&link.text, 20);
}

/// Where the golden links live: links this codec wrote, kept byte for byte.
const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/links");

/// FNV-1a (64 bits) of `bytes`: a report's JSON in a line of `golden-opened.txt`.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Asserts that `actual` is, byte for byte, the golden file `name` of [`GOLDEN`]. With
/// `TTFT_BLESS_GOLDEN` set a missing file is written (an existing one never is: a golden file
/// changes only by deleting it on purpose, with a new format or layout byte).
fn golden(name: &str, actual: &str) {
    let path = std::path::Path::new(GOLDEN).join(name);
    if !path.exists() && std::env::var_os("TTFT_BLESS_GOLDEN").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (TTFT_BLESS_GOLDEN=1 writes it)", path.display()));
    if expected != actual {
        let at = expected
            .bytes()
            .zip(actual.bytes())
            .position(|(a, b)| a != b)
            .unwrap_or(expected.len().min(actual.len()));
        panic!(
            "{name}: differs from the golden file at byte {at} ({} bytes now, {} golden)",
            actual.len(),
            expected.len()
        );
    }
}

/// The golden links' reports: deterministic runs that take every path of the writer (mixed
/// kinds of request, replays, CJK text, shared server steps, a probe sampled to a limit, a
/// run laddered under the default limit).
fn golden_runs() -> Vec<(&'static str, Report, ShareOptions)> {
    let whole = ShareOptions {
        max_chars: None,
        ..ShareOptions::default()
    };
    vec![
        (
            "random-7-100",
            random_report(7, 100),
            ShareOptions::default(),
        ),
        ("random-3-30-whole", random_report(3, 30), whole.clone()),
        ("batched-1-48", batched_report(1, 48), whole),
        (
            "probe-11-400-6000",
            probe_report(11, 400),
            ShareOptions {
                max_chars: Some(6_000),
                ..ShareOptions::default()
            },
        ),
        (
            "random-8-1000",
            random_report(8, 1000),
            ShareOptions::default(),
        ),
    ]
}

/// Every link the writer makes of the golden runs, in every format, is the golden file written
/// by the codec before it moved (byte for byte), and opens to the same report (its JSON's
/// digest); the older studios' links of `tests/data/links` open to the same reports too.
#[test]
fn links_are_byte_identical_to_the_golden_links_and_open_to_the_same_reports() {
    let mut opened = String::new();
    let mut open = |name: String, link: &str| {
        let report = share::decode(link).unwrap_or_else(|e| panic!("{name}: {e}"));
        let json = serde_json::to_vec(&report).unwrap();
        opened.push_str(&format!(
            "{name} {:016x} {} requests\n",
            fnv1a(&json),
            report.requests.len()
        ));
    };
    for (name, report, options) in golden_runs() {
        let links = [
            ("r3", share::encode(&report, &options).text),
            ("r2", share::encode_r2(&report, &options).text),
            (
                "r3-deflate",
                share::encode_r3_deflate(&report, &options).text,
            ),
        ];
        for (format, text) in links {
            let file = format!("golden-{name}.{format}.txt");
            golden(&file, &text);
            open(file, &text);
        }
    }
    let r1 = share::encode_r1(&share::compact_for_share(&random_report(7, 100), 5));
    golden("golden-random-7-100.r1.txt", &r1);
    open("golden-random-7-100.r1.txt".into(), &r1);
    for old in [
        "probe-under-load-before-clients.r3.txt",
        "probe-under-load-before-clients.r2.txt",
        "reference-100-first-models.r3.txt",
    ] {
        let text = std::fs::read_to_string(std::path::Path::new(GOLDEN).join(old)).unwrap();
        open(old.into(), &text);
    }
    golden("golden-opened.txt", &opened);
}

/// What the golden runs' links say they kept, and where their bytes go ([`share::breakdown`],
/// what the bench prints), are as before the move.
#[test]
fn link_summaries_and_breakdowns_are_as_golden() {
    let mut out = String::new();
    for (name, report, options) in golden_runs() {
        let (link, parts) = share::breakdown(&report, &options);
        out.push_str(&format!(
            "{name}: {} characters, precision {:?} ms, {} replays, {} requests kept, gaps of {}\n",
            link.text.len(),
            link.precision_ms,
            link.replays,
            link.requests_kept,
            link.gaps_kept_for
        ));
        for l in &link.left_out {
            out.push_str(&format!("  left out: {l}\n"));
        }
        for p in &parts {
            out.push_str(&format!(
                "  {}: raw {}, coded {:?}, deflated alone {}\n",
                p.name, p.raw_bytes, p.coded_bytes, p.deflated_alone_bytes
            ));
        }
    }
    golden("golden-summaries.txt", &out);
}
