//! ttft-studio: the browser app. Measures streaming LLM endpoints as users see them.
//!
//! `main.rs` only mounts [`App`]. The runner ([`runner`]) owns fetch and timestamps; the
//! measurement core (`ttft-core`) parses and computes; components read results.

pub mod clock;
pub mod components;
pub mod format;
pub mod runner;
pub mod scenario;
pub mod state;
pub mod storage;

use leptos::prelude::*;

use components::compare::CompareView;
use components::endpoint_panel::EndpointPanel;
use components::report_view::ReportView;
use components::run_controls::RunControls;
use components::runs_list::RunsList;
use components::scenario_panel::ScenarioPanel;
use components::status_bar::StatusBar;
use state::Studio;

/// Opens a report from `#share=…` in the URL, if any.
fn open_shared(studio: Studio) {
    let Some(hash) = web_sys::window().and_then(|w| w.location().hash().ok()) else {
        return;
    };
    if !hash.contains("share=") {
        return;
    }
    match ttft_core::share::decode(&hash) {
        Ok(mut report) => {
            report.title = format!("{} (shared)", report.title);
            studio.runs.update(|r| r.insert(0, report));
            studio.selected.set(Some(0));
        }
        Err(e) => studio
            .notice
            .set(Some(format!("could not open the shared report: {e}"))),
    }
}

/// The studio.
#[component]
pub fn App() -> impl IntoView {
    let (runs, warning) = storage::load_runs();
    let studio = Studio {
        endpoint: RwSignal::new(storage::load_endpoint().unwrap_or_default()),
        scenario: RwSignal::new(storage::load_scenario().unwrap_or_default()),
        runs: RwSignal::new(runs),
        selected: RwSignal::new(None),
        live: RwSignal::new(None),
        compare: RwSignal::new(Vec::new()),
        notice: RwSignal::new(warning),
        clock: RwSignal::new(None),
        handle: StoredValue::new_local(None),
    };
    provide_context(studio);
    open_shared(studio);
    let _ = window_event_listener(leptos::ev::hashchange, move |_| open_shared(studio));
    if studio.selected.get_untracked().is_none() && studio.runs.with_untracked(|r| !r.is_empty()) {
        studio.selected.set(Some(0));
    }
    studio.clock.set(clock::measure());
    // Marks when the studio first became usable (after mount), for the load-time benchmark.
    Effect::new(move |_| {
        let window = web_sys::window();
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
    });
    Effect::new(move |_| storage::save_endpoint(&studio.endpoint.get()));
    Effect::new(move |_| storage::save_scenario(&studio.scenario.get()));
    view! {
        <header>
            <h1>"ttft-studio"</h1>
            <p class="tagline">"Total latency lies: measure time to first token and inter-token latency as your users feel them."</p>
            <StatusBar />
        </header>
        <main>
            <aside>
                <EndpointPanel />
                <ScenarioPanel />
                <RunsList />
            </aside>
            <section class="content">
                <RunControls />
                <CompareView />
                <ReportView />
            </section>
        </main>
    }
}
