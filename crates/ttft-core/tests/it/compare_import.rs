//! Importing other tools' result files, and comparing runs.

use serde_json::json;
use ttft_core::compare::Unit;
use ttft_core::compare::lesson::first_words_and_finish;
use ttft_core::compare::{Comparison, compare_reports, crossover, tokens_visible};
use ttft_core::differences::Confidence;
use ttft_core::import::{Format, ImportError, import, import_files};
use ttft_core::metrics::{MetricsConfig, TokenSource};
use ttft_core::report::{EndpointInfo, Report, ReportFileError, RequestRecord};
use ttft_core::run_stats::RunStats;
use ttft_core::timeline::RequestRecorder;

/// A `vllm bench serve --save-result --save-detailed` file of `n` requests, each with the given
/// TTFT and `tokens` tokens one per chunk `itl` seconds apart.
fn vllm_file(model: &str, n: usize, ttft_s: f64, itl_s: f64, tokens: usize) -> String {
    json!({
        "date": "20261130-101500",
        "backend": "openai-chat",
        "model_id": model,
        "max_concurrency": 4,
        "completed": n,
        "median_ttft_ms": ttft_s * 1e3,
        "input_lens": vec![512; n],
        "output_lens": vec![tokens; n],
        "ttfts": vec![ttft_s; n],
        "itls": vec![vec![itl_s; tokens - 1]; n],
        "generated_texts": vec!["Paris is the capital."; n],
        "errors": vec![""; n],
    })
    .to_string()
}

#[test]
fn vllm_detailed_result_becomes_a_report_in_milliseconds() {
    let (format, reports) = import(&vllm_file("llama", 3, 0.25, 0.02, 11)).unwrap();
    assert_eq!(format, Format::Vllm);
    let r = &reports[0];
    assert_eq!(r.requests.len(), 3);
    assert_eq!(r.endpoint.model, "llama");
    assert_eq!(r.requests[0].group, "c=4");
    let m = &r.requests[0].metrics;
    assert!((m.ttft_ms.unwrap() - 250.0).abs() < 1e-9);
    assert_eq!(m.itl_ms.len(), 10);
    assert!(
        (m.e2e_ms.unwrap() - 450.0).abs() < 1e-9,
        "E2E = TTFT + sum of gaps"
    );
    assert!((m.tpot_ms.unwrap() - 20.0).abs() < 1e-9);
    assert_eq!(m.prompt_tokens, Some(512));
    assert_eq!(m.token_source, TokenSource::Imported);
    assert!(!m.coalesced);
    let agg = r.aggregates();
    assert!((agg.itl.unwrap().p50 - 20.0).abs() < 1e-9);
    assert_eq!(agg.count, 3);
}

#[test]
fn vllm_chunks_carrying_several_tokens_are_flagged_not_split() {
    let mut v: serde_json::Value = serde_json::from_str(&vllm_file("m", 1, 0.1, 0.03, 5)).unwrap();
    v["output_lens"] = json!([20]); // 20 tokens in 5 chunks
    let (_, reports) = import(&v.to_string()).unwrap();
    let m = &reports[0].requests[0].metrics;
    assert!(m.coalesced);
    assert!((m.tokens_per_arrival - 4.0).abs() < 1e-9);
    assert!((m.tpot_ms.unwrap() - 120.0 / 19.0).abs() < 1e-9);
}

#[test]
fn vllm_errors_and_missing_detail_are_explained() {
    let mut v: serde_json::Value = serde_json::from_str(&vllm_file("m", 2, 0.1, 0.03, 5)).unwrap();
    v["errors"] = json!(["", "Bad Request: context too long"]);
    v["ttfts"] = json!([0.1, 0.0]);
    v["itls"] = json!([[0.03, 0.03, 0.03, 0.03], []]);
    let (_, reports) = import(&v.to_string()).unwrap();
    assert_eq!(reports[0].requests[1].outcome.kind(), "stream_error");
    assert!(
        reports[0].requests[1]
            .outcome
            .message()
            .unwrap()
            .contains("context too long")
    );
    assert_eq!(reports[0].aggregates().errors.get("stream_error"), Some(&1));

    let summary_only = json!({"model_id": "m", "median_ttft_ms": 120.0, "mean_ttft_ms": 130.0});
    assert_eq!(
        import(&summary_only.to_string()).unwrap_err(),
        ImportError::NoPerRequestData
    );
    assert!(
        ImportError::NoPerRequestData
            .to_string()
            .contains("--save-detailed")
    );

    v["input_lens"] = json!([1]);
    let err = import(&v.to_string()).unwrap_err();
    assert!(
        matches!(err, ImportError::BadField { ref field, .. } if field == "input_lens"),
        "{err}"
    );
}

