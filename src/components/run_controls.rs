//! Start and cancel runs; live progress.

use leptos::prelude::*;

use crate::actions;
use crate::state::{StudioStateStoreFields, use_studio};

/// The start/cancel buttons and the progress bar.
#[component]
pub fn RunControls() -> impl IntoView {
    let studio = use_studio();
    let running = move || actions::is_running(studio);
    let progress = move || {
        studio
            .state
            .live()
            .with(|l| l.as_ref().map(|l| l.progress.clone()))
    };
    view! {
        <div class="run-controls">
            <button class="primary" data-testid="start-run" disabled=running on:click=move |_| actions::start_run(studio)>"Run"</button>
            <button data-testid="cancel-run" disabled=move || !running() on:click=move |_| actions::cancel_run(studio)>"Cancel"</button>
            {move || progress().map(|p| view! {
                <progress data-testid="progress" max=p.total.to_string() value=p.done.to_string()></progress>
                <span data-testid="progress-text">{format!("{}/{} {}", p.done, p.total, p.phase)}</span>
            })}
        </div>
    }
}
