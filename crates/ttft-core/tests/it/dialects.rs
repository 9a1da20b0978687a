//! Fixture tests: each server's wire format from the reference document, with its quirks,
//! through framing, classification and per-request metrics.

use ttft_core::dialect::{Dialect, StreamEvent};
use ttft_core::metrics::{MetricsConfig, RequestMetrics, TokenSource, TtftKind};
use ttft_core::timeline::{Outcome, RequestRecorder, RequestTimeline};

/// Feeds `reads` (time in ms, bytes) into a recorder sent at t=0 with headers at 1 ms.
fn record(reads: &[(f64, &str)], dialect: Option<Dialect>) -> RequestTimeline {
    let mut r = RequestRecorder::new(0.0, dialect, None);
    r.on_headers(1.0, 200, Some("text/event-stream"));
    for (at, bytes) in reads {
        r.on_read(*at, bytes.as_bytes());
    }
    let end = reads.last().map_or(2.0, |r| r.0);
    r.finish(end)
}

fn events(tl: &RequestTimeline) -> Vec<&StreamEvent> {
    tl.events.iter().map(|e| &e.event).collect()
}

fn metrics(tl: &RequestTimeline) -> RequestMetrics {
    RequestMetrics::compute(tl, &MetricsConfig::default())
}

const VLLM: &[(f64, &str)] = &[
    (
        100.0,
        "data: {\"id\":\"chatcmpl-95f7\",\"object\":\"chat.completion.chunk\",\"created\":1782114956,\"model\":\"M\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n",
    ),
    (
        140.0,
        "data: {\"id\":\"chatcmpl-95f7\",\"object\":\"chat.completion.chunk\",\"created\":1782114956,\"model\":\"M\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n",
    ),
    (
        180.0,
        "data: {\"id\":\"chatcmpl-95f7\",\"object\":\"chat.completion.chunk\",\"created\":1782114956,\"model\":\"M\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n",
    ),
    (
        220.0,
        "data: {\"id\":\"chatcmpl-95f7\",\"object\":\"chat.completion.chunk\",\"created\":1782114956,\"model\":\"M\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" world\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n",
    ),
    (
        260.0,
        "data: {\"id\":\"chatcmpl-95f7\",\"object\":\"chat.completion.chunk\",\"created\":1782114956,\"model\":\"M\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"!\"},\"logprobs\":null,\"finish_reason\":\"stop\",\"stop_reason\":null}]}\n\n",
    ),
    (
        261.0,
        "data: {\"id\":\"chatcmpl-95f7\",\"object\":\"chat.completion.chunk\",\"created\":1782114956,\"model\":\"M\",\"choices\":[],\"usage\":{\"prompt_tokens\":16,\"total_tokens\":19,\"completion_tokens\":3}}\n\ndata: [DONE]\n\n",
    ),
];

#[test]
fn vllm_role_chunk_with_empty_content_is_not_the_first_token() {
    let tl = record(VLLM, None);
    assert_eq!(tl.dialect, Some(Dialect::OpenAiChat));
    let ev = events(&tl);
    assert_eq!(ev[0], &StreamEvent::Role);
    assert_eq!(ev[1], &StreamEvent::Content("Hello".into()));
    assert_eq!(
        ev[2],
        &StreamEvent::Empty,
        "mid-stream empty content is not a token"
    );
    let m = metrics(&tl);
    assert_eq!(tl.outcome, Outcome::Ok);
    assert_eq!(m.ttfb_ms, Some(1.0));
    assert_eq!(m.ttft_ms, Some(140.0));
    assert_eq!(m.ttft_kind, Some(TtftKind::Answer));
    assert_eq!(
        m.itl_ms,
        vec![80.0, 40.0],
        "gaps between output arrivals; empty delta skipped"
    );
    assert_eq!(m.output_tokens, 3);
    assert_eq!(m.token_source, TokenSource::FinalUsage);
    assert_eq!(m.prompt_tokens, Some(16));
    assert_eq!(m.e2e_ms, Some(261.0));
    assert!((m.tpot_ms.unwrap() - (261.0 - 140.0) / 2.0).abs() < 1e-9);
    assert_eq!(m.text, "Hello world!");
    assert!(!m.coalesced);
}

