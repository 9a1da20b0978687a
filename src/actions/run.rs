//! A run, from its start to its saved report: [`start_run`] takes the panels' settings,
//! [`run_scenario`] loads every part a run needs ([`load_run_parts`]) and runs one scenario
//! against one endpoint in the lazy part `run_scenario_part`: it plans the run with the core,
//! shows it live, hands the plan to the worker pool ([`crate::browser::pool::run_phases`]),
//! feeds batches into the live run, watches the tab for the client-health verdict and, when the
//! pool is done, [`finish_run`] shows it under a new [`RunId`] and saves it. [`cancel_run`]
//! stops it; what was measured is kept.
//!
//! Runs made together (#29): an A/B run sends its arms' requests interleaved in one pool run
//! (the core's [`ScenarioConfig::plan_arms`]), each request to its arm's model and base URL,
//! and is split into one report per arm when it finishes (cancelled or not), all added and
//! saved together and opened side by side in the comparison. A scenario repeated N times runs
//! N times back to back ([`run_repeats`]), each repeat a run (or an A/B run) of its own.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;
use ttft_core::report::saturation::{Saturation, SaturationCheck};
use ttft_core::report::{ArmPart, EndpointInfo, RepeatOf, Report, RunGroup};
use ttft_core::request::build_request;
use ttft_core::saturation_guard::SaturationGuard;
use ttft_core::scenario::{
    HTTP1_CONNECTIONS_PER_ORIGIN, Job, Phase, ScenarioConfig, connection_limit_warning, total_jobs,
};

use super::studio::{add_runs, is_busy, is_running, notify, set_compared, show_run};
use crate::browser::cancel::RunHandle;
use crate::browser::drawing::LiveDrawing;
use crate::browser::fetch::{reference_origins, sleep_ms};
use crate::browser::health::HealthMonitor;
use crate::browser::metrics_scrape::MetricsScraper;
use crate::browser::pool::{AfterWarmups, Finished, Progress, RunPlan, run_phases};
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

/// Starts a run with the current settings (an A/B run, repeats: [`run_repeats`]); a setting
/// that cannot run is reported instead.
pub fn start_run(studio: Studio) {
    if is_busy(studio) {
        return;
    }
    let ep = studio.endpoint.get_untracked();
    let sc = studio.scenario.get_untracked();
    spawn_local(async move {
        run_repeats(studio, ep, sc).await;
    });
}

/// Runs the scenario [`ScenarioConfig::repeats`] times back to back (once: [`run_scenario`]'s
/// run), each repeat a run or an A/B run of its own whose reports say which repeat they are;
/// a cancel stops the repeats, keeping what ran. Then opens the comparison: an A/B run's arms
/// (of its last repeat), else the first four repeats. Returns every run's id, in order.
pub async fn run_repeats(studio: Studio, ep: EndpointConfig, sc: ScenarioConfig) -> Vec<RunId> {
    if let Err(e) = sc.validate_group() {
        notify(studio, format!("cannot start: {e}"));
        return Vec::new();
    }
    let size = sc.repeats as usize;
    let id = format!("repeats-{}", crate::browser::clock::unix_now_ms() as u64);
    let mut all = Vec::new();
    let mut last = Vec::new();
    for index in 0..size {
        let repeat = (size > 1).then(|| RepeatOf {
            id: id.clone(),
            index,
            size,
        });
        let Some((ids, cancelled)) = run_grouped(studio, ep.clone(), sc.clone(), repeat).await
        else {
            break;
        };
        all.extend(ids.iter().copied());
        last = ids;
        if cancelled {
            break;
        }
    }
    let compared = if sc.is_ab() { last } else { all.clone() };
    if compared.len() > 1 {
        studio.state.compare().try_set(Vec::new());
        for id in compared.iter().take(4) {
            set_compared(studio, *id, true);
        }
        let what = if sc.is_ab() { "A/B run" } else { "repeats" };
        notify(
            studio,
            format!(
                "{what} done: {} runs, compared below",
                compared.len().min(4)
            ),
        );
    }
    all
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
    let (ids, cancelled) = run_grouped(studio, ep, sc, None).await?;
    Some((*ids.first()?, cancelled))
}

