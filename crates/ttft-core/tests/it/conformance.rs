//! Conformance, round 2 (issue #17): several choices (`n > 1`), 2xx answers that are not
//! streams, final usage on the finish chunk, and llama.cpp `timings` on every dialect. The wire
//! shapes follow the servers' documented behaviour (OpenAI API reference, vLLM's
//! `serving_chat.py`, llama.cpp's `server-task.cpp`), not this repository's other fixtures.

use ttft_core::dialect::{Dialect, StreamEvent};
use ttft_core::metrics::{MetricsConfig, RequestMetrics, TokenSource, TtftKind};
use ttft_core::report::{Aggregates, Report, RequestRecord};
use ttft_core::run_stats::RunStats;
use ttft_core::timeline::{Outcome, RequestRecorder, RequestTimeline};

/// Feeds `reads` into a recorder sent at t=0 with headers at 1 ms; the body ends at the last
/// read's time.
fn record_as(reads: &[(f64, &str)], content_type: &str) -> RequestTimeline {
    let mut r = RequestRecorder::new(0.0, None, None);
    r.on_headers(1.0, 200, Some(content_type));
    for (at, bytes) in reads {
        r.on_read(*at, bytes.as_bytes());
    }
    r.finish(reads.last().map_or(2.0, |r| r.0))
}

fn record(reads: &[(f64, &str)]) -> RequestTimeline {
    record_as(reads, "text/event-stream")
}

