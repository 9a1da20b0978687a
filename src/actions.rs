//! App actions: the one place the studio's state changes. Views call these; they never change
//! the store themselves.
//!
//! Where a run starts: [`start_run`] plans it with the core, builds the report header, hands the
//! plan to the worker pool ([`crate::browser::pool::run_phases`]), feeds batches into the live
//! run and, when the pool is done, [`finish_run`] saves it under a new [`RunId`] and shows it.

use std::rc::Rc;

use leptos::prelude::*;
use leptos::task::spawn_local;
use reactive_stores::Store;
use ttft_core::report::{EndpointInfo, Report};
use ttft_core::request::{HeaderLineError, build_request};
use ttft_core::scenario::{
    HTTP1_CONNECTIONS_PER_ORIGIN, Job, connection_limit_warning, total_jobs,
};

use crate::browser::cancel::RunHandle;
use crate::browser::fetch::{ModelsError, list_models, reference_origins};
use crate::browser::pool::{Progress, RunPlan, run_phases};
use crate::browser::stamper::Stamping;
use crate::browser::storage;
use crate::state::{
    EndpointConfig, LiveRun, RunId, SavedRun, Shown, Studio, StudioState, StudioStateStoreFields,
};

/// The state a fresh page starts from: saved runs (the newest shown) and any storage warning.
pub fn initial_state() -> StudioState {
    let (runs, notice) = storage::load_runs();
    let next_id = runs.iter().map(|r| r.id.0 + 1).max().unwrap_or(0);
    StudioState {
        shown: runs.first().map_or(Shown::Nothing, |r| Shown::Run(r.id)),
        runs,
        notice,
        next_id,
        ..StudioState::default()
    }
}

/// Shows a message in the status line.
pub fn notify(studio: Studio, message: impl Into<String>) {
    studio.state.notice().set(Some(message.into()));
}

/// Saves every run; tells the user when storage had to drop something.
pub fn persist(studio: Studio) {
    if let Some(warning) = studio
        .state
        .runs()
        .with_untracked(|r| storage::save_runs(r))
    {
        notify(studio, warning);
    }
}

/// Adds reports as the newest runs, each under a new id; returns the ids in the given order.
fn add_runs(state: Store<StudioState>, reports: Vec<Report>) -> Vec<RunId> {
    let first = state.next_id().get_untracked();
    let ids: Vec<RunId> = (0..reports.len() as u64)
        .map(|i| RunId(first + i))
        .collect();
    state.next_id().set(first + reports.len() as u64);
    let runs: Vec<SavedRun> = ids
        .iter()
        .zip(reports)
        .map(|(id, report)| SavedRun { id: *id, report })
        .collect();
    state.runs().write().splice(0..0, runs);
    ids
}

/// Shows a saved run.
pub fn show_run(studio: Studio, id: RunId) {
    studio.state.shown().set(Shown::Run(id));
}

/// Ticks or unticks a run for comparison (at most four are compared).
pub fn set_compared(studio: Studio, id: RunId, on: bool) {
    studio.state.compare().update(|c| {
        c.retain(|x| *x != id);
        if on && c.len() < 4 {
            c.push(id);
        }
    });
}

/// Renames a run and saves.
pub fn rename_run(studio: Studio, id: RunId, title: String) {
    studio.state.runs().update(|runs| {
        if let Some(r) = runs.iter_mut().find(|r| r.id == id) {
            r.report.title = title;
        }
    });
    persist(studio);
}

/// Deletes a run: it leaves the comparison and, if shown, the pane; then saves.
pub fn delete_run(studio: Studio, id: RunId) {
    studio.state.runs().write().retain(|r| r.id != id);
    studio.state.compare().update(|c| c.retain(|x| *x != id));
    if studio.state.shown().get_untracked() == Shown::Run(id) {
        studio.state.shown().set(Shown::Nothing);
    }
    persist(studio);
}

/// Opens a report from `#share=…` in the page's URL, if there is one.
pub fn open_link(studio: Studio) {
    let Some(hash) = web_sys::window().and_then(|w| w.location().hash().ok()) else {
        return;
    };
    if !hash.contains("share=") {
        return;
    }
    match ttft_core::share::decode(&hash) {
        Ok(mut report) => {
            report.title = format!("{} (shared)", report.title);
            let ids = add_runs(studio.state, vec![report]);
            show_run(studio, ids[0]);
        }
        Err(e) => notify(studio, format!("could not open the shared report: {e}")),
    }
}

/// Reads result files (studio report JSON, vLLM bench, GuideLLM) and adds their runs.
pub fn import_files(studio: Studio, files: web_sys::FileList) {
    for i in 0..files.length() {
        let Some(file) = files.get(i) else { continue };
        spawn_local(async move {
            let name = file.name();
            let text = match wasm_bindgen_futures::JsFuture::from(file.text()).await {
                Ok(t) => t.as_string().unwrap_or_default(),
                Err(_) => {
                    return notify(
                        studio,
                        format!("could not read {name}: the browser refused the file"),
                    );
                }
            };
            match ttft_core::import::import(&text) {
                Ok((_, reports)) => {
                    let n = reports.len();
                    let ids = add_runs(studio.state, reports);
                    if let Some(first) = ids.first() {
                        show_run(studio, *first);
                    }
                    notify(studio, format!("imported {n} run(s) from {name}"));
                    persist(studio);
                }
                Err(e) => notify(studio, format!("could not import {name}: {e}")),
            }
        });
    }
}