#[test]
fn guidellm_benchmarks_become_groups_with_tpot_and_start_offsets() {
    let req = |start: f64, ttft: f64, itl: f64| {
        json!({"prompt_tokens": 256, "output_tokens": 64, "start_time": start,
               "time_to_first_token_ms": ttft, "inter_token_latency_ms": itl,
               "request_latency": (ttft + 63.0 * itl) / 1e3, "output": "Hello"})
    };
    let file = json!({"benchmarks": [
        {"args": {"strategy": {"type_": "concurrent", "streams": 1}, "model": "qwen"},
         "requests": {"successful": [req(1000.0, 100.0, 10.0), req(1001.0, 110.0, 11.0)], "errored": [], "incomplete": []}},
        {"args": {"strategy": {"type_": "concurrent", "streams": 8}},
         "requests": {"successful": [req(1002.5, 300.0, 25.0)],
                      "errored": [{"start_time": 1003.0, "error": "timeout", "output_tokens": 0}], "incomplete": []}}
    ]});
    let (format, reports) = import(&file.to_string()).unwrap();
    assert_eq!(format, Format::GuideLlm);
    let r = &reports[0];
    assert_eq!(r.endpoint.model, "qwen");
    assert_eq!(r.requests.len(), 4);
    assert_eq!(r.requests[2].group, "c=8");
    assert_eq!(r.requests[2].level, Some(8.0));
    assert!((r.requests[2].start_ms - 2500.0).abs() < 1e-6);
    assert!((r.requests[0].metrics.tpot_ms.unwrap() - 10.0).abs() < 1e-9);
    assert!(
        r.requests[0].metrics.itl_ms.is_empty(),
        "GuideLLM keeps no gaps: none invented"
    );
    let agg = r.aggregates();
    assert_eq!(agg.groups.len(), 2);
    assert_eq!(agg.errors.get("stream_error"), Some(&1));
    assert!(agg.itl.is_none());
    assert!((agg.groups[1].ttft.unwrap().p50 - 300.0).abs() < 1e-9);
}

#[test]
fn studio_reports_round_trip_and_bad_files_say_what_to_do() {
    let (_, reports) = import(&vllm_file("m", 2, 0.2, 0.05, 4)).unwrap();
    let text = serde_json::to_string(&reports[0]).unwrap();
    let (format, back) = import(&text).unwrap();
    assert_eq!(format, Format::Studio);
    assert_eq!(back[0], reports[0]);
    // Re-saved by a tool that writes NaN for a missing number (Python's json.dumps): it still
    // imports, the NaN read as a missing value.
    assert!(text.contains("\"clock_resolution_ms\":null"), "{text}");
    let with_nan = text.replace(
        "\"clock_resolution_ms\":null",
        "\"clock_resolution_ms\":NaN",
    );
    let (format, back) = import(&with_nan).unwrap();
    assert_eq!(format, Format::Studio);
    assert_eq!(back[0], reports[0]);
    let (_, files) = import_files(&[("run.json", with_nan.as_str())])
        .unwrap()
        .remove(0);
    assert_eq!(files[0], reports[0]);

    let mut newer: serde_json::Value = serde_json::from_str(&text).unwrap();
    newer["version"] = json!(99);
    assert_eq!(
        import(&newer.to_string()).unwrap_err(),
        ImportError::Report(ReportFileError::NewerVersion(99))
    );
    assert!(matches!(import("not json"), Err(ImportError::NotJson(_))));
    assert_eq!(
        import("{\"hello\": 1}").unwrap_err(),
        ImportError::UnknownFormat
    );
    assert_eq!(import("[1,2]").unwrap_err(), ImportError::UnknownFormat);
    assert_eq!(
        import("{\"benchmarks\": []}").unwrap_err(),
        ImportError::Empty
    );
}

/// The comparison of runs at the default 95 %.
fn cmp_of(names: &[&str], runs: &[&Report]) -> Comparison {
    compare_reports(names, runs, Confidence::default()).2
}