fn metrics(tl: &RequestTimeline) -> RequestMetrics {
    RequestMetrics::compute(tl, &MetricsConfig::default())
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// One OpenAI chat chunk of choice `index`.
fn chunk(index: u32, delta: &str, finish: &str) -> String {
    format!(
        "data: {{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"M\",\"choices\":[{{\"index\":{index},\"delta\":{delta},\"logprobs\":null,\"finish_reason\":{finish}}}]}}\n\n"
    )
}

fn content(index: u32, text: &str) -> String {
    chunk(index, &format!("{{\"content\":\"{text}\"}}"), "null")
}

/// Two choices of five tokens each, one token a chunk: choice 0 at 100, 120, …, 180, choice 1
/// at 110, 130, …, 190. Arrivals alternate every 10 ms; each choice's own gap is 20 ms.
fn interleaved(usage_tail: &str) -> Vec<(f64, String)> {
    let roles = chunk(0, "{\"role\":\"assistant\",\"content\":\"\"}", "null")
        + &chunk(1, "{\"role\":\"assistant\",\"content\":\"\"}", "null");
    let mut reads = vec![(50.0, roles)];
    let (a, b) = (["a", "b", "c", "d", "e"], ["v", "w", "x", "y", "z"]);
    for i in 0..5 {
        let t = 100.0 + 20.0 * i as f64;
        let last = i == 4;
        let c0 = if last {
            chunk(0, "{\"content\":\"e\"}", "\"stop\"")
        } else {
            content(0, a[i])
        };
        reads.push((t, c0));
        let c1 = if last {
            chunk(1, "{\"content\":\"z\"}", "\"length\"") + usage_tail
        } else {
            content(1, b[i])
        };
        reads.push((t + 10.0, c1));
    }
    reads
}

fn as_reads(v: &[(f64, String)]) -> Vec<(f64, &str)> {
    v.iter().map(|(t, s)| (*t, s.as_str())).collect()
}

#[test]
fn n2_interleaved_choices_keep_their_text_gaps_and_one_request_usage() {
    // OpenAI and vLLM with include_usage: ONE usage chunk for the entire request.
    let usage = "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":10,\"total_tokens\":17}}\n\ndata: [DONE]\n\n";
    let reads = interleaved(usage);
    let tl = record(&as_reads(&reads));
    assert_eq!(tl.outcome, Outcome::Ok);
    let m = metrics(&tl);
    assert_eq!(m.ttft_ms, Some(100.0), "first content of any choice");
    assert_eq!(m.ttft_kind, Some(TtftKind::Answer));
    assert_eq!(m.choices.len(), 2);
    let (c0, c1) = (&m.choices[0], &m.choices[1]);
    assert_eq!((c0.index, c0.text.as_str()), (0, "abcde"));
    assert_eq!((c1.index, c1.text.as_str()), (1, "vwxyz"));
    assert_eq!(c0.finish_reason.as_deref(), Some("stop"));
    assert_eq!(c1.finish_reason.as_deref(), Some("length"));
    assert_eq!(
        (c0.first_token_ms, c1.first_token_ms),
        (Some(100.0), Some(110.0))
    );
    assert_eq!(
        (c0.output_tokens, c1.output_tokens),
        (None, None),
        "one usage for the whole request says nothing per choice"
    );
    assert_eq!(
        m.text, "abcde",
        "the top-level text is the primary choice's, not a merge"
    );
    assert_eq!(
        m.output_tokens, 10,
        "the request usage covers both choices: not doubled"
    );
    assert_eq!(m.token_source, TokenSource::FinalUsage);
    assert_eq!(
        m.itl_ms,
        vec![20.0; 8],
        "gaps per choice, not between alternating arrivals"
    );
    assert_eq!(m.output_arrivals, 10);
    assert!(close(m.tokens_per_arrival, 1.0));
    assert!(!m.coalesced);
    // TPOT = Σ (end_c − first_c) / (T − k) = ((180 − 100) + (190 − 110)) / (10 − 2) = 20 ms.
    assert!(close(m.tpot_ms.unwrap(), 20.0), "{:?}", m.tpot_ms);
    // Aggregate decode rate = (T − k) / (E2E − TTFT) = 8 tokens / 90 ms.
    assert!(close(m.decode_tokens_per_s.unwrap(), 8.0 / 90.0 * 1000.0));
    assert!(m.streamed);
    let replay: String = ttft_core::report::replay_of(&tl)
        .into_iter()
        .map(|p| p.text)
        .collect();
    assert_eq!(replay, "abcde", "the replay plays the primary choice");
}

#[test]
fn n2_llamacpp_usage_chunk_per_choice_is_summed_and_attributed() {
    // llama.cpp runs each choice as a task whose final result is [finish chunk, usage chunk
    // with `choices: []` (+ timings)]: one usage chunk PER CHOICE.
    let usage = |n: u32| {
        format!(
            "data: {{\"choices\":[],\"created\":1,\"id\":\"chatcmpl-L\",\"model\":\"M\",\"object\":\"chat.completion.chunk\",\"usage\":{{\"completion_tokens\":{n},\"prompt_tokens\":9,\"total_tokens\":{}}},\"timings\":{{\"prompt_n\":9,\"prompt_ms\":5.0,\"predicted_n\":{n},\"predicted_ms\":40.0,\"predicted_per_token_ms\":10.0}}}}\n\n",
            n + 9
        )
    };
    let role = |i| chunk(i, "{\"role\":\"assistant\",\"content\":null}", "null");
    let fin = |i| chunk(i, "{}", "\"stop\"");
    let reads = [
        (20.0, role(0)),
        (25.0, role(1)),
        (30.0, content(0, "A")),
        (40.0, content(1, "X")),
        (50.0, content(0, "B")),
        (60.0, content(1, "Y")),
        (70.0, content(0, "C")),
        (71.0, fin(0) + &usage(3)),
        (80.0, fin(1) + &usage(2) + "data: [DONE]\n\n"),
    ];
    let tl = record(&as_reads(&reads));
    let m = metrics(&tl);
    assert_eq!(m.output_tokens, 5, "3 + 2, not the last choice's 2");
    assert_eq!(m.token_source, TokenSource::FinalUsage);
    assert_eq!(m.choices[0].output_tokens, Some(3));
    assert_eq!(m.choices[1].output_tokens, Some(2));
    assert_eq!(m.choices[0].text, "ABC");
    assert_eq!(m.choices[1].text, "XY");
    assert_eq!(m.itl_ms, vec![20.0, 20.0, 20.0]);
    // ((71 − 30) + (80 − 40)) / (5 − 2)
    assert!(close(m.tpot_ms.unwrap(), 81.0 / 3.0));
    // /v1/completions: each choice's usage rides on its own finish chunk.
    let cmpl = |i: u32, text: &str, fin: &str, usage: &str| {
        format!(
            "data: {{\"choices\":[{{\"text\":\"{text}\",\"index\":{i},\"logprobs\":null,\"finish_reason\":{fin}}}],\"object\":\"text_completion\"{usage}}}\n\n"
        )
    };
    let u = |n: u32| {
        format!(
            ",\"usage\":{{\"completion_tokens\":{n},\"prompt_tokens\":3,\"total_tokens\":{}}}",
            n + 3
        )
    };
    let reads = [
        (10.0, cmpl(0, "A", "null", "")),
        (15.0, cmpl(1, "X", "null", "")),
        (30.0, cmpl(0, "B", "null", "")),
        (31.0, cmpl(0, "", "\"length\"", &u(2))),
        (35.0, cmpl(1, "", "\"stop\"", &u(1)) + "data: [DONE]\n\n"),
    ];
    let m = metrics(&record(&as_reads(&reads)));
    assert_eq!(
        (m.output_tokens, m.token_source),
        (3, TokenSource::FinalUsage)
    );
    assert_eq!(m.choices[0].output_tokens, Some(2));
    assert_eq!(m.choices[1].output_tokens, Some(1));
}

#[test]
fn n2_vllm_continuous_usage_is_per_choice_and_the_final_usage_is_the_sum() {
    // vLLM: continuous usage counts choice i's own tokens; the final chunk sums over choices.
    let with_usage = |i: u32, delta: &str, finish: &str, n: u64| {
        format!(
            "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":{i},\"delta\":{delta},\"finish_reason\":{finish}}}],\"usage\":{{\"prompt_tokens\":4,\"completion_tokens\":{n},\"total_tokens\":{}}}}}\n\n",
            n + 4
        )
    };
    let reads = [
        (10.0, with_usage(0, "{\"content\":\"a\"}", "null", 1)),
        (20.0, with_usage(1, "{\"content\":\"x\"}", "null", 1)),
        (30.0, with_usage(0, "{\"content\":\"bcd\"}", "null", 4)),
        (40.0, with_usage(1, "{\"content\":\"y\"}", "null", 2)),
        (
            41.0,
            with_usage(0, "{\"content\":\"\"}", "\"stop\"", 4)
                + &with_usage(1, "{\"content\":\"\"}", "\"stop\"", 2)
                + "data: {\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":6,\"total_tokens\":10}}\n\ndata: [DONE]\n\n",
        ),
    ];
    let m = metrics(&record(&as_reads(&reads)));
    assert_eq!(m.output_tokens, 6);
    assert_eq!(m.token_source, TokenSource::FinalUsage);
    assert_eq!(m.choices[0].output_tokens, Some(4));
    assert_eq!(m.choices[1].output_tokens, Some(2));
    assert_eq!(m.itl_ms, vec![20.0, 20.0]);
    assert_eq!(
        m.gap_tokens,
        vec![Some(3), Some(1)],
        "each choice's own count"
    );
    assert!(m.coalesced);
}

#[test]
fn single_choice_reports_do_not_grow_and_old_reports_still_read() {
    let tl = record(&[
        (10.0, &content(0, "Hi")),
        (20.0, &chunk(0, "{\"content\":\"!\"}", "\"stop\"")),
        (21.0, "data: [DONE]\n\n"),
    ]);
    let m = metrics(&tl);
    assert!(m.choices.is_empty());
    assert!(m.streamed);
    let v = serde_json::to_value(&m).unwrap();
    assert!(
        v.get("choices").is_none() && v.get("streamed").is_none(),
        "{v}"
    );
    let back: RequestMetrics = serde_json::from_value(v).unwrap();
    assert_eq!(back, m);
    let tv = serde_json::to_value(&tl).unwrap();
    assert!(tv.get("streamed").is_none());
    let tback: RequestTimeline = serde_json::from_value(tv).unwrap();
    assert_eq!(tback, tl);
}

const PRETTY_CHAT_COMPLETION: &str = r#"{
  "id": "chatcmpl-9",
  "object": "chat.completion",
  "created": 1750000000,
  "model": "M",
  "choices": [
    {
      "index": 0,
      "message": {
        "role": "assistant",
        "content": "Hello there",
        "refusal": null
      },
      "logprobs": null,
      "finish_reason": "stop"
    }
  ],
  "usage": {
    "prompt_tokens": 5,
    "completion_tokens": 2,
    "total_tokens": 7
  }
}
"#;

