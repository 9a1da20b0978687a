//! Prompt-cache awareness: the cached prompt tokens each server reports, in its own fields,
//! read into the request's metrics; hit rates per run and per round, worked by hand; the
//! shared-prefix scenario's growing conversation; the diagnosis that fires when TTFT grows with
//! a conversation its cache should have served (and stays quiet, or says the cache works, when
//! it does not); the numbers kept in report files (and share links: `crates/ttft-share/tests`).

use ttft_core::diagnosis::{Finding, diagnose};
use ttft_core::metrics::{MetricsConfig, RequestMetrics};
use ttft_core::report::{PromptCache, Report};
use ttft_core::run_stats::RunStats;
use ttft_core::scenario::{Conversation, ScenarioConfig, ScenarioKind, is_conversation_id};
use ttft_core::timeline::RequestRecorder;
use ttft_fixtures::prompt_cache::{cached_conversation, conversation, round_request, timeline};

fn metrics(body: &str) -> RequestMetrics {
    RequestMetrics::compute(&timeline(&[(1.0, body)]), &MetricsConfig::default())
}

const CHAT_TEXT: &str = "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n";

fn chat_with_usage(usage: &str, extra: &str) -> String {
    format!(
        "{CHAT_TEXT}data: {{\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{usage}{extra}}}\n\ndata: [DONE]\n\n"
    )
}

#[test]
fn every_server_s_cached_prompt_tokens_are_read_from_its_own_fields() {
    // OpenAI, vLLM (--enable-prompt-tokens-details), SGLang (--enable-cache-report), llama.cpp:
    // usage.prompt_tokens_details.cached_tokens, part of prompt_tokens.
    let m = metrics(&chat_with_usage(
        "{\"prompt_tokens\":2000,\"completion_tokens\":1,\"total_tokens\":2001,\"prompt_tokens_details\":{\"cached_tokens\":1536}}",
        "",
    ));
    assert_eq!((m.prompt_tokens, m.cached_tokens), (Some(2000), Some(1536)));
    assert_eq!(m.prompt_cache(), Some((2000, 1536)));

    // vLLM without the flag sends `prompt_tokens_details: null`: nothing reported, not a miss.
    let m = metrics(&chat_with_usage(
        "{\"prompt_tokens\":2000,\"completion_tokens\":1,\"total_tokens\":2001,\"prompt_tokens_details\":null}",
        "",
    ));
    assert_eq!((m.cached_tokens, m.prompt_cache()), (None, None));

    // Older llama.cpp: no details in usage, timings' cache_n (prompt_n is the rest).
    let m = metrics(&chat_with_usage(
        "{\"prompt_tokens\":2000,\"completion_tokens\":1,\"total_tokens\":2001}",
        ",\"timings\":{\"cache_n\":1500,\"prompt_n\":500,\"prompt_ms\":40.0,\"predicted_n\":1,\"predicted_ms\":9.0}",
    ));
    assert_eq!(m.prompt_cache(), Some((2000, 1500)));
    // llama.cpp timings alone: the prompt is prompt_n + cache_n.
    let only_timings = format!(
        "{CHAT_TEXT}data: {{\"object\":\"chat.completion.chunk\",\"choices\":[],\"timings\":{{\"cache_n\":768,\"prompt_n\":256,\"prompt_ms\":20.0}}}}\n\ndata: [DONE]\n\n"
    );
    assert_eq!(metrics(&only_timings).prompt_cache(), Some((1024, 768)));

    // Anthropic: input_tokens counts only what follows the cached prefix; the prompt is
    // input + cache_creation_input_tokens + cache_read_input_tokens.
    let anthropic = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"usage\":{\"input_tokens\":50,\"cache_creation_input_tokens\":200,\"cache_read_input_tokens\":1800,\"output_tokens\":1}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":5}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    let m = metrics(anthropic);
    assert_eq!(
        (m.prompt_tokens, m.cached_tokens, m.cache_write_tokens),
        (Some(2050), Some(1800), Some(200))
    );
    assert_eq!(m.output_tokens, 5);

    // OpenAI Responses: input_tokens (whole prompt) and input_tokens_details.cached_tokens.
    let responses = "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"Hi\"}\n\nevent: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"usage\":{\"input_tokens\":2048,\"input_tokens_details\":{\"cached_tokens\":1024},\"output_tokens\":1}}}\n\n";
    assert_eq!(metrics(responses).prompt_cache(), Some((2048, 1024)));

    // Ollama reports no cache.
    let ollama = "{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"Hi\"},\"done\":false}\n{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\",\"prompt_eval_count\":20,\"eval_count\":1}\n";
    let mut rec = RequestRecorder::new(0.0, None, None);
    rec.on_headers(0.5, 200, Some("application/x-ndjson"));
    rec.on_read(1.0, ollama.as_bytes());
    let m = RequestMetrics::compute(&rec.finish(2.0), &MetricsConfig::default());
    assert_eq!((m.prompt_tokens, m.prompt_cache()), (Some(20), None));
}

