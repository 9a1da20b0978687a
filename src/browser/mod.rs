//! Browser glue: everything that touches web APIs, so the rest of the app stays plain Rust.
//!
//! [`stamper`] sends requests through the stamping Web Workers (where a read is stamped),
//! [`fetch`] is the page's own fallback path and the model list, [`pool`] runs a plan's
//! phases with their workers, [`cancel`] stops a run, [`clock`] measures the page clock, [`storage`] keeps runs
//! and settings, [`echarts`] hands chart options to ECharts.

pub mod cancel;
pub mod clock;
pub mod echarts;
pub mod fetch;
pub mod pool;
pub mod stamper;
pub mod storage;

/// This page's origin (`http://127.0.0.1:8080`), empty outside a page.
pub fn page_origin() -> String {
    web_sys::window()
        .and_then(|w| w.location().origin().ok())
        .unwrap_or_default()
}
