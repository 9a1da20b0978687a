//! Saved runs: [`open_storage`] reads them once the page is up; [`save_run`] writes one run
//! (after a finish or an import, or again after a failure), [`rename_run`] and [`delete_run`]
//! touch only that run's records; a full quota waits for the user's choice
//! ([`make_room_and_retry`], [`keep_unsaved`]). The records themselves are the browser's
//! ([`crate::browser::storage`]); a report is written and read as JSON here, in lazy parts
//! (`write_report`, `decode_report`) the first run or saved run loads.

use std::collections::HashMap;
use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;
use ttft_core::report::Report;

use super::studio::{notify, show_run};
use crate::browser::clock::now_ms;
use crate::browser::storage::{self, Index, RunMeta, StorageError};
use crate::state::{
    QuotaPrompt, RunId, RunStorage, SaveState, SavedRun, Shown, Studio, StudioStateStoreFields,
};

/// Opens run storage once the page is up: moves runs kept by the localStorage format (once),
/// reads the stored index (so new ids clash with none), opens a `#share=` link, then reads the
/// saved runs, newest first, each appearing as it is read (the newest shown if nothing is).
pub async fn open_storage(studio: Studio) {
    let state = studio.state;
    let started = now_ms();
    super::migrate::move_once(studio).await;
    let index = match storage::load_index().await {
        Ok(index) => index,
        Err(e) => {
            let reason = e.to_string();
            notify(studio, reason.clone());
            state.storage().update(|s| s.broken = Some(reason));
            Index::default()
        }
    };
    storage_ready(studio, index.next_id);
    super::links::open_link(studio);
    let total = index.runs.len();
    state.storage().update(|s| {
        s.loading = Some((0, total));
        s.damaged.extend(
            index
                .damaged
                .iter()
                .map(|(id, e)| (*id, String::new(), e.to_string())),
        );
    });
    // What the browser reports; persistence is asked for once there is something to keep.
    spawn_local(refresh_storage(studio, total > 0));
    for (done, meta) in index.runs.into_iter().enumerate() {
        // Lets the page paint and answer between runs.
        crate::browser::fetch::sleep_ms(0.0).await;
        if !show_saved_run(studio, meta).await {
            break;
        }
        state
            .storage()
            .update(|s| s.loading = Some((done + 1, total)));
    }
    state.storage().update(|s| {
        s.loading = None;
        s.load_ms = Some(now_ms() - started);
    });
}

/// Reads one saved run into the list (below every run added since the page opened: they are
/// newer), shown if nothing is; a run that cannot be read is listed as damaged. `false` when
/// the reader's code could not be fetched: the runs are intact, none is damaged; said once,
/// and the rest are not tried (a reload tries again).
async fn show_saved_run(studio: Studio, meta: RunMeta) -> bool {
    let state = studio.state;
    let t0 = now_ms();
    match load_saved_run(&meta).await {
        Ok(run) => {
            let id = run.id;
            state.stored().update(|m| {
                m.insert(
                    id,
                    RunStorage {
                        state: SaveState::Saved,
                        order: meta.order,
                        bytes: Some(meta.bytes),
                        save_ms: None,
                        encode_ms: None,
                        load_ms: Some(now_ms() - t0),
                    },
                );
            });
            state.runs().write().push(run);
            if state.shown().get_untracked() == Shown::Nothing {
                show_run(studio, id);
            }
        }
        Err(e @ StorageError::Code(_)) => {
            notify(studio, e.to_string());
            return false;
        }
        Err(e) => {
            notify(studio, e.to_string());
            state
                .storage()
                .update(|s| s.damaged.push((meta.id, meta.title, e.to_string())));
        }
    }
    true
}

/// The stored index is read: runs added before it (a link, an import in the first instant) take
/// ids above every stored one, then the runs that waited are saved.
fn storage_ready(studio: Studio, stored_next_id: u64) {
    let state = studio.state;
    let early: Vec<RunId> = state
        .runs()
        .with_untracked(|runs| runs.iter().map(|r| r.id).collect());
    let mut next = stored_next_id;
    let mut renamed = HashMap::new();
    // Bottom of the list first, so the top keeps the highest id.
    for old in early.iter().rev() {
        renamed.insert(*old, RunId(next));
        next += 1;
    }
    if !renamed.is_empty() {
        let new = |id: RunId| renamed.get(&id).copied().unwrap_or(id);
        state.runs().update(|runs| {
            for r in runs {
                r.id = new(r.id);
            }
        });
        state.compare().update(|c| {
            for id in c {
                *id = new(*id);
            }
        });
        if let Shown::Run(id) = state.shown().get_untracked() {
            state.shown().set(Shown::Run(new(id)));
        }
        state.stored().update(|m| {
            *m = std::mem::take(m)
                .into_iter()
                .map(|(id, mut s)| {
                    s.order = new(id).0 as i64;
                    (new(id), s)
                })
                .collect();
        });
    }
    state.next_id().set(next);
    state.storage().update(|s| s.ready = true);
    let waiting: Vec<RunId> = state.stored().with_untracked(|m| {
        m.iter()
            .filter(|(_, s)| s.state == SaveState::Pending)
            .map(|(id, _)| *id)
            .collect()
    });
    for id in waiting {
        save_run(studio, id);
    }
}

