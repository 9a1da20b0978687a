//! Openers, agent JSON, statistics, roofline, aggregates, diagnosis and the report file's
//! refusals (share links: `crates/ttft-share/tests`).

use ttft_core::agent_json::JsonTracker;
use ttft_core::diagnosis::diagnose;
use ttft_core::experience::{ExperienceConfig, ExperienceSummary, ReadingConfig};
use ttft_core::metrics::{MetricsConfig, RequestMetrics, TtftKind};
use ttft_core::openers::Openers;
use ttft_core::report::Aggregates;
use ttft_core::report::ReportFileError;
use ttft_core::roofline::{Precision, RooflineInput};
use ttft_core::run_stats::RunStats;
use ttft_core::stats::{Summary, cdf, histogram, knee, linear_fit, percentile};
use ttft_core::timeline::{Outcome, RequestRecorder, RequestTimeline};
use ttft_fixtures::analysis::{report_of, synthetic};

#[test]
fn openers_english_and_chinese_chain_and_stop_at_meaning() {
    let o = Openers::default();
    let skip = |t: &str| t[..o.skip_len(t)].to_owned();
    assert_eq!(
        skip("Sure, here's the summary:\n\nThe report says"),
        "Sure, here's the summary:\n\n"
    );
    assert_eq!(
        skip("Certainly! Here's the code:\nfn main"),
        "Certainly! Here's the code:\n"
    );
    assert_eq!(skip("Sure, the answer is 42."), "Sure, ");
    assert_eq!(skip("Surely not."), "", "word boundary");
    assert_eq!(skip("The answer is 42."), "");
    assert_eq!(
        skip("好的，我来帮你总结一下：本文讨论"),
        "好的，我来帮你总结一下："
    );
    assert_eq!(
        skip("当然可以！以下是代码：\nfn"),
        "当然可以！以下是代码：\n"
    );
    let custom = Openers::from_lines("As an AI\n\n");
    assert_eq!(custom.patterns, vec!["As an AI"]);
    assert_eq!(custom.skip_len("Sure, x"), 0);
}

#[test]
fn meaningful_first_token_time_and_opener_cost() {
    let mut r = RequestRecorder::new(0.0, None, None);
    let c = |t: &str| {
        format!(
            "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{t}\"}}}}]}}\n\n"
        )
    };
    r.on_read(100.0, c("好的，").as_bytes());
    r.on_read(160.0, c("我来帮你总结一下：").as_bytes());
    r.on_read(220.0, c("本文").as_bytes());
    r.on_read(230.0, b"data: [DONE]\n\n");
    let m = RequestMetrics::compute(&r.finish(230.0), &MetricsConfig::default());
    assert_eq!(m.ttft_ms, Some(100.0));
    assert_eq!(m.meaningful_ms, Some(220.0));
    assert_eq!(m.opener_text, "好的，我来帮你总结一下：");
    assert_eq!(m.opener_cost_ms(), Some(120.0));
}

#[test]
fn json_tracker_first_bracket_valid_time_fences_and_required_keys() {
    let mut j = JsonTracker::new(&["city".to_owned(), "days".to_owned()]);
    j.push(1.0, "```json\n");
    j.push(2.0, "{\"city\": \"a}b\", \"note\": \"q\\\"");
    assert_eq!(j.progress().first_bracket_at, Some(2.0));
    j.push(3.0, "{}");
    assert!(!j.is_complete(), "braces inside strings do not close");
    j.push(4.0, "\"}\n```");
    assert!(j.progress().value.as_deref().unwrap().contains("q\\\"{}"));
    assert_eq!(j.progress().valid_at, Some(4.0));
    assert_eq!(j.progress().missing_keys, vec!["days"]);
    // An invalid candidate is skipped and the next one is found.
    let mut j = JsonTracker::new(&[]);
    j.push(1.0, "{oops} then [1, 2]");
    assert_eq!(j.progress().invalid_candidates, 1);
    assert_eq!(j.progress().value.as_deref(), Some("[1,2]"));
}

