//! A run, from its start to its saved report: [`start_run`] takes the panels' settings,
//! [`run_scenario`] loads every part a run needs ([`load_run_parts`]) and runs one scenario
//! against one endpoint in the lazy part `run_scenario_part`: it plans the run with the core,
//! shows it live, hands the plan to the worker pool ([`crate::browser::pool::run_phases`]),
//! feeds batches into the live run, watches the tab for the client-health verdict and, when the
//! pool is done, [`finish_run`] shows it under a new [`RunId`] and saves it. [`cancel_run`]
//! stops it; what was measured is kept.

use std::rc::Rc;
use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;
use ttft_core::report::{EndpointInfo, Report};
use ttft_core::request::build_request;
use ttft_core::scenario::{
    HTTP1_CONNECTIONS_PER_ORIGIN, Job, ScenarioConfig, connection_limit_warning, total_jobs,
};

use super::studio::{add_runs, is_busy, is_running, notify, show_run};
use crate::browser::cancel::RunHandle;
use crate::browser::fetch::reference_origins;
use crate::browser::health::HealthMonitor;
use crate::browser::metrics_scrape::MetricsScraper;
use crate::browser::pool::{AfterWarmups, Progress, RunPlan, run_phases};
use crate::browser::stamper::Stamping;
use crate::lazy::PartError;
use crate::state::{EndpointConfig, LiveRun, RunId, Shown, Studio, StudioStateStoreFields};

/// Loads every part a run needs, from its first request to its saved report (its machinery,
/// the report's views, a complete run's parts, the writer that saves it), before the run sends
/// anything: no part's fetch then competes with the run's requests for a connection (the
/// reference endpoint shares the page's origin). Once loaded, at once.
pub async fn load_run_parts(studio: Studio) -> Result<(), PartError> {
    preload_run_scenario().await?;
    (studio.view_parts)().await?;
    super::storage::preload_report_writer().await?;
    Ok(())
}

/// [`load_run_parts`], then ECharts, once the page is idle: the first run rarely waits for its
/// parts, and its charts rarely for ECharts. A failure here is left to the call that needs the
/// part, which says so.
pub fn preload_when_idle(studio: Studio) {
    crate::browser::when_idle(move || {
        spawn_local(async move {
            let _ = load_run_parts(studio).await;
            let _ = crate::browser::echarts::ensure_loaded().await;
        });
    });
}

/// Starts a run with the current settings; a setting that cannot run is reported instead.
pub fn start_run(studio: Studio) {
    if is_busy(studio) {
        return;
    }
    let ep = studio.endpoint.get_untracked();
    let sc = studio.scenario.get_untracked();
    spawn_local(async move {
        run_scenario(studio, ep, sc).await;
    });
}

/// Stops the live run; requests in flight end as aborted and the partial run is kept.
pub fn cancel_run(studio: Studio) {
    if let Some(h) = studio.handle.get_value() {
        h.cancel();
    }
}

/// Runs one scenario against one endpoint to its end (or its cancel), then saves and shows it.
/// Returns the run's id and whether it was cancelled; `None` when it could not start (the
/// notice says why). The user's panels are not touched, so the article's comparison and a
/// calibration run their own settings.
///
/// The run's machinery (planning, request bodies, the pool and its stamping, parsing, the
/// client-health verdict) is a lazy part: it loads with the first run, before its first
/// request is timed.
pub async fn run_scenario(
    studio: Studio,
    ep: EndpointConfig,
    sc: ScenarioConfig,
) -> Option<(RunId, bool)> {
    if let Err(e) = load_run_parts(studio).await {
        notify(studio, format!("no run started: {e}"));
        return None;
    }
    // Another start may have won while the parts loaded (the first one waits for them).
    if is_running(studio) {
        return None;
    }
    match run_scenario_part(studio, ep, sc).await {
        Ok(outcome) => outcome,
        Err(e) => {
            notify(studio, format!("no run started: {e}"));
            None
        }
    }
}

