//! The saturation stop (#32): its setting in the scenario panel, and in a run's report what it
//! did: the evidence a run stopped on (the windows' median TTFT rising with its intervals,
//! completions behind the plan), that it watched and found none, or that it was off.

use std::sync::Arc;

use leptos::prelude::*;
use ttft_core::report::Report;
use ttft_core::report::saturation::{Saturation, SaturationCheck};
use ttft_core::uncertainty::Interval;

use crate::actions::settings::{saturation_stop_enabled, set_saturation_stop};

/// The checkbox that turns the stop on or off for new runs (`saturation-stop-enabled`), kept on
/// this device.
#[component]
pub fn SaturationStopSetting() -> impl IntoView {
    let on = RwSignal::new(saturation_stop_enabled());
    view! {
        <label class="inline" title="An open-loop run (a rate, a load shape, a trace) stops on its own when TTFT rises window over window while completions fall behind the plan; what was measured is kept">
            <input type="checkbox" data-testid="saturation-stop-enabled" prop:checked=move || on.get()
                on:change=move |ev| {
                    let v = event_target_checked(&ev);
                    on.set(v);
                    set_saturation_stop(v);
                } />
            "stop when the server is past saturation"
        </label>
    }
}

/// `1.2 s`, `340 ms`.
fn duration(ms: f64) -> String {
    if ms >= 1_000.0 {
        format!("{:.2} s", ms / 1e3)
    } else {
        format!("{ms:.0} ms")
    }
}

/// `[0.9–1.4 s]`, or what an interval needs.
fn interval(i: Option<&Interval>, n: usize) -> String {
    match i {
        Some(i) => format!("[{}–{}]", duration(i.lo), duration(i.hi)),
        None => format!("(from {n} requests: an interval needs 6)"),
    }
}

/// The evidence's windows as a table: median TTFT with its interval, completions against the
/// plan's sends.
fn windows_table(s: &Saturation) -> impl IntoView + use<> {
    let rows = s
        .windows
        .iter()
        .map(|w| {
            view! {
                <tr>
                    <td>{format!("{:.1}–{:.1} s", w.start_ms / 1e3, w.end_ms / 1e3)}</td>
                    <td data-testid="saturation-ttft">{duration(w.ttft_p50_ms)}" "{interval(w.ttft_p50_interval.as_ref(), w.completed)}</td>
                    <td data-testid="saturation-completed">{w.completed.to_string()}</td>
                    <td>{format!("{:.0}", w.planned)}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="compact">
            <thead><tr><th>"window"</th><th>"median TTFT [95 %]"</th><th>"completed"</th><th>"planned sends"</th></tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
}

/// What the saturation stop did in this run (nothing for a run it did not watch).
#[component]
pub fn SaturationNote(
    /// The report.
    report: Arc<Report>,
) -> impl IntoView {
    let check = report.saturation.clone()?;
    let kept = report.measured().count();
    let sentence = check.sentence(kept);
    Some(match check {
        SaturationCheck::Stopped(s) => {
            let completed = s.completed_interval.map_or(String::new(), |i| {
                format!(" [{:.1}–{:.1}, 95 %]", i.lo, i.hi)
            });
            view! {
                <section class="warning" data-testid="saturation-stop">
                    <h3>"Stopped: the server is past saturation"</h3>
                    <p data-testid="saturation-sentence">{sentence}</p>
                    <p class="muted" data-testid="saturation-behind">{format!(
                        "Completions {:.1} req/s{completed} against {:.1} req/s sent one request duration ({}) earlier: {:.0} requests behind the plan over the last {} windows; median TTFT's rise has Mann–Kendall S = {}, one-sided p = {:.3}. Stopped at {:.1} s.",
                        s.completed_per_s, s.sent_per_s, duration(s.duration_ms), s.behind(), s.windows.len(), s.trend_s, s.trend_p, s.at_ms / 1e3
                    )}</p>
                    {windows_table(&s)}
                </section>
            }
            .into_any()
        }
        _ => view! { <p class="muted" data-testid="saturation-check">{sentence}</p> }.into_any(),
    })
}