#[test]
fn vllm_error_then_done_is_a_stream_error_not_success() {
    let tl = record(
        &[
            (
                10.0,
                "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n",
            ),
            (
                20.0,
                "data: {\"error\": {\"message\": \"CUDA out of memory\", \"type\": \"InternalServerError\", \"param\": null, \"code\": 500}}\n\ndata: [DONE]\n\n",
            ),
        ],
        None,
    );
    match &tl.outcome {
        Outcome::StreamError { message } => {
            assert!(message.contains("CUDA out of memory"), "{message}");
            assert!(message.contains("InternalServerError"));
        }
        o => panic!("expected stream error, got {o:?}"),
    }
    // The partial result is kept.
    assert_eq!(metrics(&tl).ttft_ms, Some(10.0));
}

#[test]
fn sglang_all_null_keys_stream_interval_and_error_usage_done() {
    let chunk = |content: &str, finish: &str| {
        format!(
            "data: {{\"id\":\"r\",\"object\":\"chat.completion.chunk\",\"created\":1718000000,\"model\":\"M\",\"choices\":[{{\"index\":0,\"delta\":{{\"role\":null,\"content\":{content},\"reasoning_content\":null,\"tool_calls\":null}},\"logprobs\":null,\"finish_reason\":{finish},\"matched_stop\":null}}],\"usage\":null}}\n\n"
        )
    };
    let role = "data: {\"id\":\"r\",\"object\":\"chat.completion.chunk\",\"created\":1718000000,\"model\":\"M\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"reasoning_content\":null,\"tool_calls\":null},\"logprobs\":null,\"finish_reason\":null,\"matched_stop\":null}],\"usage\":null}\n\n";
    let first = chunk("\"Hello\"", "null");
    let batch = chunk("\" there, how are you\"", "null");
    let fin = chunk("null", "\"stop\"");
    let usage = "data: {\"id\":\"r\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"total_tokens\":21,\"completion_tokens\":12}}\n\ndata: [DONE]\n\n";
    let tl = record(
        &[
            (50.0, role),
            (50.0, &first),
            (90.0, &batch),
            (130.0, &batch),
            (131.0, &fin),
            (132.0, usage),
        ],
        None,
    );
    let m = metrics(&tl);
    assert_eq!(tl.outcome, Outcome::Ok);
    assert_eq!(m.ttft_ms, Some(50.0));
    assert_eq!(m.output_tokens, 12);
    assert_eq!(m.output_arrivals, 3);
    assert!(m.coalesced, "12 tokens in 3 arrivals must be flagged");
    // The finish delta `{}` variant of some releases:
    let tl2 = record(
        &[(
            5.0,
            "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
        )],
        None,
    );
    assert_eq!(events(&tl2)[0], &StreamEvent::Empty);
    // Error, then usage, then [DONE]
    let tl3 = record(
        &[
            (5.0, &first),
            (
                6.0,
                "data: {\"error\": {\"message\": \"boom\", \"code\": 400}}\n\n",
            ),
            (7.0, usage),
        ],
        None,
    );
    assert_eq!(tl3.outcome.kind(), "stream_error");
}

#[test]
fn trtllm_role_without_content_and_trailing_space_and_abort_without_done() {
    let role = "data: {\"id\":\"chatcmpl-7\",\"object\":\"chat.completion.chunk\",\"created\":1750000000,\"model\":\"M\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]} \n\n";
    let tok = "data: {\"id\":\"chatcmpl-7\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\",\"reasoning_content\":\"\"}}]}\n\n";
    let fin = "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\",\"reasoning_content\":\"\"},\"finish_reason\":\"stop\"}]}\n\n";
    let usage = "data: {\"id\":\"chatcmpl-7\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"total_tokens\":10,\"completion_tokens\":1,\"prompt_tokens_details\":{\"cached_tokens\":0}}}\n\ndata: [DONE]\n\n";
    let tl = record(
        &[(30.0, role), (30.0, tok), (31.0, fin), (32.0, usage)],
        None,
    );
    let ev = events(&tl);
    assert_eq!(ev[0], &StreamEvent::Role);
    assert_eq!(
        ev[1],
        &StreamEvent::Content("Hello".into()),
        "empty reasoning_content is ignored"
    );
    assert_eq!(metrics(&tl).ttft_kind, Some(TtftKind::Answer));
    assert_eq!(tl.outcome, Outcome::Ok);
    // Mid-stream failure: the connection just ends.
    let tl = record(&[(30.0, role), (40.0, tok)], None);
    assert_eq!(tl.outcome.kind(), "truncated");
    assert_eq!(metrics(&tl).ttft_ms, Some(40.0));
}

