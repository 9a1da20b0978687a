//! `sim-cache`'s prefix cache through the routes: what its usage reports in each API and
//! flavour (read back by the core's parser), the ground truth it records, the prefill it saves,
//! models without a cache unchanged; and the studio's shared-prefix scenario run against it
//! natively, round by round, until the core's hit rates and diagnosis agree with the server.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;
use ttft_core::diagnosis::diagnose;
use ttft_core::metrics::{MetricsConfig, RequestMetrics};
use ttft_core::report::{EndpointInfo, Report, RequestRecord};
use ttft_core::request::build_request;
use ttft_core::run_stats::RunStats;
use ttft_core::scenario::{Conversation, ScenarioConfig, ScenarioKind};
use ttft_core::timeline::{RequestRecorder, RequestTimeline};
use ttft_server::{Config, app};

fn server() -> axum::Router {
    app(Config {
        dist: None,
        seed: 11,
    })
}

async fn post(app: &axum::Router, path: &str, body: &str) -> (String, Vec<u8>) {
    let req = Request::post(path)
        .header("content-type", "application/json")
        .body(Body::from(body.to_owned()))
        .unwrap();
    let resp = app.clone().oneshot(req).await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let id = resp.headers()["x-request-id"].to_str().unwrap().to_owned();
    let bytes = resp
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes()
        .to_vec();
    (id, bytes)
}

