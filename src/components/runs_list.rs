//! Saved runs: reopen, rename, delete, tick to compare, import result files; each run's place in
//! storage (saving, its size, or "not saved" with a way to save it), what the browser reports
//! about storage, and the choice the user makes when a save does not fit.

use leptos::prelude::*;
use reactive_stores::Field;

use ttft_core::quota::{bytes_text, quota_advice};

use crate::actions::import::import_files;
use crate::actions::storage::{
    delete_damaged, delete_run, keep_unsaved, make_room_and_retry, rename_run, save_run,
};
use crate::actions::studio::{set_compared, show_run};
use crate::state::{RunId, SaveState, SavedRun, Shown, StudioStateStoreFields, use_studio};

/// `data-saved` of a run: `saved`, `saving` (also while storage opens), `failed` or `unsaved`.
fn save_label(state: &SaveState) -> &'static str {
    match state {
        SaveState::Saved => "saved",
        SaveState::Saving | SaveState::Pending => "saving",
        SaveState::Failed(_) => "failed",
        SaveState::Unsaved => "unsaved",
    }
}

/// One saved run in the list.
#[component]
fn RunItem(
    /// The run (a keyed field of the store: it follows the run wherever the list moves it).
    run: Field<SavedRun>,
) -> impl IntoView {
    let studio = use_studio();
    let id = run.with_untracked(|r| r.id);
    let title = move || run.with(|r| r.report.title.clone());
    let stored = move || {
        studio
            .state
            .stored()
            .with(|m| m.get(&id).cloned().unwrap_or_default())
    };
    let rename = move |_| {
        if let Some(t) = crate::browser::prompt("Rename run", &title()) {
            rename_run(studio, id, t);
        }
    };
    let status = move || {
        let s = stored();
        match s.state {
            SaveState::Saved => view! {
                <span class="run-size muted" data-testid="run-size" title="stored in this browser">
                    {s.bytes.map(bytes_text).unwrap_or_default()}
                </span>
            }
            .into_any(),
            SaveState::Saving | SaveState::Pending => {
                view! { <span class="muted" data-testid="run-saving">"saving…"</span> }.into_any()
            }
            SaveState::Failed(reason) => view! {
                <span class="not-saved" data-testid="not-saved" title=reason>"not saved"</span>
                <button class="link" data-testid="save-run" on:click=move |_| save_run(studio, id)>"save"</button>
            }
            .into_any(),
            SaveState::Unsaved => view! {
                <span class="not-saved" data-testid="not-saved" title="opened from a link: not in this browser's storage">"not saved"</span>
                <button class="link" data-testid="save-run" on:click=move |_| save_run(studio, id)>"save"</button>
            }
            .into_any(),
        }
    };
    view! {
        <li class:selected=move || studio.state.shown().get() == Shown::Run(id) data-testid="run-item" data-run-id=id.0.to_string()
            data-saved=move || save_label(&stored().state)
            data-bytes=move || stored().bytes.map(|b| b.to_string())
            data-save-ms=move || stored().save_ms.map(|t| format!("{t:.1}"))
            data-encode-ms=move || stored().encode_ms.map(|t| format!("{t:.1}"))
            data-load-ms=move || stored().load_ms.map(|t| format!("{t:.1}"))>
            <input type="checkbox" title="compare" aria-label=move || format!("compare {}", title()) data-testid="compare-run"
                prop:checked=move || studio.state.compare().with(|c| c.contains(&id))
                on:change=move |ev| set_compared(studio, id, event_target_checked(&ev)) />
            <button class="link" data-testid="open-run" title=title on:click=move |_| show_run(studio, id)>{title}</button>
            {status}
            <button class="link" title="rename" on:click=rename>"✎"</button>
            <button class="link" title="delete" data-testid="delete-run" on:click=move |_| delete_run(studio, id)>"✕"</button>
        </li>
    }
}

/// What the browser reports about storage: usage of quota, and whether it keeps the runs.
#[component]
fn StorageEstimate() -> impl IntoView {
    let status = use_studio().state.storage();
    let text = move || {
        status.with(|s| {
            let mut t = match s.estimate {
                Some(e) => format!(
                    "Storage: {} used of {}",
                    bytes_text(e.usage as u64),
                    bytes_text(e.quota as u64)
                ),
                None => "Storage: the browser gives no estimate".to_owned(),
            };
            t.push_str(match (s.persisted, s.persist_asked) {
                (Some(true), _) => " · persistent: the browser keeps these runs",
                (Some(false), _) => {
                    " · not persistent: the browser may clear runs when space runs low (export what you must keep)"
                }
                (None, true) => " · this browser cannot be asked to keep them",
                (None, false) => "",
            });
            t
        })
    };
    view! {
        <p class="storage-estimate muted" data-testid="storage-estimate"
            data-usage=move || status.with(|s| s.estimate.map(|e| e.usage.to_string()))
            data-quota=move || status.with(|s| s.estimate.map(|e| e.quota.to_string()))
            data-persisted=move || status.with(|s| s.persisted.map(|p| p.to_string()))>
            {text}
        </p>
    }
}