fn finding(r: &Report, id: &str) -> Option<Finding> {
    diagnose(r, &r.aggregates())
        .into_iter()
        .find(|f| f.id == id)
}

#[test]
fn hit_rates_per_run_and_per_round_count_only_requests_that_reported() {
    // Round 1 cold (0 of 1600), rounds 2–3 served all but the new tokens, round 4 silent.
    let r = conversation(
        "shared_prefix",
        &[
            (800.0, 1600, Some(0)),
            (60.0, 1700, Some(1600)),
            (62.0, 1800, Some(1696)),
            (64.0, 1900, None),
        ],
    );
    let agg = r.aggregates();
    let run = agg.prompt_cache.unwrap();
    assert_eq!(
        run,
        PromptCache {
            reporting: 3,
            successful: 4,
            prompt_tokens: 1600 + 1700 + 1800,
            cached_tokens: 1600 + 1696,
        }
    );
    assert!((run.hit_rate() - 3296.0 / 5100.0).abs() < 1e-12);
    assert_eq!(
        run.sentence(),
        "Prompt cache hit rate 65 %: 3296 of 5100 prompt tokens served from the server's cache (3 of 4 requests reported it)"
    );
    let per_round: Vec<Option<f64>> = agg
        .groups
        .iter()
        .map(|g| g.prompt_cache.map(|c| c.hit_rate()))
        .collect();
    assert_eq!(
        per_round,
        vec![
            Some(0.0),
            Some(1600.0 / 1700.0),
            Some(1696.0 / 1800.0),
            None
        ]
    );
    // A run whose server reported nothing has no hit rate at all (not 0 %).
    let silent = conversation("shared_prefix", &[(800.0, 1600, None), (820.0, 1700, None)]);
    assert_eq!(silent.aggregates().prompt_cache, None);
}

#[test]
fn a_cache_that_serves_the_conversation_is_a_positive_finding() {
    let r = conversation(
        "shared_prefix",
        &[
            (800.0, 1600, Some(0)),
            (60.0, 1700, Some(1600)),
            (62.0, 1800, Some(1696)),
        ],
    );
    let f = finding(&r, "prompt_cache").expect("the cache served the later rounds");
    // Later rounds: (1600 + 1696) of (1700 + 1800) = 94 %.
    assert!(f.title.contains("94 %"), "{}", f.title);
    assert!(
        f.evidence
            .starts_with("3296 of 3500 prompt tokens cached over 2 later-round requests"),
        "{}",
        f.evidence
    );
    assert!(finding(&r, "prompt_cache_missed").is_none());
}

#[test]
fn ttft_growing_with_a_conversation_the_cache_missed_is_a_warning() {
    // Prefill at 0.5 ms a token, every round from scratch: 830, 880, 930, 980 ms.
    let growing = |cached: [Option<u64>; 4]| {
        conversation(
            "shared_prefix",
            &[
                (830.0, 1600, cached[0]),
                (880.0, 1700, cached[1]),
                (930.0, 1800, cached[2]),
                (980.0, 1900, cached[3]),
            ],
        )
    };
    // The server says it cached nothing (a cache that is off, or keyed on something that changed).
    let f = finding(&growing([Some(0); 4]), "prompt_cache_missed").expect("fires");
    assert!(
        f.evidence.starts_with(
            "later rounds' hit rate 0 % (0 of 5400 prompt tokens cached, 3 requests reporting)"
        ),
        "{}",
        f.evidence
    );
    // Slope 50 ms per 100 tokens: 500 ms per 1,000, from 830 ms at 1600 to 980 ms at 1900.
    assert!(
        f.evidence
            .contains("TTFT grows 500.00 ms per 1,000 prompt tokens"),
        "{}",
        f.evidence
    );
    // One conversation has a request a round: no interval, which the evidence says.
    assert!(
        f.evidence.ends_with(
            "(fitted over 4 requests); too few requests for an interval: at least 4 per round, so the growth rests on the fit alone"
        ),
        "{}",
        f.evidence
    );
    assert!(f.advice.contains("--enable-prefix-caching") && f.advice.contains("cache_prompt"));
    // The server reports nothing at all: the same growth is the only evidence.
    let f = finding(&growing([None; 4]), "prompt_cache_missed").expect("fires");
    assert!(
        f.evidence
            .starts_with("the server reported no cached prompt tokens")
    );
    // A low reported hit rate with a hit here and there still fires…
    assert!(
        finding(
            &growing([Some(0), Some(160), Some(0), Some(0)]),
            "prompt_cache_missed"
        )
        .is_some()
    );
    // …but not outside a conversation, whose prompts need not share anything.
    let mut chat = growing([Some(0); 4]);
    chat.scenario = "chat".into();
    assert!(finding(&chat, "prompt_cache_missed").is_none());
    assert!(is_conversation_id("multi_turn") && !is_conversation_id("prompt_sweep"));
}

