//! ttft-studio: the browser app. Measures streaming LLM endpoints as users see them.
//!
//! Start reading here: [`App`] builds the state and the page; [`actions`] is where anything
//! changes (a run starts in [`actions::start_run`]); [`browser`] is the glue to web APIs (a read
//! is stamped in [`browser::fetch`]); [`components`] are the views, which read the
//! [`state::StudioState`] store and format what the core (`ttft-core`) and the chart crate
//! (`ttft-charts`) computed.

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
use components::endpoint_panel::EndpointPanel;
use components::guide::{Guide, ReaderBar};
use components::offline::{OfflineNotice, UpdateBanner};
use components::report_view::ReportView;
use components::run_controls::RunControls;
use components::runs_list::RunsList;
use components::scenario_panel::ScenarioPanel;
use components::status_bar::StatusBar;
use state::{Studio, StudioStateStoreFields};

/// Marks when the studio first became usable (after mount), for the load-time benchmark, and
/// removes the boot shell. Also puts the app's `WebAssembly.Memory` at `window.ttftWasmMemory`,
/// so the memory benchmark (and a curious user's console) can read how much the app holds.
fn mark_interactive() {
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
    lazy::preload_when_idle();
}

/// The studio.
#[component]
pub fn App() -> impl IntoView {
    let studio = Studio {
        state: Store::new(actions::initial_state()),
        endpoint: RwSignal::new(browser::storage::load_endpoint().unwrap_or_default()),
        scenario: RwSignal::new(browser::storage::load_scenario().unwrap_or_default()),
        handle: StoredValue::new_local(None),
    };
    provide_context(studio);
    provide_context(browser::service_worker::use_offline_copy(Signal::derive(
        move || actions::is_busy(studio),
    )));
    // Saved runs load once the page is up; a `#share=` link opens once their ids are known.
    leptos::task::spawn_local(actions::open_storage(studio));
    let _ = window_event_listener(leptos::ev::hashchange, move |_| actions::open_link(studio));
    studio.state.clock().set(browser::clock::measure());
    Effect::new(move |_| mark_interactive());
    Effect::new(move |_| browser::storage::save_endpoint(&studio.endpoint.get()));
    Effect::new(move |_| browser::storage::save_scenario(&studio.scenario.get()));
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
                <RunsList />
            </aside>
            <section class="content">
                <ReaderBar />
                <RunControls />
                <Guide />
                <CompareView />
                <ReportView />
            </section>
        </main>
    }
}