/// Why the endpoint could not be reached for its model list.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConnectionError {
    /// The extra headers are malformed.
    #[error(transparent)]
    Headers(#[from] HeaderLineError),
    /// The model list could not be had.
    #[error(transparent)]
    Models(#[from] ModelsError),
}

/// Asks the endpoint for its models.
pub async fn test_connection(endpoint: EndpointConfig) -> Result<Vec<String>, ConnectionError> {
    let headers = endpoint.secret_headers()?;
    Ok(list_models(&endpoint.effective_base(), &headers).await?)
}

/// The run's title: scenario, model and the local time to the second.
fn run_title(scenario: &str, model: &str) -> String {
    let when: String = js_sys::Date::new_0()
        .to_iso_string()
        .as_string()
        .unwrap_or_default()
        .chars()
        .take(19)
        .collect();
    format!("{scenario} · {model} · {when}")
}

/// Starts a run with the current settings; a setting that cannot run is reported instead.
pub fn start_run(studio: Studio) {
    let ep = studio.endpoint.get_untracked();
    let sc = studio.scenario.get_untracked();
    let secret_headers = match ep.secret_headers() {
        Ok(h) => h,
        Err(e) => return notify(studio, e.to_string()),
    };
    let phases = match sc.plan(&ep.wire_model(), ep.dialect) {
        Ok(p) => p,
        Err(e) => return notify(studio, format!("cannot start: {e}")),
    };
    let bases = ep.bases();
    let max_concurrency = phases.iter().map(|p| p.concurrency).max().unwrap_or(1) as usize;
    let spread_over_reference_origins =
        ep.is_reference() && bases.len() == 1 && max_concurrency > HTTP1_CONNECTIONS_PER_ORIGIN;
    let endpoint = EndpointInfo {
        base_url: ep.effective_base(),
        model: ep.wire_model(),
        dialect: ep.dialect,
    };
    let report = Report::new(run_title(sc.kind.id(), &ep.model), endpoint, sc.kind.id())
        .created_at(js_sys::Date::now())
        .with_clock_resolution(
            studio
                .state
                .clock()
                .get_untracked()
                .map(|c| c.resolution_ms),
        )
        .with_settings(serde_json::to_value(&sc).unwrap_or_default());
    studio.state.live().set(Some(LiveRun {
        report,
        progress: Progress {
            done: 0,
            total: total_jobs(&phases),
            phase: String::new(),
        },
    }));
    studio.state.shown().set(Shown::Live);
    let handle = RunHandle::default();
    studio.handle.set_value(Some(handle.clone()));
    let on_batch = Rc::new(move |batch: Vec<_>, progress: Progress| {
        studio.state.live().update(|l| {
            if let Some(l) = l {
                l.report.requests.extend(batch);
                l.progress = progress;
            }
        });
    });
    let metrics = sc.metrics_config();
    let timeout_ms = sc.timeout_s * 1e3;
    spawn_local(async move {
        // Above 6 streams the reference endpoint is reached over all its HTTP/1.1 origins
        // (sharding). BENCHMARKS.md measured it against HTTP/2 over TLS at 16 and 64 streams
        // and found no difference beyond the rounds' spread, and it needs no certificate,
        // unlike the server's HTTP/2 port.
        let origins = if spread_over_reference_origins {
            reference_origins().await
        } else {
            None
        };
        let bases = match origins {
            Some(origins) => {
                notify(
                    studio,
                    format!(
                        "{max_concurrency} streams: spread over the reference endpoint's {} HTTP/1.1 origins (browsers open {HTTP1_CONNECTIONS_PER_ORIGIN} connections per origin)",
                        origins.len()
                    ),
                );
                origins
            }
            None => bases,
        };
        if let Some(warning) = connection_limit_warning(&phases, &bases) {
            notify(studio, warning);
        }
        let dialect = ep.dialect;
        let next_base = std::cell::Cell::new(0usize);
        let build = Rc::new(move |job: &Job| {
            let i = next_base.get();
            next_base.set(i + 1);
            build_request(&bases[i % bases.len()], dialect, &job.params)
        });
        let stamping = Stamping::choose().await;
        studio.state.live().update(|l| {
            if let Some(l) = l {
                l.report.stamping = Some(stamping.describe());
            }
        });
        let plan = RunPlan {
            phases,
            build,
            secret_headers,
            dialect,
            metrics,
            timeout_ms,
            stamping,
        };
        run_phases(plan, handle, on_batch).await;
        finish_run(studio);
    });
}

/// Whether a run is in progress.
pub fn is_running(studio: Studio) -> bool {
    studio.state.live().with(Option::is_some)
}

/// Stops the live run; requests in flight end as aborted and the partial run is kept.
pub fn cancel_run(studio: Studio) {
    if let Some(h) = studio.handle.get_value() {
        h.cancel();
    }
}

/// The pool is done: the live run becomes a saved run under a new id and is shown.
pub fn finish_run(studio: Studio) {
    studio.handle.set_value(None);
    let Some(live) = studio.state.live().try_update(Option::take).flatten() else {
        return;
    };
    let ids = add_runs(studio.state, vec![live.report]);
    persist(studio);
    show_run(studio, ids[0]);
}
