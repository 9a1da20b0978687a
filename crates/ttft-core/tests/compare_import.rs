//! Importing other tools' result files, and comparing runs.

use serde_json::json;
use ttft_core::compare::{compare, crossover, tokens_visible};
use ttft_core::import::{Format, ImportError, import};
use ttft_core::metrics::TokenSource;
use ttft_core::report::ReportFileError;

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
    let cmp = compare(&["A", "B"], &[a.aggregates(), b.aggregates()]);
    assert_eq!(cmp.first_token_winner, Some(0));
    assert_eq!(cmp.finish_winner, Some(1), "200 tokens: B finishes first");
    let c = cmp.crossover.unwrap();
    assert_eq!((c.early, c.late), (0, 1));
    assert!((c.at_token - 109.0).abs() < 1e-6, "{}", c.at_token);
    assert!((c.at_ms - 7820.0).abs() < 1e-6, "{}", c.at_ms);
    assert!(
        cmp.lesson
            .contains("“A” shows its first token 2.70 s sooner"),
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
    let a = import(&vllm_file("a", 3, 0.3, 0.02, 50))
        .unwrap()
        .1
        .remove(0);
    let b = import(&vllm_file("b", 3, 0.9, 0.05, 50))
        .unwrap()
        .1
        .remove(0);
    let cmp = compare(&["fast", "slow"], &[a.aggregates(), b.aggregates()]);
    assert_eq!(cmp.first_token_winner, Some(0));
    assert_eq!(cmp.finish_winner, Some(0));
    assert!(cmp.crossover.is_none());
    assert!(
        cmp.lesson.contains("“fast” is ahead both"),
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
