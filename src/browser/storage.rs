//! Persistence. Runs live in IndexedDB (database `ttft-studio`), one record per run keyed by its
//! run id, so finishing, importing, renaming or deleting a run writes that run and nothing
//! else:
//!
//! - store `runs`: a small [`RunMeta`] per run (title, place in the list, request count, stored
//!   size), read at start to know every run and id before any report is parsed. Its title wins
//!   over the report's: a rename writes only this record.
//! - store `reports`: the report's JSON as a `Blob` (as bytes where a browser refuses Blobs in
//!   IndexedDB: WebKit's ephemeral sessions, i.e. Safari's private windows), read back through the core's report format
//!   ([`ttft_core::report::read_json`], the one version check). Measured in headless Chromium for
//!   a 10,000-request report (91 MB of JSON): a `Blob` is put in 0.5 s and read back in 0.08 s,
//!   the same bytes as a `Uint8Array` take 0.7 s and 0.4 s (structured clone), and deflating them
//!   first (0.26 s put, 27 MB) costs more than it saves (miniz level 1: 1.2 s natively, more in
//!   wasm). Chromium compresses large values on disk by itself.
//! - store `studio`: `next-id`, the next run id to hand out, so a deleted run's id is never
//!   reused, even after a reload.
//!
//! Everything here is async and returns a [`StorageError`] whose message says what to do. A full
//! quota deletes nothing: the caller keeps the run open, unsaved, and the user chooses what goes
//! (`ttft_core::quota`). Runs kept by the localStorage format of earlier studios
//! (`ttft-studio.runs`, [`legacy_runs`]) are written here in one transaction
//! ([`save_moved_runs`]) before they leave localStorage ([`keep_legacy_runs`]); reading them is
//! the app's (`actions::migrate`). [`estimate`] and [`request_persistence`] wrap
//! `navigator.storage`. Settings stay in localStorage ([`load_setting`], [`save_setting`]): they
//! are small and read before the first paint.
//!
//! A leaf: this module knows bytes, index records and the core's types, never the app's state;
//! reports are written and read as JSON by the app's lazy parts (`actions::storage`).

use std::cell::RefCell;

use serde::{Deserialize, Serialize};
pub use ttft_core::quota::Estimate;
use ttft_core::quota::bytes_text;
use ttft_core::report::Report;
use ttft_core::scenario::ScenarioConfig;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{Event, EventTarget, IdbDatabase, IdbRequest, IdbTransaction, IdbTransactionMode};

const LEGACY_RUNS: &str = "ttft-studio.runs";
const SCENARIO: &str = "ttft-studio.scenario";
/// Key of the SLO set new runs are held to.
const SLO: &str = "ttft-studio.slo";
/// Key of the reader and fluidity deadlines new runs are scored with.
const EXPERIENCE: &str = "ttft-studio.experience";
/// Key of the confidence level and the difference to detect every interval is shown with.
const CONFIDENCE: &str = "ttft-studio.confidence";

/// The IndexedDB database of saved runs.
pub const DB_NAME: &str = "ttft-studio";
/// Its schema version (object stores). A studio that finds a newer one refuses it, with a message.
const DB_VERSION: u32 = 1;
/// Object store of [`RunMeta`] records, keyed by run id.
const META: &str = "runs";
/// Object store of report records (`{format, encoding, data: Blob}`), keyed by run id.
const REPORTS: &str = "reports";
/// Object store of studio-wide values (`next-id`).
const STUDIO: &str = "studio";
const NEXT_ID: &str = "next-id";
/// Version of the records this studio writes; a newer one is refused, never half-read.
pub const RECORD_FORMAT: u32 = 1;
/// How a report record holds the report: its JSON (UTF-8) in a `Blob`.
const ENCODING: &str = "json-blob";
/// Or the same JSON in a `Uint8Array`, where the browser refuses a `Blob` in IndexedDB (WebKit's
/// ephemeral sessions: Safari's private windows and its WebDriver automation).
const ENCODING_BYTES: &str = "json-bytes";

