//! The rendering lab (#31): one recorded answer of the run shown (saved, opened from a link or
//! imported with per-chunk times) played through the four ways a chat UI draws a stream, side
//! by side, with no network: its content chunks' recorded arrival times and text (the replay's
//! pieces, [`RequestRecord::replay`]) are released by each [`Strategy`]
//! ([`ttft_render::release()`]) on a clock that runs in real time from the press of Play, drawn by
//! a [`DomSurface`] each, and their paint figures computed by the core ([`ttft_core::paint`]).
//!
//! The release schedule is deterministic (the same arrivals and settings give the same
//! releases, shown as `data-release-*`); what rendering costs and when the browser painted are
//! measured on this page, so they vary from play to play. The four surfaces share one main
//! thread: a frame one of them holds up delays the others too.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use leptos::html::Div;
use leptos::prelude::*;
use ttft_core::paint::{
    PaintError, PaintFigures, PaintTrace, render_cost_ends, render_cost_growth, run_lag,
};
use ttft_core::report::painted::{content_chunks, request_figures};
use ttft_core::report::{Report, RequestRecord};
use ttft_render::{Arrival, FRAME_MS, Release, Smoothing, Strategy, release};

use crate::browser::clock::now_ms;
use crate::browser::surface::{DomSurface, FrameStats, FrameWatch};
use crate::components::schedule_lag::estimate_text;
use crate::format::ms;

/// The confidence level of the lag intervals.
const LEVEL: f64 = 0.95;

/// How long after its last update the lab waits for paints to be reported (ms).
const SETTLE_MS: u64 = 400;

/// A request's answer as it arrived: its content chunks (ms since its t0).
fn arrivals(r: &RequestRecord) -> Vec<Arrival> {
    r.replay
        .iter()
        .filter(|p| p.kind == 'a' && !p.text.is_empty())
        .map(|p| Arrival {
            at_ms: p.at_ms,
            text: p.text.clone(),
        })
        .collect()
}

/// The requests the lab can play (measured, with an answer), longest answer first.
fn candidates(report: &Report) -> Vec<(usize, usize)> {
    let mut c: Vec<(usize, usize)> = report
        .requests
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.warmup)
        .map(|(i, r)| (i, arrivals(r).iter().map(|a| a.text.len()).sum()))
        .filter(|(_, len)| *len > 0)
        .collect();
    c.sort_by_key(|(i, len)| (std::cmp::Reverse(*len), *i));
    c
}