#[test]
fn percentiles_use_linear_interpolation_type7() {
    let v: Vec<f64> = (1..=10).map(f64::from).collect();
    assert_eq!(percentile(&v, 50.0), Some(5.5));
    assert!((percentile(&v, 90.0).unwrap() - 9.1).abs() < 1e-9);
    assert!((percentile(&v, 99.0).unwrap() - 9.91).abs() < 1e-9);
    assert_eq!(percentile(&[], 50.0), None);
    let s = Summary::of(&[3.0, f64::NAN, 1.0, 2.0]).unwrap();
    assert_eq!(
        (s.count, s.min, s.max, s.mean, s.p50),
        (3, 1.0, 3.0, 2.0, 2.0)
    );
}

#[test]
fn histogram_cdf_fit_knee() {
    let h = histogram(&[0.0, 1.0, 2.0, 3.0, 10.0], 5);
    assert_eq!(
        h.iter().map(|b| b.count).collect::<Vec<_>>(),
        vec![2, 2, 0, 0, 1]
    );
    let c = cdf(&[3.0, 1.0, 2.0, 4.0], 100);
    assert_eq!(c, vec![(1.0, 0.25), (2.0, 0.5), (3.0, 0.75), (4.0, 1.0)]);
    let fit = linear_fit(&[(100.0, 60.0), (1000.0, 150.0), (2000.0, 250.0)]).unwrap();
    assert!(
        (fit.slope - 0.1).abs() < 1e-9
            && (fit.intercept - 50.0).abs() < 1e-9
            && (fit.r2 - 1.0).abs() < 1e-9
    );
    assert!(linear_fit(&[(1.0, 1.0), (1.0, 2.0)]).is_none());
    assert_eq!(
        knee(&[(1.0, 40.0), (4.0, 45.0), (8.0, 70.0), (16.0, 120.0)], 1.5),
        Some(8.0)
    );
    assert_eq!(knee(&[(1.0, 40.0), (4.0, 45.0)], 1.5), None);
}

#[test]
fn roofline_matches_the_article() {
    let at = |params: f64| {
        RooflineInput {
            params_billion: params,
            precision: Precision::Fp16,
            kv_bytes_per_token: 0.0,
            context_tokens: 0.0,
            bandwidth_tb_s: 2.0,
        }
        .evaluate(Some(14.0))
    };
    let r7 = at(7.0);
    assert!((r7.bound_ms - 7.0).abs() < 1e-9);
    assert!((r7.max_tokens_per_s - 142.857).abs() < 0.01);
    assert!((r7.efficiency.unwrap() - 0.5).abs() < 1e-9);
    assert!(
        (at(70.0).bound_ms - 70.0).abs() < 1.5,
        "≈ 71 ms with overheads; 70 ms bound"
    );
    let int4 = RooflineInput {
        params_billion: 7.0,
        precision: Precision::Int4,
        kv_bytes_per_token: 131072.0,
        context_tokens: 4096.0,
        bandwidth_tb_s: 1.0,
    }
    .evaluate(None);
    assert!((int4.bound_ms - (3.5e9 + 131072.0 * 4096.0) / 1e12 * 1e3).abs() < 1e-9);
}

#[test]
fn article_models_a_and_b_aggregate_and_diagnose() {
    // Model A: 0.8 s TTFT, 65 ms ITL; model B: 3.5 s, 40 ms. 100 tokens each.
    let a = report_of(
        (0..5)
            .map(|_| {
                (
                    "a".into(),
                    None,
                    synthetic(800.0, 65.0, 100, "Sure, here's it:"),
                )
            })
            .collect(),
    );
    let b = report_of(
        (0..5)
            .map(|_| ("b".into(), None, synthetic(3500.0, 40.0, 100, "It")))
            .collect(),
    );
    let (aa, ab) = (a.aggregates(), b.aggregates());
    assert!((aa.ttft.unwrap().p50 - 800.0).abs() < 1e-9);
    assert!((aa.itl.unwrap().p50 - 65.0).abs() < 1e-9);
    assert!((ab.itl.unwrap().p50 - 40.0).abs() < 1e-9);
    assert_eq!(aa.goodput, 1.0);
    assert_eq!(ab.goodput, 0.0, "3.5 s TTFT exceeds the 2 s threshold");
    assert!(aa.e2e.unwrap().p50 > ab.e2e.unwrap().p50 - 1000.0);
    let fb = diagnose(&b, &ab);
    assert!(fb.iter().any(|f| f.id == "queueing"), "{fb:?}");
    let fa = diagnose(&a, &aa);
    assert!(fa.iter().any(|f| f.id == "openers"), "{fa:?}");
    assert!(!fa.iter().any(|f| f.id == "queueing" || f.id == "bandwidth"));
}

