//! The offline copy in the page: the banner that says a new build waits (never a silent stale
//! app), the notice shown while the browser is offline, and the offline copy's state with its
//! on/off switch in the status line. They read [`UseOfflineCopy`] from context.

use leptos::prelude::*;

use crate::browser::service_worker::{OfflineCopy, UseOfflineCopy};
use crate::state::use_studio;

/// "A new version of the studio is available — reload", while a newer build waits. Reload
/// waits for a running benchmark to end (it would lose the run).
#[component]
pub fn UpdateBanner() -> impl IntoView {
    let offline = expect_context::<UseOfflineCopy>();
    let studio = use_studio();
    let running = move || crate::actions::studio::is_running(studio);
    move || {
        (offline.status.get() == OfflineCopy::UpdateWaiting).then(|| {
            view! {
                <div class="banner update" role="status" data-testid="update-available">
                    "A new version of the studio is available. "
                    <button class="primary" data-testid="update-reload" disabled=running
                        title=move || if running() { "after the run: reloading now would lose it" } else { "" }
                        on:click=move |_| offline.reload_into_update()>"Reload"</button>
                    " (saved runs are kept)"
                </div>
            }
        })
    }
}

/// Shown while the browser is offline: what still works and what does not.
#[component]
pub fn OfflineNotice() -> impl IntoView {
    let offline = expect_context::<UseOfflineCopy>();
    move || {
        (!offline.online.get()).then(|| {
            let ready = offline.status.get() == OfflineCopy::Ready;
            view! {
                <div class="banner offline" role="status" data-testid="offline-notice">
                    "You are offline. Saved runs, share links and imports work"
                    {if ready { "" } else { " while this page stays open" }}
                    "; running a benchmark needs its endpoint."
                </div>
            }
        })
    }
}

/// The offline copy's state, and the switch to turn it off or on.
#[component]
pub fn OfflineCopyStatus() -> impl IntoView {
    let offline = expect_context::<UseOfflineCopy>();
    let label = move || match offline.status.get() {
        OfflineCopy::Starting => "offline copy: …".to_owned(),
        OfflineCopy::Unsupported => {
            "offline copy: not available here (needs https or localhost)".to_owned()
        }
        OfflineCopy::Off => "offline copy: off".to_owned(),
        OfflineCopy::Installing => "offline copy: saving…".to_owned(),
        OfflineCopy::Ready => "offline copy: ready (opens without the network)".to_owned(),
        OfflineCopy::UpdateWaiting => "offline copy: a new version waits".to_owned(),
        OfflineCopy::Failed(why) => format!("offline copy failed: {why}"),
    };
    let switchable = move || {
        !matches!(
            offline.status.get(),
            OfflineCopy::Unsupported | OfflineCopy::Starting
        )
    };
    let is_off = move || offline.status.get() == OfflineCopy::Off;
    view! {
        <span class="offline-copy" data-testid="offline-copy">{label}
            <Show when=switchable>
                <button class="link" data-testid="offline-copy-toggle"
                    title="The offline copy keeps the app's own files (never your runs' requests) so the studio opens without the network."
                    on:click=move |_| offline.set_enabled(is_off())>
                    {move || if is_off() { "turn on" } else { "turn off" }}
                </button>
            </Show>
        </span>
    }
}