#[test]
fn the_articles_two_models_cross_at_token_109() {
    let a = import(&vllm_file("model-a", 5, 0.8, 0.065, 200))
        .unwrap()
        .1
        .remove(0);
    let b = import(&vllm_file("model-b", 5, 3.5, 0.040, 200))
        .unwrap()
        .1
        .remove(0);
    let cmp = cmp_of(&["A", "B"], &[&a, &b]);
    assert_eq!(cmp.first_token_winner, Some(0));
    assert_eq!(cmp.finish_winner, Some(1), "200 tokens: B finishes first");
    let c = cmp.crossover.unwrap();
    assert_eq!((c.early, c.late), (0, 1));
    assert!((c.at_token - 109.0).abs() < 1e-6, "{}", c.at_token);
    assert!((c.at_ms - 7820.0).abs() < 1e-6, "{}", c.at_ms);
    assert!(
        cmp.lesson.contains(
            "“A” shows its first token 2.70 s sooner than “B” (95 % interval 2.70–2.70 s)"
        ),
        "{}",
        cmp.lesson
    );
    assert!(cmp.lesson.contains("token 109"), "{}", cmp.lesson);
    let ttft = cmp.rows.iter().find(|r| r.metric == "TTFT P50").unwrap();
    assert_eq!(ttft.best, Some(0));
    assert!((ttft.worse_by[1].unwrap() - 3.375).abs() < 1e-9);
    let rate = cmp
        .rows
        .iter()
        .find(|r| r.metric == "Decode rate P50")
        .unwrap();
    assert_eq!(rate.best, Some(1), "higher is better for rates");
    // Below the crossover A shows more text; above it B does.
    assert!(tokens_visible(800.0, 65.0, 5000.0) > tokens_visible(3500.0, 40.0, 5000.0));
    assert!(tokens_visible(800.0, 65.0, 9000.0) < tokens_visible(3500.0, 40.0, 9000.0));
    assert_eq!(tokens_visible(3500.0, 40.0, 3000.0), 0.0);
    assert!(crossover(1, 0, (3500.0, 40.0), (800.0, 65.0)).is_none());
}

#[test]
fn one_run_ahead_on_both_has_no_crossover() {
    let a = import(&vllm_file("a", 8, 0.3, 0.02, 50))
        .unwrap()
        .1
        .remove(0);
    let b = import(&vllm_file("b", 8, 0.9, 0.05, 50))
        .unwrap()
        .1
        .remove(0);
    let cmp = cmp_of(&["fast", "slow"], &[&a, &b]);
    assert_eq!(cmp.first_token_winner, Some(0));
    assert_eq!(cmp.finish_winner, Some(0));
    assert!(cmp.crossover.is_none());
    assert!(
        cmp.lesson.contains(
            "“fast” shows its first token 600 ms sooner than “slow” (95 % interval 600–600 ms), and it finishes first too"
        ),
        "{}",
        cmp.lesson
    );
}

#[test]
fn roofline_context_defaults_to_prompt_plus_half_the_output() {
    let (_, reports) = import(&vllm_file("m", 2, 0.2, 0.05, 101)).unwrap();
    let c = ttft_core::roofline::mean_decode_context(&reports[0]).unwrap();
    assert!((c - (512.0 + 50.5)).abs() < 1e-9, "{c}");
}

/// A run of `n` streamed requests as the studio records them (with replay): the first word at
/// `ttft`, then one word per chunk every `itl` ms, `words` in all; `stall` adds that many ms
/// before word `at`.
fn words_run(n: usize, ttft: f64, itl: f64, words: usize, stall: Option<(usize, f64)>) -> Report {
    let requests = (0..n)
        .map(|i| {
            let mut r = RequestRecorder::new(0.0, None, None);
            r.on_headers(ttft * 0.5, 200, Some("text/event-stream"));
            let mut at = ttft;
            for w in 0..words {
                if let Some((pos, extra)) = stall
                    && pos == w
                {
                    at += extra;
                }
                let chunk = format!(
                    "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\" w{w}\"}}}}]}}\n\n"
                );
                r.on_read(at, chunk.as_bytes());
                at += itl;
            }
            let end = at - itl + 1.0;
            r.on_read(end, format!("data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"stop\"}}],\"usage\":{{\"prompt_tokens\":10,\"completion_tokens\":{words},\"total_tokens\":0}}}}\n\ndata: [DONE]\n\n").as_bytes());
            let tl = r.finish(end);
            RequestRecord::from_timeline(i as u32, "chat".into(), None, &tl, &MetricsConfig::default())
        })
        .collect();
    Report::new("run", EndpointInfo::default(), "chat").with_requests(requests)
}

fn row<'a>(
    cmp: &'a ttft_core::compare::Comparison,
    metric: &str,
) -> &'a ttft_core::compare::MetricRow {
    cmp.rows
        .iter()
        .find(|r| r.metric == metric)
        .unwrap_or_else(|| panic!("no row {metric}"))
}