#[test]
fn concurrency_groups_knee_and_bandwidth_finding() {
    let mut reqs = Vec::new();
    for (level, itl) in [(1.0, 20.0), (4.0, 25.0), (16.0, 60.0), (32.0, 150.0)] {
        for _ in 0..3 {
            reqs.push((
                format!("c={level}"),
                Some(level),
                synthetic(300.0, itl, 20, "x"),
            ));
        }
    }
    let mut r = report_of(reqs);
    for (i, req) in r.requests.iter_mut().enumerate() {
        req.browser_queue_ms = Some(if i >= 9 { 400.0 } else { 0.2 });
    }
    let agg = r.aggregates();
    assert_eq!(agg.groups.len(), 4);
    assert!(agg.browser_queue.unwrap().p95 > 5.0);
    assert_eq!(agg.groups[0].level, Some(1.0));
    assert_eq!(agg.knee_level, Some(16.0));
    let f = diagnose(&r, &agg);
    assert!(f.iter().any(|f| f.id == "bandwidth"), "{f:?}");
    assert!(f.iter().any(|f| f.id == "knee"));
    assert!(
        f.iter().any(|f| f.id == "browser_queue"),
        "queueing in the browser is called out"
    );
}

#[test]
fn errors_are_counted_by_kind_and_excluded_from_latency() {
    let mut r = report_of(vec![("g".into(), None, synthetic(100.0, 10.0, 5, "x"))]);
    let failed = RequestRecorder::new(0.0, None, None).fail(
        30000.0,
        Outcome::Timeout {
            message: "30 s".into(),
        },
    );
    let mut rec = r.requests[0].clone();
    rec.outcome = failed.outcome.clone();
    rec.metrics = RequestMetrics::compute(&failed, &MetricsConfig::default());
    r.requests.push(rec);
    let agg = r.aggregates();
    assert_eq!(agg.errors.get("timeout"), Some(&1));
    assert_eq!(agg.ttft.unwrap().count, 1);
    assert_eq!(agg.goodput, 0.5);
}

#[test]
fn a_report_of_a_newer_version_or_missing_a_field_is_refused() {
    let report = report_of(vec![(
        "c=1".to_owned(),
        Some(1.0),
        synthetic(800.0, 65.0, 60, "Sure, here's the answer:"),
    )]);
    let mut newer = serde_json::to_value(&report).unwrap();
    newer["version"] = serde_json::json!(99);
    assert_eq!(
        ttft_core::report::read_json(newer.to_string().as_bytes()),
        Err(ReportFileError::NewerVersion(99))
    );
    assert!(matches!(
        ttft_core::report::read_json(b"{\"version\":1}"),
        Err(ReportFileError::BadField(_))
    ));
}