/// Why saved runs could not be stored or read. Each message says what to do.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StorageError {
    /// No IndexedDB (blocked site data, some private windows, a sandboxed frame).
    #[error(
        "this browser blocks IndexedDB ({0}): runs will not survive a reload. Allow site data for this page (or leave the private window), or export runs as JSON to keep them"
    )]
    Unavailable(String),
    /// Another tab keeps an older version of the database open during an upgrade.
    #[error(
        "another ttft-studio tab keeps the saved runs open: close the other ttft-studio tabs, then reload this one"
    )]
    Blocked,
    /// Written by a newer studio (database schema or record format).
    #[error(
        "the saved runs were written by a newer ttft-studio ({0}): reload to get the newest studio; nothing was changed"
    )]
    Newer(String),
    /// The browser's storage quota is used up.
    #[error(
        "the browser's storage is full: {} did not fit. Choose saved runs to delete, then retry saving, or export the run as JSON",
        bytes_text(*.needed)
    )]
    Quota {
        /// Bytes of the write that failed.
        needed: u64,
    },
    /// A stored run could not be read.
    #[error(
        "saved run {id} could not be read ({reason}): delete it from the runs list, or open it in a newer studio if it came from one"
    )]
    Damaged {
        /// The run's id.
        id: u64,
        /// What was wrong.
        reason: String,
    },
    /// Runs of the localStorage format could not be moved.
    #[error(
        "runs saved by the previous version could not be moved into IndexedDB ({0}); they stay in localStorage untouched and the move is tried again at the next start"
    )]
    Migration(String),
    /// The studio's code for reading or writing runs could not be fetched (a lazy part): the
    /// runs themselves are untouched.
    #[error("saved runs could not be read or written: {0}; your saved runs are untouched")]
    Code(String),
    /// Anything else the browser refused.
    #[error(
        "the browser could not {what} ({reason}): try again, or export the run as JSON to keep it"
    )]
    Failed {
        /// What was attempted.
        what: &'static str,
        /// The browser's words.
        reason: String,
    },
}

impl StorageError {
    /// Whether this is the quota: the user has to choose what to delete.
    pub fn is_quota(&self) -> bool {
        matches!(self, StorageError::Quota { .. })
    }
}

/// A saved run as the index lists it: enough to order and show it without parsing the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunMeta {
    /// Record format (1; a newer one is refused, not half-read).
    pub format: u32,
    /// The run's id.
    pub id: u64,
    /// Place in the list: higher is nearer the top. New runs take their id; runs moved from
    /// localStorage take negative places, below every new run, in their old order.
    pub order: i64,
    /// Title (wins over the report's: a rename writes only this record).
    pub title: String,
    /// When the run was made (unix ms).
    pub created_unix_ms: f64,
    /// Requests in the report.
    pub requests: usize,
    /// Size of the stored report JSON (bytes).
    pub bytes: u64,
}

impl RunMeta {
    /// The index record of run `id` at `order`, whose report JSON is `bytes` long.
    pub fn of(id: u64, report: &Report, order: i64, bytes: u64) -> Self {
        RunMeta {
            format: RECORD_FORMAT,
            id,
            order,
            title: report.title.clone(),
            created_unix_ms: report.created_unix_ms,
            requests: report.requests.len(),
            bytes,
        }
    }
}

/// Every saved run's index record (top of the list first) and the next id to hand out.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Index {
    /// Runs, highest `order` first.
    pub runs: Vec<RunMeta>,
    /// Above every id ever handed out.
    pub next_id: u64,
    /// Index records that could not be read, by run id (kept, reported).
    pub damaged: Vec<(u64, StorageError)>,
}

// ---------------------------------------------------------------------------------------------
// IndexedDB, with one future per request or transaction.

