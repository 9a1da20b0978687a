//! Start and cancel runs, calibrate this browser; live progress.

use leptos::prelude::*;

use crate::actions;
use crate::state::{Calibration, StudioStateStoreFields, use_studio};

/// The start/cancel buttons and the progress bar.
#[component]
pub fn RunControls() -> impl IntoView {
    let studio = use_studio();
    let running = move || actions::studio::is_running(studio);
    let busy = move || actions::studio::is_busy(studio);
    let progress = move || {
        studio
            .state
            .live()
            .with(|l| l.as_ref().map(|l| l.progress.clone()))
    };
    view! {
        <div class="run-controls">
            <button class="primary" data-testid="start-run" disabled=busy on:click=move |_| actions::run::start_run(studio)>"Run"</button>
            <button data-testid="cancel-run" disabled=move || !running() on:click=move |_| actions::run::cancel_run(studio)>"Cancel"</button>
            <button data-testid="calibrate" disabled=busy on:click=move |_| actions::calibrate::calibrate_browser(studio)
                title="Runs a short scenario at the concurrency you plan against the built-in reference endpoint and compares this browser's timestamps with the server's ground truth">
                "Calibrate this browser"
            </button>
            {move || progress().map(|p| view! {
                <progress data-testid="progress" max=p.total.to_string() value=p.done.to_string()></progress>
                <span data-testid="progress-text">{format!("{}/{} {}", p.done, p.total, p.phase)}</span>
            })}
        </div>
        {move || studio.state.calibration().get().map(|c| {
            let text = match c {
                Calibration::Running(n) => format!("Calibrating this browser at {n} stream(s) against the reference endpoint's ground truth…"),
                Calibration::Done(r) => r.sentence(),
                Calibration::Failed(why) => format!("Calibration did not finish: {why}."),
            };
            view! { <p class="calibration" data-testid="calibration">{text}</p> }
        })}
    }
}