lazy_part! {
    preload = preload_run_scenario;
    /// [`run_scenario`], its parts loaded: plans the run, shows it live, stamps it in the pool
    /// while the tab is watched and the server's metrics read (when asked), then finishes it.
    pub(crate) async fn run_scenario_part(
        studio: Studio,
        ep: EndpointConfig,
        sc: ScenarioConfig,
    ) -> Option<(RunId, bool)> {
        if !may_run_offline(studio, &ep) {
            return None;
        }
        let secret_headers = match ep.secret_headers() {
            Ok(h) => h,
            Err(e) => {
                notify(studio, e.to_string());
                return None;
            }
        };
        let phases = match sc.plan(&ep.wire_model(), ep.dialect) {
            Ok(p) => p,
            Err(e) => {
                notify(studio, format!("cannot start: {e}"));
                return None;
            }
        };
        let max_concurrency = phases.iter().map(|p| p.concurrency).max().unwrap_or(1) as usize;
        show_live(studio, new_report(studio, &ep, &sc), total_jobs(&phases));
        let handle = RunHandle::default();
        studio.handle.set_value(Some(handle.clone()));
        let bases = spread_bases(studio, &ep, max_concurrency).await;
        if let Some(warning) = connection_limit_warning(&phases, &bases) {
            notify(studio, warning);
        }
        let stamping = Stamping::choose().await;
        update_live(studio, |r| r.stamping = Some(stamping.describe()));
        let scraper = start_scraper(studio, &ep, &bases, max_concurrency).await;
        let plan = RunPlan {
            build: request_builder(bases, ep.dialect),
            phases,
            secret_headers,
            dialect: ep.dialect,
            metrics: sc.metrics_config(),
            timeout_ms: sc.timeout_s * 1e3,
            stamping,
            after_warmups: scraper.as_ref().map(|s| {
                let baseline = s.after_warmups();
                Box::new(move || baseline) as AfterWarmups
            }),
        };
        let on_batch = Rc::new(move |batch: Vec<_>, progress: Progress| {
            studio.state.live().update(|l| {
                if let Some(l) = l {
                    Arc::make_mut(&mut l.report).requests.extend(batch);
                    l.progress = progress;
                    l.revision += 1;
                }
            });
        });
        // Watches the tab while the requests stream (the page's own timers and visibility).
        let monitor = HealthMonitor::start();
        let run_start = crate::browser::clock::now_ms();
        run_phases(plan, handle.clone(), on_batch).await;
        let samples = monitor.finish();
        let scrapes = match scraper {
            Some(s) => Some(s.finish(run_start).await),
            None => None,
        };
        update_live(studio, |r| {
            r.client_health = Some(ttft_core::client_health::assess(r, &samples));
            if let Some(scrapes) = scrapes {
                r.metrics_url = Some(ep.effective_metrics_url());
                r.server_scrapes = scrapes;
            }
        });
        finish_run(studio).map(|id| (id, handle.is_cancelled()))
    }
}

/// Whether a run may start as far as the network goes: always online; offline only for a
/// server on this machine (the browser says offline when only loopback is up), with a notice
/// either way.
fn may_run_offline(studio: Studio, ep: &EndpointConfig) -> bool {
    if crate::browser::online() {
        return true;
    }
    let base = ep.effective_base();
    if !crate::browser::on_this_machine(&base) {
        notify(
            studio,
            format!(
                "You are offline: {base} cannot be reached, so no run started. Saved runs, share links and imports still work; reconnect to run."
            ),
        );
        return false;
    }
    // A server on this machine answers without a network: the run goes ahead, and its
    // requests say if it does not.
    notify(
        studio,
        format!(
            "You are offline; {base} is on this machine, so the run goes ahead. If its requests fail, that server is not running."
        ),
    );
    true
}