#[test]
fn a_chat_completion_answer_instead_of_a_stream_is_one_arrival_labelled_not_streamed() {
    let (a, b) = PRETTY_CHAT_COMPLETION.split_at(120);
    let tl = record_as(&[(300.0, a), (310.0, b)], "application/json");
    assert_eq!(
        tl.outcome,
        Outcome::Ok,
        "a complete answer, not a broken stream"
    );
    assert!(!tl.streamed);
    assert_eq!(tl.dialect, Some(Dialect::OpenAiChat));
    let m = metrics(&tl);
    assert!(!m.streamed);
    assert_eq!(m.text, "Hello there");
    assert_eq!(
        m.ttft_ms,
        Some(310.0),
        "the whole text at the time the body completed"
    );
    assert_eq!(m.first_answer_ms, Some(310.0));
    assert_eq!(m.output_arrivals, 1);
    assert!(m.itl_ms.is_empty());
    assert_eq!(m.output_tokens, 2);
    assert_eq!(m.token_source, TokenSource::FinalUsage);
    assert_eq!((m.tpot_ms, m.decode_tokens_per_s), (None, None));
    assert!(!m.coalesced, "not streamed, which is a different finding");
    let v = serde_json::to_value(&m).unwrap();
    assert_eq!(v["streamed"], serde_json::json!(false));
}

#[test]
fn other_non_streamed_shapes_are_read_too() {
    let one = |body: &str, ct: &str| {
        let tl = record_as(&[(40.0, body)], ct);
        assert_eq!(tl.outcome, Outcome::Ok, "{body}");
        assert!(!tl.streamed, "{body}");
        (metrics(&tl), tl)
    };
    // Completions (llama.cpp adds timings), compact, no trailing newline.
    let (m, tl) = one(
        "{\"choices\":[{\"text\":\"Once upon\",\"index\":0,\"logprobs\":null,\"finish_reason\":\"length\"}],\"created\":1,\"model\":\"M\",\"object\":\"text_completion\",\"usage\":{\"completion_tokens\":2,\"prompt_tokens\":3,\"total_tokens\":5},\"id\":\"cmpl-1\",\"timings\":{\"prompt_n\":3,\"prompt_ms\":4.0,\"predicted_n\":2,\"predicted_ms\":20.0,\"predicted_per_token_ms\":10.0}}",
        "application/json; charset=utf-8",
    );
    assert_eq!(tl.dialect, Some(Dialect::OpenAiCompletions));
    assert_eq!((m.text.as_str(), m.output_tokens), ("Once upon", 2));
    assert_eq!(m.server_timings.unwrap().prompt_ms, Some(4.0));
    // Anthropic Messages.
    let (m, tl) = one(
        "{\n  \"id\": \"msg_1\",\n  \"type\": \"message\",\n  \"role\": \"assistant\",\n  \"content\": [\n    {\"type\": \"thinking\", \"thinking\": \"Plan\", \"signature\": \"s\"},\n    {\"type\": \"text\", \"text\": \"Hi\"},\n    {\"type\": \"tool_use\", \"id\": \"toolu_1\", \"name\": \"get_weather\", \"input\": {\"city\": \"Oslo\"}}\n  ],\n  \"model\": \"claude\",\n  \"stop_reason\": \"tool_use\",\n  \"usage\": {\"input_tokens\": 12, \"output_tokens\": 30}\n}\n",
        "application/json",
    );
    assert_eq!(tl.dialect, Some(Dialect::Anthropic));
    assert_eq!(m.ttft_kind, Some(TtftKind::Reasoning));
    assert_eq!((m.text.as_str(), m.reasoning_text.as_str()), ("Hi", "Plan"));
    assert_eq!((m.output_tokens, m.prompt_tokens), (30, Some(12)));
    assert_eq!(m.tool_calls[0].name.as_deref(), Some("get_weather"));
    assert_eq!(m.tool_calls[0].valid_at_ms, Some(40.0));
    // OpenAI Responses.
    let (m, tl) = one(
        "{\"id\":\"resp_1\",\"object\":\"response\",\"status\":\"completed\",\"error\":null,\"output\":[{\"type\":\"reasoning\",\"id\":\"rs_1\",\"summary\":[{\"type\":\"summary_text\",\"text\":\"Think\"}]},{\"type\":\"message\",\"id\":\"msg_1\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"Answer\",\"annotations\":[]}]}],\"usage\":{\"input_tokens\":3,\"output_tokens\":9,\"output_tokens_details\":{\"reasoning_tokens\":4}}}",
        "application/json",
    );
    assert_eq!(tl.dialect, Some(Dialect::OpenAiResponses));
    assert_eq!(
        (m.text.as_str(), m.reasoning_text.as_str()),
        ("Answer", "Think")
    );
    assert_eq!((m.output_tokens, m.reasoning_tokens), (9, Some(4)));
    // Ollama native with stream:false.
    let (m, tl) = one(
        "{\"model\":\"llama3.2\",\"created_at\":\"t\",\"message\":{\"role\":\"assistant\",\"content\":\"The sky is blue.\"},\"done\":true,\"done_reason\":\"stop\",\"prompt_eval_count\":26,\"eval_count\":5,\"eval_duration\":50000000}",
        "application/json; charset=utf-8",
    );
    assert_eq!(tl.dialect, Some(Dialect::OllamaNative));
    assert_eq!((m.text.as_str(), m.output_tokens), ("The sky is blue.", 5));
    // TGI native /generate.
    let (m, _) = one(
        "{\"generated_text\":\"Deep learning\",\"details\":{\"finish_reason\":\"length\",\"generated_tokens\":2}}",
        "application/json",
    );
    assert_eq!((m.text.as_str(), m.output_tokens), ("Deep learning", 2));
}

