//! The core's trace prompts (#32) against the reference endpoint's own tokenizer and prefix
//! cache: every prompt has exactly its trace's input length in the simulator's tokens (the
//! core mirrors `sim::text::tokenize`'s rule without depending on the server), the cache
//! serves exactly the tokens the core's expected hit rate counts, and one request through the
//! routes reports the input length (plus the template's 4 tokens) and holds the output length.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use tower::ServiceExt;
use ttft_core::dialect::Dialect;
use ttft_core::metrics::{MetricsConfig, RequestMetrics};
use ttft_core::request::{GenerationParams, build_request};
use ttft_core::timeline::RequestRecorder;
use ttft_core::trace::{TracePlan, TracePlanOptions, parse, plan};
use ttft_fixtures::traces;
use ttft_server::sim::prefix_cache::{PrefixCache, token_id};
use ttft_server::sim::text::tokenize;
use ttft_server::{Config, app};

fn whole(name: &str, seed: u64) -> TracePlan {
    let trace = parse(traces::read(name).as_bytes(), None).unwrap();
    let options = TracePlanOptions {
        max_requests: usize::MAX,
        seed,
        ..TracePlanOptions::default()
    };
    plan(&trace, &options).unwrap()
}

#[test]
fn every_trace_prompt_has_its_input_length_in_simulator_tokens() {
    for name in [traces::MOONCAKE, traces::AZURE, traces::BURSTGPT] {
        for seed in [0, 32] {
            for j in &whole(name, seed).jobs {
                assert_eq!(
                    tokenize(&j.prompt()).len(),
                    j.input_tokens as usize,
                    "{name}, seed {seed}, row {}",
                    j.row
                );
            }
        }
    }
}

/// The simulator's cache (blocks of 16 tokens, the 256 latest prompts: every prompt of the
/// 200-request fixture stays) serves exactly what the core expects: the fixture's shared
/// blocks are whole 512-token blocks and no prompt repeats another whole, so neither the
/// cache's 16-token rounding nor its last-token rule takes anything off.
#[test]
fn the_simulator_cache_hits_what_the_core_expects() {
    for name in [traces::MOONCAKE, traces::AZURE, traces::BURSTGPT] {
        let p = whole(name, 5);
        let mut cache = PrefixCache::default();
        let served: u64 = p
            .jobs
            .iter()
            .map(|j| {
                // The simulator's prompt for one message: a newline, then its content.
                let prompt = format!("\n{}", j.prompt());
                let ids: Vec<u64> = tokenize(&prompt).iter().map(|t| token_id(t)).collect();
                cache.admit(&ids) as u64
            })
            .sum();
        let expected = p.prefix_reuse();
        assert_eq!(served, expected.reused_tokens, "{name}");
        if name == traces::MOONCAKE {
            let share = expected.share().unwrap();
            assert!((0.6..0.8).contains(&share), "{share}");
        }
    }
}

#[tokio::test]
async fn a_trace_request_reports_its_lengths() {
    let router = app(Config {
        dist: None,
        seed: 3,
    });
    let p = whole(traces::AZURE, 1);
    let j = p.jobs.iter().min_by_key(|j| j.output_tokens).unwrap();
    let template = GenerationParams {
        model: "sim-cache".into(),
        ..GenerationParams::default()
    };
    let job = j.to_job(&template, Some(Dialect::OpenAiChat));
    let spec = build_request("http://sim", Some(Dialect::OpenAiChat), &job.params);
    let req = Request::post(spec.url.trim_start_matches("http://sim"))
        .header("content-type", "application/json")
        .body(Body::from(spec.body))
        .unwrap();
    let resp = router.oneshot(req).await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    let mut r = RequestRecorder::new(0.0, None, None);
    r.on_headers(0.0, 200, None);
    r.on_read(1.0, &bytes);
    let m = RequestMetrics::compute(&r.finish(2.0), &MetricsConfig::default());
    // The simulator's template: a newline before each message and 3 tokens a message.
    assert_eq!(m.prompt_tokens, Some(u64::from(j.input_tokens) + 4));
    assert_eq!(m.cached_tokens, Some(0));
    assert_eq!(m.output_tokens, u64::from(j.output_tokens));
}
