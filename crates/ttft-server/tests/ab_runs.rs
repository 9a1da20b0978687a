//! An A/B run against the reference endpoint, measured natively as the studio's runner does
//! (#29): `sim-ab`, `sim-ab-twin` and `sim-ab-slower` interleaved by the core's plan, the run
//! split into one report per arm, and request k of each arm paired with request k of the
//! others. The twin shows no difference; the slower profile's known 10 % longer decode steps
//! show in the paired TPOT.

use axum::body::Body;
use axum::http::Request;
use http_body_util::BodyExt;
use tower::ServiceExt;
use ttft_core::pairing::paired_values;
use ttft_core::report::{ArmPart, EndpointInfo, Report, RequestRecord, RunGroup};
use ttft_core::request::build_request;
use ttft_core::scenario::{Arm, Job, ScenarioConfig, ScenarioKind, warmups_first};
use ttft_core::timeline::RequestRecorder;
use ttft_server::{Config, app};

/// Sends one job through the router and records it as the studio would.
async fn send(app: &axum::Router, job: &Job, cfg: &ScenarioConfig, index: u32) -> RequestRecord {
    let spec = build_request("http://sim", None, &job.params);
    let path = spec.url.strip_prefix("http://sim").unwrap().to_owned();
    let sent = std::time::Instant::now();
    let req = Request::post(path)
        .header("content-type", "application/json")
        .body(Body::from(spec.body))
        .unwrap();
    let resp = app.clone().oneshot(req).await.unwrap();
    let ms = |at: std::time::Instant| at.duration_since(sent).as_secs_f64() * 1e3;
    let mut rec = RequestRecorder::new(0.0, None, None);
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
    RequestRecord {
        warmup: job.warmup,
        pair: job.pair,
        ..RequestRecord::from_timeline(
            index,
            job.group.clone(),
            job.level,
            &tl,
            &cfg.metrics_config(),
        )
    }
}

#[tokio::test]
async fn an_interleaved_ab_run_finds_the_twin_alike_and_the_slower_profile_ten_percent_slower() {
    let app = app(Config {
        dist: None,
        seed: 29,
    });
    let models = ["sim-ab", "sim-ab-twin", "sim-ab-slower"];
    let cfg = ScenarioConfig {
        kind: ScenarioKind::Chat,
        requests: 30,
        warmup: 1,
        max_tokens: 16,
        ignore_eos: true,
        // One request of each arm in flight: each alone on its model's engine.
        concurrency: 3,
        arms: models
            .iter()
            .map(|m| Arm {
                model: (*m).into(),
                ..Arm::default()
            })
            .collect(),
        ..ScenarioConfig::default()
    };
    let wire: Vec<String> = models.iter().map(|m| (*m).to_owned()).collect();
    let phases = warmups_first(cfg.plan_arms(&wire, None).unwrap());
    let mut records = Vec::new();
    let mut arm_of = Vec::new();
    let mut index = 0;
    for phase in phases {
        // Starts alternate A, B, C, A, …: each slot's three requests are sent together.
        for slot in phase.jobs.chunks(3) {
            let sent = futures_util::future::join_all(
                slot.iter()
                    .enumerate()
                    .map(|(i, job)| send(&app, job, &cfg, index + i as u32)),
            )
            .await;
            index += slot.len() as u32;
            for (job, r) in slot.iter().zip(sent) {
                arm_of.push(job.arm);
                records.push(r);
            }
        }
    }
    let labels = ttft_core::scenario::arm_labels(&cfg.arms).unwrap();
    let parts = RunGroup::arms("ab", &labels)
        .into_iter()
        .map(|g| ArmPart {
            title: g.label.clone(),
            endpoint: EndpointInfo::default(),
            group: g,
        })
        .collect();
    let run = Report::new("ab", EndpointInfo::default(), "chat").with_requests(records);
    let arms = run.split_arms(&arm_of, parts);
    assert!(
        arms.iter()
            .all(|a| a.measured().count() == 30 && a.requests.len() == 31)
    );
    let tpot = |m: &ttft_core::metrics::RequestMetrics| m.tpot_ms;
    let ttft = |m: &ttft_core::metrics::RequestMetrics| m.ttft_ms;
    let mean_ratio =
        |b: &Report, pick: &dyn Fn(&ttft_core::metrics::RequestMetrics) -> Option<f64>| {
            let pairs = paired_values(&arms[0], b, pick);
            assert_eq!(pairs.len(), 30, "every request pairs up");
            // The geometric mean of the paired ratios: the noise is lognormal, so its log is
            // symmetric and the mean of ratios would lean high.
            (pairs.iter().map(|(x, y)| (y / x).ln()).sum::<f64>() / pairs.len() as f64).exp()
        };
    let (twin, slower) = (mean_ratio(&arms[1], &tpot), mean_ratio(&arms[2], &tpot));
    let (twin_ttft, slower_ttft) = (mean_ratio(&arms[1], &ttft), mean_ratio(&arms[2], &ttft));
    eprintln!(
        "paired TPOT ratio (geometric mean): twin/ab {twin:.4}, slower/ab {slower:.4}; paired TTFT ratio: twin/ab {twin_ttft:.4}, slower/ab {slower_ttft:.4}"
    );
    // Each pair's log ratio spreads by ≈ 0.145 (10 % per request on each side), so 30 pairs
    // pin the ratio to ≈ ± 2.6 %: these bounds are ≈ 2.7 standard errors.
    assert!((twin - 1.0).abs() < 0.07, "twin/ab TPOT {twin}");
    assert!((slower - 1.10).abs() < 0.07, "slower/ab TPOT {slower}");
    assert!(
        (slower_ttft - 1.0).abs() < 0.05,
        "the prefill is identical: {slower_ttft}"
    );
}
