//! App actions: the one place the studio's state changes. Views call these; they never change
//! the store themselves.
//!
//! Where a run starts: [`start_run`] plans it with the core, builds the report header, hands the
//! plan to the worker pool ([`crate::browser::pool::run_phases`]), feeds batches into the live
//! run and, when the pool is done, [`finish_run`] shows it under a new [`RunId`] and saves it.
//!
//! Persistence: [`open_storage`] reads saved runs once the page is up; [`save_run`] writes one
//! run (after a finish or an import, or again after a failure), [`rename_run`] and
//! [`delete_run`] touch only that run's records; a full quota waits for the user's choice
//! ([`make_room_and_retry`], [`keep_unsaved`]).

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;
use reactive_stores::Store;
use ttft_core::report::{EndpointInfo, Report};
use ttft_core::request::{HeaderLineError, build_request};
use ttft_core::scenario::{
    HTTP1_CONNECTIONS_PER_ORIGIN, Job, connection_limit_warning, total_jobs,
};

use crate::browser::cancel::RunHandle;
use crate::browser::fetch::{ModelsError, list_models, reference_origins};
use crate::browser::health::HealthMonitor;
use crate::browser::metrics_scrape::MetricsScraper;
use crate::browser::pool::{Progress, RunPlan, run_phases};
use crate::browser::stamper::Stamping;
use crate::browser::storage;
use crate::state::{
    EndpointConfig, LiveRun, QuotaPrompt, RunId, RunStorage, SaveState, SavedRun, Shown,
    StorageStatus, Studio, StudioState, StudioStateStoreFields,
};

pub mod calibrate;
pub mod ground_truth;
pub mod tour;

/// The state a fresh page starts from: no runs yet. Saved runs appear once the page is up
/// ([`open_storage`]), so a large store never delays the first paint.
pub fn initial_state() -> StudioState {
    StudioState {
        storage: StorageStatus {
            loading: Some((0, 0)),
            ..StorageStatus::default()
        },
        ..StudioState::default()
    }
}

/// Shows a message in the status line.
pub fn notify(studio: Studio, message: impl Into<String>) {
    studio.state.notice().set(Some(message.into()));
}

/// Opens run storage once the page is up: moves runs kept by the localStorage format (once),
/// reads the stored index (so new ids clash with none), opens a `#share=` link, then reads the
/// saved runs, newest first, each appearing as it is read (the newest shown if nothing is).
pub async fn open_storage(studio: Studio) {
    let state = studio.state;
    let started = crate::browser::clock::now_ms();
    match storage::migrate_local_storage().await {
        Ok(Some(m)) if m.kept.is_empty() => notify(
            studio,
            format!(
                "moved {} saved run(s) from localStorage into IndexedDB",
                m.moved
            ),
        ),
        Ok(Some(m)) => notify(
            studio,
            format!(
                "moved {} saved run(s) into IndexedDB; {} could not be read and stay in localStorage ({})",
                m.moved,
                m.kept.len(),
                m.kept.join("; ")
            ),
        ),
        Ok(None) => {}
        Err(e) => notify(studio, e.to_string()),
    }
    let index = match storage::load_index().await {
        Ok(index) => index,
        Err(e) => {
            let reason = e.to_string();
            notify(studio, reason.clone());
            state.storage().update(|s| s.broken = Some(reason));
            storage::Index::default()
        }
    };
    storage_ready(studio, index.next_id);
    open_link(studio);
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
        let t0 = crate::browser::clock::now_ms();
        match storage::load_report(&meta).await {
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
                            load_ms: Some(crate::browser::clock::now_ms() - t0),
                        },
                    );
                });
                // Below every run added since the page opened (they are newer).
                state.runs().write().push(run);
                if state.shown().get_untracked() == Shown::Nothing {
                    show_run(studio, id);
                }
            }
            // The reader's code could not be fetched: the runs are intact, none is damaged;
            // said once, and the rest are not tried (a reload tries again).
            Err(e @ storage::StorageError::Code(_)) => {
                notify(studio, e.to_string());
                break;
            }
            Err(e) => {
                notify(studio, e.to_string());
                state
                    .storage()
                    .update(|s| s.damaged.push((meta.id, meta.title, e.to_string())));
            }
        }
        state
            .storage()
            .update(|s| s.loading = Some((done + 1, total)));
    }
    state.storage().update(|s| {
        s.loading = None;
        s.load_ms = Some(crate::browser::clock::now_ms() - started);
    });
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