/// Refreshes what the browser reports about storage and, with `ask`, asks once per session that
/// it keep the runs under storage pressure (`navigator.storage.persist()`).
async fn refresh_storage(studio: Studio, ask: bool) {
    let status = studio.state.storage();
    let estimate = storage::estimate().await;
    status.update(|s| s.estimate = estimate);
    if ask && !status.with_untracked(|s| s.persist_asked) {
        status.update(|s| s.persist_asked = true);
        let persisted = storage::request_persistence().await;
        status.update(|s| s.persisted = persisted);
    }
}

/// Saves one run (finished, imported, or again after a failure): its report is written under its
/// id, nothing else. The list shows it saving, then its size, or "not saved" and why; a full
/// quota opens the quota panel, where the user chooses what to delete (nothing goes otherwise).
///
/// The work starts in the next task, once what is queued now has run: a run just finished or
/// imported is drawn first (encoding a 10,000-request report takes longer than its charts).
pub fn save_run(studio: Studio, id: RunId) {
    set_timeout(move || save_run_now(studio, id), std::time::Duration::ZERO);
}

/// Changes run `id`'s storage facts (made when it has none).
fn set_stored(studio: Studio, id: RunId, f: impl FnOnce(&mut RunStorage)) {
    studio.state.stored().update(|m| {
        let s = m.entry(id).or_insert_with(|| RunStorage {
            order: id.0 as i64,
            ..RunStorage::default()
        });
        f(s);
    });
}

fn save_run_now(studio: Studio, id: RunId) {
    let state = studio.state;
    if !state.storage().with_untracked(|s| s.ready) {
        return set_stored(studio, id, |s| s.state = SaveState::Pending);
    }
    if let Some(reason) = state.storage().with_untracked(|s| s.broken.clone()) {
        return set_stored(studio, id, |s| s.state = SaveState::Failed(reason));
    }
    let Some(report) = state.with_untracked(|s| s.run(id).map(|run| Arc::clone(&run.report)))
    else {
        return;
    };
    set_stored(studio, id, |s| s.state = SaveState::Saving);
    spawn_local(write_run(studio, id, report));
}

/// [`save_run`]'s writing: the report as JSON, then its records.
async fn write_run(studio: Studio, id: RunId, report: Arc<Report>) {
    let state = studio.state;
    let started = now_ms();
    let encoded = encode_report(report).await;
    let encode_ms = now_ms() - started;
    // The order and id counter as they are now (the encoding may have waited for its code).
    let order = state
        .stored()
        .with_untracked(|m| m.get(&id).map_or(id.0 as i64, |s| s.order));
    let Some(encoded) = state.with_untracked(|s| {
        s.run(id).map(|run| {
            encoded.map(|json| {
                (
                    RunMeta::of(id.0, &run.report, order, json.len() as u64),
                    json,
                )
            })
        })
    }) else {
        return;
    };
    let (meta, json) = match encoded {
        Ok(e) => e,
        Err(e) => {
            notify(studio, e.to_string());
            return set_stored(studio, id, |s| s.state = SaveState::Failed(e.to_string()));
        }
    };
    let next_id = state.next_id().get_untracked();
    let outcome = storage::save_run(&meta, &json, next_id).await;
    drop(json);
    // Deleted meanwhile: its delete came after this write, nothing to record.
    let Some(title) = state.with_untracked(|s| s.run(id).map(|r| r.report.title.clone())) else {
        return;
    };
    match outcome {
        Ok(()) => {
            let elapsed = now_ms() - started;
            set_stored(studio, id, |s| {
                s.state = SaveState::Saved;
                s.bytes = Some(meta.bytes);
                s.save_ms = Some(elapsed);
                s.encode_ms = Some(encode_ms);
            });
            state.storage().update(|s| {
                if s.quota.is_some_and(|q| q.run == id) {
                    s.quota = None;
                }
            });
            // Renamed while it was being written.
            if title != meta.title {
                let renamed = RunMeta { title, ..meta };
                if let Err(e) = storage::save_meta(&renamed).await {
                    notify(studio, e.to_string());
                }
            }
            refresh_storage(studio, true).await;
        }
        Err(e) => {
            set_stored(studio, id, |s| s.state = SaveState::Failed(e.to_string()));
            if let StorageError::Quota { needed } = e {
                state.storage().update(|s| {
                    s.quota = Some(QuotaPrompt { run: id, needed });
                });
                let estimate = storage::estimate().await;
                state.storage().update(|s| s.estimate = estimate);
            }
            notify(studio, e.to_string());
        }
    }
}

/// Saves a run again after a change when it is stored or being stored; a run not saved yet
/// keeps the change in memory and its next save carries it.
pub(crate) fn save_if_stored(studio: Studio, id: RunId) {
    let state = studio.state.with_untracked(|s| s.save_state(id));
    if matches!(state, SaveState::Saved | SaveState::Saving) {
        save_run(studio, id);
    }
}