/// An event listener held by Rust (removed before it is dropped).
type Listener = Closure<dyn FnMut(Event)>;

/// Listeners on an event target, resolved by the first `ok` event, rejected by the first `fail`
/// event. Attached when made (before any event can fire), removed when dropped.
struct Events {
    target: EventTarget,
    listeners: Vec<(&'static str, Listener)>,
    future: JsFuture,
}

impl Events {
    fn new(target: &EventTarget, ok: &[&'static str], fail: &[&'static str]) -> Self {
        let mut listeners = Vec::new();
        let promise = js_sys::Promise::new(&mut |resolve, reject| {
            for (names, settle) in [(ok, &resolve), (fail, &reject)] {
                for name in names {
                    let settle = settle.clone();
                    let cb = Listener::new(move |e: Event| {
                        let _ = settle.call1(&JsValue::UNDEFINED, &e);
                    });
                    let _ =
                        target.add_event_listener_with_callback(name, cb.as_ref().unchecked_ref());
                    listeners.push((*name, cb));
                }
            }
        });
        Events {
            target: target.clone(),
            listeners,
            future: JsFuture::from(promise),
        }
    }

    /// The event that came: `Ok` for an `ok` one, `Err` for a `fail` one.
    async fn wait(mut self) -> Result<Event, Event> {
        match (&mut self.future).await {
            Ok(e) => Ok(e.unchecked_into()),
            Err(e) => Err(e.unchecked_into()),
        }
    }
}

impl Drop for Events {
    fn drop(&mut self) {
        for (name, cb) in &self.listeners {
            let _ = self
                .target
                .remove_event_listener_with_callback(name, cb.as_ref().unchecked_ref());
        }
    }
}

/// The browser's words for a failure.
fn js_text(v: &JsValue) -> String {
    if let Some(e) = v.dyn_ref::<web_sys::DomException>() {
        return format!("{}: {}", e.name(), e.message());
    }
    if let Some(e) = v.dyn_ref::<js_sys::Error>() {
        return String::from(e.message());
    }
    v.as_string().unwrap_or_else(|| format!("{v:?}"))
}

/// A failed write or read as a [`StorageError`]: the quota by name, anything else in words.
fn dom_error(e: Option<web_sys::DomException>, what: &'static str, needed: u64) -> StorageError {
    match e {
        Some(e) if e.name() == "QuotaExceededError" => StorageError::Quota { needed },
        Some(e) => StorageError::Failed {
            what,
            reason: format!("{}: {}", e.name(), e.message()),
        },
        None => StorageError::Failed {
            what,
            reason: "the transaction was aborted".into(),
        },
    }
}

/// Waits for a request's result.
async fn result(req: &IdbRequest, what: &'static str) -> Result<JsValue, StorageError> {
    match Events::new(req, &["success"], &["error"]).wait().await {
        Ok(_) => req.result().map_err(|e| StorageError::Failed {
            what,
            reason: js_text(&e),
        }),
        Err(_) => Err(dom_error(req.error().ok().flatten(), what, 0)),
    }
}

/// Waits until a write transaction is committed.
async fn committed(
    tx: &IdbTransaction,
    what: &'static str,
    needed: u64,
) -> Result<(), StorageError> {
    match Events::new(tx, &["complete"], &["abort"]).wait().await {
        Ok(_) => Ok(()),
        Err(_) => Err(dom_error(tx.error(), what, needed)),
    }
}

thread_local! {
    /// The open database, shared by every call (closed when a newer studio wants to upgrade it).
    static DB: RefCell<Option<IdbDatabase>> = const { RefCell::new(None) };
}

/// Opens (and on first use creates) the database.
async fn db() -> Result<IdbDatabase, StorageError> {
    if let Some(db) = DB.with_borrow(Clone::clone) {
        return Ok(db);
    }
    let factory = web_sys::window()
        .ok_or_else(|| StorageError::Unavailable("no window".into()))?
        .indexed_db()
        .map_err(|e| StorageError::Unavailable(js_text(&e)))?
        .ok_or_else(|| StorageError::Unavailable("no IndexedDB".into()))?;
    let req = factory
        .open_with_u32(DB_NAME, DB_VERSION)
        .map_err(|e| StorageError::Unavailable(js_text(&e)))?;
    let upgrading = req.clone();
    let upgrade = Closure::<dyn FnMut(Event)>::new(move |_: Event| {
        let Ok(db) = upgrading.result() else { return };
        let db: IdbDatabase = db.unchecked_into();
        let names = db.object_store_names();
        for store in [META, REPORTS, STUDIO] {
            if !names.contains(store) {
                let _ = db.create_object_store(store);
            }
        }
    });
    req.set_onupgradeneeded(Some(upgrade.as_ref().unchecked_ref()));
    let outcome = Events::new(&req, &["success"], &["error", "blocked"])
        .wait()
        .await;
    req.set_onupgradeneeded(None);
    match outcome {
        Ok(_) => {
            let db: IdbDatabase = req
                .result()
                .map_err(|e| StorageError::Unavailable(js_text(&e)))?
                .unchecked_into();
            // A newer studio in another tab wants to upgrade: let it (this tab reopens later).
            let on_version_change = Closure::<dyn FnMut(Event)>::new(move |_: Event| {
                if let Some(db) = DB.with_borrow_mut(Option::take) {
                    db.close();
                }
            });
            db.set_onversionchange(Some(on_version_change.as_ref().unchecked_ref()));
            on_version_change.forget();
            DB.set(Some(db.clone()));
            Ok(db)
        }
        Err(e) if e.type_() == "blocked" => Err(StorageError::Blocked),
        Err(_) => match req.error().ok().flatten() {
            Some(e) if e.name() == "VersionError" => Err(StorageError::Newer(format!(
                "database version above {DB_VERSION}"
            ))),
            Some(e) => Err(StorageError::Unavailable(format!(
                "{}: {}",
                e.name(),
                e.message()
            ))),
            None => Err(StorageError::Unavailable(
                "the database did not open".into(),
            )),
        },
    }
}

fn transaction(
    db: &IdbDatabase,
    stores: &[&str],
    mode: IdbTransactionMode,
) -> Result<IdbTransaction, StorageError> {
    let names = js_sys::Array::new();
    for s in stores {
        names.push(&JsValue::from_str(s));
    }
    db.transaction_with_str_sequence_and_mode(&names, mode)
        .map_err(|e| StorageError::Failed {
            what: "open a transaction",
            reason: js_text(&e),
        })
}

fn key(id: u64) -> JsValue {
    JsValue::from_f64(id as f64)
}

fn to_js<T: Serialize>(value: &T) -> JsValue {
    serde_json::to_string(value)
        .ok()
        .and_then(|s| js_sys::JSON::parse(&s).ok())
        .unwrap_or(JsValue::NULL)
}

fn from_js<T: for<'de> Deserialize<'de>>(value: &JsValue) -> Result<T, String> {
    let text = js_sys::JSON::stringify(value)
        .map_err(|e| js_text(&e))?
        .as_string()
        .unwrap_or_default();
    serde_json::from_str(&text).map_err(|e| e.to_string())
}

/// Puts a run's index and report records (the JSON in a `Blob`, else in bytes) and the id
/// counter into one transaction.
fn put_run(
    tx: &IdbTransaction,
    meta: &RunMeta,
    json: &[u8],
    next_id: u64,
    as_blob: bool,
) -> Result<(), StorageError> {
    // Some browsers refuse a large value at `put` already.
    let failed = |e: JsValue| match e.dyn_into::<web_sys::DomException>() {
        Ok(e) => dom_error(Some(e), "save the run", json.len() as u64),
        Err(e) => StorageError::Failed {
            what: "save the run",
            reason: js_text(&e),
        },
    };
    let bytes = js_sys::Uint8Array::from(json);
    let (encoding, data) = if as_blob {
        let parts = js_sys::Array::of1(&bytes);
        let options = web_sys::BlobPropertyBag::new();
        options.set_type("application/json");
        let blob = web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &options)
            .map_err(failed)?;
        (ENCODING, JsValue::from(blob))
    } else {
        (ENCODING_BYTES, JsValue::from(bytes))
    };
    let record = js_sys::Object::new();
    for (k, v) in [
        ("format", JsValue::from(RECORD_FORMAT)),
        ("encoding", JsValue::from_str(encoding)),
        ("data", data),
    ] {
        js_sys::Reflect::set(&record, &k.into(), &v).map_err(failed)?;
    }
    tx.object_store(REPORTS)
        .and_then(|s| s.put_with_key(&record, &key(meta.id)))
        .map_err(failed)?;
    tx.object_store(META)
        .and_then(|s| s.put_with_key(&to_js(meta), &key(meta.id)))
        .map_err(failed)?;
    put_next_id(tx, next_id)
}

