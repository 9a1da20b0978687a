//! wasm-bindgen tests in headless Chromium: run storage in IndexedDB (ids, rename, delete, the
//! move from localStorage, a full storage's message), endpoint settings and the mounted components.
#![cfg(target_arch = "wasm32")]

use ttft_core::metrics::MetricsConfig;
use ttft_core::report::{EndpointInfo, Report, RequestRecord};
use ttft_core::timeline::RequestRecorder;
use ttft_studio::browser::storage;
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
    ttft_studio::actions::settings::save_endpoint(&e);
    let stored = web_sys::window().unwrap().local_storage().unwrap().unwrap();
    assert_eq!(
        stored.get_item("ttft-studio.key").unwrap(),
        None,
        "not stored without opt-in"
    );
    ttft_studio::actions::settings::save_endpoint(&EndpointConfig {
        remember_secrets: true,
        ..e.clone()
    });
    assert_eq!(
        ttft_studio::actions::settings::load_endpoint()
            .unwrap()
            .api_key,
        "sk-secret"
    );
    ttft_studio::actions::settings::save_endpoint(&EndpointConfig::default());
}

/// Every value in this origin's localStorage, joined: where a secret must not be.
fn all_local_storage() -> String {
    let s = web_sys::window().unwrap().local_storage().unwrap().unwrap();
    (0..s.length().unwrap())
        .filter_map(|i| s.key(i).unwrap())
        .map(|k| format!("{k}={}", s.get_item(&k).unwrap().unwrap_or_default()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[wasm_bindgen_test]
fn extra_header_values_are_kept_only_with_the_opt_in() {
    use ttft_studio::actions::settings::{load_endpoint, save_endpoint};
    let typed = EndpointConfig {
        model: "m-headers".into(),
        extra_headers: "X-Internal-Token: hdr-SECRET-777".into(),
        ..EndpointConfig::default()
    };
    save_endpoint(&typed);
    assert!(
        !all_local_storage().contains("hdr-SECRET-777"),
        "a header value was stored without the opt-in: {}",
        all_local_storage()
    );
    let back = load_endpoint().unwrap();
    assert_eq!(back.model, "m-headers", "the rest of the settings is kept");
    assert_eq!(back.extra_headers, "", "not shown again after a reload");

    // Opted in: the key's checkbox covers the headers too, and turning it off forgets them.
    save_endpoint(&EndpointConfig {
        remember_secrets: true,
        ..typed.clone()
    });
    assert_eq!(
        load_endpoint().unwrap().extra_headers,
        "X-Internal-Token: hdr-SECRET-777"
    );
    save_endpoint(&typed);
    assert!(!all_local_storage().contains("hdr-SECRET-777"));

    // Settings an older build saved, with the value inside: cleaned as soon as they are read.
    let s = web_sys::window().unwrap().local_storage().unwrap().unwrap();
    s.set_item(
        "ttft-studio.endpoint",
        r#"{"base_url":"","dialect":null,"model":"old","remember_key":false,"extra_headers":"X-Internal-Token: hdr-SECRET-777","flavour":"vllm"}"#,
    )
    .unwrap();
    let old = load_endpoint().unwrap();
    assert_eq!(
        (old.model.as_str(), old.extra_headers.as_str()),
        ("old", "")
    );
    assert!(
        !all_local_storage().contains("hdr-SECRET-777"),
        "an older build's header value survived loading: {}",
        all_local_storage()
    );
    // An older build's opt-in (`remember_key`) still keeps them, now in their own entry.
    s.set_item(
        "ttft-studio.endpoint",
        r#"{"base_url":"","dialect":null,"model":"old","remember_key":true,"extra_headers":"X-Team: infra","flavour":"vllm"}"#,
    )
    .unwrap();
    let kept = load_endpoint().unwrap();
    assert!(kept.remember_secrets);
    assert_eq!(kept.extra_headers, "X-Team: infra");
    assert!(
        !s.get_item("ttft-studio.endpoint")
            .unwrap()
            .unwrap()
            .contains("X-Team")
    );
    save_endpoint(&EndpointConfig::default());
}

fn run(id: u64, title: &str) -> SavedRun {
    SavedRun {
        id: RunId(id),
        report: Report::new(title, EndpointInfo::default(), "chat")
            .with_settings(serde_json::json!({}))
            .into(),
    }
}

/// Saves a run the way the app does: its index record at `order`, its report JSON.
async fn save(run: &SavedRun, order: i64, next_id: u64) {
    let json = ttft_studio::actions::storage::encode_report(std::sync::Arc::clone(&run.report))
        .await
        .unwrap();
    let meta = storage::RunMeta::of(run.id.0, &run.report, order, json.len() as u64);
    storage::save_run(&meta, &json, next_id).await.unwrap();
}

/// `n` requests recorded through the real path (SSE bytes → recorder → metrics).
fn requests(n: usize) -> Vec<RequestRecord> {
    recorded(n, 0.0, true)
}

/// `n` requests, the `i`-th `i + shift` ms late (its headers too when `headers_late`).
fn recorded(n: usize, shift: f64, headers_late: bool) -> Vec<RequestRecord> {
    let cfg = MetricsConfig::default();
    (0..n)
        .map(|i| {
            let at = i as f64 + shift;
            let headers_at = if headers_late { 10.0 + at } else { 10.0 };
            let mut rec = RequestRecorder::new(0.0, None, None);
            rec.on_headers(headers_at, 200, Some("text/event-stream"));
            rec.on_read(
                50.0 + at,
                b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" Hello\"}}]}\n\n",
            );
            rec.on_read(
                62.5 + at,
                b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" there.\"}}]}\n\ndata: [DONE]\n\n",
            );
            let tl = rec.finish(63.0 + at);
            RequestRecord::from_timeline(i as u32, "c=1".into(), Some(1.0), &tl, &cfg)
        })
        .collect()
}

fn ids(index: &storage::Index) -> Vec<u64> {
    index.runs.iter().map(|m| m.id).collect()
}

#[wasm_bindgen_test]
async fn runs_are_saved_renamed_and_deleted_one_record_each_under_their_ids() {
    storage::clear_all().await.unwrap();
    let (b, a) = (run(7, "b"), run(3, "a"));
    save(&a, 3, 4).await;
    save(&b, 7, 8).await;
    let index = storage::load_index().await.unwrap();
    assert_eq!(ids(&index), [7, 3], "top of the list first");
    assert_eq!(index.next_id, 8);
    assert!(index.runs[0].bytes > 0 && index.runs[0].requests == 0);
    for (meta, want) in index.runs.iter().zip([&b, &a]) {
        assert_eq!(
            &ttft_studio::actions::storage::load_saved_run(meta)
                .await
                .unwrap(),
            want
        );
    }
    // A rename writes only the index record; its title wins over the report's.
    let renamed = storage::RunMeta {
        title: "b, renamed".into(),
        ..index.runs[0].clone()
    };
    storage::save_meta(&renamed).await.unwrap();
    let back = ttft_studio::actions::storage::load_saved_run(
        &storage::load_index().await.unwrap().runs[0],
    )
    .await
    .unwrap();
    assert_eq!(back.report.title, "b, renamed");
    // Deleting the top run does not give its id back.
    storage::delete_run(7, 8).await.unwrap();
    let index = storage::load_index().await.unwrap();
    assert_eq!(ids(&index), [3]);
    assert_eq!(
        index.next_id, 8,
        "a deleted run's id is never handed out again"
    );
    storage::clear_all().await.unwrap();
}

#[wasm_bindgen_test]
async fn a_large_run_round_trips_and_a_missing_report_is_called_damaged() {
    storage::clear_all().await.unwrap();
    let mut big = run(1, "big");
    std::sync::Arc::make_mut(&mut big.report).requests = requests(2000);
    save(&big, 1, 2).await;
    let index = storage::load_index().await.unwrap();
    assert_eq!(index.runs[0].requests, big.report.requests.len());
    assert_eq!(
        ttft_studio::actions::storage::load_saved_run(&index.runs[0])
            .await
            .unwrap(),
        big
    );
    let ghost = storage::RunMeta {
        id: 99,
        ..index.runs[0].clone()
    };
    let err = ttft_studio::actions::storage::load_saved_run(&ghost)
        .await
        .unwrap_err();
    assert!(
        matches!(err, storage::StorageError::Damaged { id: 99, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("delete it"), "{err}");
    storage::clear_all().await.unwrap();
}

/// WebKit's ephemeral sessions (Safari's private windows) refuse a Blob in IndexedDB
/// ("UnknownError: Error preparing Blob/File data to be stored in object store"): the run is
/// saved as bytes instead and reads back the same.
#[wasm_bindgen_test]
async fn a_run_is_saved_as_bytes_where_blobs_are_refused() {
    storage::clear_all().await.unwrap();
    let refuse_blobs = js_sys::Function::new_with_args(
        "refuse",
        "const p = IDBObjectStore.prototype;
         window.__ttftBlobPut = window.__ttftBlobPut || p.put;
         p.put = refuse
           ? function (value, key) {
               if (value && value.data instanceof Blob)
                 throw new DOMException('Error preparing Blob/File data to be stored in object store', 'UnknownError');
               return window.__ttftBlobPut.call(this, value, key);
             }
           : window.__ttftBlobPut;",
    );
    refuse_blobs
        .call1(&wasm_bindgen::JsValue::NULL, &true.into())
        .unwrap();
    let mut private = run(5, "in a private window");
    std::sync::Arc::make_mut(&mut private.report).requests = requests(3);
    save(&private, 5, 6).await;
    refuse_blobs
        .call1(&wasm_bindgen::JsValue::NULL, &false.into())
        .unwrap();
    let index = storage::load_index().await.unwrap();
    assert_eq!(
        ttft_studio::actions::storage::load_saved_run(&index.runs[0])
            .await
            .unwrap(),
        private
    );
    storage::clear_all().await.unwrap();
}

#[wasm_bindgen_test]
async fn runs_of_the_local_storage_format_move_once_with_their_ids() {
    storage::clear_all().await.unwrap();
    let ls = web_sys::window().unwrap().local_storage().unwrap().unwrap();
    let (b, a) = (run(5, "b"), run(0, "a"));
    // Newest first: an entry with an id, a bare report from before ids, one that cannot be read.
    let newer = serde_json::json!({ "id": 9, "report": { "version": 999, "title": "from a newer studio" } });
    let old = serde_json::json!([{ "id": 5, "report": b.report }, a.report, newer]);
    ls.set_item("ttft-studio.runs", &old.to_string()).unwrap();
    let moved = ttft_studio::actions::migrate::migrate_local_storage()
        .await
        .unwrap()
        .unwrap();
    assert_eq!(moved.moved, 2);
    assert_eq!(moved.kept.len(), 1, "{:?}", moved.kept);
    let index = storage::load_index().await.unwrap();
    // The bare report gets an id above every id in the old list; the old order is kept.
    assert_eq!(ids(&index), [5, 10]);
    assert!(index.next_id > 10);
    assert_eq!(
        ttft_studio::actions::storage::load_saved_run(&index.runs[0])
            .await
            .unwrap()
            .report,
        b.report
    );
    assert_eq!(
        ttft_studio::actions::storage::load_saved_run(&index.runs[1])
            .await
            .unwrap()
            .report,
        a.report
    );
    // Only what could not be read stays in localStorage; the next start moves nothing twice.
    let left: serde_json::Value =
        serde_json::from_str(&ls.get_item("ttft-studio.runs").unwrap().unwrap()).unwrap();
    assert_eq!(left, serde_json::json!([newer]));
    let again = ttft_studio::actions::migrate::migrate_local_storage()
        .await
        .unwrap()
        .unwrap();
    assert_eq!((again.moved, again.kept.len()), (0, 1));
    assert_eq!(ids(&storage::load_index().await.unwrap()), [5, 10]);
    // Damaged localStorage: nothing moves, nothing is removed, and the message says so.
    ls.set_item("ttft-studio.runs", "{not json").unwrap();
    let err = ttft_studio::actions::migrate::migrate_local_storage()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("untouched"), "{err}");
    assert_eq!(
        ls.get_item("ttft-studio.runs").unwrap().as_deref(),
        Some("{not json")
    );
    ls.remove_item("ttft-studio.runs").unwrap();
    assert_eq!(
        ttft_studio::actions::migrate::migrate_local_storage()
            .await
            .unwrap(),
        None
    );
    storage::clear_all().await.unwrap();
}

/// The quota choice itself (`ttft_core::quota`) is tested natively in the core; here, the
/// message of a save that did not fit.
#[wasm_bindgen_test]
fn a_full_storage_says_what_did_not_fit_and_what_to_do() {
    assert_eq!(
        storage::StorageError::Quota { needed: 9_100_000 }.to_string(),
        "the browser's storage is full: 9.1 MB did not fit. Choose saved runs to delete, then retry saving, or export the run as JSON"
    );
}

async fn wait_for(what: &str, ok: impl Fn() -> bool) {
    for _ in 0..200 {
        if ok() {
            return;
        }
        ttft_studio::browser::fetch::sleep_ms(25.0).await;
    }
    panic!("{what} did not happen within 5 s");
}

fn count(sel: &str) -> u32 {
    doc().query_selector_all(sel).unwrap().length()
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
async fn app_mounts_then_shows_saved_runs_and_refuses_bad_settings() {
    storage::clear_all().await.unwrap();
    save(&run(1, "earlier run"), 1, 2).await;
    let root = doc().create_element("div").unwrap();
    doc().body().unwrap().append_child(&root).unwrap();
    let handle = leptos::mount::mount_to(root.clone().unchecked_into(), ttft_studio::App);
    // The page is up before the saved runs are read; then they appear, the newest shown.
    wait_for("the saved run appears", || {
        count("[data-testid=run-item]") == 1
    })
    .await;
    assert!(text_of("[data-testid=clock-status]").contains("µs"));
    wait_for("the newest saved run is shown", || {
        text_of("[data-testid=report-title]").contains("earlier run")
    })
    .await;
    let item = doc()
        .query_selector("[data-testid=run-item]")
        .unwrap()
        .unwrap();
    assert_eq!(item.get_attribute("data-saved").as_deref(), Some("saved"));
    assert!(item.get_attribute("data-load-ms").is_some());
    wait_for("the storage estimate is shown", || {
        text_of("[data-testid=storage-estimate]").contains("used of")
    })
    .await;
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
    // Deleting the run empties the list and the store.
    doc()
        .query_selector("[data-testid=delete-run]")
        .unwrap()
        .unwrap()
        .unchecked_into::<web_sys::HtmlElement>()
        .click();
    wait_for("the run leaves the list", || {
        count("[data-testid=run-item]") == 0
    })
    .await;
    for _ in 0..100 {
        if storage::load_index().await.unwrap().runs.is_empty() {
            break;
        }
        ttft_studio::browser::fetch::sleep_ms(20.0).await;
    }
    let index = storage::load_index().await.unwrap();
    assert!(index.runs.is_empty());
    assert_eq!(index.next_id, 2, "the deleted run's id stays used");
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
    ttft_studio::actions::settings::save_endpoint(&EndpointConfig::default());
}

/// A genai-bench experiment folder's files, as the folder input hands them over.
const GENAI_BENCH: [(&str, &str); 3] = [
    (
        "D16_10_text-to-text_num_concurrency_1_time_1s.json",
        include_str!(
            "../crates/ttft-core/tests/data/peers/genai-bench/D16_10_text-to-text_num_concurrency_1_time_1s.json"
        ),
    ),
    (
        "D16_10_text-to-text_num_concurrency_2_time_1s.json",
        include_str!(
            "../crates/ttft-core/tests/data/peers/genai-bench/D16_10_text-to-text_num_concurrency_2_time_1s.json"
        ),
    ),
    (
        "experiment_metadata.json",
        include_str!("../crates/ttft-core/tests/data/peers/genai-bench/experiment_metadata.json"),
    ),
];

/// The run the core reads from the genai-bench folder.
fn genai_bench_report() -> Report {
    let mut out = ttft_core::import::import_files(&GENAI_BENCH).unwrap();
    assert_eq!(out.len(), 1);
    out.remove(0).1.remove(0)
}

/// Chooses files in a file input as a user would (`input.files`, then `change`).
fn choose_files(testid: &str, files: &[(&str, &str)]) {
    let input = doc()
        .query_selector(&format!("[data-testid={testid}]"))
        .unwrap()
        .unwrap();
    let (names, texts) = (js_sys::Array::new(), js_sys::Array::new());
    for (name, text) in files {
        names.push(&(*name).into());
        texts.push(&(*text).into());
    }
    js_sys::Function::new_with_args(
        "input, names, texts",
        "const dt = new DataTransfer();
         names.forEach((n, i) => dt.items.add(new File([texts[i]], n)));
         input.files = dt.files;
         input.dispatchEvent(new Event('change'));",
    )
    .call3(&wasm_bindgen::JsValue::NULL, &input, &names, &texts)
    .unwrap();
}

#[wasm_bindgen_test]
async fn a_result_folder_imports_as_one_run_with_the_files_summary_beside_ours() {
    use ttft_studio::format::ms;
    storage::clear_all().await.unwrap();
    let root = doc().create_element("div").unwrap();
    doc().body().unwrap().append_child(&root).unwrap();
    let handle = leptos::mount::mount_to(root.clone().unchecked_into(), ttft_studio::App);
    wait_for("saved runs are read", || {
        doc()
            .query_selector("[data-testid=runs-list][data-loaded=true]")
            .unwrap()
            .is_some()
    })
    .await;
    let folder_input = doc()
        .query_selector("[data-testid=import-folder]")
        .unwrap()
        .unwrap()
        .unchecked_into::<web_sys::HtmlInputElement>();
    assert!(folder_input.webkitdirectory() && folder_input.multiple());
    // The experiment's files, a plot beside them (passed over) and a damaged file (named, left
    // out): the experiment is still one run.
    let mut files = GENAI_BENCH.to_vec();
    files.push(("ttft_vs_concurrency.png", "\u{89}PNG not a result"));
    files.push(("broken.json", "{\"cut short"));
    choose_files("import-folder", &files);
    wait_for("the folder's run is shown", || {
        count("[data-testid=source-summary]") == 1
    })
    .await;
    let notice = text_of("[data-testid=notice]");
    assert!(
        notice.contains("imported 1 run(s) from 5 files (genai-bench)"),
        "{notice}"
    );
    assert!(
        notice.contains("could not import broken.json: the file is not JSON"),
        "{notice}"
    );
    assert_eq!(count("[data-testid=run-item]"), 1);
    let want = genai_bench_report();
    assert_eq!(text_of("[data-testid=report-title]"), want.title);
    // Each of the file's figures: its value, ours from the same requests, and why they differ.
    let summary = want.source_summary.clone().unwrap();
    assert!(!summary.figures.is_empty());
    let table = doc()
        .query_selector("[data-testid=source-summary]")
        .unwrap()
        .unwrap();
    assert_eq!(
        table.get_attribute("data-tool").as_deref(),
        Some(summary.tool.as_str())
    );
    let rows = table
        .query_selector_all("[data-testid=source-figure]")
        .unwrap();
    assert_eq!(rows.length() as usize, summary.figures.len());
    let cell = |row: &web_sys::Element, testid: &str| {
        row.query_selector(&format!("[data-testid={testid}]"))
            .unwrap()
            .unwrap()
            .text_content()
            .unwrap_or_default()
    };
    for (i, f) in summary.figures.iter().enumerate() {
        let row: web_sys::Element = rows.get(i as u32).unwrap().unchecked_into();
        assert_eq!(
            row.get_attribute("data-metric").as_deref(),
            Some(&*f.metric)
        );
        assert_eq!(row.get_attribute("data-group"), f.group);
        assert_eq!(f.unit, "ms");
        assert_eq!(cell(&row, "source-file-value"), ms(Some(f.file_value)));
        assert_eq!(cell(&row, "source-our-value"), ms(f.our_value));
        assert_eq!(cell(&row, "source-explanation"), f.explanation);
        assert!(!f.explanation.is_empty());
    }
    // The llm-d export sits beside the other exports and says which files it wrote.
    doc()
        .query_selector("[data-testid=export-llmd]")
        .unwrap()
        .unwrap()
        .unchecked_into::<web_sys::HtmlElement>()
        .click();
    wait_for("the llm-d export is announced", || {
        text_of("[data-testid=notice]").contains("llm-d Benchmark Report v0.2: 2 file(s)")
    })
    .await;
    // AIPerf's aggregate export alone: nothing imported, and the notice says what to add.
    choose_files(
        "import-file",
        &[(
            "profile_export_aiperf.json",
            include_str!(
                "../crates/ttft-core/tests/data/peers/aiperf-records/profile_export_aiperf.json"
            ),
        )],
    );
    wait_for("the aggregate export is refused", || {
        text_of("[data-testid=notice]").contains("import profile_export.jsonl")
    })
    .await;
    assert_eq!(count("[data-testid=run-item]"), 1);
    drop(handle);
    root.remove();
    storage::clear_all().await.unwrap();
}

#[wasm_bindgen_test]
fn llmd_export_is_one_v0_2_report_per_load_point_named_for_llm_d_without_the_key() {
    let report = genai_bench_report();
    let files = ttft_core::naming::llmd_files(&report).unwrap();
    assert_eq!(files.len(), 2, "concurrency 1 and 2");
    for (stage, (name, text)) in files.iter().enumerate() {
        // llm-d-benchmark's analysis finds reports by `benchmark_report_v0.2,_*.yaml`.
        assert!(
            name.starts_with("benchmark_report_v0.2,_") && name.ends_with(".yaml"),
            "{name}"
        );
        assert!(name.contains(&format!("_stage_{stage}_")), "{name}");
        assert!(
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-,".contains(c)),
            "{name}"
        );
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(v["version"], "0.2", "{name}");
        // The experiment was run with a made-up key: it reaches no file.
        assert!(!text.contains("sk-fixture"), "{name}");
    }
    // The core's reports, in its order of load, one file each.
    let stages = ttft_core::llmd::benchmark_reports(&report).unwrap();
    for ((name, text), stage) in files.iter().zip(&stages) {
        assert_eq!(text, &stage.json);
        assert!(name.contains(&stage.group.replace('=', "_")), "{name}");
    }
    let empty = Report::new("nothing", EndpointInfo::default(), "chat");
    assert!(
        ttft_core::naming::llmd_files(&empty)
            .unwrap_err()
            .to_string()
            .contains("no measured requests")
    );
}

/// Clicks the element with this `data-testid`.
fn click(testid: &str) {
    doc()
        .query_selector(&format!("[data-testid={testid}]"))
        .unwrap()
        .unwrap_or_else(|| panic!("no {testid}"))
        .unchecked_into::<web_sys::HtmlElement>()
        .click();
}

/// The scenario settings as kept in this browser.
fn kept_scenario() -> ttft_core::scenario::ScenarioConfig {
    storage::load_scenario().expect("the scenario is kept")
}

#[wasm_bindgen_test]
async fn an_ab_run_is_set_up_with_its_arms_and_repeats_and_holds_no_secret() {
    // An arm on the endpoint's base goes with the reference endpoint's flavour; on its own base,
    // as typed.
    let ep = EndpointConfig {
        flavour: "sglang".into(),
        ..EndpointConfig::default()
    };
    let mut arm = ttft_core::scenario::Arm {
        model: " sim-ab ".into(),
        ..Default::default()
    };
    assert_eq!(ep.arm_wire_model(&arm), "sim-ab@sglang");
    arm.base_url = Some("http://127.0.0.1:9".into());
    assert_eq!(ep.arm_wire_model(&arm), "sim-ab");

    storage::save_scenario(&ttft_core::scenario::ScenarioConfig::default());
    let root = doc().create_element("div").unwrap();
    doc().body().unwrap().append_child(&root).unwrap();
    let handle = leptos::mount::mount_to(root.clone().unchecked_into(), ttft_studio::App);
    type_into("api-key", "sk-ab-secret");
    click("ab-enable");
    wait_for("two arms", || count("[data-testid^=ab-arm-model-]") == 2).await;
    type_into("ab-arm-model-0", "sim-ab");
    type_into("ab-arm-model-1", "sim-ab-slower");
    type_into("ab-arm-label-1", "slower");
    click("ab-add-arm");
    wait_for("a third arm", || count("[data-testid^=ab-arm-model-]") == 3).await;
    click("ab-remove-arm-2");
    wait_for("back to two arms", || {
        count("[data-testid^=ab-arm-model-]") == 2
    })
    .await;
    type_into("scenario-repeats", "3");
    wait_for("the settings are kept", || kept_scenario().repeats == 3).await;
    let kept = kept_scenario();
    let arms: Vec<(&str, &str)> = kept
        .arms
        .iter()
        .map(|a| (a.label.as_str(), a.model.as_str()))
        .collect();
    assert_eq!(arms, [("", "sim-ab"), ("slower", "sim-ab-slower")]);
    assert_eq!(kept.validate_group().unwrap(), ["sim-ab", "slower"]);
    assert!(
        !all_local_storage().contains("sk-ab-secret"),
        "arms hold no secret, and the key is not kept without the opt-in"
    );
    // What cannot run says so before the run: a concurrency sweep is not interleaved.
    let kind = doc()
        .query_selector("[data-testid=scenario-kind]")
        .unwrap()
        .unwrap();
    js_sys::Reflect::set(&kind, &"value".into(), &"concurrency_sweep".into()).unwrap();
    kind.dispatch_event(&web_sys::Event::new("change").unwrap())
        .unwrap();
    wait_for("the sweep is refused", || {
        text_of("[data-testid=ab-problem]").contains("sweep each configuration on its own")
    })
    .await;
    // Turning A/B off leaves an ordinary (repeated) run.
    click("ab-enable");
    wait_for("no arms", || kept_scenario().arms.is_empty()).await;
    assert_eq!(count("[data-testid^=ab-arm-model-]"), 0);
    drop(handle);
    root.remove();
    storage::save_scenario(&ttft_core::scenario::ScenarioConfig::default());
    ttft_studio::actions::settings::save_endpoint(&EndpointConfig::default());
}

#[wasm_bindgen_test]
fn the_confidence_setting_is_kept_and_brought_into_range() {
    use ttft_core::differences::Confidence;
    storage::save_confidence(&Confidence {
        level: 0.9,
        detect: 0.05,
    });
    assert_eq!(
        storage::load_confidence(),
        Some(Confidence {
            level: 0.9,
            detect: 0.05
        })
    );
    // A hand-edited entry out of range comes back in range.
    storage::save_confidence(&Confidence {
        level: 1.5,
        detect: 7.0,
    });
    let c = storage::load_confidence().unwrap();
    assert_eq!(
        (c.level, c.detect),
        (ttft_core::uncertainty::LEVEL_RANGE.1, 1.0)
    );
    storage::save_confidence(&Confidence::default());
}

/// `n` requests whose first token comes `shift` ms later than [`requests`]'.
fn shifted(n: usize, shift: f64) -> Vec<RequestRecord> {
    recorded(n, shift, false)
}

/// The compare table's TTFT P50 row: each run's cell carries its interval, the second run's
/// difference from the first its interval, relative size and mark; a run 40 ms slower on 60
/// requests each is told from noise and the faster run is highlighted as best.
#[wasm_bindgen_test]
fn compare_cells_carry_intervals_and_told_differences() {
    use ttft_core::compare::compare_reports;
    use ttft_core::differences::Confidence;
    let report = |title: &str, shift: f64| {
        Report::new(title, EndpointInfo::default(), "chat")
            .with_settings(serde_json::json!({}))
            .with_requests(shifted(60, shift))
    };
    let (a, b) = (report("a", 0.0), report("b", 40.0));
    let (_, samples, cmp) = compare_reports(&["a", "b"], &[&a, &b], Confidence::default());
    let row = cmp
        .rows
        .iter()
        .find(|r| r.metric == "TTFT P50")
        .unwrap()
        .clone();
    let root = doc().create_element("table").unwrap();
    doc().body().unwrap().append_child(&root).unwrap();
    let handle = leptos::mount::mount_to(root.clone().unchecked_into(), move || {
        ttft_studio::components::compare_table::row_view(&row, &samples, "a", Confidence::default())
    });
    let cells = root
        .query_selector_all("[data-testid=compare-cell]")
        .unwrap();
    assert_eq!(cells.length(), 2);
    let attr = |i: u32, name: &str| {
        cells
            .item(i)
            .unwrap()
            .unchecked_into::<web_sys::Element>()
            .get_attribute(name)
    };
    let num = |s: Option<String>| s.unwrap().parse::<f64>().unwrap();
    assert!(num(attr(0, "data-lo")) < num(attr(0, "data-hi")));
    assert_eq!(attr(1, "data-run").as_deref(), Some("1"));
    assert_eq!(attr(1, "data-different").as_deref(), Some("true"));
    assert!(attr(0, "class").unwrap().contains("best"));
    assert!(attr(0, "class").unwrap().contains("told"));
    let diff = root
        .query_selector("[data-testid=compare-diff]")
        .unwrap()
        .unwrap();
    let d = |name: &str| diff.get_attribute(name).unwrap().parse::<f64>().unwrap();
    assert!(d("data-lo") > 0.0 && d("data-lo") <= 40.0 && d("data-hi") >= 40.0);
    assert!(d("data-rel-lo") > 0.0);
    let text = diff.text_content().unwrap();
    assert!(
        text.starts_with("+40.0 ms [+") && text.ends_with('≠'),
        "{text}"
    );
    drop(handle);
    root.remove();
}

/// A saved run's headline tiles get their intervals once it is drawn: the TTFT P50 tile's
/// range and tooltip, at the level chosen in the confidence line (a lower level, a narrower
/// interval); a P99 of 60 requests says how many it needs.
#[wasm_bindgen_test]
async fn headline_tiles_show_intervals_at_the_chosen_level() {
    storage::clear_all().await.unwrap();
    storage::save_confidence(&ttft_core::differences::Confidence::default());
    let saved = SavedRun {
        id: RunId(1),
        report: Report::new("sixty requests", EndpointInfo::default(), "chat")
            .with_settings(serde_json::json!({}))
            .with_requests(requests(60))
            .into(),
    };
    save(&saved, 1, 2).await;
    let root = doc().create_element("div").unwrap();
    doc().body().unwrap().append_child(&root).unwrap();
    let handle = leptos::mount::mount_to(root.clone().unchecked_into(), ttft_studio::App);
    let tile = || {
        doc()
            .query_selector(".figure:has([data-testid=ttft-p50])")
            .unwrap()
    };
    wait_for("the TTFT P50 tile's interval", || {
        tile().is_some_and(|t| t.get_attribute("data-lo").is_some())
    })
    .await;
    let t = tile().unwrap();
    let width = |t: &web_sys::Element| {
        let n = |a: &str| t.get_attribute(a).unwrap().parse::<f64>().unwrap();
        n("data-hi") - n("data-lo")
    };
    let wide = width(&t);
    assert!(
        t.get_attribute("title").unwrap().contains("95 % interval"),
        "{:?}",
        t.get_attribute("title")
    );
    assert!(count("[data-testid=tile-interval]") > 0);
    // The value itself stays what it was (the e2e suites read it).
    assert!(text_of("[data-testid=ttft-p50]").ends_with("ms"));
    let p95 = doc()
        .query_selector(".figure:has([data-testid=ttft-p95])")
        .unwrap()
        .unwrap();
    assert!(p95.get_attribute("data-needs").is_some());
    assert!(
        p95.get_attribute("title")
            .unwrap()
            .contains("requests for an interval")
    );
    // 80 %: narrower.
    let select: web_sys::HtmlSelectElement = doc()
        .query_selector("[data-testid=confidence-level]")
        .unwrap()
        .unwrap()
        .unchecked_into();
    select.set_value("0.8");
    select
        .dispatch_event(&web_sys::Event::new("change").unwrap())
        .unwrap();
    wait_for("a narrower interval at 80 %", || {
        tile().is_some_and(|t| width(&t) < wide)
    })
    .await;
    assert!(
        tile()
            .unwrap()
            .get_attribute("title")
            .unwrap()
            .contains("80 % interval")
    );
    assert_eq!(storage::load_confidence().unwrap().level, 0.8);
    storage::save_confidence(&ttft_core::differences::Confidence::default());
    drop(handle);
    root.remove();
    storage::clear_all().await.unwrap();
}
