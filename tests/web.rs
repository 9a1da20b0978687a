//! wasm-bindgen tests in headless Chromium: scenario planning, storage, endpoint settings and
//! the mounted components.
#![cfg(target_arch = "wasm32")]

use ttft_core::report::{EndpointInfo, Report};
use ttft_studio::state::{EndpointConfig, RunId, SavedRun};
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
    assert!(
        bad.secret_headers()
            .unwrap_err()
            .to_string()
            .contains("line 1")
    );
    ttft_studio::browser::storage::save_endpoint(&e);
    let stored = web_sys::window().unwrap().local_storage().unwrap().unwrap();
    assert_eq!(
        stored.get_item("ttft-studio.key").unwrap(),
        None,
        "not stored without opt-in"
    );
    ttft_studio::browser::storage::save_endpoint(&EndpointConfig {
        remember_key: true,
        ..e.clone()
    });
    assert_eq!(
        ttft_studio::browser::storage::load_endpoint()
            .unwrap()
            .api_key,
        "sk-secret"
    );
    ttft_studio::browser::storage::save_endpoint(&EndpointConfig::default());
}

fn run(id: u64, title: &str) -> SavedRun {
    SavedRun {
        id: RunId(id),
        report: Report::new(title, EndpointInfo::default(), "chat")
            .with_settings(serde_json::json!({})),
    }
}

#[wasm_bindgen_test]
fn runs_round_trip_through_storage_and_damage_is_reported() {
    let runs = vec![run(7, "b"), run(3, "a")];
    assert_eq!(ttft_studio::browser::storage::save_runs(&runs), None);
    let (back, warning) = ttft_studio::browser::storage::load_runs();
    assert_eq!(back, runs, "ids survive a reload");
    assert_eq!(warning, None);
    let s = web_sys::window().unwrap().local_storage().unwrap().unwrap();
    // Runs stored before runs had ids get fresh ids above every stored one.
    let old = serde_json::to_string(&serde_json::json!([
        { "id": 5, "report": runs[0].report },
        runs[1].report,
    ]))
    .unwrap();
    s.set_item("ttft-studio.runs", &old).unwrap();
    let (back, _) = ttft_studio::browser::storage::load_runs();
    assert_eq!(
        back.iter().map(|r| r.id).collect::<Vec<_>>(),
        [RunId(5), RunId(6)]
    );
    assert_eq!(back[1].report, runs[1].report);
    s.set_item("ttft-studio.runs", "{not json").unwrap();
    let (back, warning) = ttft_studio::browser::storage::load_runs();
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
    ttft_studio::browser::storage::save_runs(&[run(1, "earlier run")]);
    let root = doc().create_element("div").unwrap();
    doc().body().unwrap().append_child(&root).unwrap();
    let handle = leptos::mount::mount_to(root.clone().unchecked_into(), ttft_studio::App);
    ttft_studio::browser::fetch::sleep_ms(50.0).await;
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
    // As a user typing and leaving the field: `input`, then `change`.
    for event in ["input", "change"] {
        model
            .dispatch_event(&web_sys::Event::new(event).unwrap())
            .unwrap();
    }
    doc()
        .query_selector("[data-testid=start-run]")
        .unwrap()
        .unwrap()
        .unchecked_into::<web_sys::HtmlElement>()
        .click();
    ttft_studio::browser::fetch::sleep_ms(20.0).await;
    assert!(text_of("[data-testid=notice]").contains("choose a model"));
    // Deleting the run empties the list.
    doc()
        .query_selector("[data-testid=delete-run]")
        .unwrap()
        .unwrap()
        .unchecked_into::<web_sys::HtmlElement>()
        .click();
    ttft_studio::browser::fetch::sleep_ms(20.0).await;
    assert_eq!(
        doc()
            .query_selector_all("[data-testid=run-item]")
            .unwrap()
            .length(),
        0
    );
    assert_eq!(ttft_studio::browser::storage::load_runs().0.len(), 0);
    drop(handle);
    root.remove();
}

/// Sets an input's value as a user typing and leaving the field.
fn type_into(testid: &str, value: &str) {
    let input: web_sys::HtmlInputElement = doc()
        .query_selector(&format!("[data-testid={testid}]"))
        .unwrap()
        .unwrap()
        .unchecked_into();
    input.set_value(value);
    for event in ["input", "change"] {
        input
            .dispatch_event(&web_sys::Event::new(event).unwrap())
            .unwrap();
    }
}

#[wasm_bindgen_test]
async fn a_failed_connection_test_says_what_to_do_and_the_next_test_replaces_it() {
    let root = doc().create_element("div").unwrap();
    doc().body().unwrap().append_child(&root).unwrap();
    let handle = leptos::mount::mount_to(root.clone().unchecked_into(), ttft_studio::App);
    // Nothing listens on port 9: the browser refuses the connection.
    type_into("base-url", "http://127.0.0.1:9");
    let click_test = || {
        doc()
            .query_selector("[data-testid=test-connection]")
            .unwrap()
            .unwrap()
            .unchecked_into::<web_sys::HtmlElement>()
            .click()
    };
    click_test();
    let mut text = String::new();
    for _ in 0..100 {
        ttft_studio::browser::fetch::sleep_ms(50.0).await;
        text = text_of("[data-testid=connection-result].error");
        if text.contains("127.0.0.1:9") {
            break;
        }
    }
    assert!(
        text.contains("127.0.0.1:9") && text.contains("CORS"),
        "{text}"
    );
    // The next test's outcome replaces the first message (errors do not pile up).
    type_into("base-url", "http://127.0.0.1:7");
    click_test();
    for _ in 0..100 {
        ttft_studio::browser::fetch::sleep_ms(50.0).await;
        text = text_of("[data-testid=connection-result].error");
        if text.contains("127.0.0.1:7") {
            break;
        }
    }
    assert!(
        text.contains("127.0.0.1:7") && !text.contains("127.0.0.1:9"),
        "{text}"
    );
    drop(handle);
    root.remove();
    ttft_studio::browser::storage::save_endpoint(&EndpointConfig::default());
}