/// [`run_scenario`] for any run: an A/B run gives one id per arm (in the arms' order), any
/// other run one; `repeat` says which repeat it is of a repeated scenario.
async fn run_grouped(
    studio: Studio,
    ep: EndpointConfig,
    sc: ScenarioConfig,
    repeat: Option<RepeatOf>,
) -> Option<(Vec<RunId>, bool)> {
    if let Err(e) = load_run_parts(studio).await {
        notify(studio, format!("no run started: {e}"));
        return None;
    }
    // Another start may have won while the parts loaded (the first one waits for them).
    if is_running(studio) {
        return None;
    }
    match run_scenario_part(studio, ep, sc, repeat).await {
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
    /// while the tab is watched and the server's metrics read (when asked), then finishes it:
    /// one saved run, or one per arm of an A/B run (in the arms' order).
    pub(crate) async fn run_scenario_part(
        studio: Studio,
        ep: EndpointConfig,
        sc: ScenarioConfig,
        repeat: Option<RepeatOf>,
    ) -> Option<(Vec<RunId>, bool)> {
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
        let planned = plan_run(studio, &ep, &sc)?;
        // A trace replay asks for ignore_eos itself (its output lengths are the trace's).
        let eos_asked = sc.ignore_eos || planned.trace.is_some();
        if let Some(note) = ttft_core::request::ignore_eos_note(&ep.effective_base(), ep.dialect, eos_asked) {
            notify(studio, note);
        }
        let max_concurrency = planned.phases.iter().map(|p| p.concurrency).max().unwrap_or(1) as usize;
        let iso = crate::browser::clock::iso_now();
        let mut live = new_report(studio, &ep, &sc, planned.live_title(&sc, &ep, repeat.as_ref(), &iso));
        if let Some(t) = &planned.trace { t.put_in(&mut live.settings) }
        if !planned.is_ab() {
            live.group = repeat.as_ref().map(|r| RunGroup::repeat(&r.id, r.index, r.size));
        }
        let parts = planned.arm_parts(&sc, &ep, repeat, &iso);
        show_live(studio, live, total_jobs(&planned.phases));
        let handle = RunHandle::default();
        studio.handle.set_value(Some(handle.clone()));
        let watch = SaturationWatch::for_plan(studio, &handle, &planned.phases);
        let bases = spread_bases(studio, &ep, max_concurrency).await;
        let arm_bases = planned.arm_bases(&bases);
        let mut every_base: Vec<String> = arm_bases.concat();
        every_base.dedup();
        if let Some(warning) = connection_limit_warning(&planned.phases, &every_base) {
            notify(studio, warning);
        }
        let stamping = Stamping::choose().await;
        update_live(studio, |r| r.stamping = Some(stamping.describe()));
        let scraper = start_scraper(studio, &ep, &bases, max_concurrency).await;
        let plan = RunPlan {
            build: request_builder(arm_bases, ep.dialect),
            phases: planned.phases,
            secret_headers,
            dialect: ep.dialect,
            metrics: ttft_core::metrics::MetricsConfig {
                openers: studio.openers.get_untracked().openers(),
                ..sc.metrics_config()
            },
            timeout_ms: sc.timeout_s * 1e3,
            stamping,
            after_warmups: SaturationWatch::after_warmups(
                watch.as_ref(),
                scraper.as_ref().map(|s| {
                    let baseline = s.after_warmups();
                    Box::new(move || baseline) as AfterWarmups
                }),
            ),
        };
        let ab = !parts.is_empty();
        let sat = watch.clone();
        let on_batch = Rc::new(move |batch: Vec<Finished>, progress: Progress| {
            if let Some(w) = &sat {
                w.check(&batch);
            }
            studio.state.live().update(|l| {
                if let Some(l) = l {
                    let report = Arc::make_mut(&mut l.report);
                    for f in batch {
                        if ab {
                            l.arms.push(f.arm);
                        }
                        report.requests.push(f.record);
                    }
                    l.progress = progress;
                    l.revision += 1;
                }
            });
        });
        // Watches the tab while the requests stream (the page's own timers and visibility).
        let monitor = HealthMonitor::start();
        let run_start = crate::browser::clock::now_ms();
        if let Some(w) = &watch {
            w.start(run_start);
        }
        let drawing = live_drawing(studio);
        run_phases(plan, handle.clone(), on_batch).await;
        if let Some(w) = &watch {
            w.finish();
        }
        if let Some(d) = drawing {
            keep_paints(studio, d).await;
        }
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
        finish_runs(studio, parts).map(|ids| (ids, handle.is_cancelled()))
    }
}

/// The live surface's drawing of this run's answers, when the user chose a strategy and the
/// surface is on the page.
fn live_drawing(studio: Studio) -> Option<LiveDrawing> {
    let strategy = studio.surface.get_untracked()?;
    let root = web_sys::window()?
        .document()?
        .query_selector("[data-testid=live-surface]")
        .ok()??;
    Some(LiveDrawing::start(root, strategy))
}

/// What the live surface painted goes in the run's report: each drawn answer's figures, by the
/// core from the answer's recorded arrivals; a trace the core refused is said.
async fn keep_paints(studio: Studio, drawing: LiveDrawing) {
    let (strategy, traces) = drawing.finish().await;
    let mut refused = Vec::new();
    update_live(studio, |r| {
        let (painted, errors) = ttft_core::report::painted::painted_run(r, &strategy, &traces);
        r.painted = Some(painted);
        refused = errors;
    });
    if let Some(e) = refused.first() {
        notify(
            studio,
            format!(
                "{} drawn answer(s) left out of the paint figures: {e}",
                refused.len()
            ),
        );
    }
}

/// The saturation stop of an open-loop run, on the page (never in the stamping worker): the
/// core's guard ([`SaturationGuard`]) fed every batch of finished requests and checked on a
/// timer each window (a server that stalls sends no batch while the plan goes on sending).
/// When it fires, the run is cancelled as a user's cancel would (requests in flight end as
/// cut by the client, what finished is kept) and the evidence goes in the report.
#[derive(Clone)]
struct SaturationWatch {
    studio: Studio,
    handle: RunHandle,
    guard: Rc<RefCell<SaturationGuard>>,
    /// The run's start on the page's clock (the records' times count from it).
    run_start: Rc<Cell<f64>>,
    /// The pool is done: the timer stops.
    over: Rc<Cell<bool>>,
    /// The measured plan starts after warm-ups ([`SaturationWatch::after_warmups`]).
    has_warmups: bool,
}

impl SaturationWatch {
    /// A watch for an open-loop plan (every measured request planned), on or off as the
    /// setting says; `None` for any other run.
    fn for_plan(studio: Studio, handle: &RunHandle, phases: &[Phase]) -> Option<Self> {
        let enabled = super::settings::saturation_stop_enabled();
        let guard = SaturationGuard::for_plan(phases, enabled)?;
        Some(Self {
            studio,
            handle: handle.clone(),
            guard: Rc::new(RefCell::new(guard)),
            run_start: Rc::default(),
            over: Rc::default(),
            has_warmups: phases.iter().flat_map(|p| &p.jobs).any(|j| j.warmup),
        })
    }

    /// Now on the run's clock.
    fn now(&self) -> f64 {
        crate::browser::clock::now_ms() - self.run_start.get()
    }

    /// The run starts at `run_start` (the page's clock); so does its measured plan when it has
    /// no warm-ups. The timer checks each time a window can be judged, until the run is over.
    fn start(&self, run_start: f64) {
        self.run_start.set(run_start);
        if !self.has_warmups {
            self.guard.borrow_mut().started(0.0);
        }
        if !self.guard.borrow().config().enabled {
            return;
        }
        let w = self.clone();
        spawn_local(async move {
            while !w.over.get() {
                let now = w.now();
                let at = w.guard.borrow().next_check_ms(now);
                sleep_ms(at - now).await;
                if !w.over.get() {
                    w.check(&[]);
                }
            }
        });
    }

    /// What the pool awaits between the warm-ups and the measured requests: `inner` (the
    /// server's baseline scrape), then the measured plan starts. `inner` alone without a watch.
    fn after_warmups(watch: Option<&Self>, inner: Option<AfterWarmups>) -> Option<AfterWarmups> {
        let Some(w) = watch.cloned() else {
            return inner;
        };
        let hook = move || {
            let started = async move {
                if let Some(inner) = inner {
                    inner().await;
                }
                let now = w.now();
                w.guard.borrow_mut().started(now);
            };
            Box::pin(started) as futures_util::future::LocalBoxFuture<'static, ()>
        };
        Some(Box::new(hook))
    }

    /// Feeds `batch` and asks the guard; stops the run when it says so.
    fn check(&self, batch: &[Finished]) {
        let fired = {
            let mut g = self.guard.borrow_mut();
            for f in batch {
                g.finished(&f.record);
            }
            g.check(self.now())
        };
        if let Some(s) = fired {
            self.fire(s);
        }
    }

    /// Keeps the evidence in the live report and cancels the run, once the batch being handed
    /// on is in (the pool is not re-entered from its own callback).
    fn fire(&self, s: Saturation) {
        let w = self.clone();
        spawn_local(async move {
            update_live(w.studio, |r| {
                r.saturation = Some(SaturationCheck::Stopped(s))
            });
            w.handle.cancel();
        });
    }

    /// The pool is done: what the stop did goes in the report (stopped with its evidence,
    /// watched, off), and the user is told when it stopped the run.
    fn finish(&self) {
        self.over.set(true);
        let outcome = self.guard.borrow().outcome();
        let mut kept = 0;
        update_live(self.studio, |r| {
            kept = r.measured().count();
            r.saturation = Some(outcome.clone());
        });
        if outcome.stopped().is_some() {
            notify(self.studio, outcome.sentence(kept));
        }
    }
}

/// A run's plan with, in an A/B run, each arm as it is sent.
struct Planned {
    phases: Vec<Phase>,
    /// The arms of an A/B run, in order; empty for any other run.
    arms: Vec<PlannedArm>,
    /// A trace replay's record for its report (format, options, notes, expected reuse).
    trace: Option<ttft_core::trace::TraceReplayRecord>,
}

/// An arm of an A/B run as it is sent.
struct PlannedArm {
    /// Its label ([`ttft_core::scenario::arm_labels`]).
    label: String,
    /// Its model as sent.
    model: String,
    /// Its own base URL; `None` = the endpoint's (and its shards).
    own_base: Option<String>,
}

/// Plans the run with the core: an A/B run's arms interleaved, any other run as before; a
/// setting that cannot run is told and nothing starts.
fn plan_run(studio: Studio, ep: &EndpointConfig, sc: &ScenarioConfig) -> Option<Planned> {
    if sc.kind == ttft_core::scenario::ScenarioKind::Trace {
        return plan_trace_run(studio, ep, sc);
    }
    let planned = if sc.is_ab() {
        sc.validate_group().and_then(|labels| {
            let arms: Vec<PlannedArm> = sc
                .arms
                .iter()
                .zip(labels)
                .map(|(a, label)| PlannedArm {
                    label,
                    model: ep.arm_wire_model(a),
                    own_base: a.own_base().map(str::to_owned),
                })
                .collect();
            let models: Vec<String> = arms.iter().map(|a| a.model.clone()).collect();
            sc.plan_arms(&models, ep.dialect).map(|phases| Planned {
                phases,
                arms,
                trace: None,
            })
        })
    } else {
        sc.plan(&ep.wire_model(), ep.dialect).map(|phases| Planned {
            phases,
            arms: Vec::new(),
            trace: None,
        })
    };
    planned
        .map_err(|e| notify(studio, format!("cannot start: {e}")))
        .ok()
}

/// [`plan_run`] for a trace replay: one phase of the loaded trace's requests at their planned
/// times ([`super::trace::plan_trace`], a fresh seed unless the scenario sets one), with its
/// record for the report; without a trace, or with bad options, the user is told what to do.
fn plan_trace_run(studio: Studio, ep: &EndpointConfig, sc: &ScenarioConfig) -> Option<Planned> {
    super::trace::plan_trace(studio, ep, sc, super::trace::run_seed(sc))
        .map(|(phases, record)| Planned {
            phases,
            arms: Vec::new(),
            trace: Some(record),
        })
        .map_err(|e| notify(studio, format!("cannot start: {e}")))
        .ok()
}

impl Planned {
    fn is_ab(&self) -> bool {
        !self.arms.is_empty()
    }

    /// The live run's title: an A/B run's names its arms (`chat · A/B: sim-ab vs sim-ab-slower
    /// · …`), a repeat says which it is.
    fn live_title(
        &self,
        sc: &ScenarioConfig,
        ep: &EndpointConfig,
        repeat: Option<&RepeatOf>,
        iso: &str,
    ) -> String {
        let kind = sc.kind.id();
        let of = |r: &RepeatOf| format!(", repeat {} of {}", r.index + 1, r.size);
        if self.is_ab() {
            let labels: Vec<&str> = self.arms.iter().map(|a| a.label.as_str()).collect();
            let name = format!(
                "A/B: {}{}",
                labels.join(" vs "),
                repeat.map(of).unwrap_or_default()
            );
            ttft_core::naming::run_title(kind, &name, iso)
        } else if let Some(r) = repeat {
            ttft_core::naming::group_run_title(
                kind,
                &ep.model,
                &RunGroup::repeat(&r.id, r.index, r.size),
                iso,
            )
        } else {
            ttft_core::naming::run_title(kind, &ep.model, iso)
        }
    }

    /// The arms' reports to split the run into (none for a run that is no A/B run): titles,
    /// endpoints and groups, the repeat it is when the scenario repeats.
    fn arm_parts(
        &self,
        sc: &ScenarioConfig,
        ep: &EndpointConfig,
        repeat: Option<RepeatOf>,
        iso: &str,
    ) -> Vec<ArmPart> {
        if !self.is_ab() {
            return Vec::new();
        }
        let id = format!("ab-{}", crate::browser::clock::unix_now_ms() as u64);
        let labels: Vec<String> = self.arms.iter().map(|a| a.label.clone()).collect();
        RunGroup::arms(&id, &labels)
            .into_iter()
            .zip(&self.arms)
            .map(|(mut group, arm)| {
                group.repeat = repeat.clone();
                ArmPart {
                    title: ttft_core::naming::group_run_title(
                        sc.kind.id(),
                        &arm.model,
                        &group,
                        iso,
                    ),
                    endpoint: EndpointInfo {
                        base_url: arm.own_base.clone().unwrap_or_else(|| ep.effective_base()),
                        model: arm.model.clone(),
                        dialect: ep.dialect,
                    },
                    group,
                }
            })
            .collect()
    }

    /// The base URLs of each arm (one list for a run that is no A/B run): an arm's own, or
    /// `bases`, the endpoint's as the run spreads them.
    fn arm_bases(&self, bases: &[String]) -> Vec<Vec<String>> {
        if !self.is_ab() {
            return vec![bases.to_vec()];
        }
        self.arms
            .iter()
            .map(|a| {
                a.own_base
                    .clone()
                    .map_or_else(|| bases.to_vec(), |b| vec![b])
            })
            .collect()
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
/// the reader and deadlines last applied to a run, held to the last SLO set (the defaults
/// until then) and with the team's opener list its requests are measured with.
fn new_report(studio: Studio, ep: &EndpointConfig, sc: &ScenarioConfig, title: String) -> Report {
    let endpoint = EndpointInfo {
        base_url: ep.effective_base(),
        model: ep.wire_model(),
        dialect: ep.dialect,
    };
    let clock = studio.state.clock().get_untracked();
    let mut report = Report::new(title, endpoint, sc.kind.id())
        .created_at(crate::browser::clock::unix_now_ms())
        .with_clock_resolution(clock.map(|c| c.resolution_ms))
        .with_user_agent(crate::browser::user_agent())
        .with_settings(serde_json::to_value(sc).unwrap_or_default())
        .with_experience(crate::browser::storage::load_experience().unwrap_or_default());
    report.slo = crate::browser::storage::load_slo().unwrap_or_default();
    report.openers = studio.openers.get_untracked();
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
        arms: Vec::new(),
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

/// Builds each job's request to its arm's base URLs (`arm_bases[job.arm]`; an ordinary run has
/// one list), each arm's taken in turn. The job's params carry its arm's model.
fn request_builder(
    arm_bases: Vec<Vec<String>>,
    dialect: Option<ttft_core::dialect::Dialect>,
) -> Rc<dyn Fn(&Job) -> ttft_core::request::HttpRequestSpec> {
    let next_base: Vec<std::cell::Cell<usize>> =
        arm_bases.iter().map(|_| std::cell::Cell::new(0)).collect();
    Rc::new(move |job: &Job| {
        let arm = job.arm.min(arm_bases.len() - 1);
        let (bases, next) = (&arm_bases[arm], &next_base[arm]);
        let i = next.get();
        next.set(i + 1);
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
    finish_runs(studio, Vec::new()).and_then(|ids| ids.first().copied())
}

/// The pool is done: the live run becomes saved runs under new ids: itself, or, given the arms
/// of an A/B run, one report per arm ([`Report::split_arms`], by the arm of each request the
/// pool handed on), added together (the first arm on top), the first shown, all saved.
fn finish_runs(studio: Studio, arms: Vec<ArmPart>) -> Option<Vec<RunId>> {
    studio.handle.set_value(None);
    let live = studio.state.live().try_update(Option::take).flatten()?;
    let reports: Vec<Arc<Report>> = if arms.is_empty() {
        vec![live.report]
    } else {
        Arc::unwrap_or_clone(live.report)
            .split_arms(&live.arms, arms)
            .into_iter()
            .map(Arc::new)
            .collect()
    };
    let ids = add_runs(studio.state, reports);
    show_run(studio, *ids.first()?);
    for id in &ids {
        super::storage::save_run(studio, *id);
    }
    Some(ids)
}