#[test]
fn a_reader_prefers_the_early_starter_and_the_lesson_says_why() {
    // The article's models, 200 words each. A: first word at 0.8 s, before the expected 1 s,
    // then faster than reading: QoE 1. B: first word 2.5 s late, L = 200 × 250 ms = 50 s:
    // QoE ((50 − 2.5) / 50)² = 0.9025. B still finishes first.
    let (a, b) = (
        words_run(8, 800.0, 65.0, 200, None),
        words_run(8, 3500.0, 40.0, 200, None),
    );
    let cmp = cmp_of(&["model-a", "model-b"], &[&a, &b]);
    assert_eq!(cmp.finish_winner, Some(1));
    assert_eq!(cmp.reader_winner, Some(0));
    // The article's point in one sentence, each difference with its interval: A's first
    // word 2.7 s sooner, B done 2,275 ms sooner (800 + 199 × 65 = 13,735 ms against
    // 3,500 + 199 × 40 = 11,460 ms).
    let guide = first_words_and_finish(&["model-a", "model-b"], &cmp.rows, cmp.confidence).unwrap();
    assert!(guide.trade_off);
    assert_eq!(
        guide.text,
        "model-b finishes its answer 2.27 s sooner (95 % interval 2.27–2.27 s), yet model-a shows its first words 2.70 s earlier (2.70–2.70 s)"
    );
    // Alike runs: nothing is claimed, the sentence says so and what would tell.
    let same = cmp_of(&["model-a", "model-a (2)"], &[&a, &a]);
    let guide =
        first_words_and_finish(&["model-a", "model-a (2)"], &same.rows, same.confidence).unwrap();
    assert!(!guide.trade_off);
    assert!(
        guide.text.starts_with(
            "First words cannot be told apart yet (model-a 800 ms vs model-a (2) 800 ms"
        ) && guide
            .text
            .contains("; whole answers cannot be told apart yet")
            && !guide.text.contains("sooner"),
        "{}",
        guide.text
    );
    // Too few requests for an interval: no lead is claimed, the sentence says how many to run.
    let (a2, b2) = (
        words_run(2, 800.0, 65.0, 200, None),
        words_run(2, 3500.0, 40.0, 200, None),
    );
    let few = cmp_of(&["model-a", "model-b"], &[&a2, &b2]);
    let guide = first_words_and_finish(&["model-a", "model-b"], &few.rows, few.confidence).unwrap();
    assert!(
        !guide.trade_off
            && guide
                .text
                .contains("too few requests for an interval: run at least"),
        "{}",
        guide.text
    );
    assert!(
        cmp.lesson.contains(
            "A reader prefers “model-a”: reading QoE 1.00 vs 0.90 (difference 0.10, 95 % interval 0.10–0.10), because “model-b” keeps them waiting 3.50 s before the first word."
        ),
        "{}",
        cmp.lesson
    );
    assert!(cmp.lesson.contains("Total latency lies"), "{}", cmp.lesson);
    let qoe = row(&cmp, "Reading QoE P50");
    assert_eq!((qoe.unit, qoe.best), (Unit::Score, Some(0)));
    assert!((qoe.values[1].unwrap() - 0.9025).abs() < 1e-9);
    assert!((qoe.worse_by[1].unwrap() - 0.0975).abs() < 1e-9);
    // Nobody waited mid-answer; B's 40 ms gaps keep a faster pace fluid than A's 65 ms.
    assert_eq!(
        row(&cmp, "Requests with reader waits").values,
        vec![Some(0.0), Some(0.0)]
    );
    assert_eq!(
        row(&cmp, "Longest reader wait").values,
        vec![Some(0.0), Some(0.0)]
    );
    // Fluidity judges the pace against the reader's 187.5 ms a token: A is on time
    // throughout; B misses 1 + ⌊(3500 − 1000) / 187.5⌋ = 14 first-token deadlines of 14 + 199.
    // The fastest pace each keeps fluid is still B's (40 ms gaps against 65).
    assert_eq!(row(&cmp, "Fluid token rate").best, Some(1));
    let miss = row(&cmp, "Fluidity P99 miss rate");
    assert_eq!(miss.best, Some(0));
    assert_eq!(miss.values[0], Some(0.0), "{miss:?}");
    assert!(
        (miss.values[1].unwrap() - 14.0 / 213.0).abs() < 1e-9,
        "{miss:?}"
    );
}