#[test]
fn llamacpp_role_null_progress_timings_and_error_without_done() {
    let progress = "data: {\"choices\":[],\"object\":\"chat.completion.chunk\",\"prompt_progress\":{\"total\":9,\"cache\":0,\"processed\":9,\"time_ms\":10.5}}\n\n";
    let role = "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null}}],\"created\":1750000000,\"id\":\"chatcmpl-Ab12\",\"model\":\"M\",\"system_fingerprint\":\"b6000-1a2b3c4d\",\"object\":\"chat.completion.chunk\"}\n\n";
    let tok = "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"content\":\"Hello\"}}],\"created\":1750000000,\"id\":\"chatcmpl-Ab12\",\"model\":\"M\",\"object\":\"chat.completion.chunk\"}\n\n";
    let fin = "data: {\"choices\":[{\"finish_reason\":\"stop\",\"index\":0,\"delta\":{}}],\"object\":\"chat.completion.chunk\"}\n\n";
    let last = "data: {\"choices\":[],\"object\":\"chat.completion.chunk\",\"usage\":{\"completion_tokens\":12,\"prompt_tokens\":9,\"total_tokens\":21},\"timings\":{\"cache_n\":0,\"prompt_n\":9,\"prompt_ms\":10.5,\"prompt_per_token_ms\":1.17,\"prompt_per_second\":857.1,\"predicted_n\":12,\"predicted_ms\":130.2,\"predicted_per_token_ms\":10.85,\"predicted_per_second\":92.2}}\n\ndata: [DONE]\n\n";
    let tl = record(
        &[
            (20.0, progress),
            (25.0, role),
            (25.0, tok),
            (40.0, tok),
            (41.0, fin),
            (41.0, last),
        ],
        None,
    );
    assert!(matches!(
        events(&tl)[0],
        StreamEvent::Progress {
            total: 9,
            processed: 9
        }
    ));
    let m = metrics(&tl);
    assert_eq!(
        m.ttft_ms,
        Some(25.0),
        "progress and role chunks are not tokens"
    );
    let t = m.server_timings.expect("timings");
    assert_eq!(t.predicted_per_token_ms, Some(10.85));
    assert_eq!(t.prompt_ms, Some(10.5));
    assert_eq!(m.output_tokens, 12);
    let err = record(
        &[
            (25.0, tok),
            (
                30.0,
                "data: {\"error\":{\"code\":500,\"message\":\"slot failed\",\"type\":\"server_error\"}}\n\n",
            ),
        ],
        None,
    );
    match err.outcome {
        Outcome::StreamError { message } => assert!(message.contains("slot failed")),
        o => panic!("{o:?}"),
    }
}

#[test]
fn ollama_openai_compat_has_no_role_chunk_and_tool_calls_arrive_whole() {
    let first = "data: {\"id\":\"chatcmpl-123\",\"object\":\"chat.completion.chunk\",\"created\":1750000000,\"model\":\"llama3.2\",\"system_fingerprint\":\"fp_ollama\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"The\"},\"finish_reason\":null}]}\n\n";
    let tool = "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"id\":\"call_1\",\"index\":0,\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\"}}]},\"finish_reason\":null}]}\n\n";
    let tl = record(
        &[
            (70.0, first),
            (90.0, tool),
            (
                91.0,
                "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n",
            ),
        ],
        None,
    );
    let m = metrics(&tl);
    assert_eq!(
        m.ttft_ms,
        Some(70.0),
        "role together with content is the first token"
    );
    assert_eq!(m.tool_calls.len(), 1);
    assert_eq!(m.tool_calls[0].name.as_deref(), Some("get_weather"));
    assert_eq!(m.tool_calls[0].valid_at_ms, Some(90.0));
}

