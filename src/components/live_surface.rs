//! The live chat surface (#31): a choice of how answers are drawn while a run streams (off, or
//! one of the four strategies), kept on this device, and the element they are drawn into
//! ([`crate::browser::drawing`] draws; the report shows what was painted, when).

use leptos::prelude::*;
use ttft_render::Strategy;

use crate::actions;
use crate::state::use_studio;

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
    view! {
        <div class="live-surface-settings">
            <label>"Draw answers while running, as a chat UI would: "
                <select data-testid="surface-strategy" on:change=choose prop:value=chosen>
                    <option value="off">"off"</option>
                    {Strategy::ALL.map(|s| view! { <option value=s.id()>{s.label()}</option> }).collect_view()}
                </select>
            </label>
            <span class="muted">" One answer at a time is drawn; the report says when its first token was painted. Network times are stamped in a worker either way."</span>
        </div>
        <Show when=move || studio.surface.get().is_some()>
            <div class="lab-surface live-surface" data-testid="live-surface" tabindex="0" role="log" aria-label="Live answer"></div>
        </Show>
    }
}