#[test]
fn streams_stay_streamed_and_a_json_error_body_keeps_the_servers_message() {
    // An NDJSON stream is several documents, not one.
    let mut r = RequestRecorder::new(0.0, None, None);
    r.on_headers(1.0, 200, Some("application/x-ndjson"));
    r.on_read(
        10.0,
        b"{\"message\":{\"role\":\"assistant\",\"content\":\"The\"},\"done\":false}\n",
    );
    r.on_read(
        20.0,
        b"{\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"eval_count\":1}\n",
    );
    let tl = r.finish(21.0);
    assert!(tl.streamed);
    assert_eq!(metrics(&tl).ttft_ms, Some(10.0));
    // A 200 whose body is a pretty-printed error object.
    let tl = record_as(
        &[(
            30.0,
            "{\n  \"error\": {\n    \"message\": \"quota exceeded\",\n    \"type\": \"insufficient_quota\"\n  }\n}\n",
        )],
        "application/json",
    );
    match &tl.outcome {
        Outcome::StreamError { message } => {
            assert!(message.contains("quota exceeded"), "{message}");
            assert!(message.contains("insufficient_quota"), "{message}");
        }
        o => panic!("{o:?}"),
    }
    assert!(tl.streamed, "an error is not an answer in one piece");
}

#[test]
fn aggregates_count_requests_that_were_not_streamed() {
    let cfg = MetricsConfig::default();
    let (a, b) = PRETTY_CHAT_COMPLETION.split_at(200);
    let whole = record_as(&[(300.0, a), (310.0, b)], "application/json");
    let streamed = record(&[
        (10.0, &content(0, "Hi")),
        (20.0, &chunk(0, "{}", "\"stop\"")),
        (21.0, "data: [DONE]\n\n"),
    ]);
    let report = report_of(vec![
        RequestRecord::from_timeline(0, "g".into(), None, &whole, &cfg),
        RequestRecord::from_timeline(1, "g".into(), None, &streamed, &cfg),
    ]);
    let agg = report.aggregates();
    assert_eq!(agg.not_streamed, 1);
    let mut v = serde_json::to_value(&agg).unwrap();
    v.as_object_mut().unwrap().remove("not_streamed");
    let old: Aggregates = serde_json::from_value(v).unwrap();
    assert_eq!(
        old.not_streamed, 0,
        "aggregates saved before the field still read"
    );
}

#[test]
fn llamacpp_completions_usage_on_the_finish_chunk_is_final_usage() {
    // llama.cpp /v1/completions: the only usage rides on the chunk with the finish reason
    // (with or without include_usage), with the timings.
    let tl = record(&[
        (
            10.0,
            "data: {\"choices\":[{\"text\":\"Once\",\"index\":0,\"logprobs\":null,\"finish_reason\":null}],\"created\":1,\"model\":\"M\",\"system_fingerprint\":\"b6000\",\"object\":\"text_completion\",\"id\":\"cmpl-1\"}\n\n",
        ),
        (
            20.0,
            "data: {\"choices\":[{\"text\":\" upon\",\"index\":0,\"logprobs\":null,\"finish_reason\":null}],\"created\":1,\"model\":\"M\",\"object\":\"text_completion\",\"id\":\"cmpl-1\"}\n\n",
        ),
        (
            21.0,
            "data: {\"choices\":[{\"text\":\"\",\"index\":0,\"logprobs\":null,\"finish_reason\":\"length\"}],\"created\":1,\"model\":\"M\",\"object\":\"text_completion\",\"usage\":{\"completion_tokens\":2,\"prompt_tokens\":3,\"total_tokens\":5},\"id\":\"cmpl-1\",\"timings\":{\"cache_n\":0,\"prompt_n\":3,\"prompt_ms\":4.2,\"predicted_n\":2,\"predicted_ms\":11.0,\"predicted_per_token_ms\":5.5}}\n\ndata: [DONE]\n\n",
        ),
    ]);
    assert_eq!(tl.dialect, Some(Dialect::OpenAiCompletions));
    let m = metrics(&tl);
    assert_eq!(m.output_tokens, 2);
    assert_eq!(m.token_source, TokenSource::FinalUsage);
    assert_eq!(m.server_timings.unwrap().predicted_per_token_ms, Some(5.5));
    // Continuous usage that also rides on the finish chunk still gives that arrival's tokens,
    // and the count on the finish chunk is the final one.
    let c = |text: &str, fin: &str, n: u64| {
        format!(
            "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{text}\"}},\"finish_reason\":{fin}}}],\"usage\":{{\"prompt_tokens\":4,\"completion_tokens\":{n},\"total_tokens\":{}}}}}\n\n",
            n + 4
        )
    };
    let tl = record(&[
        (10.0, &c("a", "null", 1)),
        (40.0, &c("bcd", "null", 4)),
        (50.0, &(c("e", "\"stop\"", 5) + "data: [DONE]\n\n")),
    ]);
    let m = metrics(&tl);
    assert_eq!(m.token_source, TokenSource::FinalUsage);
    assert_eq!(m.output_tokens, 5);
    assert_eq!(m.gap_tokens, vec![Some(3), Some(1)]);
}

