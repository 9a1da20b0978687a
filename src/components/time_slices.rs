//! A run over time: its figures per time window ([`ttft_core::time_slices`]) as three charts
//! and a compact table, and the steady-state choice of one report view ("use the steady state
//! for the headline"): the core finds the steady state and restricts the run to it
//! ([`restrict_to_steady`]); this view only shows what it found, and why when it found none.
//! The choice belongs to the view, not to the run: it is not saved, and a link or a reload
//! opens with the whole run's headline.

use std::sync::{Arc, OnceLock};

use leptos::prelude::*;
use ttft_core::compare::Unit;
use ttft_core::report::Report;
use ttft_core::time_slices::{
    NoSteadyState, SteadyState, TimeSlices, TimeWindow, restrict_to_steady, steady_state,
    time_slices,
};
use ttft_core::uncertainty::Estimate;

use crate::components::compare_table::range;
use crate::format::{ms, per_s};
use crate::state::use_studio;

/// Windows a run needs for its per-window figures to be shown.
pub const MIN_WINDOWS: usize = 3;

/// What the core found over a run's time: its windows, its steady state (or why none), and the
/// run restricted to it (made when first asked for).
pub struct OverTime {
    /// The run's time slices at the user's level.
    pub slices: TimeSlices,
    /// Its steady state, or why it has none.
    pub steady: Result<SteadyState, NoSteadyState>,
    restricted: OnceLock<Option<Arc<Report>>>,
}

impl OverTime {
    /// The time slices and steady state of `report`, intervals at `level`.
    pub fn of(report: &Report, level: f64) -> Self {
        let slices = time_slices(report, None, level);
        let steady = steady_state(&slices);
        Self {
            slices,
            steady,
            restricted: OnceLock::new(),
        }
    }
}

/// One report view's steady-state choice: whether its headline is the steady state's, and
/// what the core found (computed once, when a complete run's view first asks).
#[derive(Clone, Copy)]
pub struct SteadyChoice {
    /// Whether the headline is the steady state's.
    pub on: RwSignal<bool>,
    found: StoredValue<Option<Arc<OverTime>>>,
}

impl SteadyChoice {
    /// A new choice (off), given to the view's children as context.
    pub fn provide() -> Self {
        let choice = Self {
            on: RwSignal::new(false),
            found: StoredValue::new(None),
        };
        provide_context(choice);
        choice
    }

    /// The view's choice, or a new one when none was provided.
    pub fn use_or_new() -> Self {
        use_context::<Self>().unwrap_or_else(Self::provide)
    }

    /// What the core found over `report`'s time (at the user's level when first asked).
    pub fn over_time(self, report: &Report) -> Arc<OverTime> {
        if let Some(found) = self.found.get_value() {
            return found;
        }
        let level = use_studio().confidence.get_untracked().level;
        let found = Arc::new(OverTime::of(report, level));
        self.found.set_value(Some(Arc::clone(&found)));
        found
    }

    /// The report whose headline the view shows: the run restricted to its steady state when
    /// the choice is on and one was found, else `None` (the whole run). Tracks the choice.
    pub fn headline_report(self, report: &Report) -> Option<Arc<Report>> {
        if !self.on.get() {
            return None;
        }
        let found = self.over_time(report);
        found
            .restricted
            .get_or_init(|| {
                found
                    .steady
                    .as_ref()
                    .ok()
                    .map(|s| Arc::new(restrict_to_steady(report, s)))
            })
            .clone()
    }
}

/// The steady-state checkbox (`steady-state`) and, when it is ticked, the core's sentence of
/// what the steady state left out, or why there is none (`steady-state-note`).
#[component]
pub fn SteadyStateChoice(
    /// The run.
    report: Arc<Report>,
) -> impl IntoView {
    let choice = SteadyChoice::use_or_new();
    let on = choice.on;
    let note = move || {
        on.get().then(|| {
            let found = choice.over_time(&report);
            let (text, steady) = match &found.steady {
                Ok(s) => (s.sentence(), true),
                Err(why) => (why.to_string(), false),
            };
            view! { <p class="muted" data-testid="steady-state-note" data-found=steady.to_string()>{text}</p> }
        })
    };
    view! {
        <div class="steady-choice">
            <label class="inline" title="Find where TTFT and throughput settle, window by window, and leave the requests sent before it (the warm-up) out of the headline; kept in the requests table">
                <input type="checkbox" data-testid="steady-state" prop:checked=move || on.get()
                    on:change=move |ev| on.set(event_target_checked(&ev)) />
                "Use the steady state for the headline"
            </label>
            {note}
        </div>
    }
}

