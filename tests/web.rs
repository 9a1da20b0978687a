//! wasm-bindgen tests in headless Chromium: scenario planning, storage, endpoint settings and
//! the mounted components.
#![cfg(target_arch = "wasm32")]

use ttft_core::report::{EndpointInfo, REPORT_VERSION, Report};
use ttft_core::stats::Thresholds;
use ttft_studio::scenario::{ScenarioConfig, ScenarioKind, parse_levels};
use ttft_studio::state::EndpointConfig;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn doc() -> web_sys::Document {
    web_sys::window().unwrap().document().unwrap()
}

fn text_of(sel: &str) -> String {
    doc()
        .query_selector(sel)
        .unwrap()
        .map(|e| e.text_content().unwrap_or_default())
        .unwrap_or_default()
}

#[wasm_bindgen_test]
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

#[wasm_bindgen_test]
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
    assert!(parse_levels("1, x").unwrap_err().contains("'x'"));
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
        ScenarioConfig::default().plan("", None).unwrap_err(),
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

#[wasm_bindgen_test]
fn api_key_is_never_serialized_and_headers_are_validated() {
    let e = EndpointConfig {
        api_key: "sk-secret".into(),
        extra_headers: "X-Team: infra".into(),
        ..EndpointConfig::default()
    };
    let json = serde_json::to_string(&e).unwrap();
    assert!(!json.contains("sk-secret"));
    let h = e.secret_headers().unwrap();
    assert!(h.contains(&("authorization".into(), "Bearer sk-secret".into())));
    assert!(h.contains(&("X-Team".into(), "infra".into())));
    let bad = EndpointConfig {
        extra_headers: "no colon here".into(),
        ..EndpointConfig::default()
    };
    assert!(bad.secret_headers().unwrap_err().contains("line 1"));
    ttft_studio::storage::save_endpoint(&e);
    let stored = web_sys::window().unwrap().local_storage().unwrap().unwrap();
    assert_eq!(
        stored.get_item("ttft-studio.key").unwrap(),
        None,
        "not stored without opt-in"
    );
    ttft_studio::storage::save_endpoint(&EndpointConfig {
        remember_key: true,
        ..e.clone()
    });
    assert_eq!(
        ttft_studio::storage::load_endpoint().unwrap().api_key,
        "sk-secret"
    );
    ttft_studio::storage::save_endpoint(&EndpointConfig::default());
}

fn report(title: &str) -> Report {
    Report {
        version: REPORT_VERSION,
        title: title.into(),
        created_unix_ms: 0.0,
        clock_resolution_ms: None,
        endpoint: EndpointInfo::default(),
        scenario: "chat".into(),
        settings: serde_json::json!({}),
        thresholds: Thresholds::default(),
        requests: Vec::new(),
    }
}

#[wasm_bindgen_test]
fn runs_round_trip_through_storage_and_damage_is_reported() {
    let runs = vec![report("b"), report("a")];
    assert_eq!(ttft_studio::storage::save_runs(&runs), None);
    let (back, warning) = ttft_studio::storage::load_runs();
    assert_eq!(back, runs);
    assert_eq!(warning, None);
    let s = web_sys::window().unwrap().local_storage().unwrap().unwrap();
    s.set_item("ttft-studio.runs", "{not json").unwrap();
    let (back, warning) = ttft_studio::storage::load_runs();
    assert!(back.is_empty());
    assert!(warning.unwrap().contains("damaged"));
    s.remove_item("ttft-studio.runs").unwrap();
}

#[wasm_bindgen_test]
fn formatting() {
    use ttft_studio::format::ms;
    assert_eq!(ms(Some(812.4)), "812 ms");
    assert_eq!(ms(Some(3480.0)), "3.48 s");
    assert_eq!(ms(Some(12.34)), "12.3 ms");
    assert_eq!(ms(None), "—");
}

#[wasm_bindgen_test]
async fn app_mounts_shows_clock_saved_runs_and_refuses_bad_settings() {
    ttft_studio::storage::save_runs(&[report("earlier run")]);
    let root = doc().create_element("div").unwrap();
    doc().body().unwrap().append_child(&root).unwrap();
    let handle = leptos::mount::mount_to(root.clone().unchecked_into(), ttft_studio::App);
    ttft_studio::runner::sleep_ms(50.0).await;
    assert!(text_of("[data-testid=clock-status]").contains("µs"));
    assert_eq!(
        doc()
            .query_selector_all("[data-testid=run-item]")
            .unwrap()
            .length(),
        1
    );
    assert!(
        text_of("[data-testid=report-title]").contains("earlier run"),
        "the newest saved run is shown"
    );
    // An empty model: the run does not start and the user is told why.
    let model: web_sys::HtmlInputElement = doc()
        .query_selector("[data-testid=model]")
        .unwrap()
        .unwrap()
        .unchecked_into();
    model.set_value("");
    model
        .dispatch_event(&web_sys::Event::new("change").unwrap())
        .unwrap();
    doc()
        .query_selector("[data-testid=start-run]")
        .unwrap()
        .unwrap()
        .unchecked_into::<web_sys::HtmlElement>()
        .click();
    ttft_studio::runner::sleep_ms(20.0).await;
    assert!(text_of("[data-testid=notice]").contains("choose a model"));
    // Deleting the run empties the list.
    doc()
        .query_selector("[data-testid=delete-run]")
        .unwrap()
        .unwrap()
        .unchecked_into::<web_sys::HtmlElement>()
        .click();
    ttft_studio::runner::sleep_ms(20.0).await;
    assert_eq!(
        doc()
            .query_selector_all("[data-testid=run-item]")
            .unwrap()
            .length(),
        0
    );
    assert_eq!(ttft_studio::storage::load_runs().0.len(), 0);
    drop(handle);
    root.remove();
}
