//! Time to second token, per-user output tokens/s and per-user prefill tokens/s: each computed
//! from a request's arrivals and usage (never guessed when the server said nothing), a run's
//! percentiles with their intervals, the compare table's rows and their Holm-corrected
//! differences, and the exports that carry them.

use ttft_core::compare::compare_reports;
use ttft_core::differences::Confidence;
use ttft_core::metrics::{MetricsConfig, RequestMetrics};
use ttft_core::report::{Aggregates, SharedFrom};
use ttft_core::run_intervals::{Figure, PerRequest, RunSamples};
use ttft_core::run_stats::RunStats;
use ttft_core::summary_file::{summary_csv, summary_json};
use ttft_core::timeline::{RequestRecorder, RequestTimeline};
use ttft_fixtures::user_figures::{record, run, timeline};

fn metrics(tl: &RequestTimeline) -> RequestMetrics {
    RequestMetrics::compute(tl, &MetricsConfig::default())
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

/// Reads of a streamed body, each `(at, text)`.
fn streamed(reads: &[(f64, &str)]) -> RequestTimeline {
    let mut r = RequestRecorder::new(0.0, None, None);
    r.on_headers(1.0, 200, Some("text/event-stream"));
    for (at, text) in reads {
        r.on_read(*at, text.as_bytes());
    }
    r.finish(reads.last().map_or(2.0, |r| r.0))
}

#[test]
fn each_figure_comes_from_the_arrivals_and_the_reported_usage() {
    // First token at 100 ms, then 130, 150, 170; the stream ends at 200 (finish, usage).
    let m = metrics(&timeline(&[100.0, 130.0, 150.0, 170.0], 200.0, Some(500)));
    assert!(close(m.ttst_ms(), 130.0), "{:?}", m.ttst_ms());
    // 3 tokens after the first over 70 ms, the last token's arrival, not the stream's end:
    // the decode rate (what peers call output throughput per user) counts the tail.
    assert!(close(m.user_output_tokens_per_s(), 3.0 / 70.0 * 1000.0));
    assert!(close(m.decode_tokens_per_s, 3.0 / 100.0 * 1000.0));
    // 500 prompt tokens the server reported, read in 100 ms.
    assert!(close(m.prefill_tokens_per_s(), 5000.0));
    // A slower second arrival moves the time to second token and nothing before it.
    let later = metrics(&timeline(&[100.0, 180.0, 190.0, 200.0], 230.0, Some(500)));
    assert!(close(later.ttst_ms(), 180.0));
    assert_eq!(later.ttft_ms, m.ttft_ms);
}

#[test]
fn without_reported_usage_there_is_no_prefill_figure() {
    let m = metrics(&timeline(&[100.0, 130.0, 150.0, 170.0], 200.0, None));
    assert_eq!(m.prompt_tokens, None);
    assert_eq!(
        m.prefill_tokens_per_s(),
        None,
        "the prompt's length is never guessed"
    );
    // The other two need no usage: one estimated token per chunk.
    assert!(close(m.ttst_ms(), 130.0));
    assert!(close(m.user_output_tokens_per_s(), 3.0 / 70.0 * 1000.0));
}

#[test]
fn a_one_token_answer_has_no_second_token_and_no_per_user_rate() {
    let m = metrics(&timeline(&[100.0], 120.0, Some(50)));
    assert_eq!(m.output_tokens, 1);
    assert_eq!(m.ttst_ms(), None);
    assert_eq!(m.user_output_tokens_per_s(), None);
    assert!(
        close(m.prefill_tokens_per_s(), 500.0),
        "its prompt was read"
    );
}

#[test]
fn a_first_arrival_of_several_tokens_is_not_counted_as_one() {
    // Continuous usage: the first chunk carries 3 tokens, then one each 20 ms.
    let chunk = |text: &str, n: u32| {
        format!(
            "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{text}\"}}}}],\"usage\":{{\"prompt_tokens\":40,\"completion_tokens\":{n}}}}}\n\n"
        )
    };
    let end = "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: {\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":40,\"completion_tokens\":5}}\n\ndata: [DONE]\n\n";
    let (a, b, c) = (chunk("abc", 3), chunk("d", 4), chunk("e", 5));
    let m = metrics(&streamed(&[
        (100.0, &a),
        (120.0, &b),
        (140.0, &c),
        (160.0, end),
    ]));
    assert_eq!(m.output_tokens, 5);
    assert_eq!(m.gap_tokens, [Some(1), Some(1)]);
    // 2 tokens came after the first arrival, over 40 ms: 50/s, not (5 − 1) / 40 ms.
    assert!(close(m.user_output_tokens_per_s(), 50.0), "{m:?}");
    assert!(close(m.ttst_ms(), 120.0));
    assert!(close(m.prefill_tokens_per_s(), 400.0));
}

#[test]
fn an_answer_not_streamed_has_none_of_them() {
    let body = "{\"object\":\"chat.completion\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"Hello there\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2,\"total_tokens\":7}}";
    let mut r = RequestRecorder::new(0.0, None, None);
    r.on_headers(1.0, 200, Some("application/json"));
    r.on_read(300.0, body.as_bytes());
    let m = metrics(&r.finish(300.0));
    assert!(!m.streamed);
    assert_eq!(m.prompt_tokens, Some(5));
    assert_eq!(
        (
            m.ttst_ms(),
            m.user_output_tokens_per_s(),
            m.prefill_tokens_per_s()
        ),
        (None, None, None),
        "its TTFT is the whole answer's"
    );
}

#[test]
fn with_several_choices_they_follow_the_primary_choice() {
    let piece = |choice: u32, text: &str| {
        format!(
            "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":{choice},\"delta\":{{\"content\":\"{text}\"}}}}]}}\n\n"
        )
    };
    let end = "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"},{\"index\":1,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: {\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":5}}\n\ndata: [DONE]\n\n";
    let reads = [
        (100.0, piece(0, "a")),
        (110.0, piece(1, "b")),
        (130.0, piece(0, " c")),
        (140.0, piece(1, " d")),
        (150.0, piece(0, " e")),
        (160.0, end.to_owned()),
    ];
    let reads: Vec<(f64, &str)> = reads.iter().map(|(t, s)| (*t, s.as_str())).collect();
    let m = metrics(&streamed(&reads));
    assert_eq!(m.choices.len(), 2);
    // Choice 0's second arrival, not choice 1's first (110 ms).
    assert!(close(m.ttst_ms(), 130.0), "{:?}", m.ttst_ms());
    // One usage for both choices: choice 0's own tokens are not known.
    assert_eq!(m.user_output_tokens_per_s(), None);
    assert!(close(m.prefill_tokens_per_s(), 100.0));
}