/// `812 ms [790–850 ms]`, `1.20 s · needs 368`, or `—`.
fn estimate_cell(e: Option<Estimate>) -> String {
    match e {
        None => "—".to_owned(),
        Some(e) => match (e.interval, e.needs) {
            (Some(i), _) => format!("{} [{}]", ms(Some(e.value)), range(Unit::Ms, i.lo, i.hi)),
            (None, Some(n)) => format!("{} · needs {n}", ms(Some(e.value))),
            (None, None) => ms(Some(e.value)),
        },
    }
}

/// A window's row of the table.
fn window_row(w: &TimeWindow) -> impl IntoView + use<> {
    view! {
        <tr data-window=w.index>
            <td>{format!("{:.1}–{:.1} s", w.start_ms / 1e3, w.end_ms / 1e3)}</td>
            <td title=format!("{} of them in the latency figures, {} failed", w.measured, w.failed)>{w.started}</td>
            <td data-col="ttft-p50">{estimate_cell(w.ttft_p50)}</td>
            <td data-col="ttft-p99">{estimate_cell(w.ttft_p99)}</td>
            <td data-col="itl-p99">{estimate_cell(w.itl_p99)}</td>
            <td>{per_s(w.output_tokens_per_s())}</td>
            <td>{format!("{:.1} (max {})", w.in_flight_mean, w.in_flight_max)}</td>
        </tr>
    }
}

/// The run over time (`time-slices`): latency, throughput and requests in flight per window,
/// the steady state marked while the view uses it, and the windows' table; for a run of fewer
/// than [`MIN_WINDOWS`] windows, why there is none.
#[component]
pub fn TimeSlicesView(
    /// The run.
    report: Arc<Report>,
) -> impl IntoView {
    let choice = SteadyChoice::use_or_new();
    let found = choice.over_time(&report);
    let slices = &found.slices;
    let n = slices.windows.len();
    if n < MIN_WINDOWS {
        let why = format!(
            "Figures per time window need at least {MIN_WINDOWS} windows of {:.0} s; this run spans {n}. Run longer to see it over time.",
            slices.window_ms / 1e3
        );
        return view! {
            <section data-testid="time-slices" data-windows=n>
                <h3>"Over time"</h3>
                <p class="muted" data-testid="time-slices-why">{why}</p>
            </section>
        }
        .into_any();
    }
    let on = choice.on;
    let specs = {
        let found = Arc::clone(&found);
        Signal::derive(move || {
            let steady = if on.get() {
                found.steady.as_ref().ok()
            } else {
                None
            };
            ttft_charts::time_slices_charts(&found.slices, steady)
        })
    };
    let level = slices.level * 100.0;
    let stem = report.title.replace([' ', ':', '·', '/'], "_");
    let started = crate::browser::clock::now_ms();
    view! {
        <section data-testid="time-slices" data-windows=n>
            <h3>"Over time"</h3>
            <crate::components::charts::ChartGrid specs=specs file_stem=stem testid="time-slices-charts" started_ms=started />
            <table data-testid="time-slices-table">
                <caption class="muted">{format!(
                    "{n} windows of {:.0} s. A request's latency counts in the window it was sent in; tokens, completions and requests in flight in the windows they happened in. [{level:.0} % interval], or the requests a window needs for one.",
                    slices.window_ms / 1e3
                )}</caption>
                <thead><tr><th>"Window"</th><th>"Requests"</th><th>"TTFT P50"</th><th>"TTFT P99"</th><th>"ITL P99"</th><th>"Output"</th><th>"In flight"</th></tr></thead>
                <tbody>{slices.windows.iter().map(window_row).collect_view()}</tbody>
            </table>
        </section>
    }
    .into_any()
}
