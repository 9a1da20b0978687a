//! ECharts, the parts the charts use bundled from npm (`js/echarts-entry.js`) and loaded on
//! demand by a classic `<script>` (not part of the first load; preloaded when the page is
//! idle): the bindings this app uses, drawing a `ttft-charts` option set, and PNG export.
//! Nothing here builds options.

use ttft_charts::ChartSpec;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// An ECharts instance.
    pub type EChartsInstance;

    #[wasm_bindgen(js_namespace = echarts, js_name = init, catch)]
    fn echarts_init(el: &web_sys::HtmlElement) -> Result<EChartsInstance, JsValue>;

    #[wasm_bindgen(method, js_name = setOption, catch)]
    fn set_option(this: &EChartsInstance, option: &JsValue) -> Result<(), JsValue>;

    /// `setOption(option, notMerge)`: with `true`, the options replace the chart's.
    #[wasm_bindgen(method, js_name = setOption, catch)]
    fn set_option_not_merge(
        this: &EChartsInstance,
        option: &JsValue,
        not_merge: bool,
    ) -> Result<(), JsValue>;

    #[wasm_bindgen(method)]
    pub fn dispose(this: &EChartsInstance);

    #[wasm_bindgen(method)]
    pub fn resize(this: &EChartsInstance);

    #[wasm_bindgen(method, js_name = getDataURL)]
    fn get_data_url(this: &EChartsInstance, opts: &JsValue) -> String;
}

/// Why a chart could not be drawn (shown in its place).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ChartError {
    /// The library is missing.
    #[error(
        "charts unavailable: ECharts (echarts.js) did not load; check the connection and reload the page (serving a build yourself: `cargo xtask serve`)"
    )]
    NotLoaded,
    /// The options did not parse.
    #[error("chart options are not JSON: {0}")]
    BadOptions(String),
    /// ECharts threw.
    #[error("ECharts rejected the options: {0}")]
    Rejected(String),
}

/// Draws `spec` into `el`: returns the instance, or why it failed (for the user).
pub fn draw(el: &web_sys::HtmlElement, spec: &ChartSpec) -> Result<EChartsInstance, ChartError> {
    let chart = echarts_init(el).map_err(|_| ChartError::NotLoaded)?;
    let options = js_sys::JSON::parse(&spec.options_json())
        .map_err(|e| ChartError::BadOptions(format!("{e:?}")))?;
    chart
        .set_option(&options)
        .map_err(|e| ChartError::Rejected(format!("{e:?}")))?;
    Ok(chart)
}

/// Draws `spec` again in a chart already drawn (its options replace the old ones).
pub fn redraw(chart: &EChartsInstance, spec: &ChartSpec) -> Result<(), ChartError> {
    let options = js_sys::JSON::parse(&spec.options_json())
        .map_err(|e| ChartError::BadOptions(format!("{e:?}")))?;
    chart
        .set_option_not_merge(&options, true)
        .map_err(|e| ChartError::Rejected(format!("{e:?}")))
}

/// A PNG of the chart as a data URL, white background, 2× pixels.
pub fn png_url(chart: &EChartsInstance) -> String {
    let opts = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&opts, &"type".into(), &"png".into());
    let _ = js_sys::Reflect::set(&opts, &"pixelRatio".into(), &2.into());
    let _ = js_sys::Reflect::set(&opts, &"backgroundColor".into(), &"#fff".into());
    chart.get_data_url(&opts)
}

thread_local! {
    /// The one load of the ECharts script, shared by every chart waiting for it.
    static LOADING: std::cell::RefCell<Option<js_sys::Promise>> = const { std::cell::RefCell::new(None) };
}

/// Where trunk puts the bundle (index.html's `copy-file`), relative to the page.
const ECHARTS_SRC: &str = "echarts.js";

/// Whether the global `echarts` is there.
fn is_loaded() -> bool {
    web_sys::window()
        .and_then(|w| js_sys::Reflect::get(&w, &"echarts".into()).ok())
        .is_some_and(|v| !v.is_undefined())
}

/// Loads ECharts once, on demand: it is not part of the first load (a third of it, gzip), so
/// the studio is usable before it arrives. Every caller awaits the same `<script>`; a failed
/// load is retried by the next caller.
pub async fn ensure_loaded() -> Result<(), ChartError> {
    if is_loaded() {
        return Ok(());
    }
    let promise = LOADING.with(|l| {
        l.borrow_mut()
            .get_or_insert_with(|| {
                js_sys::Promise::new(&mut |resolve, reject| {
                    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
                        let _ = reject.call0(&JsValue::NULL);
                        return;
                    };
                    let Ok(script) = doc.create_element("script") else {
                        let _ = reject.call0(&JsValue::NULL);
                        return;
                    };
                    let _ = script.set_attribute("src", ECHARTS_SRC);
                    let on_load = Closure::once_into_js(move || {
                        let _ = resolve.call0(&JsValue::NULL);
                    });
                    let on_error = Closure::once_into_js(move || {
                        let _ = reject.call0(&JsValue::NULL);
                    });
                    let _ = js_sys::Reflect::set(&script, &"onload".into(), &on_load);
                    let _ = js_sys::Reflect::set(&script, &"onerror".into(), &on_error);
                    if let Some(head) = doc.head() {
                        let _ = head.append_child(&script);
                    }
                })
            })
            .clone()
    });
    let loaded = wasm_bindgen_futures::JsFuture::from(promise).await;
    if loaded.is_err() || !is_loaded() {
        LOADING.with(|l| l.borrow_mut().take());
        return Err(ChartError::NotLoaded);
    }
    Ok(())
}
