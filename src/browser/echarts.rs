//! ECharts, the parts the charts use bundled from npm (`js/echarts-entry.js`) and loaded by a
//! classic `<script>` before the wasm: the bindings this app uses, drawing a `ttft-charts`
//! option set, and PNG export. Nothing here builds options.

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
    #[error("charts unavailable: ECharts did not load (rebuild with `cargo xtask serve`)")]
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

/// A PNG of the chart as a data URL, white background, 2× pixels.
pub fn png_url(chart: &EChartsInstance) -> String {
    let opts = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&opts, &"type".into(), &"png".into());
    let _ = js_sys::Reflect::set(&opts, &"pixelRatio".into(), &2.into());
    let _ = js_sys::Reflect::set(&opts, &"backgroundColor".into(), &"#fff".into());
    chart.get_data_url(&opts)
}