#[test]
fn flat_or_scattered_ttft_is_not_growth() {
    // No report and TTFT flat after a cold first round: the cache probably works unreported.
    let flat = conversation(
        "shared_prefix",
        &[(830.0, 1600, None), (60.0, 1700, None), (61.0, 1800, None)],
    );
    assert!(finding(&flat, "prompt_cache_missed").is_none());
    assert!(finding(&flat, "prompt_cache").is_none());
    // Rising by 6 ms only: under the 10 ms a clock can add.
    let small = conversation(
        "multi_turn",
        &[
            (100.0, 1600, Some(0)),
            (103.0, 1700, Some(0)),
            (106.0, 1800, Some(0)),
        ],
    );
    assert!(finding(&small, "prompt_cache_missed").is_none());
    // A slope by chance through scattered TTFTs (r² ≈ 0.3): not growth.
    let scattered = conversation(
        "multi_turn",
        &[
            (500.0, 1600, Some(0)),
            (900.0, 1700, Some(0)),
            (450.0, 1800, Some(0)),
            (950.0, 1900, Some(0)),
        ],
    );
    let fit = scattered.aggregates().ttft_vs_prompt.unwrap();
    assert!(fit.r2 < 0.5, "{fit:?}");
    assert!(finding(&scattered, "prompt_cache_missed").is_none());
}

#[test]
fn the_shared_prefix_scenario_grows_one_conversation_behind_a_long_system_prompt() {
    let cfg = ScenarioConfig {
        kind: ScenarioKind::SharedPrefix,
        rounds: 3,
        ..ScenarioConfig::default()
    };
    assert_eq!(ScenarioKind::from_id("shared_prefix"), Some(cfg.kind));
    assert!(cfg.kind.is_conversation());
    let phases = cfg.plan("m", None).unwrap();
    assert_eq!(phases.len(), 1);
    assert_eq!(phases[0].concurrency, 1);
    let jobs = &phases[0].jobs;
    assert_eq!(
        jobs.iter().map(|j| j.group.as_str()).collect::<Vec<_>>(),
        ["round 1", "round 2", "round 3"]
    );
    assert_eq!(
        jobs.iter().map(|j| j.chained).collect::<Vec<_>>(),
        [false, true, true]
    );
    assert!(jobs.iter().all(|j| j.params.tools.is_none() && !j.warmup));
    let system = &jobs[0].params.messages[0];
    assert_eq!(system.0, "system");
    assert!(system.1.len() >= 1500 * 4, "a long shared prefix");
    // Sent in order with the answers recorded, each round's messages extend the previous
    // round's: the prefix a cache can serve.
    let mut conversation = Conversation::default();
    let mut sent: Vec<Vec<(String, String)>> = Vec::new();
    for job in jobs {
        let mut job = job.clone();
        conversation.prepare(&mut job);
        conversation.record_reply(&job, "An answer.".into());
        sent.push(job.params.messages.clone());
    }
    for w in sent.windows(2) {
        assert!(w[1].len() > w[0].len() && w[1].starts_with(&w[0]));
    }
    assert_eq!(sent[2][0], *system);
}

#[test]
fn cached_tokens_survive_report_files() {
    let r = cached_conversation();
    let json = serde_json::to_string(&r).unwrap();
    let back = ttft_core::report::read_json(json.as_bytes()).unwrap();
    assert_eq!(back.aggregates().prompt_cache, r.aggregates().prompt_cache);
    // A file from before the fields reads as "not reported".
    let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
    for q in v["requests"].as_array_mut().unwrap() {
        let third = q["index"] == 2;
        let m = q["metrics"].as_object_mut().unwrap();
        assert!(m.contains_key("cached_tokens") || third);
        m.remove("cached_tokens");
        m.remove("cache_write_tokens");
    }
    let old = ttft_core::report::read_value(v).unwrap();
    assert_eq!(old.aggregates().prompt_cache, None);
}

#[test]
fn many_conversations_compare_the_last_round_with_the_first_per_request() {
    // Five conversations of three rounds, prefilled from scratch every round: TTFT 0.5 ms a
    // prompt token, plus a little spread between conversations.
    let rounds = |spread: &dyn Fn(u32) -> f64| {
        let mut requests = Vec::new();
        for c in 0..5u32 {
            for round in 1..=3u32 {
                let prompt = 1500 + 100 * u64::from(round);
                let ttft = 0.5 * prompt as f64 + spread(c);
                requests.push(round_request(c * 3 + round, round, ttft, prompt, Some(0)));
            }
        }
        Report::new(
            "cache",
            ttft_core::report::EndpointInfo::default(),
            "multi_turn",
        )
        .with_requests(requests)
    };
    let r = rounds(&|c| f64::from(c) * 5.0);
    let f = finding(&r, "prompt_cache_missed").expect("fires");
    assert!(
        f.evidence.ends_with(
            "the last round's TTFT is higher than the first's, per request by 100 ms (95 % interval 85.0–115 ms)"
        ),
        "{}",
        f.evidence
    );
    // The conversations spread far wider than the rounds grow: neither the fit (r²) nor the
    // rounds tell growth from noise, and no warning is written.
    let r = rounds(&|c| f64::from(c) * 400.0);
    assert!(finding(&r, "prompt_cache_missed").is_none());
}