fn put_next_id(tx: &IdbTransaction, next_id: u64) -> Result<(), StorageError> {
    tx.object_store(STUDIO)
        .and_then(|s| s.put_with_key(&JsValue::from_f64(next_id as f64), &NEXT_ID.into()))
        .map(|_| ())
        .map_err(|e| StorageError::Failed {
            what: "save the run",
            reason: js_text(&e),
        })
}

// ---------------------------------------------------------------------------------------------
// Runs.

/// A report's JSON, as stored (called by the app's lazy parts only, so the writer loads with
/// the first run saved).
pub fn report_json(report: &Report) -> Result<Vec<u8>, StorageError> {
    serde_json::to_vec(report).map_err(|e| StorageError::Failed {
        what: "write the report as JSON",
        reason: e.to_string(),
    })
}

/// Saves a run (its index record at `order`, its report JSON) and the id
/// counter, in one transaction: either all of it is stored or nothing is.
pub async fn save_run(meta: &RunMeta, json: &[u8], next_id: u64) -> Result<(), StorageError> {
    match save_run_as(meta, json, next_id, true).await {
        // WebKit's ephemeral sessions refuse a Blob in IndexedDB ("UnknownError: Error preparing
        // Blob/File data to be stored"), and nothing was stored: the same JSON as bytes then.
        Err(StorageError::Failed { reason, .. }) if reason.starts_with("UnknownError") => {
            save_run_as(meta, json, next_id, false).await
        }
        other => other,
    }
}