#[test]
fn a_runs_percentiles_have_intervals_as_every_run_statistic() {
    let r = run("a", 60, (200.0, 40.0, 20.0), Some(1000));
    let agg = r.aggregates();
    let samples = RunSamples::of(&r, &agg);
    let ok: Vec<&RequestMetrics> = r.requests.iter().map(|q| &q.metrics).collect();
    type Of = fn(&RequestMetrics) -> Option<f64>;
    let figures: [(PerRequest, Option<ttft_core::stats::Summary>, Of); 3] = [
        (PerRequest::Ttst, agg.ttst, RequestMetrics::ttst_ms),
        (
            PerRequest::UserOutputRate,
            agg.user_output_tokens_per_s,
            RequestMetrics::user_output_tokens_per_s,
        ),
        (
            PerRequest::PrefillRate,
            agg.prefill_tokens_per_s,
            RequestMetrics::prefill_tokens_per_s,
        ),
    ];
    for (of, summary, value) in figures {
        let values: Vec<f64> = ok.iter().filter_map(|m| value(m)).collect();
        assert_eq!(values.len(), 60, "{of:?}");
        let s = summary.unwrap_or_else(|| panic!("{of:?} has no summary"));
        assert_eq!(s.count, 60);
        for (pct, v) in [(50u8, s.p50), (90, s.p90), (99, s.p99)] {
            let expected = ttft_core::stats::percentile(&values, f64::from(pct)).unwrap();
            assert!((v - expected).abs() < 1e-9, "{of:?} P{pct}");
        }
        let p50 = samples
            .estimate(Figure::Percentile { of, pct: 50 }, 0.95)
            .unwrap();
        let i = p50.interval.expect("60 requests give a median's interval");
        assert!(
            i.lo <= s.p50 && s.p50 <= i.hi && i.lo < i.hi,
            "{of:?}: {i:?}"
        );
        assert!((p50.value - s.p50).abs() < 1e-9);
        // 60 requests are too few for a P99's interval: the estimate says how many would do.
        let p99 = samples
            .estimate(Figure::Percentile { of, pct: 99 }, 0.95)
            .unwrap();
        assert!(p99.interval.is_none() && p99.needs.is_some_and(|n| n > 60));
    }
    // While a run streams the figures are there too.
    assert_eq!(r.live_aggregates().ttst, agg.ttst);
    // A run whose server reported no usage has no prefill figure, and no estimate of one.
    let bare = run("bare", 60, (200.0, 40.0, 20.0), None);
    let bare_agg = bare.aggregates();
    assert_eq!(bare_agg.prefill_tokens_per_s, None);
    assert!(bare_agg.ttst.is_some() && bare_agg.user_output_tokens_per_s.is_some());
    let bare_samples = RunSamples::of(&bare, &bare_agg);
    let prefill = Figure::Percentile {
        of: PerRequest::PrefillRate,
        pct: 50,
    };
    assert_eq!(bare_samples.estimate(prefill, 0.95), None);
}