/// The report a run starts with: its title, endpoint, clock, browser and settings, scored with
/// the reader and deadlines last applied to a run and held to the last SLO set (the defaults
/// until then).
fn new_report(studio: Studio, ep: &EndpointConfig, sc: &ScenarioConfig) -> Report {
    let endpoint = EndpointInfo {
        base_url: ep.effective_base(),
        model: ep.wire_model(),
        dialect: ep.dialect,
    };
    let title =
        ttft_core::naming::run_title(sc.kind.id(), &ep.model, &crate::browser::clock::iso_now());
    let clock = studio.state.clock().get_untracked();
    let mut report = Report::new(title, endpoint, sc.kind.id())
        .created_at(crate::browser::clock::unix_now_ms())
        .with_clock_resolution(clock.map(|c| c.resolution_ms))
        .with_user_agent(crate::browser::user_agent())
        .with_settings(serde_json::to_value(sc).unwrap_or_default())
        .with_experience(crate::browser::storage::load_experience().unwrap_or_default());
    report.slo = crate::browser::storage::load_slo().unwrap_or_default();
    report
}

/// Shows `report` as the live run of `total` requests; the reader's view of a shared link
/// gives way to the studio (the user measures now).
fn show_live(studio: Studio, report: Report, total: usize) {
    studio.state.live().set(Some(LiveRun {
        report: Arc::new(report),
        progress: Progress {
            done: 0,
            total,
            phase: String::new(),
        },
        revision: 0,
    }));
    studio.state.shown().set(Shown::Live);
    studio.state.reader_view().set(false);
}

/// Changes the live run's report in place (no view holds it between batches, so nothing is
/// copied), and tells its view.
fn update_live(studio: Studio, change: impl FnOnce(&mut Report)) {
    studio.state.live().update(|l| {
        if let Some(l) = l {
            change(Arc::make_mut(&mut l.report));
            l.revision += 1;
        }
    });
}

/// The base URLs the run's requests go to. Above 6 streams the reference endpoint is reached
/// over all its HTTP/1.1 origins (sharding). BENCHMARKS.md measured it against HTTP/2 over TLS
/// at 16 and 64 streams and found no difference beyond the rounds' spread, and it needs no
/// certificate, unlike the server's HTTP/2 port.
async fn spread_bases(studio: Studio, ep: &EndpointConfig, max_concurrency: usize) -> Vec<String> {
    let bases = ep.bases();
    let spread =
        ep.is_reference() && bases.len() == 1 && max_concurrency > HTTP1_CONNECTIONS_PER_ORIGIN;
    let origins = if spread {
        reference_origins().await
    } else {
        None
    };
    match origins {
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
    }
}

/// Builds each job's request, the base URLs taken in turn.
fn request_builder(
    bases: Vec<String>,
    dialect: Option<ttft_core::dialect::Dialect>,
) -> Rc<dyn Fn(&Job) -> ttft_core::request::HttpRequestSpec> {
    let next_base = std::cell::Cell::new(0usize);
    Rc::new(move |job: &Job| {
        let i = next_base.get();
        next_base.set(i + 1);
        build_request(&bases[i % bases.len()], dialect, &job.params)
    })
}

/// The server's own view, when asked: a scrape now, one after the warm-ups (the baseline of
/// its percentiles), then one a second; before and after only when a scrape during the run
/// could take a connection a request needs (HTTP/1.1).
async fn start_scraper(
    studio: Studio,
    ep: &EndpointConfig,
    bases: &[String],
    max_concurrency: usize,
) -> Option<MetricsScraper> {
    if !ep.scrape_metrics {
        return None;
    }
    let url = ep.effective_metrics_url();
    let during =
        !ttft_core::server_metrics::scrape_would_share_connections(&url, bases, max_concurrency);
    if !during {
        notify(
            studio,
            format!(
                "server metrics are read before and after this run only: {url} shares the run's HTTP/1.1 connections (6 per origin, all in use), so a scrape during it could delay a request"
            ),
        );
    }
    match MetricsScraper::start(url, during).await {
        Ok(s) => Some(s),
        Err(e) => {
            notify(studio, format!("server metrics are off for this run: {e}"));
            None
        }
    }
}

/// The pool is done: the live run becomes a saved run under a new id, which is shown and
/// returned.
pub fn finish_run(studio: Studio) -> Option<RunId> {
    studio.handle.set_value(None);
    let live = studio.state.live().try_update(Option::take).flatten()?;
    let ids = add_runs(studio.state, vec![live.report]);
    show_run(studio, ids[0]);
    super::storage::save_run(studio, ids[0]);
    Some(ids[0])
}