#[test]
fn requests_for_each_api_style_and_no_secrets() {
    use ttft_core::dialect::Dialect;
    use ttft_core::request::{
        GenerationParams, auth_header, build_request, filler_text, normalise_base,
    };
    let p = GenerationParams {
        model: "m".into(),
        messages: vec![
            ("system".into(), "be brief".into()),
            ("user".into(), "hi".into()),
        ],
        max_tokens: 32,
        temperature: Some(0.0),
        seed: Some(1),
        continuous_usage: true,
        ignore_eos: true,
        response_format: None,
        tools: None,
        extra_body: Some(serde_json::json!({"cache_prompt": false})),
    };
    assert_eq!(normalise_base("http://h:8000/v1/"), "http://h:8000");
    let r = build_request("http://h:8000/v1", None, &p);
    assert_eq!(r.url, "http://h:8000/v1/chat/completions");
    let b: serde_json::Value = serde_json::from_str(&r.body).unwrap();
    assert_eq!(b["stream"], true);
    assert_eq!(b["stream_options"]["include_usage"], true);
    assert_eq!(b["stream_options"]["continuous_usage_stats"], true);
    assert_eq!(b["ignore_eos"], true);
    assert_eq!(b["cache_prompt"], false);
    // OpenAI's own API (and Azure OpenAI) answers 400 to ignore_eos: left out, and said.
    for base in [
        "https://api.openai.com/v1",
        "https://API.OpenAI.com:443",
        "https://my-res.openai.azure.com/openai",
    ] {
        let b: serde_json::Value =
            serde_json::from_str(&build_request(base, None, &p).body).unwrap();
        assert!(b.get("ignore_eos").is_none(), "{base}");
        assert_eq!(b["seed"], 1, "{base}: other sampling fields still sent");
        let note = ttft_core::request::ignore_eos_note(base, None, true).expect(base);
        assert!(note.contains("not sent"), "{note}");
    }
    for base in [
        "http://api.openai.com.evil.example",
        "http://localhost:8000/api.openai.com",
    ] {
        let b: serde_json::Value =
            serde_json::from_str(&build_request(base, None, &p).body).unwrap();
        assert_eq!(b["ignore_eos"], true, "{base}: not OpenAI's host");
        assert!(ttft_core::request::ignore_eos_note(base, None, true).is_none());
    }
    assert!(ttft_core::request::ignore_eos_note("https://api.openai.com", None, false).is_none());
    assert!(
        ttft_core::request::ignore_eos_note("http://o:11434", Some(Dialect::OllamaNative), true)
            .is_some_and(|n| n.contains("Ollama"))
    );
    let a = build_request("https://api.anthropic.com", Some(Dialect::Anthropic), &p);
    let b: serde_json::Value = serde_json::from_str(&a.body).unwrap();
    assert_eq!(a.url, "https://api.anthropic.com/v1/messages");
    assert_eq!(b["system"], "be brief");
    assert_eq!(b["messages"].as_array().unwrap().len(), 1);
    assert!(
        a.headers
            .iter()
            .any(|(k, _)| k == "anthropic-dangerous-direct-browser-access")
    );
    assert_eq!(
        build_request("http://o:11434", Some(Dialect::OllamaNative), &p).url,
        "http://o:11434/api/chat"
    );
    assert_eq!(
        build_request("http://t", Some(Dialect::TgiNative), &p).url,
        "http://t/generate_stream"
    );
    assert_eq!(
        build_request("http://x", Some(Dialect::OpenAiResponses), &p).url,
        "http://x/v1/responses"
    );
    for d in Dialect::ALL {
        let r = build_request("http://x", Some(d), &p);
        assert!(
            !r.headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("authorization") || k == "x-api-key")
        );
    }
    assert_eq!(auth_header(Some(Dialect::Anthropic), "k").0, "x-api-key");
    assert_eq!(auth_header(None, "k").1, "Bearer k");
    assert_eq!(filler_text(100).len(), 400);
}

/// A chat stream: headers at `headers`, then each `(at, delta)` as one chunk (`delta` is the
/// JSON of the delta object), the finish and `[DONE]` 1 ms after the last.
fn deltas(headers: f64, chunks: &[(f64, &str)]) -> RequestTimeline {
    let mut r = RequestRecorder::new(0.0, None, None);
    r.on_headers(headers, 200, Some("text/event-stream"));
    for (at, delta) in chunks {
        r.on_read(*at, format!("data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":null}}]}}\n\n").as_bytes());
    }
    let end = chunks.last().map_or(headers, |c| c.0) + 1.0;
    r.on_read(end, b"data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
    r.finish(end)
}