#[test]
fn llamacpp_timings_are_read_on_responses_anthropic_and_completions() {
    let timings = "{\"cache_n\":0,\"prompt_n\":9,\"prompt_ms\":10.5,\"prompt_per_token_ms\":1.17,\"prompt_per_second\":857.1,\"predicted_n\":12,\"predicted_ms\":130.2,\"predicted_per_token_ms\":10.85,\"predicted_per_second\":92.2}";
    let has_timings = |tl: &RequestTimeline| {
        tl.events
            .iter()
            .any(|e| matches!(e.event, StreamEvent::Timings(_)))
    };
    // Responses API: on the terminal event, top level of its data.
    let ev = |ty: &str, body: &str| format!("event: {ty}\ndata: {{\"type\":\"{ty}\"{body}}}\n\n");
    let tl = record(&[
        (
            5.0,
            &ev(
                "response.created",
                ",\"response\":{\"id\":\"resp_1\",\"object\":\"response\",\"status\":\"in_progress\"}",
            ),
        ),
        (
            12.0,
            &ev(
                "response.output_text.delta",
                ",\"item_id\":\"msg_1\",\"delta\":\"Hi\"",
            ),
        ),
        (
            15.0,
            &ev(
                "response.completed",
                &format!(
                    ",\"response\":{{\"id\":\"resp_1\",\"object\":\"response\",\"status\":\"completed\",\"output\":[],\"usage\":{{\"input_tokens\":9,\"output_tokens\":12,\"total_tokens\":21}}}},\"timings\":{timings}"
                ),
            ),
        ),
    ]);
    assert_eq!(tl.dialect, Some(Dialect::OpenAiResponses));
    assert!(has_timings(&tl));
    let m = metrics(&tl);
    assert_eq!(
        m.server_timings.unwrap().predicted_per_token_ms,
        Some(10.85)
    );
    assert_eq!(m.server_timings.unwrap().prompt_ms, Some(10.5));
    // … or inside the response object.
    let tl = record(&[
        (12.0, &ev("response.output_text.delta", ",\"delta\":\"Hi\"")),
        (
            15.0,
            &ev(
                "response.completed",
                &format!(
                    ",\"response\":{{\"status\":\"completed\",\"usage\":{{\"input_tokens\":9,\"output_tokens\":12}},\"timings\":{timings}}}"
                ),
            ),
        ),
    ]);
    assert_eq!(metrics(&tl).server_timings.unwrap().predicted_n, Some(12));
    // timings_per_token and return_progress on Responses deltas.
    let tl = record(&[
        (
            8.0,
            &ev(
                "response.in_progress",
                ",\"prompt_progress\":{\"total\":9,\"cache\":0,\"processed\":9,\"time_ms\":10.5}",
            ),
        ),
        (
            12.0,
            &ev(
                "response.output_text.delta",
                &format!(",\"delta\":\"Hi\",\"timings\":{timings}"),
            ),
        ),
        (
            15.0,
            &ev(
                "response.completed",
                ",\"response\":{\"status\":\"completed\"}",
            ),
        ),
    ]);
    assert!(tl.events.iter().any(|e| matches!(
        e.event,
        StreamEvent::Progress {
            total: 9,
            processed: 9
        }
    )));
    assert!(has_timings(&tl));
    // Anthropic Messages.
    let tl = record(&[
        (
            10.0,
            &ev(
                "content_block_delta",
                ",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}",
            ),
        ),
        (
            20.0,
            &ev(
                "message_delta",
                &format!(
                    ",\"delta\":{{\"stop_reason\":\"end_turn\",\"stop_sequence\":null}},\"usage\":{{\"output_tokens\":12}},\"timings\":{timings}"
                ),
            ),
        ),
        (21.0, &ev("message_stop", "")),
    ]);
    assert_eq!(tl.dialect, Some(Dialect::Anthropic));
    assert!(has_timings(&tl));
    // Completions partial chunks with timings_per_token.
    let tl = record(&[(
        10.0,
        &format!(
            "data: {{\"choices\":[{{\"text\":\"Hi\",\"index\":0,\"finish_reason\":null}}],\"object\":\"text_completion\",\"timings\":{timings}}}\n\ndata: [DONE]\n\n"
        ),
    )]);
    assert!(has_timings(&tl));
}

/// Hostile usage counts: sums saturate instead of overflowing, and a count jump no chunk can
/// carry keeps its gap whole instead of splitting it into billions of per-token samples.
#[test]
fn hostile_usage_counts_neither_overflow_nor_explode() {
    let chunk = |choice: u32, text: &str| {
        format!(
            "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":{choice},\"delta\":{{\"content\":\"{text}\"}}}}]}}\n\n"
        )
    };
    let mut r = RequestRecorder::new(0.0, None, None);
    r.on_headers(1.0, 200, Some("text/event-stream"));
    r.on_read(10.0, chunk(0, "a").as_bytes());
    r.on_read(20.0, chunk(1, "b").as_bytes());
    let huge = format!(
        "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{{\"prompt_tokens\":1,\"completion_tokens\":{},\"total_tokens\":1}}}}\n\n",
        u64::MAX
    );
    r.on_read(30.0, huge.as_bytes());
    r.on_read(40.0, huge.as_bytes());
    r.on_read(41.0, b"data: [DONE]\n\n");
    let m = RequestMetrics::compute(&r.finish(42.0), &MetricsConfig::default());
    assert_eq!(m.output_tokens, u64::MAX, "saturated, not wrapped");

    let continuous = |text: &str, n: u64| {
        format!(
            "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{text}\"}}}}],\"usage\":{{\"prompt_tokens\":1,\"completion_tokens\":{n},\"total_tokens\":{n}}}}}\n\n"
        )
    };
    let mut r = RequestRecorder::new(0.0, None, None);
    r.on_headers(1.0, 200, Some("text/event-stream"));
    r.on_read(10.0, continuous("a", 1).as_bytes());
    r.on_read(20.0, continuous("b", 2).as_bytes());
    r.on_read(30.0, continuous("c", 4_000_000_000).as_bytes());
    r.on_read(31.0, b"data: [DONE]\n\n");
    let m = RequestMetrics::compute(&r.finish(32.0), &MetricsConfig::default());
    assert_eq!(m.gap_tokens, [Some(1), None]);
    assert_eq!(m.per_token_itl(), [10.0, 10.0]);
}

// ---- Round 3 (issue #30): the stream shapes servers send, read as their servers mean them. ----

/// A `/v1/completions` chunk (`text_completion`) of choice `index`, with `tail` appended to the
/// object (`,"usage":{…}`).
fn cmpl_chunk(index: u32, text: &str, finish: &str, tail: &str) -> String {
    format!(
        "data: {{\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"created\":1,\"model\":\"M\",\"choices\":[{{\"index\":{index},\"text\":\"{text}\",\"logprobs\":null,\"finish_reason\":{finish}}}]{tail}}}\n\n"
    )
}

