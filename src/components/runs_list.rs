//! Saved runs: reopen, rename, delete, compare, and import result files.

use leptos::prelude::*;

use crate::state::{Studio, use_studio};

/// Reads the chosen files and adds their runs (studio report JSON, vLLM bench, GuideLLM).
fn import_files(studio: Studio, files: web_sys::FileList) {
    for i in 0..files.length() {
        let Some(file) = files.get(i) else { continue };
        leptos::task::spawn_local(async move {
            let name = file.name();
            let text = match wasm_bindgen_futures::JsFuture::from(file.text()).await {
                Ok(t) => t.as_string().unwrap_or_default(),
                Err(_) => {
                    studio.notice.set(Some(format!(
                        "could not read {name}: the browser refused the file"
                    )));
                    return;
                }
            };
            match ttft_core::import::import(&text) {
                Ok((_, reports)) => {
                    let n = reports.len();
                    studio.runs.update(|r| {
                        for rep in reports.into_iter().rev() {
                            r.insert(0, rep);
                        }
                    });
                    studio.compare.set(Vec::new());
                    studio.selected.set(Some(0));
                    let warn = studio.runs.with_untracked(|r| crate::storage::save_runs(r));
                    studio.notice.set(Some(
                        warn.unwrap_or_else(|| format!("imported {n} run(s) from {name}")),
                    ));
                }
                Err(e) => studio
                    .notice
                    .set(Some(format!("could not import {name}: {e}"))),
            }
        });
    }
}

/// The list of saved runs.
#[component]
pub fn RunsList() -> impl IntoView {
    let studio = use_studio();
    let save = move || {
        if let Some(w) = studio.runs.with_untracked(|r| crate::storage::save_runs(r)) {
            studio.notice.set(Some(w));
        }
    };
    view! {
        <fieldset class="panel runs" data-testid="runs-list">
            <legend>"Runs"</legend>
            <label class="import">"Import results (studio JSON, vllm bench serve --save-detailed, GuideLLM)"
                <input type="file" accept=".json,application/json" multiple data-testid="import-file"
                    on:change=move |ev| {
                        let input: web_sys::HtmlInputElement = event_target(&ev);
                        if let Some(files) = input.files() { import_files(studio, files) }
                        input.set_value("");
                    } />
            </label>
            {move || studio.runs.with(|r| r.is_empty()).then(|| view! { <p class="muted">"No saved runs yet."</p> })}
            <ul>
                {move || studio.runs.with(|runs| runs.iter().enumerate().map(|(i, r)| {
                    let title = r.title.clone();
                    view! {
                        <li class:selected=move || studio.selected.get() == Some(i) data-testid="run-item">
                            <input type="checkbox" title="compare" data-testid="compare-run"
                                prop:checked=move || studio.compare.with(|c| c.contains(&i))
                                on:change=move |ev| {
                                    let on = event_target_checked(&ev);
                                    studio.compare.update(|c| { c.retain(|x| *x != i); if on && c.len() < 4 { c.push(i) } });
                                } />
                            <button class="link" on:click=move |_| studio.selected.set(Some(i))>{title.clone()}</button>
                            <button class="link" title="rename" on:click=move |_| {
                                let w = web_sys::window().expect("window");
                                if let Ok(Some(t)) = w.prompt_with_message_and_default("Rename run", &studio.runs.with_untracked(|r| r[i].title.clone())) {
                                    studio.runs.update(|r| r[i].title = t);
                                    save();
                                }
                            }>"✎"</button>
                            <button class="link" title="delete" data-testid="delete-run" on:click=move |_| {
                                studio.runs.update(|r| { r.remove(i); });
                                studio.selected.set(None);
                                studio.compare.set(Vec::new());
                                save();
                            }>"✕"</button>
                        </li>
                    }
                }).collect_view())}
            </ul>
        </fieldset>
    }
}