async fn save_run_as(
    meta: &RunMeta,
    json: &[u8],
    next_id: u64,
    as_blob: bool,
) -> Result<(), StorageError> {
    let db = db().await?;
    let tx = transaction(&db, &[META, REPORTS, STUDIO], IdbTransactionMode::Readwrite)?;
    let done = Events::new(&tx, &["complete"], &["abort"]);
    if let Err(e) = put_run(&tx, meta, json, next_id, as_blob) {
        let _ = tx.abort();
        return Err(e);
    }
    match done.wait().await {
        Ok(_) => Ok(()),
        Err(_) => Err(dom_error(tx.error(), "save the run", json.len() as u64)),
    }
}

/// Rewrites a saved run's index record (a rename): the report is not touched.
pub async fn save_meta(meta: &RunMeta) -> Result<(), StorageError> {
    let db = db().await?;
    let tx = transaction(&db, &[META], IdbTransactionMode::Readwrite)?;
    tx.object_store(META)
        .and_then(|s| s.put_with_key(&to_js(meta), &key(meta.id)))
        .map_err(|e| StorageError::Failed {
            what: "rename the run",
            reason: js_text(&e),
        })?;
    committed(&tx, "rename the run", 0).await
}

/// Deletes a saved run (both records) and keeps the id counter at `next_id`.
pub async fn delete_run(id: u64, next_id: u64) -> Result<(), StorageError> {
    let db = db().await?;
    let tx = transaction(&db, &[META, REPORTS, STUDIO], IdbTransactionMode::Readwrite)?;
    let failed = |e: JsValue| StorageError::Failed {
        what: "delete the run",
        reason: js_text(&e),
    };
    for store in [META, REPORTS] {
        tx.object_store(store)
            .and_then(|s| s.delete(&key(id)))
            .map_err(failed)?;
    }
    put_next_id(&tx, next_id)?;
    committed(&tx, "delete the run", 0).await
}