/// One timeline line as a Locust worker writes it (`docs/timeline-format.md`): `reads` are
/// `(arrival, bytes)` from t0 = 0, `request` extra fields merged into the request object.
fn timeline_line(
    index: u32,
    request: serde_json::Value,
    reads: &[(f64, String)],
    end: serde_json::Value,
) -> String {
    let body: String = reads.iter().map(|r| r.1.as_str()).collect();
    let mut req = serde_json::json!({
        "index": index, "api": null, "url": "http://127.0.0.1:8080/v1/completions",
        "model": "M", "group": "c=1", "level": 1.0,
    });
    for (k, v) in request.as_object().unwrap() {
        req[k] = v.clone();
    }
    serde_json::json!({
        "format": "ttft-timeline/1", "run": "run-x",
        "vantage": {"client": "locust", "worker": "h:1", "host": "h"},
        "request": req,
        "sent_wall_ms": 1.75e12 + 1000.0 * f64::from(index), "sent_ms": 1000.0 * f64::from(index),
        "head": {"at_ms": 1000.0 * f64::from(index) + 1.0, "status": 200, "content_type": "text/event-stream"},
        "reads": reads.iter().map(|(at, b)| serde_json::json!([1000.0 * f64::from(index) + at, b.len()])).collect::<Vec<_>>(),
        "body": body,
        "end": end,
    })
    .to_string()
}

/// Six words, one `/v1/completions` chunk each at 100, 110, …, 150 ms, whose `choices[].index`
/// counts up (0, 1, 2, …) the way a mock server used for testing benchmarks numbers them; the
/// finish chunk at 160 (index 6) carries the usage.
fn misnumbered_completions() -> Vec<(f64, String)> {
    let words = ["Once", " upon", " a", " time", " there", " was"];
    let mut reads: Vec<(f64, String)> = words
        .iter()
        .enumerate()
        .map(|(i, w)| (100.0 + 10.0 * i as f64, cmpl_chunk(i as u32, w, "null", "")))
        .collect();
    reads.push((
        160.0,
        cmpl_chunk(
            6,
            "",
            "\"length\"",
            ",\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":6,\"total_tokens\":9}",
        ) + "data: [DONE]\n\n",
    ));
    reads
}

#[test]
fn one_choice_asked_is_one_answer_whatever_index_the_server_numbers_its_chunks_with() {
    let reads = misnumbered_completions();
    let end = serde_json::json!({"kind": "finished", "at_ms": 161.0});
    // A Locust worker's line says what the body asked for: one choice.
    let line = timeline_line(0, serde_json::json!({"choices": 1}), &reads, end);
    let merged = ttft_fixtures::timeline_file::merge(&[("w.jsonl", line)]).unwrap();
    let r = &merged.report.requests[0];
    assert_eq!(r.outcome, Outcome::Ok);
    let m = &r.metrics;
    assert_eq!(
        m.text, "Once upon a time there was",
        "every chunk's text is the one answer's"
    );
    assert!(m.choices.is_empty(), "one answer, not {}", m.choices.len());
    assert_eq!(m.ttft_ms, Some(100.0));
    assert_eq!(m.itl_ms, vec![10.0; 5], "the gaps of one answer");
    assert_eq!(
        (m.output_tokens, m.token_source),
        (6, TokenSource::FinalUsage)
    );
    // (E2E − TTFT) / (tokens − 1) = (161 − 100) / 5.
    assert!(close(m.tpot_ms.unwrap(), 61.0 / 5.0), "{:?}", m.tpot_ms);
    // Several asked for: the indexes tell the answers apart, as before.
    let end = serde_json::json!({"kind": "finished", "at_ms": 161.0});
    let line = timeline_line(0, serde_json::json!({"choices": 7}), &reads, end);
    let merged = ttft_fixtures::timeline_file::merge(&[("w.jsonl", line)]).unwrap();
    assert_eq!(merged.report.requests[0].metrics.choices.len(), 7);
}