/// A save did not fit: the run stays open, unsaved, and the user chooses which saved runs to
/// delete (sizes shown, nothing ticked for them), then retries, or keeps it unsaved.
#[component]
fn QuotaPanel() -> impl IntoView {
    let studio = use_studio();
    let state = studio.state;
    let picked = RwSignal::new(Vec::<RunId>::new());
    move || {
        let prompt = state.storage().with(|s| s.quota)?;
        let title = state.with_untracked(|s| {
            s.run(prompt.run)
                .map(|r| r.report.title.clone())
                .unwrap_or_default()
        });
        let saved = move || {
            state.with(|s| {
                s.runs
                    .iter()
                    .filter_map(|r| {
                        let st = s.stored.get(&r.id)?;
                        (st.state == SaveState::Saved && r.id != prompt.run)
                            .then(|| (r.id, r.report.title.clone(), st.bytes.unwrap_or(0)))
                    })
                    .collect::<Vec<_>>()
            })
        };
        let advice = move || {
            let sizes: Vec<u64> = picked.with(|p| {
                saved()
                    .into_iter()
                    .filter(|(id, _, _)| p.contains(id))
                    .map(|(_, _, b)| b)
                    .collect()
            });
            let estimate = state.storage().with(|s| s.estimate);
            quota_advice(prompt.needed, estimate, &sizes).text
        };
        Some(view! {
            <section class="quota" data-testid="quota-panel" role="alertdialog">
                <strong>"The browser's storage is full"</strong>
                <p>{format!("“{title}” ({}) is open but not saved. Choose saved runs to delete to make room; nothing is deleted unless you tick it.", bytes_text(prompt.needed))}</p>
                <ul>
                    <For each=saved key=|(id, _, _)| *id let:((id, title, bytes))>
                        <li><label class="inline">
                            <input type="checkbox" data-testid="quota-pick" data-run-id=id.0.to_string()
                                prop:checked=move || picked.with(|p| p.contains(&id))
                                on:change=move |ev| {
                                    let on = event_target_checked(&ev);
                                    picked.update(|p| { p.retain(|x| *x != id); if on { p.push(id) } });
                                } />
                            {title}" "<span class="muted">{bytes_text(bytes)}</span>
                        </label></li>
                    </For>
                </ul>
                <p class="muted" data-testid="quota-advice">{advice}</p>
                <button data-testid="quota-retry" on:click=move |_| {
                    make_room_and_retry(studio, picked.get_untracked());
                    picked.set(Vec::new());
                }>
                    {move || if picked.with(Vec::is_empty) { "Retry saving" } else { "Delete ticked runs and retry" }}
                </button>
                <button class="link" data-testid="quota-keep" on:click=move |_| keep_unsaved(studio)>"Keep it unsaved"</button>
            </section>
        })
    }
}

/// The list of saved runs.
#[component]
pub fn RunsList() -> impl IntoView {
    let studio = use_studio();
    let runs = studio.state.runs();
    let status = studio.state.storage();
    let loading = move || status.with(|s| s.loading);
    // Runs not yet in storage that are on their way there (tests wait for 0).
    let pending = move || {
        studio.state.stored().with(|m| {
            m.values()
                .filter(|s| matches!(s.state, SaveState::Saving | SaveState::Pending))
                .count()
                .to_string()
        })
    };
    // Files or a folder, from either input: read, then the input cleared for the next choice.
    let import_chosen = move |ev: leptos::ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        if let Some(files) = input.files() {
            import_files(studio, crate::browser::files::chosen(&files));
        }
        input.set_value("");
    };
    view! {
        <fieldset class="panel runs" data-testid="runs-list"
            data-loaded=move || loading().is_none().to_string()
            data-load-ms=move || status.with(|s| s.load_ms.map(|t| format!("{t:.1}")))
            data-pending=pending>
            <legend>"Runs"</legend>
            <label class="import">"Import results (studio JSON; timeline JSONL, e.g. every Locust worker's file selected together, merged into one run; vllm bench serve --save-detailed; GuideLLM; AIPerf profile_export.jsonl with profile_export_aiperf.json; SGLang bench_serving --output-details)"
                <input type="file" accept=".json,.jsonl,application/json" multiple data-testid="import-file"
                    on:change=import_chosen />
            </label>
            <label class="import">"…or a result folder (a genai-bench experiment, an AIPerf artifact folder)"
                <input type="file" prop:webkitdirectory=true multiple data-testid="import-folder"
                    on:change=import_chosen />
            </label>
            <QuotaPanel />
            {move || loading().map(|(done, total)| view! {
                <p class="muted" data-testid="runs-loading">{if total == 0 {
                    "Opening saved runs…".to_owned()
                } else {
                    format!("Loading saved runs… {done} of {total}")
                }}</p>
            })}
            <Show when=move || runs.with(Vec::is_empty) && loading().is_none()>
                <p class="muted">"No saved runs yet."</p>
            </Show>
            <ul>
                <For each=move || runs key=|run| run.with(|r| r.id) let:run>
                    <RunItem run=run.into() />
                </For>
            </ul>
            {move || {
                let damaged = status.with(|s| s.damaged.clone());
                (!damaged.is_empty()).then(|| view! {
                    <ul class="damaged" data-testid="damaged-runs">
                        {damaged.into_iter().map(|(id, title, why)| view! {
                            <li data-testid="damaged-run">
                                <span class="not-saved">{format!("could not read run {id} {title}")}</span>
                                <span class="muted">{why}</span>
                                <button class="link" title="delete" on:click=move |_| delete_damaged(studio, id)>"✕"</button>
                            </li>
                        }).collect_view()}
                    </ul>
                })
            }}
            <StorageEstimate />
        </fieldset>
    }
}