/// Seeded simulation: TTFT uniform on 100–200 ms and a first gap uniform on 10–30 ms make a
/// time to second token symmetric about 170 ms, and 1,000 prompt tokens over that TTFT a
/// prefill rate whose median is 1,000 / 150 ms. Their 95 % intervals from 40 requests cover
/// those medians about 95 % of the time (order statistics: at least that, up to sampling).
#[test]
fn the_medians_intervals_cover_the_true_medians() {
    let mut rng = fastrand::Rng::with_seed(32);
    let trials = 200;
    let (mut ttst_in, mut prefill_in) = (0, 0);
    for _ in 0..trials {
        let records = (0..40)
            .map(|i| {
                let ttft = rng.f64().mul_add(100.0, 100.0);
                let second = ttft + rng.f64().mul_add(20.0, 10.0);
                record(
                    i,
                    0.0,
                    &[ttft, second, second + 20.0],
                    second + 25.0,
                    Some(1000),
                )
            })
            .collect();
        let r = ttft_fixtures::report_file::report(records);
        let agg = r.live_aggregates();
        let samples = RunSamples::of(&r, &agg);
        let covers = |of: PerRequest, truth: f64| {
            let e = samples.estimate(Figure::Percentile { of, pct: 50 }, 0.95);
            let i = e.and_then(|e| e.interval).expect("40 requests");
            i.lo <= truth && truth <= i.hi
        };
        ttst_in += usize::from(covers(PerRequest::Ttst, 170.0));
        prefill_in += usize::from(covers(PerRequest::PrefillRate, 1000.0 / 150.0 * 1000.0));
    }
    for (what, n) in [("TTST", ttst_in), ("prefill", prefill_in)] {
        let rate = n as f64 / f64::from(trials);
        assert!(
            (0.90..=1.0).contains(&rate),
            "{what}: covered {rate} of trials"
        );
    }
}

#[test]
fn the_compare_table_has_their_rows_and_tells_their_differences_from_noise() {
    let a = run("a", 60, (200.0, 40.0, 20.0), Some(1000));
    let slower = run("b", 60, (300.0, 90.0, 30.0), Some(1000));
    let rows = [
        "Time to second token P50",
        "Per-user output tokens/s P50",
        "Per-user prefill tokens/s P50",
    ];
    let (_, _, cmp) = compare_reports(&["a", "b"], &[&a, &slower], Confidence::default());
    for name in rows {
        let row = cmp.rows.iter().find(|r| r.metric == name).expect(name);
        assert!(matches!(
            row.figure,
            Some(Figure::Percentile { pct: 50, .. })
        ));
        assert!(
            row.estimates
                .iter()
                .all(|e| e.is_some_and(|e| e.interval.is_some())),
            "{name}: {:?}",
            row.estimates
        );
        assert_eq!(row.best, Some(0), "{name}: the first run is faster");
        let d = row.differences[1].expect(name);
        let i = d.interval.expect("60 requests a side");
        assert!(d.different, "{name}: {d:?}");
        assert!(
            i.lo > 0.0 || i.hi < 0.0,
            "{name}: marked different only with an interval excluding zero"
        );
        if let (Some(adjusted), Some(p)) = (d.adjusted_p, d.p_value) {
            assert!(adjusted >= p, "{name}: Holm-adjusted over the table");
        }
    }
    // The same run twice: nothing to tell.
    let mut again = a.clone();
    again.title = "a again".into();
    let (_, _, same) = compare_reports(&["a", "a again"], &[&a, &again], Confidence::default());
    for name in rows {
        let row = same.rows.iter().find(|r| r.metric == name).expect(name);
        assert!(!row.differences[1].expect(name).different, "{name}");
    }
}