#[test]
fn llamacpp_native_completion_stream_is_a_dialect_with_usage_from_its_timings() {
    // tools/server/README.md: while streaming only `content`, `tokens` and `stop` (with
    // `index`, `id_slot`, `tokens_predicted`, `tokens_evaluated`); no `[DONE]`; the last line
    // has `stop: true`, `stop_type`, `timings`, `tokens_evaluated`, `tokens_cached`, … A
    // speculative step sends two tokens in one line.
    let part = |content: &str, tokens: &str, n: u32| {
        format!(
            "data: {{\"index\":0,\"content\":\"{content}\",\"tokens\":[{tokens}],\"stop\":false,\"id_slot\":0,\"tokens_predicted\":{n},\"tokens_evaluated\":9}}\n\n"
        )
    };
    let last = "data: {\"index\":0,\"content\":\"\",\"tokens\":[],\"id_slot\":0,\"stop\":true,\"model\":\"gpt-3.5-turbo\",\"tokens_predicted\":5,\"tokens_evaluated\":9,\"generation_settings\":{\"n_predict\":5,\"seed\":42,\"temperature\":0.0,\"stream\":true},\"prompt\":\"<s> Once\",\"has_new_line\":false,\"truncated\":false,\"stop_type\":\"limit\",\"stopping_word\":\"\",\"tokens_cached\":13,\"timings\":{\"cache_n\":4,\"prompt_n\":5,\"prompt_ms\":12.5,\"prompt_per_token_ms\":2.5,\"prompt_per_second\":400.0,\"predicted_n\":5,\"predicted_ms\":40.0,\"predicted_per_token_ms\":8.0,\"predicted_per_second\":125.0}}\n\n";
    let reads = [
        (20.0, part("Once", "12711", 1)),
        (30.0, part(" upon", "2501", 2)),
        (40.0, part(" a time", "263,931", 4)),
        (50.0, part(",", "29892", 5)),
        (51.0, last.to_owned()),
    ];
    let tl = record(&as_reads(&reads));
    assert_eq!(tl.dialect.map(|d| d.id()), Some("llamacpp"));
    assert_eq!(tl.outcome, Outcome::Ok, "its last line ends it: no [DONE]");
    let m = metrics(&tl);
    assert_eq!(m.text, "Once upon a time,");
    assert_eq!(m.ttft_ms, Some(20.0));
    assert_eq!(m.itl_ms, vec![10.0, 10.0, 10.0]);
    assert_eq!(
        m.gap_tokens,
        vec![Some(1), Some(2), Some(1)],
        "each line's own token ids"
    );
    assert!(m.coalesced, "a line carried two tokens");
    assert_eq!(
        (m.output_tokens, m.token_source),
        (5, TokenSource::FinalUsage)
    );
    assert_eq!(m.prompt_tokens, Some(9), "prompt_n + cache_n");
    assert_eq!(m.cached_tokens, Some(4));
    let t = m.server_timings.unwrap();
    assert_eq!(
        (t.prompt_ms, t.predicted_per_token_ms),
        (Some(12.5), Some(8.0))
    );
    // Chosen up front it reads the same; its id round-trips.
    let d = ttft_core::dialect::Dialect::from_id("llamacpp").expect("a dialect");
    let mut r = RequestRecorder::new(0.0, Some(d), None);
    r.on_headers(1.0, 200, Some("text/event-stream"));
    for (at, b) in &reads {
        r.on_read(*at, b.as_bytes());
    }
    assert_eq!(metrics(&r.finish(52.0)).text, "Once upon a time,");
    // `stream: false`: the whole answer in one object with `stop: true`.
    let whole = "{\"index\":0,\"content\":\"Once upon a time,\",\"tokens\":[],\"id_slot\":0,\"stop\":true,\"model\":\"M\",\"tokens_predicted\":5,\"tokens_evaluated\":9,\"truncated\":false,\"stop_type\":\"eos\",\"stopping_word\":\"\",\"tokens_cached\":13,\"timings\":{\"prompt_n\":9,\"prompt_ms\":12.5,\"predicted_n\":5,\"predicted_ms\":40.0,\"predicted_per_token_ms\":8.0}}";
    let tl = record_as(&[(80.0, whole)], "application/json");
    assert_eq!(tl.dialect.map(|d| d.id()), Some("llamacpp"));
    assert_eq!(tl.outcome, Outcome::Ok);
    assert!(!tl.streamed);
    let m = metrics(&tl);
    assert_eq!((m.text.as_str(), m.output_tokens), ("Once upon a time,", 5));
    // An error line (`{"error":{…}}`) is the server's message.
    let tl = record(&[
        (20.0, &part("Once", "12711", 1)),
        (
            30.0,
            "data: {\"error\":{\"code\":500,\"message\":\"slot unavailable\",\"type\":\"server_error\"}}\n\n",
        ),
    ]);
    assert!(
        matches!(&tl.outcome, Outcome::StreamError { message } if message.contains("slot unavailable")),
        "{:?}",
        tl.outcome
    );
}

#[test]
fn a_non_streamed_answer_over_eight_mib_is_still_one_answer() {
    let text = "word ".repeat(2 * 1024 * 1024); // 10 MiB of answer
    let doc = format!(
        "{{\"id\":\"chatcmpl-9\",\"object\":\"chat.completion\",\"created\":1,\"model\":\"M\",\"choices\":[{{\"index\":0,\"message\":{{\"role\":\"assistant\",\"content\":\"{text}\"}},\"finish_reason\":\"length\"}}],\"usage\":{{\"prompt_tokens\":5,\"completion_tokens\":2097152,\"total_tokens\":2097157}}}}\n"
    );
    let mut r = RequestRecorder::new(0.0, None, None);
    r.on_headers(1.0, 200, Some("application/json"));
    for (i, piece) in doc.as_bytes().chunks(64 * 1024).enumerate() {
        r.on_read(10.0 + i as f64, piece);
    }
    let tl = r.finish(500.0);
    assert_eq!(tl.outcome, Outcome::Ok, "{:?}", tl.outcome);
    assert!(!tl.streamed);
    let m = metrics(&tl);
    assert_eq!(m.text.len(), text.len());
    assert_eq!(m.output_tokens, 2_097_152);
}

#[test]
fn each_choice_keeps_its_own_server_timings_and_the_headline_the_primary_s() {
    // llama.cpp runs each choice as its own task: each ends with its finish chunk, then a
    // usage chunk (`choices: []`) with that task's timings.
    let usage = |n: u32, prompt_ms: f64, per_token: f64| {
        format!(
            "data: {{\"choices\":[],\"object\":\"chat.completion.chunk\",\"usage\":{{\"completion_tokens\":{n},\"prompt_tokens\":9,\"total_tokens\":{}}},\"timings\":{{\"prompt_n\":9,\"prompt_ms\":{prompt_ms},\"predicted_n\":{n},\"predicted_ms\":40.0,\"predicted_per_token_ms\":{per_token}}}}}\n\n",
            n + 9
        )
    };
    let fin = |i| chunk(i, "{}", "\"stop\"");
    let reads = [
        (30.0, content(0, "A")),
        (40.0, content(1, "X")),
        (50.0, content(0, "B")),
        (60.0, fin(1) + &usage(1, 6.0, 12.0)),
        (70.0, fin(0) + &usage(2, 5.0, 10.0) + "data: [DONE]\n\n"),
    ];
    let m = metrics(&record(&as_reads(&reads)));
    assert_eq!(m.choices.len(), 2);
    let v = serde_json::to_value(&m).unwrap();
    let prompt_ms = |c: usize| v["choices"][c]["server_timings"]["prompt_ms"].as_f64();
    assert_eq!((prompt_ms(0), prompt_ms(1)), (Some(5.0), Some(6.0)));
    let t = m.server_timings.unwrap();
    assert_eq!(
        (t.prompt_ms, t.predicted_per_token_ms),
        (Some(5.0), Some(10.0)),
        "the primary choice's (0), not whichever finished last"
    );
}

