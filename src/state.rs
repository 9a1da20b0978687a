//! The studio's state, one [`Store`](struct@Store) shared by context: saved runs keyed by a stable
//! [`RunId`] (never by list position), where each stands in storage ([`RunStorage`]) and the
//! storage as a whole ([`StorageStatus`]: loading, estimate, persistence, a full quota waiting
//! for the user's choice), what the report pane shows ([`Shown`]), the runs ticked for
//! comparison, the live run, notices and clock facts; and the endpoint settings.
//!
//! Views read it; [`crate::actions`] changes it.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use leptos::prelude::*;
use reactive_stores::{Store, Subfield};
use serde::{Deserialize, Serialize};
use ttft_core::dialect::Dialect;
use ttft_core::report::Report;
use ttft_core::request::HeaderLineError;
use ttft_core::scenario::{ScenarioConfig, ScenarioKind};

use ttft_core::quota::Estimate;

use crate::browser::cancel::RunHandle;
use crate::browser::clock::ClockInfo;
use crate::browser::pool::Progress;
use crate::lazy::PartError;

/// A saved run's identity: assigned once, kept in storage, never reused in a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RunId(pub u64);

/// A saved run: its identity and its report.
#[derive(Debug, Clone, PartialEq)]
pub struct SavedRun {
    /// Identity.
    pub id: RunId,
    /// What the run measured: shared, so showing or exporting a run of many megabytes never
    /// copies it (a rename copies it only while a view still holds it).
    pub report: Arc<Report>,
}

/// Where a run stands in storage.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum SaveState {
    /// Not stored and not being stored: opened from a link (the user may save it).
    #[default]
    Unsaved,
    /// Waits for storage to open (its id may still change so that it clashes with no stored run).
    Pending,
    /// Being written.
    Saving,
    /// Stored: it survives a reload.
    Saved,
    /// The save failed; the run stays open, not stored. Why, in words.
    Failed(String),
}

/// A run's storage facts (kept beside its report, not in it).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunStorage {
    /// Saved or not.
    pub state: SaveState,
    /// Place in the stored list (higher is nearer the top; new runs take their id).
    pub order: i64,
    /// Size of the stored report (bytes), once known.
    pub bytes: Option<u64>,
    /// How long the last save took until the page saw it committed: JSON, then IndexedDB (ms).
    /// Work the page does meanwhile (drawing the run that just finished) delays the moment the
    /// commit is seen, so this is what the user waits for "saved", not storage alone.
    pub save_ms: Option<f64>,
    /// The page's own share of the last save: the report written as JSON (ms).
    pub encode_ms: Option<f64>,
    /// How long reading it at start took: IndexedDB, then the report format (ms).
    pub load_ms: Option<f64>,
}

/// A save that did not fit: the run and the bytes it needs. The user chooses what to delete.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuotaPrompt {
    /// The run that is open but not saved.
    pub run: RunId,
    /// Bytes of the write that failed.
    pub needed: u64,
}

/// The run storage as a whole.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StorageStatus {
    /// The stored index is read: new ids clash with no stored run.
    pub ready: bool,
    /// Why nothing can be saved (storage could not be opened or listed), if so.
    pub broken: Option<String>,
    /// Saved runs read so far and in all, while they load at start.
    pub loading: Option<(usize, usize)>,
    /// From opening storage to every saved run loaded (ms).
    pub load_ms: Option<f64>,
    /// What the browser reports through `navigator.storage.estimate()`.
    pub estimate: Option<Estimate>,
    /// Whether the browser keeps the runs under storage pressure (`navigator.storage.persist()`),
    /// once asked.
    pub persisted: Option<bool>,
    /// Persistence was asked for in this session.
    pub persist_asked: bool,
    /// A save hit the quota and waits for the user's choice.
    pub quota: Option<QuotaPrompt>,
    /// Saved runs that could not be read: id, title (when known) and why.
    pub damaged: Vec<(u64, String, String)>,
}