/// Renames a run; a saved run's index record is rewritten (its report is not).
pub fn rename_run(studio: Studio, id: RunId, title: String) {
    studio.state.runs().update(|runs| {
        if let Some(r) = runs.iter_mut().find(|r| r.id == id) {
            // Copies the report only while a view still holds it.
            Arc::make_mut(&mut r.report).title = title;
        }
    });
    // Saving: the save rewrites the title when done; unsaved: the next save carries it.
    let meta = studio.state.with_untracked(|s| {
        let stored = s
            .stored
            .get(&id)
            .filter(|st| st.state == SaveState::Saved)?;
        Some(RunMeta::of(
            id.0,
            &s.run(id)?.report,
            stored.order,
            stored.bytes.unwrap_or(0),
        ))
    });
    if let Some(meta) = meta {
        spawn_local(async move {
            if let Err(e) = storage::save_meta(&meta).await {
                notify(studio, e.to_string());
            }
        });
    }
}

/// Takes a run out of the page (list, comparison, pane); whether it was stored.
fn forget_run(studio: Studio, id: RunId) -> bool {
    let state = studio.state;
    state.runs().write().retain(|r| r.id != id);
    state.compare().update(|c| c.retain(|x| *x != id));
    if state.shown().get_untracked() == Shown::Run(id) {
        state.shown().set(Shown::Nothing);
    }
    let was = state
        .stored()
        .try_update(|m| m.remove(&id))
        .flatten()
        .map(|s| s.state);
    state.storage().update(|s| {
        if s.quota.is_some_and(|q| q.run == id) {
            s.quota = None;
        }
    });
    matches!(was, Some(SaveState::Saved | SaveState::Saving))
}

/// Deletes a run: it leaves the comparison and, if shown, the pane; its stored records go.
pub fn delete_run(studio: Studio, id: RunId) {
    if forget_run(studio, id) {
        delete_records(studio, id.0);
    }
}

/// Deletes a stored run that could not be read (listed apart, with why).
pub fn delete_damaged(studio: Studio, id: u64) {
    studio
        .state
        .storage()
        .update(|s| s.damaged.retain(|(d, _, _)| *d != id));
    delete_records(studio, id);
}

/// Deletes run `id`'s stored records, then refreshes the browser's estimate.
fn delete_records(studio: Studio, id: u64) {
    let next_id = studio.state.next_id().get_untracked();
    spawn_local(async move {
        if let Err(e) = storage::delete_run(id, next_id).await {
            notify(studio, e.to_string());
        }
        refresh_storage(studio, false).await;
    });
}

/// The quota panel's choice: deletes the runs the user ticked (nothing else), then saves the
/// run that did not fit again.
pub fn make_room_and_retry(studio: Studio, delete: Vec<RunId>) {
    let Some(prompt) = studio.state.storage().with_untracked(|s| s.quota) else {
        return;
    };
    spawn_local(async move {
        let next_id = studio.state.next_id().get_untracked();
        for id in delete {
            if forget_run(studio, id)
                && let Err(e) = storage::delete_run(id.0, next_id).await
            {
                notify(studio, e.to_string());
            }
        }
        studio.state.storage().update(|s| s.quota = None);
        save_run(studio, prompt.run);
    });
}

/// The quota panel's other choice: keep the run open, unsaved (it can be exported or saved later).
pub fn keep_unsaved(studio: Studio) {
    studio.state.storage().update(|s| s.quota = None);
}

/// A report as stored: its JSON. Lazy: the report's writer loads with the first run saved.
pub async fn encode_report(report: Arc<Report>) -> Result<Vec<u8>, StorageError> {
    write_report(report).await.map_err(code)?
}

/// Reads one saved run: its report JSON read back through the core's report format, titled as
/// its index record says (a rename writes only that record).
pub async fn load_saved_run(meta: &RunMeta) -> Result<SavedRun, StorageError> {
    let json = storage::load_report_json(meta).await?;
    let mut report =
        decode_report(json)
            .await
            .map_err(code)?
            .map_err(|e| StorageError::Damaged {
                id: meta.id,
                reason: e.to_string(),
            })?;
    report.title.clone_from(&meta.title);
    Ok(SavedRun {
        id: RunId(meta.id),
        report: report.into(),
    })
}

/// The studio's own code for runs could not be fetched: the runs are untouched.
fn code(e: crate::lazy::PartError) -> StorageError {
    StorageError::Code(e.to_string())
}

lazy_part! {
    preload = preload_report_writer;
    /// A report's JSON, as stored.
    pub(crate) async fn write_report(report: Arc<Report>) -> Result<Vec<u8>, StorageError> {
        storage::report_json(&report)
    }
}

lazy_part! {
    /// A stored report read back (the core's one version check). Lazy: the report's reader loads
    /// with the first saved run read.
    async fn decode_report(json: Vec<u8>) -> Result<Report, ttft_core::report::ReportFileError> {
        ttft_core::report::read_json(&json)
    }
}
