//! ttft-studio: the browser app. Measures streaming LLM endpoints as users see them.
//!
//! Start reading here: [`App`] builds the state and the page; [`actions`] is where anything
//! changes (a run starts in [`actions::run::start_run`]); [`browser`] is the glue to web APIs (a
//! read is stamped in [`browser::fetch`]); [`components`] are the views, which read the
//! [`state::StudioState`] store and format what the core (`ttft-core`) and the chart crate
//! (`ttft-charts`) computed.
//!
//! The layers, each importing only those below it: [`components`] → [`actions`] → [`state`] →
//! [`browser`] (a leaf: web APIs, plain data and the core's types), with [`mod@lazy`] (the lazy
//! parts' macro) and [`mod@format`] (numbers as text) beside them.

#[macro_use]
pub mod lazy;

pub mod actions;
pub mod browser;
pub mod components;
pub mod format;
pub mod state;

use leptos::prelude::*;
use reactive_stores::Store;

use components::compare::CompareView;
use components::confidence_settings::ConfidenceSettings;
use components::endpoint_panel::EndpointPanel;
use components::guide::{Guide, ReaderBar};
use components::live_surface::LiveSurface;
use components::offline::{OfflineNotice, UpdateBanner};
use components::openers::OpenerSettings;
use components::report_view::ReportView;
use components::run_controls::RunControls;
use components::runs_list::RunsList;
use components::scenario_panel::ScenarioPanel;
use components::status_bar::StatusBar;
use state::{Studio, StudioStateStoreFields};

/// Marks when the studio first became usable (after mount), for the load-time benchmark, and
/// removes the boot shell. Also puts the app's `WebAssembly.Memory` at `window.ttftWasmMemory`,
/// so the memory benchmark (and a curious user's console) can read how much the app holds.
fn mark_interactive(studio: Studio) {
    let window = web_sys::window();
    if let Some(w) = window.as_ref() {
        let _ = js_sys::Reflect::set(w, &"ttftWasmMemory".into(), &wasm_bindgen::memory());
    }
    if let Some(boot) = window
        .as_ref()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id("boot"))
    {
        boot.remove();
    }
    if let Some(p) = window.and_then(|w| w.performance()) {
        let _ = p.mark("ttft-studio:interactive");
    }
    // ECharts comes with them.
    actions::run::preload_when_idle(studio);
}

/// The studio.
#[component]
pub fn App() -> impl IntoView {
    let studio = Studio {
        state: Store::new(actions::studio::initial_state()),
        endpoint: Store::new(actions::settings::load_endpoint().unwrap_or_default()),
        scenario: Store::new(browser::storage::load_scenario().unwrap_or_default()),
        confidence: RwSignal::new(browser::storage::load_confidence().unwrap_or_default()),
        openers: RwSignal::new(actions::settings::load_openers()),
        surface: RwSignal::new(actions::settings::load_surface()),
        handle: StoredValue::new_local(None),
        view_parts: components::report_view::load_view_parts,
    };
    provide_context(studio);
    provide_context(browser::service_worker::use_offline_copy(Signal::derive(
        move || actions::studio::is_busy(studio),
    )));
    // Saved runs load once the page is up; a `#share=` link opens once their ids are known.
    leptos::task::spawn_local(actions::storage::open_storage(studio));
    let _ = window_event_listener(leptos::ev::hashchange, move |_| {
        actions::links::open_link(studio)
    });
    actions::studio::measure_clock(studio);
    Effect::new(move |_| mark_interactive(studio));
    actions::settings::keep_settings(studio);
    view! {
        <UpdateBanner />
        <OfflineNotice />
        <header>
            <h1>"ttft-studio"</h1>
            <p class="tagline">"Total latency lies: measure time to first token and inter-token latency as your users feel them."</p>
            <StatusBar />
        </header>
        <main class:reader=move || studio.state.reader_view().get()>
            <aside>
                <EndpointPanel />
                <ScenarioPanel />
                <OpenerSettings />
                <RunsList />
            </aside>
            <section class="content">
                <ReaderBar />
                <RunControls />
                <LiveSurface />
                <Guide />
                <ConfidenceSettings />
                <CompareView />
                <ReportView />
            </section>
        </main>
    }
}