#[test]
fn the_exports_carry_them_with_their_intervals() {
    let a = run("a", 60, (200.0, 40.0, 20.0), Some(1000));
    let csv = summary_csv(&a, 0.95);
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    // The title has no comma here: the row splits as the header does.
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(head.len(), row.len());
    let cell = |c: &str| {
        let at = head
            .iter()
            .position(|h| *h == c)
            .unwrap_or_else(|| panic!("no {c}"));
        row[at].parse::<f64>().unwrap_or(f64::NAN)
    };
    for (key, unit) in [
        ("ttst_p50", "_ms"),
        ("output_per_user_p50", "_tok_s"),
        ("prefill_per_user_p50", "_tok_s"),
    ] {
        let (v, lo, hi) = (
            cell(&format!("{key}{unit}")),
            cell(&format!("{key}_lo{unit}")),
            cell(&format!("{key}_hi{unit}")),
        );
        assert!(lo <= v && v <= hi && lo < hi, "{key}: {v} in [{lo}, {hi}]");
    }
    assert!(head.contains(&"ttst_p99_needs") && head.contains(&"prefill_per_user_p90_tok_s"));
    let agg = a.aggregates();
    assert!((cell("ttst_p50_ms") - agg.ttst.unwrap().p50).abs() < 1e-3);
    let json: serde_json::Value = serde_json::from_str(&summary_json(&a, 0.95)).unwrap();
    assert!(
        json["figures"]["output_per_user_p50_tok_s"].is_number(),
        "{json}"
    );
    assert!(json["intervals"]["prefill_per_user_p50_tok_s"]["lo"].is_number());
    // No usage: no prefill figure in either file, the others still there.
    let bare = run("bare", 60, (200.0, 40.0, 20.0), None);
    let json: serde_json::Value = serde_json::from_str(&summary_json(&bare, 0.95)).unwrap();
    assert!(json["figures"].get("prefill_per_user_p50_tok_s").is_none());
    assert!(json["figures"]["ttst_p50_ms"].is_number());
    // The per-request CSV has each request's figures, the message still last.
    let one = ttft_fixtures::report_file::report(vec![record(
        0,
        0.0,
        &[100.0, 130.0, 150.0, 170.0],
        200.0,
        Some(500),
    )]);
    let csv = one.to_csv();
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .ends_with(",coalesced,ttst_ms,output_per_user_tok_s,prefill_per_user_tok_s,message")
    );
    assert!(
        csv.lines()
            .nth(1)
            .unwrap()
            .ends_with(",false,130.000,42.857,5000.000,\"\""),
        "{csv}"
    );
    // The llm-d report has no field that means them: none is made up.
    for stage in ttft_core::llmd::benchmark_reports(&a).unwrap() {
        for word in ["second", "per_user", "prefill"] {
            assert!(!stage.json.contains(word), "{word} in {}", stage.json);
        }
    }
}

#[test]
fn older_aggregates_read_and_a_link_headline_gets_them_from_its_requests() {
    let r = run("a", 30, (200.0, 40.0, 20.0), Some(1000));
    let agg = r.aggregates();
    // Aggregates saved before these figures still read, without them.
    let mut v = serde_json::to_value(&agg).unwrap();
    for k in ["ttst", "user_output_tokens_per_s", "prefill_tokens_per_s"] {
        assert!(v.as_object_mut().unwrap().remove(k).is_some(), "{k}");
    }
    let old: Aggregates = serde_json::from_value(v).unwrap();
    assert_eq!(old, agg.clone().carried_by_links());
    assert_eq!(
        (
            old.ttst,
            old.user_output_tokens_per_s,
            old.prefill_tokens_per_s
        ),
        (None, None, None)
    );
    // A link's headline carries none of them: the opened run computes them from its requests.
    let mut shared = r.clone();
    shared.shared = Some(SharedFrom {
        format: "r3".into(),
        precision_ms: 0.1,
        left_out: Vec::new(),
        headline: Some(Box::new(old)),
    });
    let opened = shared.aggregates();
    assert_eq!(opened.ttst, agg.ttst);
    assert_eq!(
        opened.user_output_tokens_per_s,
        agg.user_output_tokens_per_s
    );
    assert_eq!(opened.prefill_tokens_per_s, agg.prefill_tokens_per_s);
}
