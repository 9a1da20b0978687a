//! Scenario planning, the multi-turn conversation, and the rules the studio applies before a
//! run (connection limit, JSON tracking): pure code, tested natively.

use ttft_core::metrics::{MetricsConfig, RequestMetrics};
use ttft_core::scenario::{
    Conversation, ScenarioConfig, ScenarioError, ScenarioKind, connection_limit_warning,
    parse_levels, poisson_gap_ms, total_jobs, warmups_first,
};
use ttft_core::timeline::RequestRecorder;

#[test]
fn chat_plan_has_warmups_then_measured_requests() {
    let c = ScenarioConfig {
        requests: 5,
        warmup: 2,
        concurrency: 3,
        ..ScenarioConfig::default()
    };
    let phases = c.plan("m", None).unwrap();
    assert_eq!(phases.len(), 2, "warm-ups run as a phase of their own");
    assert_eq!(phases[1].concurrency, 3);
    assert!(phases[0].jobs.iter().all(|j| j.warmup) && phases[0].jobs.len() == 2);
    assert!(phases[1].jobs.iter().all(|j| !j.warmup) && phases[1].jobs.len() == 5);
    assert_eq!(
        ScenarioConfig { warmup: 0, ..c }
            .plan("m", None)
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn warm_ups_come_apart_before_the_first_measured_request() {
    // A sweep's first level holds its warm-up and its measured requests in one phase.
    let c = ScenarioConfig {
        kind: ScenarioKind::ConcurrencySweep,
        levels: "4, 8".into(),
        requests: 2,
        warmup: 2,
        ..ScenarioConfig::default()
    };
    let plan = c.plan("m", None).unwrap();
    assert!(plan[0].jobs.iter().any(|j| j.warmup) && plan[0].jobs.iter().any(|j| !j.warmup));
    let apart = warmups_first(plan.clone());
    let shape: Vec<(u32, usize, bool)> = apart
        .iter()
        .map(|p| (p.concurrency, p.jobs.len(), p.jobs.iter().all(|j| j.warmup)))
        .collect();
    assert_eq!(shape, [(4, 2, true), (4, 4, false), (8, 8, false)]);
    assert_eq!(total_jobs(&apart), total_jobs(&plan));
    assert!(apart[1..].iter().all(|p| p.jobs.iter().all(|j| !j.warmup)));
    // A chat plan is already apart; a Poisson rate stays with the measured phase.
    let chat = ScenarioConfig {
        requests: 3,
        warmup: 1,
        rate_per_s: 2.0,
        ..ScenarioConfig::default()
    }
    .plan("m", None)
    .unwrap();
    assert_eq!(warmups_first(chat.clone()), chat);
    assert_eq!(chat[1].rate_per_s, 2.0);
}

#[test]
fn sweeps_multi_turn_and_bad_settings() {
    let c = ScenarioConfig {
        kind: ScenarioKind::ConcurrencySweep,
        levels: "1, 4,8".into(),
        requests: 2,
        warmup: 1,
        ..ScenarioConfig::default()
    };
    let p = c.plan("m", None).unwrap();
    assert_eq!(
        p.iter().map(|p| p.concurrency).collect::<Vec<_>>(),
        vec![1, 4, 8]
    );
    assert_eq!(
        p[2].jobs.len(),
        8,
        "at least one request per concurrent slot"
    );
    assert!(
        parse_levels("1, x")
            .unwrap_err()
            .to_string()
            .contains("'x'")
    );
    let p = ScenarioConfig {
        kind: ScenarioKind::PromptSweep,
        prompt_levels: "100,1000".into(),
        requests: 2,
        warmup: 0,
        ..ScenarioConfig::default()
    }
    .plan("m", None)
    .unwrap();
    let len = |i: usize| p[i].jobs[0].params.messages.last().unwrap().1.len();
    assert!(len(1) > len(0) * 5);
    assert_ne!(
        p[0].jobs[0].params.messages, p[0].jobs[1].params.messages,
        "distinct prefixes defeat the prefix cache"
    );
    let p = ScenarioConfig {
        kind: ScenarioKind::MultiTurn,
        rounds: 3,
        ..ScenarioConfig::default()
    }
    .plan("m", None)
    .unwrap();
    assert_eq!(
        p[0].jobs.iter().map(|j| j.chained).collect::<Vec<_>>(),
        vec![false, true, true]
    );
    assert!(p[0].jobs[0].params.tools.is_some());
    let agent = ScenarioConfig {
        kind: ScenarioKind::AgentJson,
        ..ScenarioConfig::default()
    }
    .plan("m", None)
    .unwrap();
    assert!(agent[0].jobs[0].params.response_format.is_some());
    assert_eq!(
        ScenarioConfig::default()
            .plan("", None)
            .unwrap_err()
            .to_string(),
        "choose a model"
    );
    assert!(
        ScenarioConfig {
            preset: None,
            custom_prompt: " ".into(),
            ..ScenarioConfig::default()
        }
        .plan("m", None)
        .is_err()
    );
}

fn roles(messages: &[(String, String)]) -> Vec<&str> {
    messages.iter().map(|(r, _)| r.as_str()).collect()
}

/// The metrics of a one-chunk OpenAI stream: `payload` is the content, or one tool call's JSON.
fn metrics_of(payload: &str, tool_call: bool) -> RequestMetrics {
    let delta = if tool_call {
        format!(r#"{{"tool_calls":[{payload}]}}"#)
    } else {
        serde_json::json!({ "content": payload }).to_string()
    };
    let mut r = RequestRecorder::new(0.0, None, None);
    r.on_headers(1.0, 200, Some("text/event-stream"));
    r.on_read(
        2.0,
        format!("data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{delta}}}]}}\n\ndata: [DONE]\n\n").as_bytes(),
    );
    RequestMetrics::compute(&r.finish(3.0), &MetricsConfig::default())
}

#[test]
fn multi_turn_conversation_grows_with_each_answer() {
    let c = ScenarioConfig {
        kind: ScenarioKind::MultiTurn,
        rounds: 3,
        system_prompt: "You plan trips.".into(),
        ..ScenarioConfig::default()
    };
    let jobs = c.plan("m", None).unwrap().remove(0).jobs;
    let mut conversation = Conversation::default();
    let mut sent = Vec::new();
    for (round, mut job) in jobs.into_iter().enumerate() {
        conversation.prepare(&mut job);
        let answer = if round == 1 {
            metrics_of(
                r#"{"function":{"name":"plan_trip","arguments":"{\"city\":\"Oslo\"}"},"index":0,"id":"c1","type":"function"}"#,
                true,
            )
        } else {
            metrics_of(&format!("answer {round}"), false)
        };
        conversation.record(&job, &answer);
        sent.push(job.params.messages);
    }
    assert_eq!(roles(&sent[0]), ["system", "user"]);
    assert_eq!(
        roles(&sent[2]),
        ["system", "user", "assistant", "user", "assistant", "user"],
        "each round carries the whole conversation, the system prompt once"
    );
    assert_eq!(sent[1][2].1, "answer 0");
    assert_eq!(sent[2][4].1, "called plan_trip({\"city\":\"Oslo\"})");
    assert!(sent[2].len() > sent[1].len() && sent[1].len() > sent[0].len());
    assert_eq!(conversation.messages().last().unwrap().1, "answer 2");
}

#[test]
fn unchained_jobs_are_sent_as_planned() {
    let job = ScenarioConfig::default().plan("m", None).unwrap()[0].jobs[0].clone();
    let mut conversation = Conversation::default();
    conversation.record(&job, &metrics_of("hello", false));
    let mut again = job.clone();
    conversation.prepare(&mut again);
    assert_eq!(again, job);
}

#[test]
fn connection_limit_warns_only_above_six_per_plain_http_origin() {
    let plan = |c: u32| {
        ScenarioConfig {
            concurrency: c,
            warmup: 0,
            ..ScenarioConfig::default()
        }
        .plan("m", None)
        .unwrap()
    };
    let one = vec!["http://127.0.0.1:8080".to_owned()];
    let two = vec![one[0].clone(), "http://127.0.0.1:8081".to_owned()];
    let tls = vec!["https://127.0.0.1:8443".to_owned()];
    assert_eq!(connection_limit_warning(&plan(6), &one), None);
    assert!(
        connection_limit_warning(&plan(7), &one)
            .unwrap()
            .contains("concurrency 7")
    );
    assert_eq!(
        connection_limit_warning(&plan(12), &two),
        None,
        "shards add connections"
    );
    assert!(connection_limit_warning(&plan(13), &two).is_some());
    assert_eq!(
        connection_limit_warning(&plan(64), &tls),
        None,
        "HTTP/2 multiplexes"
    );
    assert_eq!(total_jobs(&plan(3)), 8);
}

#[test]
fn json_is_tracked_for_agent_runs_and_required_keys() {
    assert_eq!(
        ScenarioConfig::default().metrics_config(),
        MetricsConfig::default()
    );
    let agent = ScenarioConfig {
        kind: ScenarioKind::AgentJson,
        required_keys: "city, days".into(),
        ..ScenarioConfig::default()
    }
    .metrics_config();
    assert!(agent.track_json);
    assert_eq!(agent.required_keys, ["city", "days"]);
    let no_keys = ScenarioConfig {
        kind: ScenarioKind::AgentJson,
        required_keys: String::new(),
        ..ScenarioConfig::default()
    }
    .metrics_config();
    assert!(no_keys.track_json && no_keys.required_keys.is_empty());
}

#[test]
fn bad_settings_name_what_to_change() {
    let bad = |c: ScenarioConfig| c.plan("m", None).unwrap_err();
    assert_eq!(
        bad(ScenarioConfig {
            requests: 0,
            ..ScenarioConfig::default()
        }),
        ScenarioError::ZeroCount
    );
    assert_eq!(
        bad(ScenarioConfig {
            extra_body: "[1]".into(),
            ..ScenarioConfig::default()
        }),
        ScenarioError::ExtraBodyNotObject
    );
    assert_eq!(
        bad(ScenarioConfig {
            kind: ScenarioKind::ConcurrencySweep,
            levels: " , ".into(),
            ..ScenarioConfig::default()
        }),
        ScenarioError::NoLevels
    );
    assert!(
        ScenarioError::ExtraBodyNotObject
            .to_string()
            .contains("cache_prompt")
    );
}

#[test]
fn poisson_gaps_average_to_the_rate() {
    let n = 10_000;
    let mean = (0..n)
        .map(|i| poisson_gap_ms(4.0, (f64::from(i) + 0.5) / f64::from(n)))
        .sum::<f64>()
        / f64::from(n);
    assert!((mean - 250.0).abs() < 5.0, "mean gap {mean} ms at 4 req/s");
    assert_eq!(poisson_gap_ms(4.0, 0.0), 0.0);
}
