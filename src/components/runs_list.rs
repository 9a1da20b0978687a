//! Saved runs: reopen, rename, delete, tick to compare, and import result files.

use leptos::prelude::*;
use reactive_stores::Field;

use crate::actions;
use crate::state::{SavedRun, Shown, StudioStateStoreFields, use_studio};

/// One saved run in the list.
#[component]
fn RunItem(
    /// The run (a keyed field of the store: it follows the run wherever the list moves it).
    run: Field<SavedRun>,
) -> impl IntoView {
    let studio = use_studio();
    let id = run.with_untracked(|r| r.id);
    let title = move || run.with(|r| r.report.title.clone());
    let rename = move |_| {
        let Some(w) = web_sys::window() else { return };
        if let Ok(Some(t)) = w.prompt_with_message_and_default("Rename run", &title()) {
            actions::rename_run(studio, id, t);
        }
    };
    view! {
        <li class:selected=move || studio.state.shown().get() == Shown::Run(id) data-testid="run-item" data-run-id=id.0.to_string()>
            <input type="checkbox" title="compare" data-testid="compare-run"
                prop:checked=move || studio.state.compare().with(|c| c.contains(&id))
                on:change=move |ev| actions::set_compared(studio, id, event_target_checked(&ev)) />
            <button class="link" data-testid="open-run" on:click=move |_| actions::show_run(studio, id)>{title}</button>
            <button class="link" title="rename" on:click=rename>"✎"</button>
            <button class="link" title="delete" data-testid="delete-run" on:click=move |_| actions::delete_run(studio, id)>"✕"</button>
        </li>
    }
}

/// The list of saved runs.
#[component]
pub fn RunsList() -> impl IntoView {
    let studio = use_studio();
    let runs = studio.state.runs();
    view! {
        <fieldset class="panel runs" data-testid="runs-list">
            <legend>"Runs"</legend>
            <label class="import">"Import results (studio JSON, vllm bench serve --save-detailed, GuideLLM)"
                <input type="file" accept=".json,application/json" multiple data-testid="import-file"
                    on:change=move |ev| {
                        let input: web_sys::HtmlInputElement = event_target(&ev);
                        if let Some(files) = input.files() { actions::import_files(studio, files) }
                        input.set_value("");
                    } />
            </label>
            <Show when=move || runs.with(Vec::is_empty)>
                <p class="muted">"No saved runs yet."</p>
            </Show>
            <ul>
                <For each=move || runs key=|run| run.with(|r| r.id) let:run>
                    <RunItem run=run.into() />
                </For>
            </ul>
        </fieldset>
    }
}
