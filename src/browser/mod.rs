//! Browser glue: everything that touches web APIs, so the rest of the app stays plain Rust.
//!
//! [`stamper`] sends requests through the stamping Web Workers (where a read is stamped),
//! [`fetch`] is the page's own fallback path and the model list, [`pool`] runs a plan's
//! phases with their workers, [`cancel`] stops a run, [`clock`] measures the page clock,
//! [`storage`] keeps runs and settings, [`files`] reads the files a user chooses, [`echarts`]
//! hands chart options to ECharts, [`service_worker`] keeps the offline copy of the app shell,
//! [`metrics_scrape`] reads the server's `/metrics` during a run, [`health`] watches the tab.
//! [`surface`] draws a chat surface for the rendering lab and records what it painted, when;
//! [`live`] taps the reads of the request shown live and [`drawing`] draws them while a run
//! streams.
//!
//! A leaf: nothing here imports the app's state, actions, components or lazy parts; functions
//! take and give plain data, the core's types and web handles.

pub mod cancel;
pub mod clock;
pub mod drawing;
pub mod echarts;
pub mod fetch;
pub mod files;
pub mod health;
pub mod live;
pub mod metrics_scrape;
pub mod pool;
pub mod service_worker;
pub mod stamper;
pub mod storage;
pub mod surface;

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

/// The page URL's fragment (`#share=…`), if the page has one.
pub fn location_hash() -> Option<String> {
    web_sys::window().and_then(|w| w.location().hash().ok())
}

/// What the browser says of its network (`navigator.onLine`); true outside a page. Chromium
/// says offline whenever no network interface but loopback is up.
pub fn online() -> bool {
    web_sys::window().is_none_or(|w| w.navigator().on_line())
}

/// Whether `base` is reachable without a network: this page's own server or a loopback host
/// (the bundled server, a local llama.cpp), which run with Wi-Fi off too.
pub fn on_this_machine(base: &str) -> bool {
    let Ok(url) = web_sys::Url::new(base) else {
        return false;
    };
    let host = url.hostname();
    url.origin() == page_origin()
        || host == "localhost"
        || host.ends_with(".localhost")
        || host.starts_with("127.")
        || host == "[::1]"
}

/// The browser's user agent string, if it gives one.
pub fn user_agent() -> Option<String> {
    web_sys::window().and_then(|w| w.navigator().user_agent().ok())
}

/// Asks the user for a line of text (`window.prompt`), offering `default`; `None` when
/// cancelled.
pub fn prompt(message: &str, default: &str) -> Option<String> {
    web_sys::window()?
        .prompt_with_message_and_default(message, default)
        .ok()
        .flatten()
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