#[test]
fn ollama_native_ndjson_with_durations_and_error_line() {
    let mut r = RequestRecorder::new(0.0, None, None);
    r.on_headers(1.0, 200, Some("application/x-ndjson"));
    r.on_read(10.0, b"{\"model\":\"llama3.2\",\"created_at\":\"t\",\"message\":{\"role\":\"assistant\",\"content\":\"The\"},\"done\":false}\n");
    r.on_read(30.0, b"{\"model\":\"llama3.2\",\"created_at\":\"t\",\"message\":{\"role\":\"assistant\",\"content\":\" sky\"},\"done\":false}\n{\"model\":\"llama3.2\",\"created_at\":\"t\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\",\"prompt_eval_count\":26,\"prompt_eval_duration\":5000000,\"eval_count\":2,\"eval_duration\":20000000}\n");
    let tl = r.finish(31.0);
    assert_eq!(tl.dialect, Some(Dialect::OllamaNative));
    assert_eq!(tl.outcome, Outcome::Ok);
    let m = metrics(&tl);
    assert_eq!(m.ttft_ms, Some(10.0));
    assert_eq!(m.output_tokens, 2);
    assert_eq!(m.token_source, TokenSource::FinalUsage);
    assert_eq!(m.server_timings.unwrap().predicted_per_token_ms, Some(10.0));
    let mut r = RequestRecorder::new(0.0, None, None);
    r.on_headers(1.0, 200, Some("application/x-ndjson"));
    r.on_read(10.0, b"{\"message\":{\"role\":\"assistant\",\"content\":\"The\"},\"done\":false}\n{\"error\":\"model runner crashed\"}\n");
    assert_eq!(r.finish(11.0).outcome.kind(), "stream_error");
}

#[test]
fn tgi_messages_api_role_on_every_chunk_keepalive_and_error() {
    let c = |content: &str, fin: &str| {
        format!(
            "data: {{\"object\":\"chat.completion.chunk\",\"id\":\"\",\"created\":1706270978,\"model\":\"M\",\"system_fingerprint\":\"3.x-native\",\"choices\":[{{\"index\":0,\"delta\":{{\"role\":\"assistant\",\"content\":\"{content}\"}},\"logprobs\":null,\"finish_reason\":{fin}}}],\"usage\":null}}\n\n"
        )
    };
    let tl = record(
        &[
            (60.0, &c("Deep", "null")),
            (70.0, ":\n\n"),
            (80.0, &c(" learning", "null")),
            (90.0, &c("", "\"stop\"")),
            (91.0, "data: [DONE]\n\n"),
        ],
        None,
    );
    let m = metrics(&tl);
    assert_eq!(m.ttft_ms, Some(60.0));
    assert_eq!(m.itl_ms, vec![20.0]);
    assert_eq!(tl.comments, 1);
    assert_eq!(m.token_source, TokenSource::Estimate);
    assert!(!m.coalesced);
    // Without usage, long chunks are the witness of coalescing.
    let long = c(
        "Deep learning models stream several tokens per chunk here",
        "null",
    );
    let tl = record(
        &[
            (60.0, &long),
            (80.0, &long),
            (90.0, &c("", "\"stop\"")),
            (91.0, "data: [DONE]\n\n"),
        ],
        None,
    );
    assert!(metrics(&tl).coalesced);
    let tl = record(
        &[
            (60.0, &c("Deep", "null")),
            (
                70.0,
                "data: {\"error\":{\"message\":\"Input validation error\",\"http_status_code\":422}}\n\ndata: [DONE]\n\n",
            ),
        ],
        None,
    );
    assert_eq!(tl.outcome.kind(), "stream_error");
}

