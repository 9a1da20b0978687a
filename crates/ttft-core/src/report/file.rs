//! The report file format, in one place: building a [`Report`] (the header every producer
//! fills the same way), reading its JSON with the version check, and the JSON and CSV exports.
//!
//! Every reader of report JSON goes through [`read_json`] / [`read_value`]: share links
//! (the `ttft-share` crate), imports ([`crate::import`]) and the studio's saved runs. A file of a newer
//! format is refused with a message, never half-read.

use serde_json::Value;
use thiserror::Error;

use super::{EndpointInfo, REPORT_VERSION, Report, RequestRecord};
use crate::experience::ExperienceConfig;
use crate::openers::OpenerEdits;
use crate::stats::Thresholds;

/// Why report JSON could not be read.
#[derive(Debug, Error, PartialEq)]
pub enum ReportFileError {
    /// Not JSON.
    #[error("not JSON ({0})")]
    NotJson(String),
    /// JSON without a `version`.
    #[error("not a ttft-studio report: it has no \"version\" field")]
    NoVersion,
    /// A report of a newer format.
    #[error(
        "this report has format version {0}; this studio reads up to version {REPORT_VERSION}: open it in a newer studio"
    )]
    NewerVersion(u32),
    /// A field is missing or has the wrong type.
    #[error("the report is damaged: {0}")]
    BadField(String),
}

/// Whether a JSON object has the shape of a studio report (as opposed to another tool's file).
pub fn looks_like_report(object: &serde_json::Map<String, Value>) -> bool {
    object.contains_key("requests")
        && object.contains_key("endpoint")
        && object.contains_key("version")
}

/// Reads report JSON, checking the version first. A well-formed report is parsed straight
/// into a [`Report`] (a 10,000-request report is 90 MB: going through a `Value` tree costs
/// three times as long); anything else is read through [`read_value`] for its precise error.
pub fn read_json(json: &[u8]) -> Result<Report, ReportFileError> {
    /// Only the version: every other field is skipped, not built.
    #[derive(serde::Deserialize)]
    struct Version {
        version: Option<u64>,
    }
    if let Ok(Version {
        version: Some(version),
    }) = serde_json::from_slice::<Version>(json)
        && version <= u64::from(REPORT_VERSION)
        && let Ok(report) = serde_json::from_slice::<Report>(json)
    {
        return Ok(report);
    }
    let value: Value =
        serde_json::from_slice(json).map_err(|e| ReportFileError::NotJson(e.to_string()))?;
    read_value(value)
}

/// Reads a report from parsed JSON, checking the version first.
pub fn read_value(value: Value) -> Result<Report, ReportFileError> {
    let version = value
        .get("version")
        .and_then(Value::as_u64)
        .ok_or(ReportFileError::NoVersion)?;
    if version > u64::from(REPORT_VERSION) {
        return Err(ReportFileError::NewerVersion(
            u32::try_from(version).unwrap_or(u32::MAX),
        ));
    }
    serde_json::from_value(value).map_err(|e| ReportFileError::BadField(e.to_string()))
}

impl Report {
    /// An empty report of the current format: no requests yet, default thresholds, no clock
    /// facts, `null` settings. The `with_*` methods fill the rest.
    pub fn new(
        title: impl Into<String>,
        endpoint: EndpointInfo,
        scenario: impl Into<String>,
    ) -> Self {
        Self {
            version: REPORT_VERSION,
            title: title.into(),
            created_unix_ms: 0.0,
            clock_resolution_ms: None,
            user_agent: None,
            stamping: None,
            endpoint,
            scenario: scenario.into(),
            settings: Value::Null,
            thresholds: Thresholds::default(),
            experience: ExperienceConfig::default(),
            requests: Vec::new(),
            shared: None,
            vantage: None,
            import_notes: Vec::new(),
            votes: Vec::new(),
            slo: super::slo::SloSet::default(),
            client_health: None,
            source_summary: None,
            metrics_url: None,
            server_scrapes: Vec::new(),
            group: None,
            openers: OpenerEdits::default(),
            saturation: None,
            painted: None,
        }
    }

    /// Sets the server's metrics URL and what was scraped from it during the run (raw; see
    /// [`Report::server_scrapes`]).
    pub fn with_server_scrapes(
        mut self,
        metrics_url: impl Into<String>,
        scrapes: Vec<crate::server_metrics::Scrape>,
    ) -> Self {
        self.metrics_url = Some(metrics_url.into());
        self.server_scrapes = scrapes;
        self
    }

    /// Sets the scenario settings as given by the user.
    pub fn with_settings(mut self, settings: Value) -> Self {
        self.settings = settings;
        self
    }

    /// Sets when the run happened (Unix ms).
    pub fn created_at(mut self, unix_ms: f64) -> Self {
        self.created_unix_ms = unix_ms;
        self
    }

    /// Sets the measured clock resolution (ms).
    pub fn with_clock_resolution(mut self, resolution_ms: Option<f64>) -> Self {
        self.clock_resolution_ms = resolution_ms;
        self
    }

    /// Sets the browser that measured the run, as its user agent names it.
    pub fn with_user_agent(mut self, user_agent: Option<String>) -> Self {
        self.user_agent = user_agent;
        self
    }

    /// Sets where reads were stamped, in words.
    pub fn with_stamping(mut self, stamping: impl Into<String>) -> Self {
        self.stamping = Some(stamping.into());
        self
    }

    /// Sets the deadlines and reader of the experience scores.
    pub fn with_experience(mut self, experience: ExperienceConfig) -> Self {
        self.experience = experience;
        self
    }

    /// Sets the requests.
    pub fn with_requests(mut self, requests: Vec<RequestRecord>) -> Self {
        self.requests = requests;
        self
    }

    /// The report as the JSON file users export and import (pretty-printed).
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).expect("reports always serialize")
    }

    /// The report as CSV, one row per request (warm-ups included and marked); the time to
    /// second token and the per-user rates come after `coalesced`, the message last.
    pub fn to_csv(&self) -> String {
        let mut out = String::from(
            "index,group,level,warmup,outcome,ttfb_ms,ttft_ms,first_answer_ms,meaningful_ms,tpot_ms,e2e_ms,output_tokens,token_source,prompt_tokens,coalesced,ttst_ms,output_per_user_tok_s,prefill_per_user_tok_s,message\n",
        );
        for r in &self.requests {
            let m = &r.metrics;
            let f = |v: Option<f64>| v.map_or(String::new(), |x| format!("{x:.3}"));
            let quoted = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
            out.push_str(&format!(
                "{},{},{},{},{},{},{},{},{},{},{},{},{:?},{},{},{},{},{},{}\n",
                r.index,
                quoted(&r.group),
                f(r.level),
                r.warmup,
                r.outcome.kind(),
                f(m.ttfb_ms),
                f(m.ttft_ms),
                f(m.first_answer_ms),
                f(m.meaningful_ms),
                f(m.tpot_ms),
                f(m.e2e_ms),
                m.output_tokens,
                m.token_source,
                m.prompt_tokens.map_or(String::new(), |p| p.to_string()),
                m.coalesced,
                f(m.ttst_ms()),
                f(m.user_output_tokens_per_s()),
                f(m.prefill_tokens_per_s()),
                quoted(r.outcome.message().unwrap_or(""))
            ));
        }
        out
    }
}