/// Every saved run's index record, top of the list first, and the next id to hand out.
pub async fn load_index() -> Result<Index, StorageError> {
    let db = db().await?;
    let tx = transaction(&db, &[META, STUDIO], IdbTransactionMode::Readonly)?;
    let failed = |e: JsValue| StorageError::Failed {
        what: "list the saved runs",
        reason: js_text(&e),
    };
    let metas = tx
        .object_store(META)
        .and_then(|s| s.get_all())
        .map_err(failed)?;
    let counter = tx
        .object_store(STUDIO)
        .and_then(|s| s.get(&NEXT_ID.into()))
        .map_err(failed)?;
    // Both listeners are attached before either request can finish.
    let (metas, counter) = futures_util::future::join(
        result(&metas, "list the saved runs"),
        result(&counter, "list the saved runs"),
    )
    .await;
    let values: Vec<JsValue> = js_sys::Array::from(&metas?).iter().collect();
    let mut index = Index {
        next_id: counter?.as_f64().map_or(0, |n| n as u64),
        ..Index::default()
    };
    for v in values {
        match from_js::<RunMeta>(&v) {
            Ok(m) if m.format > RECORD_FORMAT => index.damaged.push((
                m.id,
                StorageError::Newer(format!("run {} has record format {}", m.id, m.format)),
            )),
            Ok(m) => index.runs.push(m),
            Err(reason) => {
                let id = js_sys::Reflect::get(&v, &"id".into())
                    .ok()
                    .and_then(|i| i.as_f64())
                    .map_or(0, |i| i as u64);
                index
                    .damaged
                    .push((id, StorageError::Damaged { id, reason }));
            }
        }
    }
    index
        .runs
        .sort_by(|a, b| b.order.cmp(&a.order).then(b.id.cmp(&a.id)));
    let top = index.runs.iter().map(|m| m.id + 1).max().unwrap_or(0);
    index.next_id = index.next_id.max(top);
    Ok(index)
}

/// Reads one saved run's report JSON, as stored (the app reads it through the core's report
/// format, and takes the title from the index record).
pub async fn load_report_json(meta: &RunMeta) -> Result<Vec<u8>, StorageError> {
    let damaged = |reason: String| StorageError::Damaged {
        id: meta.id,
        reason,
    };
    let db = db().await?;
    let tx = transaction(&db, &[REPORTS], IdbTransactionMode::Readonly)?;
    let req = tx
        .object_store(REPORTS)
        .and_then(|s| s.get(&key(meta.id)))
        .map_err(|e| damaged(js_text(&e)))?;
    let record = result(&req, "read the saved run").await?;
    if record.is_undefined() {
        return Err(damaged("its report is missing".into()));
    }
    let field = |name: &str| js_sys::Reflect::get(&record, &name.into()).unwrap_or_default();
    let format = field("format").as_f64().unwrap_or(0.0);
    if format > f64::from(RECORD_FORMAT) {
        return Err(StorageError::Newer(format!(
            "run {} has record format {format}",
            meta.id
        )));
    }
    let encoding = field("encoding").as_string().unwrap_or_default();
    let json = match encoding.as_str() {
        ENCODING => {
            let blob: web_sys::Blob = field("data")
                .dyn_into()
                .map_err(|_| damaged("its report is not a Blob".into()))?;
            let buffer = JsFuture::from(blob.array_buffer())
                .await
                .map_err(|e| damaged(js_text(&e)))?;
            js_sys::Uint8Array::new(&buffer).to_vec()
        }
        ENCODING_BYTES => field("data")
            .dyn_into::<js_sys::Uint8Array>()
            .map_err(|_| damaged("its report is not bytes".into()))?
            .to_vec(),
        _ => return Err(damaged(format!("unknown encoding {encoding:?}"))),
    };
    Ok(json)
}