#[test]
fn tgi_native_generate_stream() {
    let tl = record(
        &[
            (
                10.0,
                "data:{\"index\":1,\"token\":{\"id\":1,\"text\":\"Deep\",\"logprob\":-0.1,\"special\":false},\"generated_text\":null,\"details\":null}\n\n",
            ),
            (
                20.0,
                "data:{\"index\":2,\"token\":{\"id\":2,\"text\":\"</s>\",\"logprob\":-0.1,\"special\":true},\"generated_text\":\"Deep\",\"details\":{\"finish_reason\":\"eos_token\",\"generated_tokens\":2}}\n\n",
            ),
        ],
        None,
    );
    assert_eq!(tl.dialect, Some(Dialect::TgiNative));
    let m = metrics(&tl);
    assert_eq!(m.text, "Deep", "special tokens are not text");
    assert_eq!(m.output_tokens, 2);
    assert_eq!(tl.outcome, Outcome::Ok);
}

#[test]
fn azure_leading_empty_choices_chunk_and_openai_refusal_and_hidden_reasoning() {
    let lead = "data: {\"id\":\"\",\"object\":\"\",\"created\":0,\"model\":\"\",\"prompt_filter_results\":[{\"prompt_index\":0}],\"choices\":[]}\n\n";
    let refusal = "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"I can't help with that.\"},\"finish_reason\":null}],\"usage\":null}\n\n";
    let fin = "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":null}\n\n";
    let usage = "data: {\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":300,\"total_tokens\":305,\"completion_tokens_details\":{\"reasoning_tokens\":290}}}\n\ndata: [DONE]\n\n";
    let tl = record(
        &[(5.0, lead), (900.0, refusal), (901.0, fin), (902.0, usage)],
        None,
    );
    assert_eq!(tl.dialect, Some(Dialect::OpenAiChat));
    let m = metrics(&tl);
    assert_eq!(m.ttft_kind, Some(TtftKind::Refusal));
    assert_eq!(m.ttft_ms, Some(900.0));
    assert_eq!(m.reasoning_tokens, Some(290));
}

#[test]
fn vllm_tool_call_only_turn_times_first_fragment_and_valid_arguments() {
    let frag = |f: &str| {
        format!(
            "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{f}]}},\"finish_reason\":null}}]}}\n\n"
        )
    };
    let tl = record(
        &[
            (
                10.0,
                "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n",
            ),
            (
                50.0,
                &frag(
                    "{\"index\":0,\"type\":\"function\",\"id\":\"chatcmpl-tool-1\",\"function\":{\"name\":\"get_weather\"}}",
                ),
            ),
            (
                60.0,
                &frag("{\"index\":0,\"function\":{\"arguments\":\"{\\\"city\\\": \\\"\"}}"),
            ),
            (
                70.0,
                &frag("{\"index\":0,\"function\":{\"arguments\":\"Paris\\\"}\"}}"),
            ),
            (
                80.0,
                "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n",
            ),
        ],
        None,
    );
    let m = metrics(&tl);
    assert_eq!(m.ttft_ms, Some(50.0));
    assert_eq!(m.ttft_kind, Some(TtftKind::ToolCall));
    assert_eq!(m.tool_calls[0].arguments, "{\"city\": \"Paris\"}");
    assert_eq!(m.tool_calls[0].valid_at_ms, Some(70.0));
}

#[test]
fn reasoning_fields_both_names_and_first_answer_separately() {
    let r = |k: &str, v: &str| {
        format!(
            "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"{k}\":\"{v}\"}}}}]}}\n\n"
        )
    };
    let tl = record(
        &[
            (10.0, &r("reasoning_content", "Think")),
            (20.0, &r("reasoning", "ing")),
            (30.0, &r("content", "Answer")),
            (31.0, "data: [DONE]\n\n"),
        ],
        None,
    );
    let m = metrics(&tl);
    assert_eq!(m.ttft_kind, Some(TtftKind::Reasoning));
    assert_eq!(m.first_reasoning_ms, Some(10.0));
    assert_eq!(m.first_answer_ms, Some(30.0));
    assert_eq!(m.reasoning_text, "Thinking");
}

