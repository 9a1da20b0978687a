//! Browser glue: everything that touches web APIs, so the rest of the app stays plain Rust.
//!
//! [`stamper`] sends requests through the stamping Web Workers (where a read is stamped),
//! [`fetch`] is the page's own fallback path and the model list, [`pool`] runs a plan's
//! phases with their workers, [`cancel`] stops a run, [`clock`] measures the page clock, [`storage`] keeps runs
//! and settings, [`echarts`] hands chart options to ECharts,
//! [`service_worker`] keeps the offline copy of the app shell, [`metrics_scrape`] reads the
//! server's `/metrics` during a run.

pub mod cancel;
pub mod clock;
pub mod echarts;
pub mod fetch;
pub mod health;
pub mod metrics_scrape;
pub mod pool;
pub mod service_worker;
pub mod stamper;
pub mod storage;

/// Runs `f` when the page is first idle (`requestIdleCallback`; a second from now where there
/// is none): for loads the page will want soon but must not hold up its first paint.
pub fn when_idle(f: impl FnOnce() + 'static) {
    use wasm_bindgen::JsCast;
    let Some(w) = web_sys::window() else { return };
    let start = wasm_bindgen::closure::Closure::once_into_js(f);
    let idle = js_sys::Reflect::get(&w, &"requestIdleCallback".into())
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
    match idle {
        Some(f) => {
            let _ = f.call1(&w, &start);
        }
        None => {
            let _ = w
                .set_timeout_with_callback_and_timeout_and_arguments_0(start.unchecked_ref(), 1000);
        }
    }
}

/// This page's origin (`http://127.0.0.1:8080`), empty outside a page.
pub fn page_origin() -> String {
    web_sys::window()
        .and_then(|w| w.location().origin().ok())
        .unwrap_or_default()
}

/// Downloads `text` as the file `name`: a `Blob` behind an object URL, clicked through a
/// temporary link and revoked once the download has taken it. Called on click only, so a
/// large run's megabytes of JSON, CSV or timeline cost nothing until asked for.
pub fn download(name: &str, mime: &str, text: &str) {
    use wasm_bindgen::JsCast;
    let save = || -> Result<(), wasm_bindgen::JsValue> {
        let document = web_sys::window()
            .and_then(|w| w.document())
            .ok_or_else(|| wasm_bindgen::JsValue::from_str("no document"))?;
        let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(text));
        let options = web_sys::BlobPropertyBag::new();
        options.set_type(&format!("{mime};charset=utf-8"));
        let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options)?;
        let url = web_sys::Url::create_object_url_with_blob(&blob)?;
        let a: web_sys::HtmlAnchorElement = document.create_element("a")?.unchecked_into();
        a.set_href(&url);
        a.set_download(name);
        a.click();
        // Revoked a while later: the download reads the URL after the click returns.
        leptos::prelude::set_timeout(
            move || {
                let _ = web_sys::Url::revoke_object_url(&url);
            },
            std::time::Duration::from_secs(30),
        );
        Ok(())
    };
    if let Err(e) = save() {
        leptos::logging::warn!("could not export {name}: {e:?}");
    }
}
