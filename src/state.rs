//! Studio state shared by typed context: endpoint and scenario settings, saved runs, the live
//! run and the clock status.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};
use ttft_core::dialect::Dialect;
use ttft_core::report::Report;

use crate::runner::{Progress, RunHandle};
use crate::scenario::ScenarioConfig;

/// Where requests go. The API key is never serialized.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// The user allows keeping the key in this browser's storage.
    pub remember_key: bool,
    /// Extra headers, one `Name: value` per line (values are not stored in reports).
    pub extra_headers: String,
    /// Reference endpoint: which server's framing to imitate.
    pub flavour: String,
    /// More base URLs serving the same model, one per line: requests are spread over them
    /// round-robin (browsers allow 6 HTTP/1.1 connections per origin).
    #[serde(default)]
    pub shards: String,
}

impl Default for EndpointConfig {
    fn default() -> Self {
        Self {
            base_url: String::new(),
            dialect: None,
            model: "sim-fast".into(),
            api_key: String::new(),
            remember_key: false,
            extra_headers: String::new(),
            flavour: "vllm".into(),
            shards: String::new(),
        }
    }
}

impl EndpointConfig {
    /// The base URL to call.
    pub fn effective_base(&self) -> String {
        if self.base_url.trim().is_empty() {
            web_sys::window()
                .and_then(|w| w.location().origin().ok())
                .unwrap_or_default()
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
        if self.is_reference()
            && !self.flavour.is_empty()
            && self.flavour != "vllm"
            && !self.model.contains('@')
        {
            format!("{}@{}", self.model, self.flavour)
        } else {
            self.model.clone()
        }
    }

    /// Headers that may carry secrets: the API key and the extra headers. Sent, never stored.
    pub fn secret_headers(&self) -> Result<Vec<(String, String)>, String> {
        let mut out = Vec::new();
        if !self.api_key.trim().is_empty() {
            out.push(ttft_core::request::auth_header(
                self.dialect,
                self.api_key.trim(),
            ));
        }
        for (i, line) in self.extra_headers.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let (k, v) = line.split_once(':').ok_or_else(|| {
                format!("extra header line {} needs the form 'Name: value'", i + 1)
            })?;
            out.push((k.trim().to_owned(), v.trim().to_owned()));
        }
        Ok(out)
    }
}

/// The run in progress.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveRun {
    /// The report so far.
    pub report: Report,
    /// Progress.
    pub progress: Progress,
    /// Still running.
    pub running: bool,
}

/// Clock facts shown in the status line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClockInfo {
    /// Smallest step of `performance.now()` observed (ms).
    pub resolution_ms: f64,
    /// `crossOriginIsolated`.
    pub isolated: bool,
}

/// The studio's shared state (a typed context).
#[derive(Clone, Copy)]
pub struct Studio {
    /// Endpoint settings.
    pub endpoint: RwSignal<EndpointConfig>,
    /// Scenario settings.
    pub scenario: RwSignal<ScenarioConfig>,
    /// Saved runs, newest first.
    pub runs: RwSignal<Vec<Report>>,
    /// The run shown (index into `runs`), or the live run when `None`.
    pub selected: RwSignal<Option<usize>>,
    /// The live run.
    pub live: RwSignal<Option<LiveRun>>,
    /// Runs ticked for comparison (indices into `runs`).
    pub compare: RwSignal<Vec<usize>>,
    /// A message for the user (errors, storage warnings).
    pub notice: RwSignal<Option<String>>,
    /// Clock status.
    pub clock: RwSignal<Option<ClockInfo>>,
    /// Cancels the live run.
    pub handle: StoredValue<Option<RunHandle>, LocalStorage>,
}

/// The studio context.
pub fn use_studio() -> Studio {
    expect_context::<Studio>()
}