/// Deletes every saved run and the id counter (tests and benchmarks start from nothing).
pub async fn clear_all() -> Result<(), StorageError> {
    let db = db().await?;
    let tx = transaction(&db, &[META, REPORTS, STUDIO], IdbTransactionMode::Readwrite)?;
    for store in [META, REPORTS, STUDIO] {
        tx.object_store(store)
            .and_then(|s| s.clear())
            .map_err(|e| StorageError::Failed {
                what: "clear the saved runs",
                reason: js_text(&e),
            })?;
    }
    committed(&tx, "clear the saved runs", 0).await
}

// ---------------------------------------------------------------------------------------------
// Moving runs of the localStorage format.

fn local_storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok()?
}

/// The runs of the localStorage format (`ttft-studio.runs`, a JSON list), when there are any.
pub fn legacy_runs() -> Option<String> {
    local_storage()?.get_item(LEGACY_RUNS).ok()?
}

/// The runs of the localStorage format are moved: `kept` (their JSON list of entries that could
/// not be read) stays in localStorage, or nothing does when `None`. Best effort: should
/// localStorage refuse, the next start finds the runs already moved.
pub fn keep_legacy_runs(kept: Option<&str>) {
    let Some(ls) = local_storage() else { return };
    let _ = match kept {
        None => ls.remove_item(LEGACY_RUNS),
        Some(kept) => ls.set_item(LEGACY_RUNS, kept),
    };
}

