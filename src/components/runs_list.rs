//! Saved runs: reopen, rename, delete.

use leptos::prelude::*;

use crate::state::use_studio;

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
