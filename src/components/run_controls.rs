//! Start and cancel runs; live progress.

use std::rc::Rc;

use leptos::prelude::*;
use leptos::task::spawn_local;
use ttft_core::metrics::MetricsConfig;
use ttft_core::report::{EndpointInfo, REPORT_VERSION, Report};
use ttft_core::request::build_request;
use ttft_core::stats::Thresholds;

use crate::runner::{Progress, RunHandle, RunPlan, run_phases};
use crate::state::{LiveRun, use_studio};

/// The start/cancel buttons and the progress bar.
#[component]
pub fn RunControls() -> impl IntoView {
    let studio = use_studio();
    let running = move || studio.live.with(|l| l.as_ref().is_some_and(|l| l.running));
    let start = move |_| {
        let ep = studio.endpoint.get_untracked();
        let sc = studio.scenario.get_untracked();
        let secret = match ep.secret_headers() {
            Ok(h) => h,
            Err(m) => return studio.notice.set(Some(m)),
        };
        let phases = match sc.plan(&ep.wire_model(), ep.dialect) {
            Ok(p) => p,
            Err(m) => return studio.notice.set(Some(format!("cannot start: {m}"))),
        };
        let total = phases.iter().map(|p| p.jobs.len()).sum();
        let bases = ep.bases();
        let max_concurrency = phases.iter().map(|p| p.concurrency).max().unwrap_or(1) as usize;
        if max_concurrency > 6 * bases.len() && bases.iter().any(|b| b.starts_with("http://")) {
            studio.notice.set(Some(format!(
                "note: browsers open at most 6 HTTP/1.1 connections per origin; at concurrency {max_concurrency} requests would wait in the browser and inflate TTFT. Add shard URLs (the reference server's --extra-ports gives them) or use HTTPS/HTTP/2."
            )));
        }
        let base = ep.effective_base();
        let report = Report {
            version: REPORT_VERSION,
            title: format!(
                "{} · {} · {}",
                sc.kind.id(),
                ep.model,
                js_sys::Date::new_0()
                    .to_iso_string()
                    .as_string()
                    .unwrap_or_default()
                    .chars()
                    .take(19)
                    .collect::<String>()
            ),
            created_unix_ms: js_sys::Date::now(),
            clock_resolution_ms: studio.clock.get_untracked().map(|c| c.resolution_ms),
            endpoint: EndpointInfo {
                base_url: base.clone(),
                model: ep.wire_model(),
                dialect: ep.dialect,
            },
            scenario: sc.kind.id().into(),
            settings: serde_json::to_value(&sc).unwrap_or_default(),
            thresholds: Thresholds::default(),
            requests: Vec::new(),
        };
        studio.selected.set(None);
        studio.live.set(Some(LiveRun {
            report,
            progress: Progress {
                done: 0,
                total,
                phase: String::new(),
            },
            running: true,
        }));
        let handle = RunHandle::default();
        studio.handle.set_value(Some(handle.clone()));
        let dialect = ep.dialect;
        let next = std::cell::Cell::new(0usize);
        let build: Rc<dyn Fn(&crate::scenario::Job) -> ttft_core::request::HttpRequestSpec> =
            Rc::new(move |job| {
                let i = next.get();
                next.set(i + 1);
                build_request(&bases[i % bases.len()], dialect, &job.params)
            });
        let metrics = MetricsConfig {
            track_json: !sc.required_keys().is_empty()
                || sc.kind == crate::scenario::ScenarioKind::AgentJson,
            required_keys: sc.required_keys(),
            ..MetricsConfig::default()
        };
        let on_batch: Rc<dyn Fn(_, Progress)> =
            Rc::new(move |batch: Vec<_>, progress: Progress| {
                studio.live.update(|l| {
                    if let Some(l) = l {
                        l.report.requests.extend(batch);
                        l.progress = progress;
                    }
                });
            });
        let timeout_ms = sc.timeout_s * 1e3;
        spawn_local(async move {
            run_phases(
                RunPlan {
                    phases,
                    build,
                    secret_headers: secret,
                    dialect,
                    metrics,
                    timeout_ms,
                },
                handle,
                on_batch,
            )
            .await;
            let finished = studio
                .live
                .with_untracked(|l| l.as_ref().map(|l| l.report.clone()));
            studio.live.update(|l| {
                if let Some(l) = l {
                    l.running = false
                }
            });
            if let Some(report) = finished {
                studio.runs.update(|r| r.insert(0, report));
                let warning = studio.runs.with_untracked(|r| crate::storage::save_runs(r));
                if warning.is_some() {
                    studio.notice.set(warning);
                }
                studio.selected.set(Some(0));
                studio.live.set(None);
            }
        });
    };
    let cancel = move |_| {
        if let Some(h) = studio.handle.get_value() {
            h.cancel();
        }
    };
    let progress = move || studio.live.with(|l| l.as_ref().map(|l| l.progress.clone()));
    view! {
        <div class="run-controls">
            <button class="primary" data-testid="start-run" disabled=running on:click=start>"Run"</button>
            <button data-testid="cancel-run" disabled=move || !running() on:click=cancel>"Cancel"</button>
            {move || progress().map(|p| view! {
                <progress data-testid="progress" max=p.total.to_string() value=p.done.to_string()></progress>
                <span data-testid="progress-text">{format!("{}/{} {}", p.done, p.total, p.phase)}</span>
            })}
        </div>
    }
}