/// Writes moved runs (each its index record and report JSON) and the id counter in one
/// transaction: either all of them are stored or none is. A failure is a
/// [`StorageError::Migration`].
pub async fn save_moved_runs(
    runs: &[(RunMeta, Vec<u8>)],
    next_id: u64,
) -> Result<(), StorageError> {
    let db = db().await?;
    let tx = transaction(&db, &[META, REPORTS, STUDIO], IdbTransactionMode::Readwrite)?;
    let done = Events::new(&tx, &["complete"], &["abort"]);
    let mut needed = 0;
    for (meta, json) in runs {
        needed += json.len() as u64;
        if let Err(e) = put_run(&tx, meta, json, next_id, true) {
            let _ = tx.abort();
            return Err(StorageError::Migration(e.to_string()));
        }
    }
    if done.wait().await.is_err() {
        return Err(StorageError::Migration(
            dom_error(tx.error(), "move the runs", needed).to_string(),
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// navigator.storage

fn storage_manager() -> Option<web_sys::StorageManager> {
    let navigator = web_sys::window()?.navigator();
    // Absent outside secure contexts.
    js_sys::Reflect::has(&navigator, &"storage".into())
        .unwrap_or(false)
        .then(|| navigator.storage())
}

/// The browser's estimate of this site's usage and quota, if it gives one.
pub async fn estimate() -> Option<Estimate> {
    let e: web_sys::StorageEstimate = JsFuture::from(storage_manager()?.estimate().ok()?)
        .await
        .ok()?
        .unchecked_into();
    Some(Estimate {
        usage: e.get_usage()?,
        quota: e.get_quota()?,
    })
}

/// Asks the browser to keep this site's storage under pressure (`navigator.storage.persist()`),
/// unless it already does; whether it does. `None` when the browser has no such API.
pub async fn request_persistence() -> Option<bool> {
    let m = storage_manager()?;
    if JsFuture::from(m.persisted().ok()?).await.ok()?.as_bool() == Some(true) {
        return Some(true);
    }
    JsFuture::from(m.persist().ok()?).await.ok()?.as_bool()
}

// ---------------------------------------------------------------------------------------------
// Settings (localStorage).

/// The text kept under `key` in localStorage, if any.
pub fn read_text(key: &str) -> Option<String> {
    local_storage()?.get_item(key).ok()?
}

/// Keeps `text` under `key` in localStorage, or removes the entry when `None` (best effort).
pub fn write_text(key: &str, text: Option<&str>) {
    if let Some(s) = local_storage() {
        let _ = match text {
            Some(t) => s.set_item(key, t),
            None => s.remove_item(key),
        };
    }
}

/// Saved scenario settings.
pub fn load_scenario() -> Option<ScenarioConfig> {
    serde_json::from_str(&local_storage()?.get_item(SCENARIO).ok()??).ok()
}

/// Saves scenario settings.
pub fn save_scenario(c: &ScenarioConfig) {
    if let Some(s) = local_storage() {
        let _ = s.set_item(SCENARIO, &serde_json::to_string(c).unwrap_or_default());
    }
}

/// The SLO set last applied to a run: new runs are held to it.
pub fn load_slo() -> Option<ttft_core::slo::SloSet> {
    load_setting::<ttft_core::slo::SloSet>(SLO).filter(|s| s.validate().is_ok())
}

/// Remembers the SLO set for new runs.
pub fn save_slo(set: &ttft_core::slo::SloSet) {
    save_setting(SLO, set);
}

/// A setting kept as JSON under `key` in localStorage; `None` when absent or unreadable.
pub fn load_setting<T: serde::de::DeserializeOwned>(key: &str) -> Option<T> {
    serde_json::from_str(&local_storage()?.get_item(key).ok()??).ok()
}

/// Keeps a setting as JSON under `key` in localStorage (best effort: a full or refused storage
/// keeps nothing, and the defaults apply next time).
pub fn save_setting<T: serde::Serialize>(key: &str, value: &T) {
    if let (Some(s), Ok(json)) = (local_storage(), serde_json::to_string(value)) {
        let _ = s.set_item(key, &json);
    }
}

/// The reader and deadlines last applied to a run: new runs are scored with them. A stored
/// setting the core refuses is ignored (the defaults apply).
pub fn load_experience() -> Option<ttft_core::experience::ExperienceConfig> {
    load_setting::<ttft_core::experience::ExperienceConfig>(EXPERIENCE)
        .filter(|c| c.validate().is_ok())
}

/// Remembers the reader and deadlines for new runs.
pub fn save_experience(cfg: &ttft_core::experience::ExperienceConfig) {
    save_setting(EXPERIENCE, cfg);
}

/// The confidence level and the relative difference to detect the user chose; a stored value
/// out of range is brought into it ([`ttft_core::uncertainty::sane_level`], 0.1–100 %).
pub fn load_confidence() -> Option<ttft_core::differences::Confidence> {
    load_setting::<ttft_core::differences::Confidence>(CONFIDENCE).map(sane_confidence)
}

/// Remembers the confidence level and the difference to detect.
pub fn save_confidence(c: &ttft_core::differences::Confidence) {
    save_setting(CONFIDENCE, c);
}

/// `c` with its level in [`ttft_core::uncertainty::LEVEL_RANGE`] and its difference to detect
/// between 0.1 % and 100 % (the default where it is no number).
pub fn sane_confidence(
    c: ttft_core::differences::Confidence,
) -> ttft_core::differences::Confidence {
    let detect = if c.detect.is_finite() {
        c.detect.clamp(0.001, 1.0)
    } else {
        ttft_core::differences::DEFAULT_DETECT
    };
    ttft_core::differences::Confidence {
        level: ttft_core::uncertainty::sane_level(c.level),
        detect,
    }
}