fn save_run_now(studio: Studio, id: RunId) {
    let state = studio.state;
    let set = move |f: &dyn Fn(&mut RunStorage)| {
        state.stored().update(|m| {
            let s = m.entry(id).or_insert_with(|| RunStorage {
                order: id.0 as i64,
                ..RunStorage::default()
            });
            f(s);
        });
    };
    if !state.storage().with_untracked(|s| s.ready) {
        return set(&|s| s.state = SaveState::Pending);
    }
    if let Some(reason) = state.storage().with_untracked(|s| s.broken.clone()) {
        return set(&|s| s.state = SaveState::Failed(reason.clone()));
    }
    let Some(report) = state.with_untracked(|s| s.run(id).map(|run| Arc::clone(&run.report)))
    else {
        return;
    };
    set(&|s| s.state = SaveState::Saving);
    spawn_local(async move {
        let started = crate::browser::clock::now_ms();
        let encoded = storage::encode_report(report).await;
        let encode_ms = crate::browser::clock::now_ms() - started;
        // The order and id counter as they are now (the encoding may have waited for its code).
        let order = state
            .stored()
            .with_untracked(|m| m.get(&id).map_or(id.0 as i64, |s| s.order));
        let Some(encoded) = state.with_untracked(|s| {
            s.run(id).map(|run| {
                encoded.map(|json| (storage::RunMeta::of(run, order, json.len() as u64), json))
            })
        }) else {
            return;
        };
        let (meta, json) = match encoded {
            Ok(e) => e,
            Err(e) => {
                notify(studio, e.to_string());
                return set(&|s| s.state = SaveState::Failed(e.to_string()));
            }
        };
        let next_id = state.next_id().get_untracked();
        let outcome = storage::save_run(&meta, &json, next_id).await;
        drop(json);
        // Deleted meanwhile: its delete came after this write, nothing to record.
        let Some(title) = state.with_untracked(|s| s.run(id).map(|r| r.report.title.clone()))
        else {
            return;
        };
        match outcome {
            Ok(()) => {
                let elapsed = crate::browser::clock::now_ms() - started;
                set(&|s| {
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
                    let renamed = storage::RunMeta { title, ..meta };
                    if let Err(e) = storage::save_meta(&renamed).await {
                        notify(studio, e.to_string());
                    }
                }
                refresh_storage(studio, true).await;
            }
            Err(e) => {
                set(&|s| s.state = SaveState::Failed(e.to_string()));
                if let storage::StorageError::Quota { needed } = e {
                    state.storage().update(|s| {
                        s.quota = Some(QuotaPrompt { run: id, needed });
                    });
                    let estimate = storage::estimate().await;
                    state.storage().update(|s| s.estimate = estimate);
                }
                notify(studio, e.to_string());
            }
        }
    });
}

/// Adds reports as the newest runs, each under a new id (the first given on top, with the
/// highest); returns the ids in the given order.
fn add_runs(state: Store<StudioState>, reports: Vec<Report>) -> Vec<RunId> {
    let first = state.next_id().get_untracked();
    let n = reports.len() as u64;
    let ids: Vec<RunId> = (0..n).map(|i| RunId(first + n - 1 - i)).collect();
    state.next_id().set(first + n);
    let runs: Vec<SavedRun> = ids
        .iter()
        .zip(reports)
        .map(|(id, report)| SavedRun {
            id: *id,
            report: report.into(),
        })
        .collect();
    state.runs().write().splice(0..0, runs);
    ids
}

/// Shows a saved run.
pub fn show_run(studio: Studio, id: RunId) {
    studio.state.shown().set(Shown::Run(id));
}

/// Ticks or unticks a run for comparison (at most four are compared).
pub fn set_compared(studio: Studio, id: RunId, on: bool) {
    studio.state.compare().update(|c| {
        c.retain(|x| *x != id);
        if on && c.len() < 4 {
            c.push(id);
        }
    });
}

/// Renames a run; a saved run's index record is rewritten (its report is not).
pub fn rename_run(studio: Studio, id: RunId, title: String) {
    studio.state.runs().update(|runs| {
        if let Some(r) = runs.iter_mut().find(|r| r.id == id) {
            // Copies the report only while a view still holds it.
            std::sync::Arc::make_mut(&mut r.report).title = title;
        }
    });
    // Saving: the save rewrites the title when done; unsaved: the next save carries it.
    let meta = studio.state.with_untracked(|s| {
        let stored = s
            .stored
            .get(&id)
            .filter(|st| st.state == SaveState::Saved)?;
        Some(storage::RunMeta::of(
            s.run(id)?,
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
        let next_id = studio.state.next_id().get_untracked();
        spawn_local(async move {
            if let Err(e) = storage::delete_run(id, next_id).await {
                notify(studio, e.to_string());
            }
            refresh_storage(studio, false).await;
        });
    }
}

/// Deletes a stored run that could not be read (listed apart, with why).
pub fn delete_damaged(studio: Studio, id: u64) {
    studio
        .state
        .storage()
        .update(|s| s.damaged.retain(|(d, _, _)| *d != id));
    let next_id = studio.state.next_id().get_untracked();
    spawn_local(async move {
        if let Err(e) = storage::delete_run(RunId(id), next_id).await {
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
                && let Err(e) = storage::delete_run(id, next_id).await
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

/// Opens a report from `#share=…` in the page's URL, if there is one.
pub fn open_link(studio: Studio) {
    let Some(hash) = web_sys::window().and_then(|w| w.location().hash().ok()) else {
        return;
    };
    if !hash.contains("share=") {
        return;
    }
    spawn_local(async move {
        match decode_link(hash).await {
            Err(e) => notify(studio, format!("could not open the shared report: {e}")),
            Ok(Ok(mut report)) => {
                report.title = format!("{} (shared)", report.title);
                let ids = add_runs(studio.state, vec![report]);
                show_run(studio, ids[0]);
                // A reader's view: the report first, the panels that configure a run folded away.
                studio.state.reader_view().set(true);
            }
            Ok(Err(e)) => notify(studio, format!("could not open the shared report: {e}")),
        }
    });
}

lazy_part! {
    /// A share link's report, recomputed by the core. Lazy: the share codec loads with the first
    /// link opened (or made, from a report).
    async fn decode_link(hash: String) -> Result<Report, ttft_share::ShareError> {
        ttft_share::decode(&hash)
    }
}

/// Imports result files: several at once, or a folder's (a genai-bench experiment, an AIPerf
/// artifact folder). Timeline files (`ttft-timeline/1` JSON Lines, one per Locust worker or
/// studio export) selected together are merged into one run, recomputed by the core; the other
/// files of one folder are read together ([`read_results`]: a genai-bench experiment's files
/// become one run), each other file on its own (studio reports, vllm bench, GuideLLM, AIPerf,
/// SGLang). What could not be read is named in the notice; what could is kept.
pub fn import_files(studio: Studio, files: web_sys::FileList) {
    let files: Vec<web_sys::File> = (0..files.length()).filter_map(|i| files.get(i)).collect();
    spawn_local(async move {
        let chosen = files.len();
        let mut timelines: Vec<(String, String)> = Vec::new();
        let mut results: Vec<(String, String)> = Vec::new();
        let mut notes: Vec<String> = Vec::new();
        for file in files {
            // A folder's files carry their path in it (`experiment/scenario.json`).
            let path = js_sys::Reflect::get(&file, &"webkitRelativePath".into())
                .ok()
                .and_then(|p| p.as_string())
                .filter(|p| !p.is_empty());
            let name = path.clone().unwrap_or_else(|| file.name());
            // A folder's plots, spreadsheets and logs are not read at all.
            if path.is_some() && !looks_like_result_name(&name) {
                continue;
            }
            let text = match wasm_bindgen_futures::JsFuture::from(file.text()).await {
                Ok(t) => t.as_string().unwrap_or_default(),
                Err(_) => {
                    notes.push(format!(
                        "could not read {name}: the browser refused the file"
                    ));
                    continue;
                }
            };
            if ttft_core::timeline_file::looks_like_timeline(&text) {
                timelines.push((name, text));
            } else {
                results.push((name, text));
            }
        }
        let (first_result, result_count, timeline_count) = (
            results.first().map(|(name, _)| name.clone()),
            results.len(),
            timelines.len(),
        );
        let (read, merged) = match read_imports(results, timelines).await {
            Ok(read) => read,
            Err(e) => {
                notes.insert(0, format!("nothing imported: {e}"));
                return notify(studio, notes.join("; "));
            }
        };
        let n = read.reports.len();
        if n > 0 {
            let mut tools: Vec<&str> = Vec::new();
            for t in read.formats.iter().map(|f| format_name(*f)) {
                if !tools.contains(&t) {
                    tools.push(t);
                }
            }
            let ids = add_runs(studio.state, read.reports);
            if let Some(first) = ids.first() {
                show_run(studio, *first);
            }
            for id in ids {
                save_run(studio, id);
            }
            notes.insert(
                0,
                format!(
                    "imported {n} run(s) from {} ({})",
                    match (result_count, first_result) {
                        (1, Some(name)) => name,
                        (k, _) => format!("{k} files"),
                    },
                    tools.join(", ")
                ),
            );
        }
        notes.extend(read.errors);
        if let Some(merged) = merged {
            notes.push(import_timelines(studio, timeline_count, merged));
        }
        if notes.is_empty() {
            notes.push(format!(
                "nothing imported: none of the {chosen} file(s) is a result file (JSON or JSON lines); choose a studio report, timeline files, or a vLLM / GuideLLM / AIPerf / SGLang / genai-bench result"
            ));
        }
        notify(studio, notes.join("; "));
    });
}

/// Whether a file of a chosen folder can hold results, by its name: JSON, JSON lines, or no
/// extension (what the core reads; plots and spreadsheets are left unread).
fn looks_like_result_name(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    [".json", ".jsonl", ".ndjson"]
        .iter()
        .any(|ext| name.ends_with(ext))
        || !name.contains('.')
}

/// A file format's name in a notice.
fn format_name(f: ttft_core::import::Format) -> &'static str {
    use ttft_core::import::Format;
    match f {
        Format::Studio => "studio report",
        Format::Vllm => "vllm bench serve",
        Format::GuideLlm => "GuideLLM",
        Format::AiperfRecords | Format::AiperfRaw => "AIPerf",
        Format::Sglang => "SGLang bench_serving",
        Format::GenaiBench => "genai-bench",
    }
}

/// What reading result files gave: the runs, their formats, and one sentence per file (or
/// set of files) that could not be read, saying what to do.
#[derive(Debug, Default)]
pub struct ReadResults {
    /// The runs read, in the order of the files.
    pub reports: Vec<Report>,
    /// The format of each run.
    pub formats: Vec<ttft_core::import::Format>,
    /// Why files could not be imported, each naming its file.
    pub errors: Vec<String>,
}

/// Reads result files, each as `(path, text)`, through the core: the files of one folder
/// together ([`ttft_core::import::import_files`]: a genai-bench experiment's files become one
/// run, AIPerf's per-request export takes its aggregate export's summary along), files of
/// different folders apart. A file that cannot be read is named and left out, and the rest of
/// its folder read again without it; when a folder fails as a whole, its files are read one
/// by one, so what can be imported is kept.
pub fn read_results(files: &[(String, String)]) -> ReadResults {
    use ttft_core::import::{ImportError, import_files};
    let mut out = ReadResults::default();
    let mut folders: Vec<(&str, Vec<(&str, &str)>)> = Vec::new();
    for (path, text) in files {
        let dir = path.rsplit_once('/').map_or("", |(dir, _)| dir);
        match folders.iter_mut().find(|(d, _)| *d == dir) {
            Some((_, group)) => group.push((path, text)),
            None => folders.push((dir, vec![(path, text)])),
        }
    }
    for (_, mut group) in folders {
        while !group.is_empty() {
            match import_files(&group) {
                Ok(read) => out.keep(read),
                // One file failed: named, left out, the others read again.
                Err(ImportError::InFile { name, source }) => {
                    out.failed(&name, &source);
                    group.retain(|(n, _)| *n != name);
                    continue;
                }
                // Files that do not stand together (a genai-bench folder without its scenario
                // files, AIPerf's aggregate export alone) or that the core passed over by
                // their names: each on its own.
                Err(_) => group.iter().for_each(|one| out.read_one(*one)),
            }
            break;
        }
    }
    out
}

impl ReadResults {
    fn keep(&mut self, read: Vec<(ttft_core::import::Format, Vec<Report>)>) {
        for (format, reports) in read {
            self.formats.extend(reports.iter().map(|_| format));
            self.reports.extend(reports);
        }
    }

    fn failed(&mut self, name: &str, e: &ttft_core::import::ImportError) {
        self.errors.push(format!("could not import {name}: {e}"));
    }

    /// One file on its own; one whose name the core passes over (`run.txt`) is read by its
    /// content, as a single file always was.
    fn read_one(&mut self, (name, text): (&str, &str)) {
        use ttft_core::import::{ImportError, import, import_files};
        match import_files(&[(name, text)]) {
            Ok(read) => self.keep(read),
            Err(ImportError::InFile { name, source }) => self.failed(&name, &source),
            Err(ImportError::Empty) if !looks_like_result_name(name) => match import(text) {
                Ok(read) => self.keep(vec![read]),
                Err(e) => self.failed(name, &e),
            },
            // Says nothing on its own (AIPerf's summary of its warm-up).
            Err(ImportError::Empty) => {}
            Err(e) => self.failed(name, &e),
        }
    }
}

lazy_part! {
    /// Reads the chosen files through the core: result files ([`read_results`]) and timeline files,
    /// merged into one run (none chosen: `None`). Lazy: the importers load with the first import.
    async fn read_imports(
        results: Vec<(String, String)>,
        timelines: Vec<(String, String)>,
    ) -> (ReadResults, Option<Result<ttft_core::timeline_file::Merged, ttft_core::timeline_file::TimelineError>>) {
        let options = ttft_core::timeline_file::MergeOptions::default();
        let merged = (!timelines.is_empty())
            .then(|| ttft_core::timeline_file::merge_files(&timelines, &options));
        (read_results(&results), merged)
    }
}

/// Shows and saves the run `files` timeline files merged into; what the merge found stays with
/// the run ([`Report::import_notes`]) and is returned for the notice.
fn import_timelines(
    studio: Studio,
    files: usize,
    merged: Result<ttft_core::timeline_file::Merged, ttft_core::timeline_file::TimelineError>,
) -> String {
    match merged {
        Ok(merged) => {
            let n = merged.report.requests.len();
            let who = merged.report.vantage.clone().unwrap_or_default();
            let notes = merged.report.import_notes.join("; ");
            let ids = add_runs(studio.state, vec![merged.report]);
            if let Some(id) = ids.first() {
                show_run(studio, *id);
                save_run(studio, *id);
            }
            format!(
                "merged {files} timeline file(s) into one run of {n} requests measured by {who}{}",
                if notes.is_empty() {
                    String::new()
                } else {
                    format!(": {notes}")
                }
            )
        }
        Err(e) => format!("could not import the timeline files: {e}"),
    }
}

/// Why the endpoint could not be reached for its model list.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConnectionError {
    /// The extra headers are malformed.
    #[error(transparent)]
    Headers(#[from] HeaderLineError),
    /// The model list could not be had.
    #[error(transparent)]
    Models(#[from] ModelsError),
}

/// Asks the endpoint for its models.
pub async fn test_connection(endpoint: EndpointConfig) -> Result<Vec<String>, ConnectionError> {
    let headers = endpoint.secret_headers()?;
    Ok(list_models(&endpoint.effective_base(), &headers).await?)
}

/// A run as llm-d Benchmark Reports v0.2 (`ttft_core::llmd`), one `(file name, text)` per load
/// point in order of load: llm-d reads one report per file, and its analysis finds them by
/// llm-d-benchmark's name, `benchmark_report_v0.2,_<…>.yaml` (the comma included). Each file
/// is the report's JSON, which YAML readers take as it is. No API key or header is in them:
/// the run holds none, and the core writes the endpoint without credentials.
pub fn llmd_files(report: &Report) -> Result<Vec<(String, String)>, ttft_core::llmd::LlmdError> {
    // Letters, digits, dots and dashes; runs of anything else become one `_`.
    let slug = |s: &str| {
        s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '.'))
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join("_")
    };
    let run = slug(&report.title);
    Ok(ttft_core::llmd::benchmark_reports(report)?
        .into_iter()
        .enumerate()
        .map(|(stage, s)| {
            (
                format!(
                    "benchmark_report_v0.2,_{run}_stage_{stage}_{}.yaml",
                    slug(&s.group)
                ),
                s.json,
            )
        })
        .collect())
}

/// Downloads a run's llm-d reports, one file per load point (a browser may ask once to allow
/// several downloads), and says which files they are; built on click.
pub fn export_llmd(studio: Studio, report: &Report) {
    match llmd_files(report) {
        Ok(files) => {
            let names: Vec<String> = files.iter().map(|(n, _)| n.clone()).collect();
            for (i, (name, text)) in files.into_iter().enumerate() {
                // One at a time: browsers drop downloads started in the same instant.
                set_timeout(
                    move || crate::browser::download(&name, "application/yaml", &text),
                    std::time::Duration::from_millis(300 * i as u64),
                );
            }
            notify(
                studio,
                format!(
                    "llm-d Benchmark Report v0.2: {} file(s), one per load point ({}); your browser may ask to allow several downloads",
                    names.len(),
                    names.join(", ")
                ),
            );
        }
        Err(e) => notify(studio, format!("could not export an llm-d report: {e}")),
    }
}

/// Writes the current endpoint and scenario as a self-contained `locustfile.py` and downloads
/// it: more load than one browser, from Locust's workers, whose timeline files the runs list
/// then merges. The API key is never written (the file reads it from the environment).
pub fn export_locustfile(studio: Studio) {
    let ep = studio.endpoint.get_untracked();
    let sc = studio.scenario.get_untracked();
    let target = ttft_core::locust::LocustTarget {
        base_url: ep.effective_base(),
        dialect: ep.dialect,
        model: ep.wire_model(),
        extra_headers: ep.extra_headers.clone(),
    };
    // Part of every worker's file name: letters, digits and dashes only.
    let run: String = format!("{}-{}-{}", sc.kind.id(), target.model, run_title("", ""))
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect::<String>()
        .split('-')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    spawn_local(async move {
        match locustfile(target, sc, run.clone()).await {
            Err(e) => notify(studio, format!("cannot write a locustfile: {e}")),
            Ok(Ok(text)) => {
                crate::browser::download("locustfile.py", "text/x-python", &text);
                notify(
                    studio,
                    format!(
                        "locustfile.py saved (run {run}): its header says how to run it; then import every worker's {run}-*.jsonl here together"
                    ),
                );
            }
            Ok(Err(e)) => notify(studio, format!("cannot write a locustfile: {e}")),
        }
    });
}

lazy_part! {
    /// The locustfile's text. Lazy: the generator loads with the first locustfile written.
    async fn locustfile(
        target: ttft_core::locust::LocustTarget,
        scenario: ttft_core::scenario::ScenarioConfig,
        run: String,
    ) -> Result<String, ttft_core::locust::LocustError> {
        ttft_core::locust::locustfile(&target, &scenario, &run)
    }
}

/// The run's title: scenario, model and the local time to the second.
fn run_title(scenario: &str, model: &str) -> String {
    let when: String = js_sys::Date::new_0()
        .to_iso_string()
        .as_string()
        .unwrap_or_default()
        .chars()
        .take(19)
        .collect();
    format!("{scenario} · {model} · {when}")
}

/// Starts a run with the current settings; a setting that cannot run is reported instead.
pub fn start_run(studio: Studio) {
    if is_busy(studio) {
        return;
    }
    let ep = studio.endpoint.get_untracked();
    let sc = studio.scenario.get_untracked();
    spawn_local(async move {
        run_scenario(studio, ep, sc).await;
    });
}

/// What the browser says of its network (`navigator.onLine`); true outside a page. Chromium
/// says offline whenever no network interface but loopback is up.
fn browser_online() -> bool {
    web_sys::window().is_none_or(|w| w.navigator().on_line())
}

/// Whether `base` is reachable without a network: this page's own server or a loopback host
/// (the bundled server, a local llama.cpp), which run with Wi-Fi off too.
fn on_this_machine(base: &str) -> bool {
    let Ok(url) = web_sys::Url::new(base) else {
        return false;
    };
    let host = url.hostname();
    url.origin() == crate::browser::page_origin()
        || host == "localhost"
        || host.ends_with(".localhost")
        || host.starts_with("127.")
        || host == "[::1]"
}

/// Runs one scenario against one endpoint to its end (or its cancel): plans it with the core,
/// shows it live, stamps it in the pool, watches the tab meanwhile for the client-health
/// verdict, then saves and shows it. Returns the run's id and whether it was cancelled; `None`
/// when it could not start (the notice says why). The user's panels are not touched, so the
/// article's comparison and a calibration run their own settings.
///
/// The run's machinery (planning, request bodies, the pool and its stamping, parsing, the
/// client-health verdict) is a lazy part: it loads with the first run, before its first
/// request is timed.
pub async fn run_scenario(
    studio: Studio,
    ep: EndpointConfig,
    sc: ttft_core::scenario::ScenarioConfig,
) -> Option<(RunId, bool)> {
    if let Err(e) = crate::lazy::load_run_parts().await {
        notify(studio, format!("no run started: {e}"));
        return None;
    }
    // Another start may have won while the parts loaded (the first one waits for them).
    if is_running(studio) {
        return None;
    }
    match run_scenario_part(studio, ep, sc).await {
        Ok(outcome) => outcome,
        Err(e) => {
            notify(studio, format!("no run started: {e}"));
            None
        }
    }
}

lazy_part! {
    pub(crate) async fn run_scenario_part(
        studio: Studio,
        ep: EndpointConfig,
        sc: ttft_core::scenario::ScenarioConfig,
    ) -> Option<(RunId, bool)> {
        run_scenario_now(studio, ep, sc).await
    }
}

/// [`run_scenario`], its code loaded.
async fn run_scenario_now(
    studio: Studio,
    ep: EndpointConfig,
    sc: ttft_core::scenario::ScenarioConfig,
) -> Option<(RunId, bool)> {
    if !browser_online() {
        let base = ep.effective_base();
        if !on_this_machine(&base) {
            notify(
                studio,
                format!(
                    "You are offline: {base} cannot be reached, so no run started. Saved runs, share links and imports still work; reconnect to run."
                ),
            );
            return None;
        }
        // A server on this machine answers without a network (the browser says offline when
        // only loopback is up): the run goes ahead, and its requests say if it does not.
        notify(
            studio,
            format!(
                "You are offline; {base} is on this machine, so the run goes ahead. If its requests fail, that server is not running."
            ),
        );
    }
    let secret_headers = match ep.secret_headers() {
        Ok(h) => h,
        Err(e) => {
            notify(studio, e.to_string());
            return None;
        }
    };
    let phases = match sc.plan(&ep.wire_model(), ep.dialect) {
        Ok(p) => p,
        Err(e) => {
            notify(studio, format!("cannot start: {e}"));
            return None;
        }
    };
    let bases = ep.bases();
    let max_concurrency = phases.iter().map(|p| p.concurrency).max().unwrap_or(1) as usize;
    let spread_over_reference_origins =
        ep.is_reference() && bases.len() == 1 && max_concurrency > HTTP1_CONNECTIONS_PER_ORIGIN;
    let endpoint = EndpointInfo {
        base_url: ep.effective_base(),
        model: ep.wire_model(),
        dialect: ep.dialect,
    };
    let mut report = Report::new(run_title(sc.kind.id(), &ep.model), endpoint, sc.kind.id())
        .created_at(js_sys::Date::now())
        .with_clock_resolution(
            studio
                .state
                .clock()
                .get_untracked()
                .map(|c| c.resolution_ms),
        )
        .with_user_agent(web_sys::window().and_then(|w| w.navigator().user_agent().ok()))
        .with_settings(serde_json::to_value(&sc).unwrap_or_default())
        // Scored with the reader and deadlines last applied to a run (the defaults until then).
        .with_experience(storage::load_experience().unwrap_or_default());
    report.slo = storage::load_slo().unwrap_or_default();
    studio.state.live().set(Some(LiveRun {
        report,
        progress: Progress {
            done: 0,
            total: total_jobs(&phases),
            phase: String::new(),
        },
    }));
    studio.state.shown().set(Shown::Live);
    // The user measures now: the reader's view of a shared link gives way to the studio.
    studio.state.reader_view().set(false);
    let handle = RunHandle::default();
    studio.handle.set_value(Some(handle.clone()));
    let on_batch = Rc::new(move |batch: Vec<_>, progress: Progress| {
        studio.state.live().update(|l| {
            if let Some(l) = l {
                l.report.requests.extend(batch);
                l.progress = progress;
            }
        });
    });
    let metrics = sc.metrics_config();
    let timeout_ms = sc.timeout_s * 1e3;
    // Above 6 streams the reference endpoint is reached over all its HTTP/1.1 origins
    // (sharding). BENCHMARKS.md measured it against HTTP/2 over TLS at 16 and 64 streams and
    // found no difference beyond the rounds' spread, and it needs no certificate, unlike the
    // server's HTTP/2 port.
    let origins = if spread_over_reference_origins {
        reference_origins().await
    } else {
        None
    };
    let bases = match origins {
        Some(origins) => {
            notify(
                studio,
                format!(
                    "{max_concurrency} streams: spread over the reference endpoint's {} HTTP/1.1 origins (browsers open {HTTP1_CONNECTIONS_PER_ORIGIN} connections per origin)",
                    origins.len()
                ),
            );
            origins
        }
        None => bases,
    };
    if let Some(warning) = connection_limit_warning(&phases, &bases) {
        notify(studio, warning);
    }
    let bases_in_use = bases.clone();
    let dialect = ep.dialect;
    let next_base = std::cell::Cell::new(0usize);
    let build = Rc::new(move |job: &Job| {
        let i = next_base.get();
        next_base.set(i + 1);
        build_request(&bases[i % bases.len()], dialect, &job.params)
    });
    let stamping = Stamping::choose().await;
    studio.state.live().update(|l| {
        if let Some(l) = l {
            l.report.stamping = Some(stamping.describe());
        }
    });
    // The server's own view, when asked: a scrape now, one after the warm-ups (the baseline
    // of its percentiles), then one a second.
    let scraper = if ep.scrape_metrics {
        let url = ep.effective_metrics_url();
        // Over HTTP/1.1 a scrape during the run could take a connection a request needs.
        let during = !ttft_core::server_metrics::scrape_would_share_connections(
            &url,
            &bases_in_use,
            max_concurrency,
        );
        if !during {
            notify(
                studio,
                format!(
                    "server metrics are read before and after this run only: {url} shares the run's HTTP/1.1 connections (6 per origin, all in use), so a scrape during it could delay a request"
                ),
            );
        }
        match MetricsScraper::start(url, during).await {
            Ok(s) => Some(s),
            Err(e) => {
                notify(studio, format!("server metrics are off for this run: {e}"));
                None
            }
        }
    } else {
        None
    };
    let plan = RunPlan {
        phases,
        build,
        secret_headers,
        dialect,
        metrics,
        timeout_ms,
        stamping,
        after_warmups: scraper.as_ref().map(|s| {
            let baseline = s.after_warmups();
            Box::new(move || baseline) as crate::browser::pool::AfterWarmups
        }),
    };
    // Watches the tab while the requests stream (the page's own timers and visibility).
    let monitor = HealthMonitor::start();
    let run_start = crate::browser::clock::now_ms();
    run_phases(plan, handle.clone(), on_batch).await;
    let samples = monitor.finish();
    let scrapes = match scraper {
        Some(s) => Some(s.finish(run_start).await),
        None => None,
    };
    studio.state.live().update(|l| {
        if let Some(l) = l {
            l.report.client_health = Some(ttft_core::client_health::assess(&l.report, &samples));
            if let Some(scrapes) = scrapes {
                l.report.metrics_url = Some(ep.effective_metrics_url());
                l.report.server_scrapes = scrapes;
            }
        }
    });
    finish_run(studio).map(|id| (id, handle.is_cancelled()))
}

/// Whether a run is in progress.
pub fn is_running(studio: Studio) -> bool {
    studio.state.live().with(Option::is_some)
}

/// Whether a run is in progress or a calibration is still reading its ground truth (its
/// requests would queue behind a new run's on the same origin): nothing new starts meanwhile.
pub fn is_busy(studio: Studio) -> bool {
    is_running(studio)
        || studio
            .state
            .calibration()
            .with(|c| matches!(c, Some(crate::state::Calibration::Running(_))))
}

/// Stops the live run; requests in flight end as aborted and the partial run is kept.
pub fn cancel_run(studio: Studio) {
    if let Some(h) = studio.handle.get_value() {
        h.cancel();
    }
}

/// The pool is done: the live run becomes a saved run under a new id, which is shown and
/// returned.
pub fn finish_run(studio: Studio) -> Option<RunId> {
    studio.handle.set_value(None);
    let live = studio.state.live().try_update(Option::take).flatten()?;
    let ids = add_runs(studio.state, vec![live.report]);
    show_run(studio, ids[0]);
    save_run(studio, ids[0]);
    Some(ids[0])
}

/// Holds the shown run to another SLO set: its report keeps the set (saved again when stored)
/// and new runs are held to it too.
pub fn set_slo(studio: Studio, set: ttft_core::slo::SloSet) {
    storage::save_slo(&set);
    change_shown_report(studio, |r| r.slo != set, |r| r.slo = set.clone());
}

/// Changes the shown run's report when `differs` says it differs from what `change` makes of it
/// (re-applying a setting the run has changes nothing and redraws nothing), then saves it again
/// when it is stored or being stored.
fn change_shown_report(
    studio: Studio,
    differs: impl Fn(&Report) -> bool,
    change: impl FnOnce(&mut Report),
) {
    let Shown::Run(id) = studio.state.shown().get_untracked() else {
        return;
    };
    let changed = studio
        .state
        .with_untracked(|s| s.run(id).is_some_and(|r| differs(&r.report)));
    if !changed {
        return;
    }
    studio.state.runs().update(|runs| {
        if let Some(r) = runs.iter_mut().find(|r| r.id == id) {
            // Copies the report only while a view still holds it.
            change(std::sync::Arc::make_mut(&mut r.report));
        }
    });
    save_if_stored(studio, id);
}

/// Saves a run again after a change when it is stored or being stored; a run not saved yet
/// keeps the change in memory and its next save carries it.
fn save_if_stored(studio: Studio, id: RunId) {
    let state = studio.state.with_untracked(|s| s.save_state(id));
    if matches!(state, SaveState::Saved | SaveState::Saving) {
        save_run(studio, id);
    }
}

/// Scores the shown run with another reader and fluidity deadlines: its report keeps them (saved
/// again when stored), every experience figure, the reading chart, an SLO on QoE or fluidity and
/// the replay's reading pace follow, and new runs are scored with them too. Settings the core
/// refuses ([`ttft_core::experience::ExperienceConfig::validate`]) change nothing and are
/// returned.
pub fn set_experience(
    studio: Studio,
    cfg: ttft_core::experience::ExperienceConfig,
) -> Result<(), ttft_core::experience::ExperienceConfigError> {
    cfg.validate()?;
    storage::save_experience(&cfg);
    change_shown_report(studio, |r| r.experience != cfg, |r| r.experience = cfg);
    Ok(())
}

/// Records a blind review's vote ([`ttft_core::review`]) in both runs' reports, each from its own
/// side, and saves the runs that are stored or being stored (the whole report: the votes are in
/// it). A run not saved yet (opened from a link, waiting for storage, or whose save failed)
/// keeps the vote in memory and its next save carries it.
pub fn record_blind_vote(
    studio: Studio,
    a: RunId,
    b: RunId,
    pair: &ttft_core::review::ReviewPair,
    choice: ttft_core::review::Choice,
) {
    let at = js_sys::Date::now();
    let Some((va, vb)) = studio
        .state
        .with_untracked(|s| Some(pair.votes(choice, &s.run(a)?.report, &s.run(b)?.report, at)))
    else {
        return notify(
            studio,
            "the vote was not kept: one of the two runs was deleted",
        );
    };
    studio.state.runs().update(|runs| {
        for r in runs.iter_mut() {
            let vote = if r.id == a {
                &va
            } else if r.id == b {
                &vb
            } else {
                continue;
            };
            // Copies the report only while a view still holds it.
            std::sync::Arc::make_mut(&mut r.report)
                .votes
                .push(vote.clone());
        }
    });
    for id in [a, b] {
        save_if_stored(studio, id);
    }
}