async fn truth(app: &axum::Router, id: &str) -> Value {
    let resp = app
        .clone()
        .oneshot(
            Request::get(format!("/v1/ground-truth/{id}"))
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    serde_json::from_slice(&resp.into_body().collect().await.unwrap().to_bytes()).unwrap()
}

fn timeline(bytes: &[u8]) -> RequestTimeline {
    let mut r = RequestRecorder::new(0.0, None, None);
    r.on_headers(0.0, 200, None);
    r.on_read(1.0, bytes);
    r.finish(2.0)
}

fn metrics(bytes: &[u8]) -> RequestMetrics {
    RequestMetrics::compute(&timeline(bytes), &MetricsConfig::default())
}

/// A long system prompt and a question, as one chat request.
fn long_chat(model: &str, question: &str) -> Value {
    let doc = "The quarterly report covers revenue, latency budgets and costs. ".repeat(60);
    json!({"model": model, "stream": true, "max_tokens": 4, "stream_options": {"include_usage": true},
           "messages": [{"role": "system", "content": doc}, {"role": "user", "content": question}]})
}

#[tokio::test]
async fn a_repeated_prefix_is_served_from_the_cache_and_reported() {
    let app = server();
    let body = long_chat("sim-cache", "What are the costs?");
    let (cold_id, cold) = post(&app, "/v1/chat/completions", &body.to_string()).await;
    let cold_m = metrics(&cold);
    let prompt = cold_m.prompt_tokens.unwrap();
    assert_eq!(cold_m.cached_tokens, Some(0), "a cold prompt misses");
    assert_eq!(cold_m.prompt_cache(), Some((prompt, 0)));

    // Same system prompt, another question: the shared start hits, in whole blocks of 16.
    let body = long_chat("sim-cache", "And the revenue, quarter by quarter?");
    let (warm_id, warm) = post(&app, "/v1/chat/completions", &body.to_string()).await;
    let warm_m = metrics(&warm);
    let cached = warm_m.cached_tokens.unwrap();
    assert!(cached > 0 && cached.is_multiple_of(16), "cached {cached}");
    assert!(cached < warm_m.prompt_tokens.unwrap());

    // Ground truth says the same, and the prefill was charged for the uncached tokens only:
    // 30 ms + 0.5 ms per token.
    let (ct, wt) = (truth(&app, &cold_id).await, truth(&app, &warm_id).await);
    assert_eq!(ct["cached_tokens"], json!(0));
    assert_eq!(wt["cached_tokens"], json!(cached));
    let prefill = |t: &Value| t["prefill_ms"].as_f64().unwrap();
    let expect = |uncached: u64| 30.0 + 0.5 * uncached as f64;
    assert!((prefill(&ct) - expect(prompt)).abs() < 1e-6, "{ct}");
    let warm_prompt = warm_m.prompt_tokens.unwrap();
    assert!(
        (prefill(&wt) - expect(warm_prompt - cached)).abs() < 1e-6,
        "{wt}"
    );

    // `"cache_prompt": false` (llama.cpp's switch) turns it off for one request.
    let mut off = long_chat("sim-cache", "And the revenue, quarter by quarter?");
    off["cache_prompt"] = json!(false);
    let (off_id, off_bytes) = post(&app, "/v1/chat/completions", &off.to_string()).await;
    assert_eq!(metrics(&off_bytes).cached_tokens, Some(0));
    assert!((prefill(&truth(&app, &off_id).await) - expect(warm_prompt)).abs() < 1e-6);
}

#[tokio::test]
async fn every_api_and_flavour_reports_the_hit_in_its_own_fields() {
    let app = server();
    let warm_up = long_chat("sim-cache", "First question?");
    post(&app, "/v1/chat/completions", &warm_up.to_string()).await;

    // llama.cpp: usage's prompt_tokens_details and timings' cache_n / prompt_n.
    let body = long_chat("sim-cache@llamacpp", "Second question?");
    let (_, bytes) = post(&app, "/v1/chat/completions", &body.to_string()).await;
    let text = String::from_utf8(bytes.clone()).unwrap();
    let m = metrics(&bytes);
    let (cached, prompt) = (m.cached_tokens.unwrap(), m.prompt_tokens.unwrap());
    assert!(cached > 0);
    let t = m.server_timings.unwrap();
    assert_eq!(
        (t.cache_n, t.prompt_n),
        (Some(cached), Some(prompt - cached))
    );
    assert!(
        text.contains("\"prompt_tokens_details\":{\"cached_tokens\""),
        "{text}"
    );

    // Anthropic Messages (its own prompt layout, so its own cold start first):
    // cache_read_input_tokens, input_tokens the rest; the core adds them back up into the
    // whole prompt.
    let anthropic = |question: &str| {
        let mut body = long_chat("sim-cache", question);
        body["system"] = body["messages"][0]["content"].clone();
        body["messages"] = json!([{"role": "user", "content": question}]);
        body.to_string()
    };
    let (_, cold) = post(&app, "/v1/messages", &anthropic("Third question?")).await;
    assert_eq!(metrics(&cold).cached_tokens, Some(0));
    let (_, bytes) = post(&app, "/v1/messages", &anthropic("Fourth question?")).await;
    let text = String::from_utf8(bytes.clone()).unwrap();
    assert!(text.contains("\"cache_read_input_tokens\""), "{text}");
    let m = metrics(&bytes);
    let (cached, prompt) = (m.cached_tokens.unwrap(), m.prompt_tokens.unwrap());
    assert!(cached > 0 && cached < prompt, "{cached} of {prompt}");
    assert_eq!(m.cache_write_tokens, Some(0));

    // Not streamed: the whole body's usage carries it too.
    let mut body = long_chat("sim-cache", "Fifth question?");
    body["stream"] = json!(false);
    let (_, bytes) = post(&app, "/v1/chat/completions", &body.to_string()).await;
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    assert!(
        v["usage"]["prompt_tokens_details"]["cached_tokens"]
            .as_u64()
            .unwrap()
            > 0
    );
}

#[tokio::test]
async fn models_without_a_cache_report_and_record_nothing_of_one() {
    let app = server();
    for _ in 0..2 {
        let body = long_chat("sim-fast", "What are the costs?");
        let (id, bytes) = post(&app, "/v1/chat/completions", &body.to_string()).await;
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(!text.contains("prompt_tokens_details"), "{text}");
        assert_eq!(metrics(&bytes).cached_tokens, None);
        let t = truth(&app, &id).await;
        assert!(t.get("cached_tokens").is_none(), "{t}");
    }
}

async fn metrics_text(app: &axum::Router) -> String {
    let resp = app
        .clone()
        .oneshot(Request::get("/metrics").body(Body::empty()).unwrap())
        .await
        .unwrap();
    String::from_utf8(
        resp.into_body()
            .collect()
            .await
            .unwrap()
            .to_bytes()
            .to_vec(),
    )
    .unwrap()
}

/// A sample of `/metrics` text for one model.
fn sample(text: &str, name: &str, model: &str) -> Option<f64> {
    ttft_core::prometheus::parse(text)
        .samples
        .into_iter()
        .find(|s| s.name == name && s.label("model_name") == Some(model))
        .map(|s| s.value)
}

#[tokio::test]
async fn metrics_count_the_prefix_cache_in_tokens_as_vllm_does() {
    let app = server();
    let before = metrics_text(&app).await;
    let mut ids = Vec::new();
    for q in [
        "What are the costs?",
        "And the revenue, quarter by quarter?",
    ] {
        let body = long_chat("sim-cache", q);
        ids.push(
            post(&app, "/v1/chat/completions", &body.to_string())
                .await
                .0,
        );
    }
    post(
        &app,
        "/v1/chat/completions",
        &long_chat("sim-fast", "What are the costs?").to_string(),
    )
    .await;
    let after = metrics_text(&app).await;
    // vLLM's counters: every prompt token is a query, every cached one a hit.
    let (mut queried, mut hit) = (0u64, 0u64);
    for id in &ids {
        let t = truth(&app, id).await;
        queried += t["prompt_tokens"].as_u64().unwrap();
        hit += t["cached_tokens"].as_u64().unwrap();
    }
    assert!(
        hit > 0,
        "the second prompt shares the first's system prompt"
    );
    let q = sample(&after, "vllm:prefix_cache_queries_total", "sim-cache");
    let h = sample(&after, "vllm:prefix_cache_hits_total", "sim-cache");
    assert_eq!(q, Some(queried as f64), "{after}");
    assert_eq!(h, Some(hit as f64), "{after}");
    assert!(after.contains("# TYPE vllm:prefix_cache_hits_total counter"));
    // A model without a cache publishes none, and nothing is published before a request.
    assert_eq!(
        sample(&after, "vllm:prefix_cache_queries_total", "sim-fast"),
        None
    );
    assert!(!before.contains("prefix_cache"), "{before}");
    // The studio reads them as the hit rate over the run.
    let series = ttft_core::server_metrics::ServerSeries::from_scrapes(
        &[
            ttft_core::server_metrics::Scrape::new(0.0, &before),
            ttft_core::server_metrics::Scrape::new(1000.0, &after),
        ],
        Some("sim-cache"),
    );
    let rate = series
        .series(ttft_core::server_metrics::Concept::PrefixCacheHitRate)
        .expect("a hit-rate series");
    assert_eq!(
        rate.metric,
        "vllm:prefix_cache_hits_total / vllm:prefix_cache_queries_total"
    );
    assert_eq!(rate.points.len(), 1);
    assert!((rate.points[0].value - hit as f64 / queried as f64).abs() < 1e-12);
}

/// Runs the shared-prefix scenario's plan against the app as the studio's runner does: each
/// round sent with the conversation so far, its answer recorded into the next.
async fn run_shared_prefix(app: &axum::Router, extra_body: &str) -> Report {
    let cfg = ScenarioConfig {
        kind: ScenarioKind::SharedPrefix,
        rounds: 5,
        max_tokens: 24,
        extra_body: extra_body.into(),
        ..ScenarioConfig::default()
    };
    let phases = cfg.plan("sim-cache", None).unwrap();
    let mut conversation = Conversation::default();
    let mut records = Vec::new();
    for (i, mut job) in phases.into_iter().flat_map(|p| p.jobs).enumerate() {
        conversation.prepare(&mut job);
        let spec = build_request("http://sim", None, &job.params);
        let path = spec.url.strip_prefix("http://sim").unwrap().to_owned();
        let sent = std::time::Instant::now();
        let req = Request::post(path)
            .header("content-type", "application/json")
            .body(Body::from(spec.body))
            .unwrap();
        let resp = app.clone().oneshot(req).await.unwrap();
        let mut rec = RequestRecorder::new(0.0, None, None);
        let ms = |at: std::time::Instant| at.duration_since(sent).as_secs_f64() * 1e3;
        rec.on_headers(
            ms(std::time::Instant::now()),
            200,
            Some("text/event-stream"),
        );
        let mut body = resp.into_body();
        while let Some(frame) = body.frame().await {
            if let Ok(data) = frame.unwrap().into_data() {
                rec.on_read(ms(std::time::Instant::now()), &data);
            }
        }
        let tl = rec.finish(ms(std::time::Instant::now()));
        let record = RequestRecord::from_timeline(
            i as u32,
            job.group.clone(),
            job.level,
            &tl,
            &cfg.metrics_config(),
        );
        conversation.record(&job, &record.metrics);
        records.push(record);
    }
    let endpoint = EndpointInfo {
        base_url: "http://sim".into(),
        model: "sim-cache".into(),
        dialect: None,
    };
    Report::new("shared prefix", endpoint, ScenarioKind::SharedPrefix.id()).with_requests(records)
}

#[tokio::test]
async fn the_shared_prefix_scenario_hits_the_cache_round_by_round() {
    let app = server();
    let report = run_shared_prefix(&app, "").await;
    let agg = report.aggregates();
    // Every round's prompt extends the one before: round 1 is cold, every later round is
    // served all but its new tokens.
    let rounds: Vec<f64> = agg
        .groups
        .iter()
        .map(|g| g.prompt_cache.unwrap().hit_rate())
        .collect();
    assert_eq!(rounds.len(), 5);
    assert_eq!(rounds[0], 0.0, "{rounds:?}");
    assert!(rounds[1..].iter().all(|h| *h > 0.8), "{rounds:?}");
    let run = agg.prompt_cache.unwrap();
    assert_eq!((run.reporting, run.successful), (5, 5));
    let prompts: Vec<u64> = report
        .requests
        .iter()
        .map(|r| r.metrics.prompt_tokens.unwrap())
        .collect();
    assert!(prompts.windows(2).all(|w| w[1] > w[0]), "{prompts:?}");
    let f = diagnose(&report, &agg);
    let ids: Vec<&str> = f.iter().map(|f| f.id.as_str()).collect();
    assert!(ids.contains(&"prompt_cache"), "{f:?}");
    assert!(!ids.contains(&"prompt_cache_missed"), "{f:?}");

    // The same conversation with the cache turned off: every round prefills the whole prompt,
    // TTFT grows with it, and the diagnosis says so.
    let report = run_shared_prefix(&app, "{\"cache_prompt\": false}").await;
    let agg = report.aggregates();
    assert_eq!(agg.prompt_cache.unwrap().hit_rate(), 0.0);
    let f = diagnose(&report, &agg);
    let missed = f
        .iter()
        .find(|f| f.id == "prompt_cache_missed")
        .unwrap_or_else(|| panic!("{f:?} {:?}", agg.ttft_vs_prompt));
    assert!(
        missed.evidence.contains("hit rate 0 %"),
        "{}",
        missed.evidence
    );
    assert!(missed.advice.contains("--enable-prefix-caching"));
}

#[test]
fn the_scheduler_charges_a_prefill_for_the_uncached_tokens_only() {
    use ttft_server::sim::scheduler::{LatencyModel, Scheduler};
    let model = LatencyModel {
        prefill_base_ms: 10.0,
        prefill_ms_per_token: 1.0,
        decode_base_ms: 5.0,
        decode_ms_per_seq: 0.0,
        decode_ms_per_kv_ktok: 0.0,
        max_batch: 8,
        kv_capacity: 10_000,
        max_waiting: 8,
        jitter: 0.0,
        seed: 0,
    };
    let mut s = Scheduler::new(model.clone());
    s.submit_cached(1, 1000, 960, 2).unwrap();
    let step = s.plan().unwrap();
    assert!(step.prefill);
    assert_eq!(step.duration_ms, 10.0 + 40.0);
    s.complete(&step);
    // Decoding does not pay for it again; a plain submit pays for the whole prompt.
    assert!(!s.plan().unwrap().prefill);
    let mut plain = Scheduler::new(model);
    plain.submit(2, 1000, 2).unwrap();
    assert_eq!(plain.plan().unwrap().duration_ms, 10.0 + 1000.0);
}
