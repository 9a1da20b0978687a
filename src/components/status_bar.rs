//! The status line: clock resolution and isolation, the offline copy, and notices.

use leptos::prelude::*;

use crate::actions::studio::dismiss_notice;
use crate::components::offline::OfflineCopyStatus;
use crate::state::{StudioStateStoreFields, use_studio};

/// Clock resolution (every number depends on it) and the latest notice.
#[component]
pub fn StatusBar() -> impl IntoView {
    let studio = use_studio();
    let state = studio.state;
    let clock = move || match state.clock().get() {
        None => "clock: measuring…".to_owned(),
        Some(c) => format!(
            "clock resolution {:.0} µs · {}",
            c.resolution_ms * 1000.0,
            if c.isolated {
                "cross-origin isolated"
            } else {
                "not isolated: timings are coarser (serve with COOP/COEP)"
            }
        ),
    };
    view! {
        <div class="status">
            <span data-testid="clock-status">{clock}</span>
            <OfflineCopyStatus />
            {move || state.notice().get().map(|n| view! {
                <span class="notice" data-testid="notice">{n}
                    <button class="link" on:click=move |_| dismiss_notice(studio)>"dismiss"</button>
                </span>
            })}
        </div>
    }
}