/// What the report pane shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Shown {
    /// Nothing yet: the page explains how to start.
    #[default]
    Nothing,
    /// The run in progress (headline and groups only, so rendering never delays a stamp).
    Live,
    /// A completed run.
    Run(RunId),
}

/// The run in progress.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveRun {
    /// The report so far: shared, never held by a view between batches, so a batch is appended
    /// in place (nothing copied).
    pub report: Arc<Report>,
    /// Progress.
    pub progress: Progress,
    /// Counts the changes to the report, so that its view knows when to draw it again without
    /// comparing it.
    pub revision: u64,
    /// An A/B run's arm of each request in [`LiveRun::report`]'s order (empty in an ordinary
    /// run): the run is split into one report per arm when it finishes.
    pub arms: Vec<usize>,
}

/// The report the pane shows, as its view tells one from another: a saved run's (shared: it
/// is another only when it is another allocation) or the live run's at a revision (read when
/// drawn, never held).
#[derive(Debug, Clone)]
pub enum ShownReport {
    /// The live run, at this revision.
    Live(u64),
    /// A saved run's report.
    Run(Arc<Report>),
}

impl PartialEq for ShownReport {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (ShownReport::Live(a), ShownReport::Live(b)) => a == b,
            (ShownReport::Run(a), ShownReport::Run(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

/// Everything the studio shows, in one store.
#[derive(Debug, Clone, Default, Store)]
pub struct StudioState {
    /// Saved runs, newest first, keyed by id.
    #[store(key: RunId = |run| run.id)]
    pub runs: Vec<SavedRun>,
    /// What the report pane shows.
    pub shown: Shown,
    /// Runs ticked for comparison, in the order ticked (at most four).
    pub compare: Vec<RunId>,
    /// The run in progress, if any.
    pub live: Option<LiveRun>,
    /// A message for the user (errors, storage warnings).
    pub notice: Option<String>,
    /// Clock facts for the status line.
    pub clock: Option<ClockInfo>,
    /// The next run id to hand out.
    pub next_id: u64,
    /// Where each run stands in storage (a run with no entry is unsaved).
    pub stored: HashMap<RunId, RunStorage>,
    /// The run storage as a whole.
    pub storage: StorageStatus,
    /// What to look at, in one sentence, after the studio ran something to teach (the
    /// article's comparison); the user can dismiss it.
    pub guide: Option<String>,
    /// The page opened a shared link: the report comes first and the panels that configure a
    /// run are folded away until the reader asks for them.
    pub reader_view: bool,
    /// Where "Calibrate this browser" stands, once asked.
    pub calibration: Option<Calibration>,
    /// The trace file a trace replay sends, as read (in memory only: traces are large).
    pub trace: Option<LoadedTrace>,
}

/// A trace file chosen for a trace replay: its name and the trace read from it, or why it
/// could not be read (the line and column, what to do).
#[derive(Debug, Clone)]
pub struct LoadedTrace {
    /// The file's name.
    pub file: String,
    /// The trace, shared (a plan reads it, never copies it), or the reading error.
    pub parsed: Result<Arc<ttft_core::trace::Trace>, String>,
}

/// Where "Calibrate this browser" stands.
#[derive(Debug, Clone, PartialEq)]
pub enum Calibration {
    /// Its short scenario runs at this many streams.
    Running(u32),
    /// This browser's timing error against the reference endpoint's ground truth.
    Done(ttft_core::calibration::CalibrationResult),
    /// It could not finish: why, and what to do.
    Failed(String),
}

impl StudioState {
    /// The saved run with this id.
    pub fn run(&self, id: RunId) -> Option<&SavedRun> {
        self.runs.iter().find(|r| r.id == id)
    }

    /// The live run's report so far, if a run is in progress (shared, not copied).
    pub fn live_report(&self) -> Option<Arc<Report>> {
        self.live.as_ref().map(|l| Arc::clone(&l.report))
    }

    /// Where a run stands in storage.
    pub fn save_state(&self, id: RunId) -> SaveState {
        self.stored
            .get(&id)
            .map(|s| s.state.clone())
            .unwrap_or_default()
    }

    /// The runs ticked for comparison that still exist, in the order ticked.
    pub fn compared(&self) -> Vec<&SavedRun> {
        self.compare.iter().filter_map(|id| self.run(*id)).collect()
    }
}

/// Where requests go. Its secrets (the API key and the extra headers, whose values are often
/// credentials) are never serialized: `actions::settings` keeps them on the device only when
/// `remember_secrets` is set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Store)]
pub struct EndpointConfig {
    /// Base URL (empty = this page's origin, the built-in reference endpoint).
    pub base_url: String,
    /// API style; `None` = OpenAI chat completions with automatic stream detection.
    pub dialect: Option<Dialect>,
    /// Model.
    pub model: String,
    /// API key: held in memory only, unless the user opts in to keep it on this device.
    #[serde(skip)]
    pub api_key: String,
    /// The user allows keeping the key and the extra headers in this browser's storage.
    #[serde(alias = "remember_key")]
    pub remember_secrets: bool,
    /// Extra headers, one `Name: value` per line: held in memory only, like the key (values
    /// are not stored in reports either).
    #[serde(skip)]
    pub extra_headers: String,
    /// Reference endpoint: which server's framing to imitate.
    pub flavour: String,
    /// More base URLs serving the same model, one per line: requests are spread over them
    /// round-robin (browsers allow 6 HTTP/1.1 connections per origin).
    #[serde(default)]
    pub shards: String,
    /// Read the server's Prometheus metrics during each run.
    #[serde(default)]
    pub scrape_metrics: bool,
    /// The metrics URL; empty = derived from the base URL
    /// (`ttft_core::server_metrics::metrics_url`).
    #[serde(default)]
    pub metrics_url: String,
}

impl Default for EndpointConfig {
    fn default() -> Self {
        Self {
            base_url: String::new(),
            dialect: None,
            model: "sim-fast".into(),
            api_key: String::new(),
            remember_secrets: false,
            extra_headers: String::new(),
            flavour: "vllm".into(),
            shards: String::new(),
            scrape_metrics: false,
            metrics_url: String::new(),
        }
    }
}

impl EndpointConfig {
    /// The metrics URL to scrape: as typed, else derived from the base URL.
    pub fn effective_metrics_url(&self) -> String {
        if self.metrics_url.trim().is_empty() {
            ttft_core::server_metrics::metrics_url(&self.effective_base())
        } else {
            self.metrics_url.trim().to_owned()
        }
    }

    /// The base URL to call.
    pub fn effective_base(&self) -> String {
        if self.base_url.trim().is_empty() {
            crate::browser::page_origin()
        } else {
            self.base_url.trim().to_owned()
        }
    }

    /// Every base URL requests go to: the main one, then the shards.
    pub fn bases(&self) -> Vec<String> {
        let mut v = vec![self.effective_base()];
        v.extend(
            self.shards
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_owned),
        );
        v
    }

    /// Whether this is the built-in reference endpoint.
    pub fn is_reference(&self) -> bool {
        self.base_url.trim().is_empty()
    }

    /// Model name as sent (the reference endpoint takes `model@flavour`).
    pub fn wire_model(&self) -> String {
        self.wire_model_of(&self.model)
    }

    /// Another model's name as sent to this endpoint (an A/B run's arm on the endpoint's base
    /// URL): with the reference endpoint's flavour appended, as [`EndpointConfig::wire_model`].
    pub fn wire_model_of(&self, model: &str) -> String {
        if self.is_reference()
            && !self.flavour.is_empty()
            && self.flavour != "vllm"
            && !model.contains('@')
        {
            format!("{model}@{}", self.flavour)
        } else {
            model.to_owned()
        }
    }

    /// An A/B run's arm's model as sent: on this endpoint's base URL as
    /// [`EndpointConfig::wire_model_of`] says, on its own as typed. The key and headers are
    /// this endpoint's either way.
    pub fn arm_wire_model(&self, arm: &ttft_core::scenario::Arm) -> String {
        match arm.own_base() {
            Some(_) => arm.model.trim().to_owned(),
            None => self.wire_model_of(arm.model.trim()),
        }
    }

    /// Headers that may carry secrets: the API key and the extra headers. Sent, never stored.
    pub fn secret_headers(&self) -> Result<Vec<(String, String)>, HeaderLineError> {
        let mut out = Vec::new();
        if !self.api_key.trim().is_empty() {
            out.push(ttft_core::request::auth_header(
                self.dialect,
                self.api_key.trim(),
            ));
        }
        out.extend(ttft_core::request::parse_header_lines(&self.extra_headers)?);
        Ok(out)
    }
}

/// Loads code a run will need that the actions cannot name: the report's views, which the page
/// gives ([`Studio::view_parts`]).
pub type PartsLoader = fn() -> Pin<Box<dyn Future<Output = Result<(), PartError>>>>;

/// The studio's settings and state, shared by context.
#[derive(Clone, Copy)]
pub struct Studio {
    /// Runs, what is shown, notices.
    pub state: Store<StudioState>,
    /// Endpoint settings: the endpoint panel binds their fields ([`EndpointConfigStoreFields`]).
    pub endpoint: Store<EndpointConfig>,
    /// Scenario settings: the scenario panel binds their fields ([`ScenarioConfigStoreFields`]).
    pub scenario: Store<ScenarioConfig>,
    /// The confidence level of every interval shown or exported, and the relative difference
    /// the "requests per side" advice is for (kept on this device).
    pub confidence: RwSignal<ttft_core::differences::Confidence>,
    /// The team's opener list (its changes to the default phrases, kept on this device): new
    /// runs decide their meaningful first token with it.
    pub openers: RwSignal<ttft_core::openers::OpenerEdits>,
    /// How the live chat surface draws the answers while a run streams (kept on this device);
    /// `None` = it does not draw.
    pub surface: RwSignal<Option<ttft_render::Strategy>>,
    /// Cancels the live run.
    pub handle: StoredValue<Option<RunHandle>, LocalStorage>,
    /// Loads the report views' code before a run sends anything (`actions::run::load_run_parts`).
    pub view_parts: PartsLoader,
}

/// The studio context.
pub fn use_studio() -> Studio {
    expect_context::<Studio>()
}

/// Declares the scenario settings' fields as store fields, as `#[derive(Store)]` would (the
/// type lives in the core, which takes no Leptos dependency): one `Subfield` per field, keyed by
/// its place in the struct (`ScenarioConfig`'s field order: a new field there moves the keys
/// after it).
macro_rules! store_fields {
    ($store:ident of $ty:ty { $($i:literal $name:ident: $field:ty),* $(,)? }) => {
        /// Store fields of the scenario settings, for `bind:` and fine-grained reads.
        pub trait $store {
            $(
                #[doc = concat!("The `", stringify!($name), "` field.")]
                fn $name(self) -> Subfield<Store<$ty>, $ty, $field>;
            )*
        }

        impl $store for Store<$ty> {
            $(
                fn $name(self) -> Subfield<Store<$ty>, $ty, $field> {
                    Subfield::new(self, $i.into(), |c| &c.$name, |c| &mut c.$name)
                }
            )*
        }
    };
}

store_fields!(ScenarioConfigStoreFields of ScenarioConfig {
    0 kind: ScenarioKind,
    1 preset: Option<usize>,
    2 custom_prompt: String,
    10 levels: String,
    11 prompt_levels: String,
    12 required_keys: String,
    13 use_tools: bool,
    16 continuous_usage: bool,
    17 ignore_eos: bool,
    20 extra_body: String,
    21 arms: Vec<ttft_core::scenario::Arm>,
    22 repeats: u32,
});