#[test]
fn continuous_usage_gives_exact_tokens_per_arrival() {
    let c = |text: &str, n: u64| {
        format!(
            "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{text}\"}}}}],\"usage\":{{\"prompt_tokens\":4,\"completion_tokens\":{n},\"total_tokens\":{}}}}}\n\n",
            n + 4
        )
    };
    let tl = record(
        &[
            (10.0, &c("a", 1)),
            (40.0, &c("bcd", 4)),
            (50.0, &c("e", 5)),
            (
                51.0,
                "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n",
            ),
        ],
        None,
    );
    let m = metrics(&tl);
    assert_eq!(m.token_source, TokenSource::ContinuousUsage);
    assert_eq!(m.output_tokens, 5);
    assert_eq!(m.gap_tokens, vec![Some(3), Some(1)]);
    assert_eq!(m.per_token_itl(), vec![10.0, 10.0, 10.0, 10.0]);
    assert!(m.coalesced);
}

#[test]
fn openai_completions_and_responses_api() {
    let tl = record(
        &[
            (
                10.0,
                "data: {\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\"Once\",\"finish_reason\":null}]}\n\n",
            ),
            (
                20.0,
                "data: {\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\" upon\",\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n",
            ),
        ],
        None,
    );
    assert_eq!(tl.dialect, Some(Dialect::OpenAiCompletions));
    assert_eq!(metrics(&tl).text, "Once upon");
    let tl = record(
        &[
            (
                5.0,
                "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_1\"}}\n\n",
            ),
            (
                8.0,
                "event: response.reasoning_summary_text.delta\ndata: {\"type\":\"response.reasoning_summary_text.delta\",\"sequence_number\":1,\"delta\":\"Plan\"}\n\n",
            ),
            (
                12.0,
                "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":2,\"delta\":\"Hi\"}\n\n",
            ),
            (
                15.0,
                "event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":3,\"response\":{\"usage\":{\"input_tokens\":3,\"output_tokens\":7,\"output_tokens_details\":{\"reasoning_tokens\":5}}}}\n\n",
            ),
        ],
        None,
    );
    assert_eq!(tl.dialect, Some(Dialect::OpenAiResponses));
    let m = metrics(&tl);
    assert_eq!(m.ttft_kind, Some(TtftKind::Reasoning));
    assert_eq!(m.first_answer_ms, Some(12.0));
    assert_eq!(m.output_tokens, 7);
    assert_eq!(m.reasoning_tokens, Some(5));
    assert_eq!(tl.outcome, Outcome::Ok);
    let tl = record(
        &[(
            5.0,
            "event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"error\":{\"code\":\"server_error\",\"message\":\"overloaded\"}}}\n\n",
        )],
        None,
    );
    assert_eq!(tl.outcome.kind(), "stream_error");
}

#[test]
fn anthropic_messages_with_ping_thinking_tool_use_and_error_event() {
    let s = |ev: &str, data: &str| format!("event: {ev}\ndata: {data}\n\n");
    let tl = record(
        &[
            (
                100.0,
                &s(
                    "message_start",
                    "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude\",\"stop_reason\":null,\"usage\":{\"input_tokens\":25,\"output_tokens\":1}}}",
                ),
            ),
            (
                100.0,
                &s(
                    "content_block_start",
                    "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}",
                ),
            ),
            (110.0, &s("ping", "{\"type\": \"ping\"}")),
            (
                150.0,
                &s(
                    "content_block_delta",
                    "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"Let me see\"}}",
                ),
            ),
            (
                200.0,
                &s(
                    "content_block_delta",
                    "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}",
                ),
            ),
            (
                210.0,
                &s(
                    "content_block_start",
                    "{\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"get_weather\",\"input\":{}}}",
                ),
            ),
            (
                220.0,
                &s(
                    "content_block_delta",
                    "{\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"city\\\":\\\"Oslo\\\"}\"}}",
                ),
            ),
            (
                230.0,
                &s(
                    "message_delta",
                    "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":15}}",
                ),
            ),
            (231.0, &s("message_stop", "{\"type\":\"message_stop\"}")),
        ],
        None,
    );
    assert_eq!(tl.dialect, Some(Dialect::Anthropic));
    assert_eq!(tl.outcome, Outcome::Ok, "no [DONE] needed");
    let m = metrics(&tl);
    assert_eq!(m.ttft_ms, Some(150.0));
    assert_eq!(m.ttft_kind, Some(TtftKind::Reasoning));
    assert_eq!(m.first_answer_ms, Some(200.0));
    assert_eq!(m.output_tokens, 15);
    assert_eq!(m.prompt_tokens, Some(25));
    assert_eq!(m.tool_calls[0].valid_at_ms, Some(220.0));
    let tl = record(
        &[(
            5.0,
            &s(
                "error",
                "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}",
            ),
        )],
        None,
    );
    match tl.outcome {
        Outcome::StreamError { message } => {
            assert!(message.contains("overloaded_error") && message.contains("Overloaded"))
        }
        o => panic!("{o:?}"),
    }
}