#[test]
fn a_stall_mid_answer_loses_the_reader_and_is_named() {
    // Both: first word at 0.5 s, 40 words 50 ms apart. "stalls" waits 6.4 s more before word
    // 20 (at 7.9 s): the reader, done with 20 words at 5.5 s, sits 2.4 s. QoE over [0, 11 s]:
    // 12.5e6 (E to 6 s) + 5000 × 1900 + (5000 + 8100) / 2 × 3100 = 42.305e6 of 50e6.
    let steady = words_run(8, 500.0, 50.0, 40, None);
    let stalls = words_run(8, 500.0, 50.0, 40, Some((20, 6400.0)));
    let cmp = cmp_of(&["stalls", "steady"], &[&stalls, &steady]);
    assert_eq!(cmp.reader_winner, Some(1));
    assert!(
        cmp.lesson.contains(
            "A reader prefers “steady”: reading QoE 1.00 vs 0.85 (difference 0.15, 95 % interval 0.15–0.15), because “stalls” leaves them waiting mid-answer (up to 2.40 s, in 8 of 8 requests)."
        ),
        "{}",
        cmp.lesson
    );
    assert_eq!(
        row(&cmp, "Requests with reader waits").values,
        vec![Some(1.0), Some(0.0)]
    );
    let longest = row(&cmp, "Longest reader wait");
    assert_eq!(longest.best, Some(1));
    assert!((longest.values[0].unwrap() - 2400.0).abs() < 1e-9);
    assert!((row(&cmp, "Reading QoE P50").values[0].unwrap() - 0.8461).abs() < 1e-9);

    // Too close to call, or nothing to read (imports keep no text): said, or left out.
    let cmp = cmp_of(&["x", "y"], &[&steady, &steady]);
    assert_eq!(cmp.reader_winner, None);
    assert!(
        cmp.lesson
            .contains("A reader could not tell “x” and “y” apart on this evidence: reading QoE 1.00 vs 1.00; 95 % interval of the difference 0.00 to 0.00."),
        "{}",
        cmp.lesson
    );
    let bare = import(&vllm_file("m", 2, 0.2, 0.05, 4))
        .unwrap()
        .1
        .remove(0);
    let cmp = cmp_of(&["x", "y"], &[&steady, &bare]);
    assert_eq!(cmp.reader_winner, None);
    assert!(!cmp.lesson.contains("reader"), "{}", cmp.lesson);
}

#[test]
fn too_few_requests_are_said_instead_of_a_verdict() {
    // Three requests a side: a 2.7 s head start on every request, and still no interval can
    // exist, so the lesson claims nothing and says what it needs.
    let a = import(&vllm_file("model-a", 3, 0.8, 0.065, 200))
        .unwrap()
        .1
        .remove(0);
    let b = import(&vllm_file("model-b", 3, 3.5, 0.040, 200))
        .unwrap()
        .1
        .remove(0);
    let cmp = cmp_of(&["A", "B"], &[&a, &b]);
    assert!(!cmp.lesson.contains("sooner"), "{}", cmp.lesson);
    assert!(!cmp.lesson.contains("users will feel"), "{}", cmp.lesson);
    assert!(
        cmp.lesson
            .contains("too few requests for an interval: run at least 4 per side"),
        "{}",
        cmp.lesson
    );
    let ttft = row(&cmp, "TTFT P50");
    let cell = ttft.differences[1].unwrap();
    assert!(!cell.different && cell.interval.is_none(), "{cell:?}");
    assert_eq!(cell.needs_per_side, Some(4));
}

/// An imported vLLM file keeps its per-request values, so its figures get intervals like a
/// run measured here: 20 requests give a TTFT P50 interval that holds the median.
#[test]
fn an_imported_vllm_file_has_a_ttft_p50_interval() {
    use ttft_core::run_intervals::{Figure, PerRequest, RunSamples};
    let mut v: serde_json::Value =
        serde_json::from_str(&vllm_file("llama", 20, 0.25, 0.02, 11)).unwrap();
    v["ttfts"] = json!(
        (0..20)
            .map(|i| 0.2 + 0.01 * f64::from(i))
            .collect::<Vec<_>>()
    );
    let (_, reports) = import(&v.to_string()).unwrap();
    let r = &reports[0];
    let agg = r.aggregates();
    let e = RunSamples::of(r, &agg)
        .estimate(
            Figure::Percentile {
                of: PerRequest::Ttft,
                pct: 50,
            },
            0.95,
        )
        .unwrap();
    let i = e.interval.expect("an interval from 20 imported requests");
    assert_eq!(e.n, 20);
    assert!(i.lo < e.value && e.value < i.hi, "{e:?}");
    assert!(i.contains(agg.ttft.unwrap().p50));
    let rows = ttft_core::summary_file::report_summary_rows(r, 0.95);
    let ttft = rows.iter().find(|x| x.key == "ttft_p50").unwrap();
    assert_eq!(ttft.estimate.and_then(|e| e.interval), Some(i));
}
