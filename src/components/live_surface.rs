//! The live chat surface (#31): a choice of how answers are drawn while a run streams (off, or
//! one of the four strategies; smoothing with its pace and buffer), kept on this device, and
//! the element they are drawn into ([`crate::browser::drawing`] draws; the report shows what
//! was painted, when).

use leptos::prelude::*;
use ttft_render::{Smoothing, Strategy};

use crate::actions;
use crate::state::use_studio;

/// The smoothing pace and buffer of the live surface, shown while smoothing is chosen; a value
/// that cannot pace a stream is refused with what to change.
#[component]
fn SmoothingSettings(
    /// The smoothing chosen.
    smoothing: Smoothing,
) -> impl IntoView {
    let studio = use_studio();
    let error = RwSignal::new(None::<String>);
    // `pace`: the pace changed, else the buffer.
    let set = move |pace: bool, value: String| {
        let mut s = smoothing;
        let v = value.trim().parse().unwrap_or(f64::NAN);
        if pace {
            s.chars_per_s = v;
        } else {
            s.prebuffer_ms = v;
        }
        // A buffer above the longest wait moves the longest wait up with it.
        s.max_lag_ms = s.max_lag_ms.max(s.prebuffer_ms);
        match s.check() {
            Ok(()) => {
                error.set(None);
                actions::settings::choose_surface(studio, Some(Strategy::Smoothed(s)));
            }
            Err(e) => error.set(Some(e.to_string())),
        }
    };
    view! {
        <label class="inline">"pace (characters/s) "
            <input type="number" min="1" step="10" data-testid="surface-pace" value=smoothing.chars_per_s.to_string()
                on:change=move |ev| set(true, event_target_value(&ev)) />
        </label>
        <label class="inline">"buffer (ms) "
            <input type="number" min="0" step="10" data-testid="surface-buffer" value=smoothing.prebuffer_ms.to_string()
                on:change=move |ev| set(false, event_target_value(&ev)) />
        </label>
        {move || error.get().map(|e| view! { <p class="error" data-testid="surface-error">{e}</p> })}
    }
}

/// The strategy choice and, when one is chosen, the surface.
#[component]
pub fn LiveSurface() -> impl IntoView {
    let studio = use_studio();
    let chosen = move || studio.surface.get().map_or("off", Strategy::id);
    let choose = move |ev| {
        let id = event_target_value(&ev);
        let strategy = Strategy::ALL.into_iter().find(|s| s.id() == id);
        actions::settings::choose_surface(studio, strategy);
    };
    let smoothing = Memo::new(move |_| match studio.surface.get() {
        Some(Strategy::Smoothed(s)) => Some(s),
        _ => None,
    });
    view! {
        <div class="live-surface-settings">
            <label>"Draw answers while running, as a chat UI would: "
                <select data-testid="surface-strategy" on:change=choose prop:value=chosen>
                    <option value="off">"off"</option>
                    {Strategy::ALL.map(|s| view! { <option value=s.id()>{s.label()}</option> }).collect_view()}
                </select>
            </label>
            {move || smoothing.get().map(|s| view! { <SmoothingSettings smoothing=s /> })}
            <span class="muted">" One answer at a time is drawn; the report says when its first token was painted. Network times are stamped in a worker either way."</span>
        </div>
        <Show when=move || studio.surface.get().is_some()>
            <div class="lab-surface live-surface" data-testid="live-surface" tabindex="0" role="log" aria-label="Live answer"></div>
        </Show>
    }
}