#[test]
fn old_llamacpp_error_lines_are_dropped_by_spec_and_end_truncated() {
    let tl = record(&[(5.0, "error: {\"code\":500}\n\n")], None);
    assert_eq!(tl.events.len(), 0);
    assert_eq!(tl.outcome.kind(), "truncated");
}

#[test]
fn garbage_data_is_a_stream_error_with_the_text() {
    let tl = record(&[(5.0, "data: <html>502 Bad Gateway</html>\n\n")], None);
    match tl.outcome {
        Outcome::StreamError { message } => assert!(message.contains("502 Bad Gateway")),
        o => panic!("{o:?}"),
    }
}

#[test]
fn http_error_body_message_and_advice() {
    let r = RequestRecorder::new(0.0, None, None);
    let tl = r.http_error(
        12.0,
        429,
        "{\"error\":{\"message\":\"queue full\",\"type\":\"rate_limit\"}}",
    );
    match tl.outcome {
        Outcome::HttpError { status, message } => {
            assert_eq!(status, 429);
            assert!(message.contains("queue full") && message.contains("lower concurrency"));
        }
        o => panic!("{o:?}"),
    }
}

#[test]
fn events_of_one_read_share_its_arrival_time() {
    let both = format!("{}{}", VLLM[1].1, VLLM[3].1);
    let tl = record(&[(10.0, &both), (11.0, "data: [DONE]\n\n")], None);
    assert!(tl.events.iter().all(|e| e.at == 10.0 || e.at == 11.0));
    let m = metrics(&tl);
    assert_eq!(m.output_events, 2);
    assert_eq!(m.output_arrivals, 1);
    assert!(m.itl_ms.is_empty(), "one arrival has no gap");
}

#[test]
fn chosen_dialect_is_used_without_detection() {
    let tl = record(
        &[(
            1.0,
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\ndata: [DONE]\n\n",
        )],
        Some(Dialect::OpenAiChat),
    );
    assert_eq!(tl.dialect, Some(Dialect::OpenAiChat));
}

#[test]
fn dialect_ids_round_trip_and_are_distinct() {
    let mut seen = std::collections::HashSet::new();
    for d in Dialect::ALL {
        assert_eq!(Dialect::from_id(d.id()), Some(d), "{d:?}");
        assert!(seen.insert(d.id()), "duplicate id {}", d.id());
    }
    assert_eq!(Dialect::OpenAiChat.id(), "openai_chat");
    assert_eq!(Dialect::OpenAiCompletions.id(), "openai_completions");
    assert_eq!(Dialect::OpenAiResponses.id(), "openai_responses");
    assert_eq!(Dialect::Anthropic.id(), "anthropic");
    assert_eq!(Dialect::OllamaNative.id(), "ollama");
    assert_eq!(Dialect::TgiNative.id(), "tgi");
    assert_eq!(Dialect::from_id("auto"), None);
    assert_eq!(Dialect::from_id(""), None);
    assert_eq!(Dialect::from_id("OpenAI chat completions"), None);
}