/// A fingerprint of a release schedule's times and sizes (FNV-1a), to tell two schedules apart.
fn digest(releases: &[Release]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for r in releases {
        for b in r
            .at_ms
            .to_bits()
            .to_le_bytes()
            .into_iter()
            .chain(r.text.len().to_le_bytes())
        {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// The largest gap between consecutive times (ms), 0 with fewer than two.
fn max_gap(times: impl IntoIterator<Item = f64>) -> f64 {
    let t: Vec<f64> = times.into_iter().collect();
    t.windows(2).map(|w| w[1] - w[0]).fold(0.0, f64::max)
}

/// One strategy's outcome of a play.
#[derive(Clone)]
struct Outcome {
    strategy: Strategy,
    releases: Vec<Release>,
    trace: PaintTrace,
    figures: Result<PaintFigures, PaintError>,
    first_arrival_ms: Option<f64>,
    frames: FrameStats,
    element_timed: (usize, usize),
}

/// What one strategy's surface recorded in a play.
struct Played {
    strategy: Strategy,
    releases: Vec<Release>,
    trace: PaintTrace,
    frames: FrameStats,
    /// Element Timing's coverage ([`DomSurface::element_coverage`]).
    element_timed: (usize, usize),
}

/// What a finished play hands on.
type Done = Callback<Vec<Played>>;

/// A play under way.
struct Play {
    origin: f64,
    lanes: Vec<(Strategy, Vec<Release>, DomSurface)>,
    /// (due ms, lane, release) in time order.
    due: Vec<(f64, usize, usize)>,
    next: usize,
    frames: FrameWatch,
}

type Playing = Rc<RefCell<Option<Play>>>;

/// Applies every release due by now, then waits for the next (or for the paints, at the end).
fn tick(playing: Playing, done: Done) {
    let wait = {
        let mut guard = playing.borrow_mut();
        let Some(p) = guard.as_mut() else { return };
        let now = now_ms() - p.origin;
        while let Some(&(at, lane, i)) = p.due.get(p.next) {
            if at > now {
                break;
            }
            let (_, releases, surface) = &mut p.lanes[lane];
            let text = releases[i].text.clone();
            surface.push(&text);
            p.next += 1;
        }
        p.due
            .get(p.next)
            .map(|&(at, _, _)| (at - (now_ms() - p.origin)).max(0.0))
    };
    match wait {
        Some(ms) => {
            let playing = Rc::clone(&playing);
            set_timeout(
                move || tick(playing, done),
                Duration::from_micros((ms * 1000.0) as u64),
            );
        }
        None => set_timeout(
            move || settle(playing, done, 20),
            Duration::from_millis(SETTLE_MS),
        ),
    }
}

/// Ends a play once every update has had its frame (or after `tries` more waits).
fn settle(playing: Playing, done: Done, tries: u32) {
    let settled = playing
        .borrow()
        .as_ref()
        .is_some_and(|p| p.lanes.iter().all(|(_, _, s)| s.settled()));
    if !settled && tries > 0 {
        set_timeout(
            move || settle(playing, done, tries - 1),
            Duration::from_millis(50),
        );
        return;
    }
    let Some(p) = playing.borrow_mut().take() else {
        return;
    };
    let stats = p.frames.stop();
    let out = p
        .lanes
        .into_iter()
        .map(|(strategy, releases, surface)| Played {
            trace: surface.trace(strategy.id(), &stats),
            element_timed: surface.element_coverage(),
            strategy,
            releases,
            frames: stats.clone(),
        })
        .collect();
    done.run(out);
}

/// The figures of one strategy's play, as `data-*` attributes and a few lines.
#[component]
fn Figures(outcome: Outcome, meaningful: bool) -> impl IntoView {
    let Outcome {
        strategy,
        releases,
        trace,
        figures,
        first_arrival_ms,
        frames,
        element_timed,
    } = outcome;
    let id = strategy.id();
    let fmt = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.3}"));
    let ends = render_cost_ends(&trace);
    let growth = render_cost_growth(&trace);
    let release_gap = max_gap(releases.iter().map(|r| r.at_ms));
    let paint_gap = max_gap(trace.updates.iter().map(|u| u.painted_ms));
    let (refused, lines) = match &figures {
        Err(e) => (e.to_string(), vec![format!("Refused: {e}")]),
        Ok(f) => {
            let lag = run_lag(std::iter::once(f), LEVEL);
            let lag_text = lag.as_ref().map_or("no chunk painted".to_owned(), |l| {
                format!(
                    "P50 {}, P99 {} ({} chunks)",
                    estimate_text(&l.p50_ms, 1.0, " ms"),
                    estimate_text(&l.p99_ms, 1.0, " ms"),
                    l.chunks
                )
            });
            let meaningful_text = if meaningful {
                ms(f.first_painted_meaningful_ms)
            } else {
                "the same (no opener to skip)".to_owned()
            };
            (
                String::new(),
                vec![
                    format!(
                        "first token arrived {}, painted {}",
                        ms(first_arrival_ms),
                        ms(f.first_painted_ms)
                    ),
                    format!("first meaningful token painted {meaningful_text}"),
                    format!("arrival-to-paint lag {lag_text}"),
                ],
            )
        }
    };
    let ok = figures.as_ref().ok();
    let lag = ok.and_then(|f| run_lag(std::iter::once(f), LEVEL));
    let min_lag = ok.and_then(|f| f.lags_ms.iter().copied().reduce(f64::min));
    let cost = match (ends, growth) {
        (Some((a, b)), g) => format!(
            "render cost per update {a:.2} ms at the start, {b:.2} ms at the end{}",
            g.map_or(String::new(), |g| format!(" (×{g:.1})"))
        ),
        _ => "render cost: fewer than 10 updates".to_owned(),
    };
    // What the longest frame was spent on, where the Long Animation Frames API says.
    let longest = frames
        .long_frames
        .iter()
        .max_by(|a, b| a.duration_ms.total_cmp(&b.duration_ms))
        .map_or(String::new(), |f| {
            format!(
                "; the longest {:.0} ms{}",
                f.duration_ms,
                f.spent_on
                    .as_deref()
                    .map_or(String::new(), |s| format!(", spent in {s}"))
            )
        });
    let frames_text = format!(
        "{} frames, {} dropped, {} long ({}{longest}) · painted by {} (Element Timing reported {} of {} updates shown)",
        frames.frames,
        frames.dropped,
        frames.long_frames.len(),
        if frames.loaf {
            "Long Animation Frames"
        } else {
            "frame gaps"
        },
        trace.source.label(),
        element_timed.0,
        element_timed.1
    );
    view! {
        <div class="lab-figures" data-testid=format!("lab-figures-{id}")
            data-done="true"
            data-refused=refused
            data-source=trace.source.label()
            data-updates=trace.updates.len().to_string()
            data-element-timed=element_timed.0.to_string()
            data-element-shown=element_timed.1.to_string()
            data-releases=releases.len().to_string()
            data-release-digest=digest(&releases)
            data-release-first-ms=fmt(releases.first().map(|r| r.at_ms))
            data-release-last-ms=fmt(releases.last().map(|r| r.at_ms))
            data-max-release-gap-ms=format!("{release_gap:.3}")
            data-max-paint-gap-ms=format!("{paint_gap:.3}")
            data-first-arrival-ms=fmt(first_arrival_ms)
            data-first-painted-ms=fmt(ok.and_then(|f| f.first_painted_ms))
            data-first-meaningful-ms=fmt(ok.and_then(|f| f.first_painted_meaningful_ms))
            data-min-lag-ms=fmt(min_lag)
            data-lag-p50-ms=fmt(lag.as_ref().map(|l| l.p50_ms.value))
            data-lag-p99-ms=fmt(lag.as_ref().map(|l| l.p99_ms.value))
            data-cost-start-ms=fmt(ends.map(|e| e.0))
            data-cost-end-ms=fmt(ends.map(|e| e.1))
            data-growth=fmt(growth)
        >
            {lines.into_iter().map(|l| view! { <p>{l}</p> }).collect_view()}
            <p>{cost}</p>
            <p class="muted">{frames_text}</p>
        </div>
    }
}

/// The outcome of each strategy from what the play recorded: its figures by the core, from
/// the request's recorded arrivals ([`request_figures`]).
fn outcomes(record: &RequestRecord, played: Vec<Played>) -> Vec<Outcome> {
    let first_arrival_ms = content_chunks(record).first().map(|c| c.at_ms);
    played
        .into_iter()
        .map(|p| Outcome {
            figures: request_figures(record, &p.trace),
            strategy: p.strategy,
            releases: p.releases,
            trace: p.trace,
            first_arrival_ms,
            frames: p.frames,
            element_timed: p.element_timed,
        })
        .collect()
}

/// The lab on `report`.
#[component]
fn RenderLab(report: Arc<Report>) -> impl IntoView {
    let options = candidates(&report);
    if options.is_empty() {
        return view! { <section class="render-lab" data-testid="render-lab"><p class="muted">"No recorded answer to play: the lab needs a request with per-chunk times and text."</p></section> }.into_any();
    }
    let picked = RwSignal::new(options[0].0);
    let pace = RwSignal::new(Smoothing::DEFAULT.chars_per_s);
    let buffer = RwSignal::new(Smoothing::DEFAULT.prebuffer_ms);
    let results = RwSignal::new(Vec::<Outcome>::new());
    let plays = RwSignal::new(0u32);
    let running = RwSignal::new(false);
    let error = RwSignal::new(None::<String>);
    let refs: [NodeRef<Div>; 4] = std::array::from_fn(|_| NodeRef::new());
    let playing: StoredValue<Playing, LocalStorage> = StoredValue::new_local(Rc::default());
    let report_for_play = Arc::clone(&report);
    let play = move |_| {
        let smoothing = Smoothing {
            chars_per_s: pace.get_untracked(),
            prebuffer_ms: buffer.get_untracked(),
            max_lag_ms: Smoothing::DEFAULT.max_lag_ms.max(buffer.get_untracked()),
        };
        if let Err(e) = smoothing.check() {
            error.set(Some(e.to_string()));
            return;
        }
        error.set(None);
        let record = report_for_play.requests[picked.get_untracked()].clone();
        let arrived = arrivals(&record);
        let origin = now_ms();
        let strategies = [
            Strategy::RerenderAll,
            Strategy::Incremental,
            Strategy::PerFrame,
            Strategy::Smoothed(smoothing),
        ];
        let mut lanes = Vec::new();
        let mut due = Vec::new();
        for (lane, (s, node)) in strategies.into_iter().zip(refs).enumerate() {
            let Some(el) = node.get_untracked() else {
                return;
            };
            let Some(surface) = DomSurface::new(
                AsRef::<web_sys::Element>::as_ref(&el).clone(),
                s.mode(),
                origin,
            ) else {
                return;
            };
            let releases = release(&arrived, s.pacing(FRAME_MS));
            due.extend(releases.iter().enumerate().map(|(i, r)| (r.at_ms, lane, i)));
            lanes.push((s, releases, surface));
        }
        due.sort_by(|a, b| a.0.total_cmp(&b.0));
        results.set(Vec::new());
        running.set(true);
        let slot = playing.get_value();
        *slot.borrow_mut() = Some(Play {
            origin,
            lanes,
            due,
            next: 0,
            frames: FrameWatch::start(origin),
        });
        let done = Callback::new(move |played| {
            results.set(outcomes(&record, played));
            running.set(false);
            plays.update(|n| *n += 1);
        });
        tick(slot, done);
    };
    on_cleanup(move || {
        if let Some(p) = playing.try_get_value() {
            p.borrow_mut().take();
        }
    });
    let requests = Arc::clone(&report);
    let meaningful = Signal::derive(move || {
        requests
            .requests
            .get(picked.get())
            .is_some_and(|r| !r.metrics.opener_text.is_empty())
    });
    let pick = {
        let report = Arc::clone(&report);
        options
            .iter()
            .map(|&(i, len)| {
                let r = &report.requests[i];
                view! { <option value=i.to_string()>{format!("#{} · {} · {len} characters", r.index, r.group)}</option> }
            })
            .collect_view()
    };
    let lanes = Strategy::ALL.into_iter().zip(refs).map(|(s, node)| {
        let id = s.id();
        let figures = move || {
            results
                .get()
                .into_iter()
                .find(|o| o.strategy.id() == id)
                .map(|o| view! { <Figures outcome=o meaningful=meaningful.get() /> })
        };
        view! {
            <div class="lab-lane">
                <h4>{s.label()}</h4>
                <div class="lab-surface" node_ref=node data-testid=format!("lab-surface-{id}") tabindex="0" role="log" aria-label=format!("{} surface", s.label())></div>
                {figures}
            </div>
        }
    }).collect_view();
    // A run opened from a link (or a file) was measured elsewhere: the lab's paints are this
    // browser's.
    let elsewhere = (report.shared.is_some() || report.vantage.is_some()).then(|| view! {
        <p class="muted" data-testid="lab-elsewhere">{format!(
            "This run was measured elsewhere{}: the lab re-plays its recorded arrivals here, so the paint figures below are this browser's, not those of the browser that measured it.",
            report.user_agent.as_deref().map_or(String::new(), |ua| format!(" (in {})", ttft_core::report::browser_name(ua)))
        )}</p>
    });
    view! {
        <section class="render-lab" data-testid="render-lab">
            <h3>"Rendering lab"</h3>
            <p class="muted">"One recorded answer, played at its recorded times through the four ways a chat UI draws a stream, with no network. The release schedule is the same on every play; render costs and paint times are measured in this browser now. The four share one main thread."</p>
            {elsewhere}
            <div class="replay-controls">
                <label>"Request " <select data-testid="lab-request" on:change=move |ev| { if let Ok(i) = event_target_value(&ev).parse() { picked.set(i) } } prop:value=move || picked.get().to_string()>{pick}</select></label>
                <label>"Smoothing pace (characters/s) " <input type="number" min="1" step="10" data-testid="lab-smooth-pace" prop:value=move || pace.get().to_string() on:change=move |ev| pace.set(event_target_value(&ev).parse().unwrap_or(f64::NAN)) /></label>
                <label>"buffer (ms) " <input type="number" min="0" step="10" data-testid="lab-smooth-buffer" prop:value=move || buffer.get().to_string() on:change=move |ev| buffer.set(event_target_value(&ev).parse().unwrap_or(f64::NAN)) /></label>
                <button data-testid="lab-play" on:click=play disabled=move || running.get()>"▶ Play"</button>
                <span data-testid="lab-status" data-plays=move || plays.get().to_string() data-running=move || running.get().to_string()>
                    {move || if running.get() { "playing…".to_owned() } else { format!("{} plays", plays.get()) }}
                </span>
            </div>
            {move || error.get().map(|e| view! { <p class="error" data-testid="lab-error">{e}</p> })}
            <div class="lab-lanes">{lanes}</div>
            {move || {
                let outcomes = results.get();
                let traces: Vec<(&str, &PaintTrace)> =
                    outcomes.iter().map(|o| (o.strategy.label(), &o.trace)).collect();
                ttft_charts::render_cost_chart(&traces).map(|spec| view! {
                    <crate::components::charts::ChartGrid specs=Signal::derive(move || vec![spec.clone()]) file_stem="render-cost".to_owned() testid="lab-render-cost" started_ms=now_ms() />
                })
            }}
        </section>
    }.into_any()
}

lazy_part! {
    /// The rendering lab of `report`. Lazy: its code (the markdown renderer, the surfaces)
    /// loads when the lab is first opened.
    async fn render_lab(report: Arc<Report>) -> AnyView {
        view! { <RenderLab report=report /> }.into_any()
    }
}

/// The button that opens the rendering lab under a report (`data-testid="open-lab"`).
#[component]
pub fn OpenLab(
    /// The report whose answers the lab plays.
    report: Arc<Report>,
) -> impl IntoView {
    let open = RwSignal::new(false);
    view! {
        <button data-testid="open-lab" on:click=move |_| open.update(|o| *o = !*o)>
            {move || if open.get() { "Close the rendering lab" } else { "Rendering lab: how should a chat UI draw these answers?" }}
        </button>
        {move || open.get().then(|| {
            let report = Arc::clone(&report);
            view! { <crate::components::Lazily part=render_lab(report) what="the rendering lab" /> }
        })}
    }
}