fn report_of(requests: Vec<RequestRecord>) -> Report {
    Report {
        version: ttft_core::report::REPORT_VERSION,
        title: "t".into(),
        created_unix_ms: 0.0,
        clock_resolution_ms: None,
        user_agent: None,
        stamping: None,
        endpoint: Default::default(),
        scenario: "chat".into(),
        settings: serde_json::Value::Null,
        thresholds: Default::default(),
        experience: Default::default(),
        requests,
        shared: None,
        vantage: None,
        import_notes: Vec::new(),
        votes: Vec::new(),
        slo: Default::default(),
        client_health: None,
        source_summary: None,
        metrics_url: None,
        server_scrapes: Vec::new(),
        group: None,
        openers: Default::default(),
        saturation: None,
        painted: None,
    }
}

#[test]
fn itl_against_position_counts_positions_within_each_choice() {
    // Two choices of 81 tokens, interleaved; in each, the k-th gap is 10 + 0.1·k ms: the slope
    // is 0.1 ms per position in either answer. Pooling their gaps as one sequence of 160
    // positions would make a saw-tooth with a much flatter slope.
    let mut arrivals: Vec<(f64, u32)> = Vec::new();
    for c in 0..2u32 {
        let mut at = 100.0 + 3.0 * f64::from(c);
        arrivals.push((at, c));
        for k in 1..=80 {
            at += 10.0 + 0.1 * f64::from(k);
            arrivals.push((at, c));
        }
    }
    arrivals.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut reads: Vec<(f64, String)> = arrivals
        .iter()
        .map(|&(at, c)| (at, content(c, "w")))
        .collect();
    let end = reads.last().unwrap().0 + 1.0;
    reads.push((
        end,
        chunk(0, "{}", "\"stop\"") + &chunk(1, "{}", "\"stop\"") + "data: [DONE]\n\n",
    ));
    let tl = record(&as_reads(&reads));
    let cfg = MetricsConfig::default();
    let rec = RequestRecord::from_timeline(0, "g".into(), None, &tl, &cfg);
    assert_eq!(rec.metrics.choices.len(), 2);
    let fit = report_of(vec![rec])
        .aggregates()
        .itl_vs_position
        .expect("a fit");
    assert!(
        (fit.slope - 0.1).abs() < 1e-6,
        "slope {} ms per position, not 0.1",
        fit.slope
    );
}

#[test]
fn the_opener_cost_of_several_choices_is_the_primary_choice_s_own() {
    // Choice 1 answers first (at 100 ms); the primary, choice 0, opens with "Sure! " at 200
    // and says something at 260: its openers cost 60 ms, not 160.
    let reads = [
        (100.0, content(1, "Paris is the capital.")),
        (200.0, content(0, "Sure! ")),
        (260.0, content(0, "Paris is the capital.")),
        (
            270.0,
            chunk(0, "{}", "\"stop\"") + &chunk(1, "{}", "\"stop\"") + "data: [DONE]\n\n",
        ),
    ];
    let m = metrics(&record(&as_reads(&reads)));
    assert_eq!(m.choices.len(), 2);
    assert_eq!(m.meaningful_ms, Some(260.0));
    assert_eq!(m.opener_cost_ms(), Some(60.0));
}

#[test]
fn the_body_says_how_many_answers_and_the_recorder_reads_one_as_one() {
    use ttft_core::request::choices_asked;
    assert_eq!(choices_asked("{\"model\":\"M\",\"stream\":true}"), Some(1));
    assert_eq!(choices_asked("{\"n\":3}"), Some(3));
    assert_eq!(choices_asked("{\"n_cmpl\":2}"), Some(2), "llama.cpp native");
    assert_eq!(choices_asked("not json"), None);
    // Chat chunks numbered 0, 1, 0, 1 by a server although one answer was asked for.
    let reads = [
        (10.0, content(0, "Hel")),
        (20.0, content(1, "lo")),
        (30.0, content(0, " wor")),
        (
            40.0,
            chunk(1, "{\"content\":\"ld\"}", "\"stop\"") + "data: [DONE]\n\n",
        ),
    ];
    let run = |choices: Option<u32>| {
        let mut r = RequestRecorder::new(0.0, None, None).asking(choices);
        r.on_headers(1.0, 200, Some("text/event-stream"));
        for (at, b) in &reads {
            r.on_read(*at, b.as_bytes());
        }
        metrics(&r.finish(41.0))
    };
    let one = run(Some(1));
    assert_eq!(one.text, "Hello world");
    assert!(one.choices.is_empty());
    assert_eq!(one.itl_ms, vec![10.0; 3]);
    assert_eq!(one.choices, run(Some(1)).choices);
    let two = run(Some(2));
    assert_eq!(two.choices.len(), 2, "two asked: the indexes are answers");
    assert_eq!(
        run(None).choices.len(),
        2,
        "unknown: the indexes are trusted"
    );
}

#[test]
fn a_non_streamed_answer_over_the_limit_says_so_and_names_it() {
    use ttft_core::timeline::MAX_DOCUMENT;
    let text = "x".repeat(MAX_DOCUMENT);
    let doc = format!(
        "{{\"object\":\"chat.completion\",\"choices\":[{{\"index\":0,\"message\":{{\"role\":\"assistant\",\"content\":\"{text}\"}},\"finish_reason\":\"stop\"}}]}}"
    );
    drop(text);
    let mut r = RequestRecorder::new(0.0, None, None);
    r.on_headers(1.0, 200, Some("application/json"));
    for (i, piece) in doc.as_bytes().chunks(1 << 20).enumerate() {
        r.on_read(10.0 + i as f64, piece);
    }
    let tl = r.finish(500.0);
    let limit = format!("{} MiB", MAX_DOCUMENT >> 20);
    assert!(
        matches!(&tl.outcome, Outcome::StreamError { message } if message.contains(&limit) && message.contains("not streamed")),
        "{:?}",
        tl.outcome
    );
    assert!(!tl.streamed);
    assert!(
        tl.events.is_empty(),
        "its lines are not read as a stream's events"
    );
}