#[test]
fn first_token_four_ways_and_a_tool_call_first_turn_has_a_ttft() {
    let thinking = deltas(
        20.0,
        &[
            (100.0, r#"{"reasoning_content":"Let me see"}"#),
            (300.0, r#"{"content":"Sure! "}"#),
            (340.0, r#"{"content":"Paris is the capital."}"#),
        ],
    );
    let tool = deltas(
        30.0,
        &[
            (
                150.0,
                r#"{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"get_weather","arguments":""}}]}"#,
            ),
            (
                170.0,
                r#"{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":\"Paris\"}"}}]}"#,
            ),
        ],
    );
    let plain = deltas(40.0, &[(200.0, r#"{"content":"Paris."}"#)]);
    let refusal = deltas(50.0, &[(250.0, r#"{"refusal":"I can't help with that."}"#)]);
    let r = report_of(
        [thinking, tool, plain, refusal]
            .into_iter()
            .map(|tl| ("chat".to_owned(), None, tl))
            .collect(),
    );
    let m: Vec<&RequestMetrics> = r.requests.iter().map(|q| &q.metrics).collect();
    // Reasoning first: first byte 20, first token 100 (reasoning), first answer 300, meaningful
    // 340 (after the opener "Sure! ").
    assert_eq!(
        (
            m[0].ttfb_ms,
            m[0].ttft_ms,
            m[0].first_answer_ms,
            m[0].meaningful_ms
        ),
        (Some(20.0), Some(100.0), Some(300.0), Some(340.0))
    );
    assert_eq!(m[0].ttft_kind, Some(TtftKind::Reasoning));
    // A turn that only calls a tool: its first token is the call's first fragment, never blank;
    // it has no answer, so no first answer and no meaningful token.
    assert_eq!(
        (m[1].ttft_ms, m[1].first_answer_ms, m[1].meaningful_ms),
        (Some(150.0), None, None)
    );
    assert_eq!(m[1].ttft_kind, Some(TtftKind::ToolCall));
    // A plain answer: all three token figures at its one piece.
    assert_eq!(
        (m[2].ttft_ms, m[2].first_answer_ms, m[2].meaningful_ms),
        (Some(200.0), Some(200.0), Some(200.0))
    );
    // A refusal takes the answer's place: the reader sees it as the answer.
    assert_eq!(
        (m[3].ttft_ms, m[3].first_answer_ms, m[3].meaningful_ms),
        (Some(250.0), Some(250.0), Some(250.0))
    );
    assert_eq!(m[3].ttft_kind, Some(TtftKind::Refusal));

    let agg = r.aggregates();
    let (ttfb, ttft) = (agg.ttfb.unwrap(), agg.ttft.unwrap());
    let (answer, meaningful) = (agg.first_answer.unwrap(), agg.meaningful.unwrap());
    assert_eq!((ttfb.count, ttft.count), (4, 4), "every request has both");
    assert_eq!(
        (answer.count, meaningful.count),
        (3, 3),
        "not the tool call"
    );
    assert!((ttfb.p50 - 35.0).abs() < 1e-9);
    assert!((ttft.p50 - 175.0).abs() < 1e-9, "100, 150, 200, 250");
    assert!((answer.p50 - 250.0).abs() < 1e-9, "200, 250, 300");
    assert!((meaningful.p50 - 250.0).abs() < 1e-9, "200, 250, 340");
    assert_eq!((agg.reasoning_first, agg.tool_call_first), (1, 1));
    // Aggregates saved before these fields still read.
    let mut v = serde_json::to_value(&agg).unwrap();
    for k in ["first_answer", "tool_call_first", "experience"] {
        v.as_object_mut().unwrap().remove(k);
    }
    let old: ttft_core::report::Aggregates = serde_json::from_value(v).unwrap();
    assert_eq!((old.first_answer, old.tool_call_first), (None, 0));
    // The CSV export carries the first answer beside TTFT.
    let csv = r.to_csv();
    assert!(csv.starts_with(
        "index,group,level,warmup,outcome,ttfb_ms,ttft_ms,first_answer_ms,meaningful_ms,"
    ));
    assert!(
        csv.lines()
            .nth(1)
            .unwrap()
            .contains(",20.000,100.000,300.000,340.000,")
    );
    assert!(csv.lines().nth(2).unwrap().contains(",30.000,150.000,,,"));
}

#[test]
fn aggregates_carry_the_runs_experience_with_the_reports_settings() {
    // Model A: first word at 0.8 s, 15 words/s, faster than reading: QoE 1. Model B: first
    // word at 3.5 s, 2.5 s after the expected 1 s, 100 words (L = 25 s at 4 words/s): QoE
    // ((25 − 2.5) / 25)² = 0.81.
    let a = report_of(
        (0..3)
            .map(|_| ("a".into(), None, synthetic(800.0, 65.0, 100, "It")))
            .collect(),
    );
    let b = report_of(
        (0..3)
            .map(|_| ("b".into(), None, synthetic(3500.0, 40.0, 100, "It")))
            .collect(),
    );
    let (ea, eb) = (a.aggregates().experience, b.aggregates().experience);
    assert_eq!((ea.reading_requests, eb.reading_requests), (3, 3));
    // While a run streams, everything but the experience scores is computed the same way.
    let live = a.live_aggregates();
    assert_eq!(live.experience, ExperienceSummary::default());
    assert_eq!(
        Aggregates {
            experience: ExperienceSummary::default(),
            ..a.aggregates()
        },
        live
    );
    assert!((ea.qoe_p50.unwrap() - 1.0).abs() < 1e-9, "{ea:?}");
    assert!((eb.qoe_p50.unwrap() - 0.81).abs() < 1e-9, "{eb:?}");
    assert!((eb.qoe_p10.unwrap() - 0.81).abs() < 1e-9);
    assert_eq!((ea.with_waits, eb.with_waits), (0, 0));
    // Fluidity judges the pace against the reader's 187.5 ms a token: B's first token misses
    // 1 + ⌊(3500 − 1000) / 187.5⌋ = 14 deadlines, its 99 gaps of 40 ms none: 14 / 113. A's
    // first token is on time and its 65 ms gaps are faster than anyone reads: 0 of 100.
    assert!(
        (eb.fluidity_p99_miss_rate.unwrap() - 14.0 / 113.0).abs() < 1e-9,
        "{eb:?}"
    );
    assert_eq!(ea.fluidity_p99_miss_rate, Some(0.0), "{ea:?}");
    // Etalon's 50 ms gaps (a server's smoothness target; the studio's default before) say the
    // opposite: B misses
    // 1 + ⌊(3500 − 1000) / 50⌋ = 51 of 150; A banks 200 ms with its first token, its 65 ms
    // gaps spend 15 ms each: 13 met, then 86 missed.
    let scored_at_50 = |r: &ttft_core::report::Report| {
        r.clone()
            .with_experience(ExperienceConfig::before_reader_pace())
            .aggregates()
            .experience
    };
    let (ea50, eb50) = (scored_at_50(&a), scored_at_50(&b));
    assert!((eb50.fluidity_p99_miss_rate.unwrap() - 51.0 / 150.0).abs() < 1e-9);
    assert!((ea50.fluidity_p99_miss_rate.unwrap() - 0.86).abs() < 1e-9);
    assert!(ea.fluid_token_rate.unwrap() < eb.fluid_token_rate.unwrap());

    // The report's own settings score it: a reader who expects the first word at 4 s is
    // served fully by B.
    let patient = ExperienceConfig {
        reading: ReadingConfig {
            expected_ttft_ms: 4000.0,
            ..ReadingConfig::default()
        },
        ..ExperienceConfig::default()
    };
    let b2 = b.clone().with_experience(patient);
    assert!((b2.aggregates().experience.qoe_p50.unwrap() - 1.0).abs() < 1e-9);
    // The settings travel with the file; a file written without them (when they were the
    // defaults of the time) opens with those defaults, so its figures do not change.
    let back = ttft_core::report::read_json(b2.to_json_pretty().as_bytes()).unwrap();
    assert_eq!(back.experience, patient);
    let mut older = serde_json::to_value(&b).unwrap();
    older.as_object_mut().unwrap().remove("experience");
    let older = ttft_core::report::read_json(older.to_string().as_bytes()).unwrap();
    assert_eq!(older.experience, ExperienceConfig::before_reader_pace());
    assert_eq!(older.aggregates().experience, eb50);
}
