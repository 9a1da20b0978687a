//! The raw measurement format's records, as data: a request's bytes and times as a client
//! recorded them ([`RawCapture`]), who measured it ([`Vantage`]), what was asked
//! ([`RequestInfo`]) and where a timeline line came from ([`LineOrigin`]). Timeline files
//! ([`crate::timeline_file`]) are lines of these; a studio report keeps them on its requests
//! so a run can be exported as it was measured.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::capture::{Capture, CaptureEnd, CaptureError, CapturedHead};
use crate::dialect::Dialect;
use crate::timeline::{Outcome, Read};

/// Who measured a line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Vantage {
    /// `browser`, `locust`, or another recorder's name.
    pub client: String,
    /// One recording process: `host:pid` for a Locust worker, `tab` for the studio.
    pub worker: String,
    /// The machine.
    pub host: String,
    /// Resolution of the monotonic clock of the `*_ms` times (ms).
    #[serde(default)]
    pub clock_resolution_ms: Option<f64>,
    /// Free text: the tool and versions.
    #[serde(default)]
    pub agent: Option<String>,
}

impl Vantage {
    /// The studio's own vantage: client `browser`, worker `tab`, host `browser`.
    pub fn browser(clock_resolution_ms: Option<f64>, agent: Option<String>) -> Self {
        Self {
            client: "browser".into(),
            worker: "tab".into(),
            host: "browser".into(),
            clock_resolution_ms,
            agent,
        }
    }
}

/// What was asked: the request's place in the scenario. Never a key or a header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestInfo {
    /// The request's number within its worker, from 0.
    pub index: u32,
    /// The API style, `None` = detect it from the stream.
    #[serde(default)]
    pub api: Option<Dialect>,
    /// The full URL it was sent to.
    pub url: String,
    /// The model.
    pub model: String,
    /// The scenario's group (`chat`, `c=8`, `round 3`, `prompt≈2048`).
    #[serde(default)]
    pub group: String,
    /// The group's load level (concurrency, rate, prompt tokens, round), if any.
    #[serde(default)]
    pub level: Option<f64>,
    /// The conversation turn of a multi-turn scenario (from 1).
    #[serde(default)]
    pub turn: Option<u32>,
    /// The planned prompt size (tokens), when the scenario knows it.
    #[serde(default)]
    pub prompt_tokens: Option<u32>,
    /// A warm-up request: kept, left out of the statistics.
    #[serde(default)]
    pub warmup: bool,
    /// The answers the request asked for (`n`; 1 when its body did not say), when the
    /// recorder knew: with 1, the stream is read as one answer whatever `choices[].index` it
    /// carries ([`crate::timeline::RequestRecorder::asking`]). `None` in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choices: Option<u32>,
}

/// The response head of a line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LineHead {
    /// When the headers arrived (ms, the line's monotonic clock).
    pub at_ms: f64,
    /// HTTP status.
    pub status: u16,
    /// `content-type`, if sent.
    #[serde(default)]
    pub content_type: Option<String>,
}

/// How the request of a line ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LineEnd {
    /// The body ended normally.
    Finished {
        /// When (ms).
        at_ms: f64,
    },
    /// A non-2xx answer; its body, read whole, is here and not in `body`/`reads`.
    HttpError {
        /// When the body was read (ms).
        at_ms: f64,
        /// The body.
        body: String,
    },
    /// Aborted, timed out or broken; what was read before is kept.
    Failed {
        /// When (ms).
        at_ms: f64,
        /// Why, as in the report (`{"kind":"timeout","message":…}`).
        outcome: Outcome,
    },
}

/// The capture part of a line: bytes and times, nothing derived. A studio report keeps it in
/// [`crate::report::RequestRecord::raw`] so a run measured in the browser can be exported as a timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RawCapture {
    /// Wall clock (Unix epoch, ms) just before sending.
    pub sent_wall_ms: f64,
    /// Monotonic clock (ms) just before sending: t0.
    pub sent_ms: f64,
    /// The response head, `None` if none arrived.
    #[serde(default)]
    pub head: Option<LineHead>,
    /// Every read as `[arrival_ms, byte_count]`, in order.
    #[serde(default)]
    pub reads: Vec<(f64, u32)>,
    /// The body when it is valid UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// The body in standard base64 when it is not valid UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_b64: Option<String>,
    /// How it ended.
    pub end: LineEnd,
}

impl RawCapture {
    /// A client's capture (moved, so a UTF-8 body is not copied) sent at `sent_wall_ms`.
    pub fn new(capture: Capture, sent_wall_ms: f64) -> Self {
        let (body, body_b64) = match String::from_utf8(capture.body) {
            Ok(text) => (Some(text), None),
            Err(e) => (None, Some(STANDARD.encode(e.as_bytes()))),
        };
        Self {
            sent_wall_ms,
            sent_ms: capture.sent_at,
            head: capture.head.map(|h| LineHead {
                at_ms: h.at,
                status: h.status,
                content_type: h.content_type,
            }),
            reads: capture.reads.iter().map(|r| (r.at, r.bytes)).collect(),
            body,
            body_b64,
            end: match capture.end {
                CaptureEnd::Finished { at } => LineEnd::Finished { at_ms: at },
                CaptureEnd::HttpError { at, body } => LineEnd::HttpError { at_ms: at, body },
                CaptureEnd::Failed { at, outcome } => LineEnd::Failed { at_ms: at, outcome },
            },
        }
    }

    /// The same from a borrowed capture.
    pub fn from_capture(capture: &Capture, sent_wall_ms: f64) -> Self {
        Self::new(capture.clone(), sent_wall_ms)
    }

    /// The body's bytes, checked: one of `body`/`body_b64`, valid base64.
    fn body_bytes(&self) -> Result<Vec<u8>, TimelineError> {
        match (&self.body, &self.body_b64) {
            (Some(_), Some(_)) => Err(TimelineError::TwoBodies),
            (Some(text), None) => Ok(text.as_bytes().to_vec()),
            (None, Some(b64)) => STANDARD
                .decode(b64)
                .map_err(|e| TimelineError::BadBase64(e.to_string())),
            (None, None) => Ok(Vec::new()),
        }
    }

    /// Checks the capture without building it: one body, valid base64, every time a finite
    /// number, reads adding up to the body.
    pub fn check(&self) -> Result<(), TimelineError> {
        let body_len = match (&self.body, &self.body_b64) {
            (Some(text), None) => text.len() as u64,
            _ => self.body_bytes()?.len() as u64,
        };
        self.check_reads(body_len)
    }

    fn check_reads(&self, body_len: u64) -> Result<(), TimelineError> {
        let end_at = match &self.end {
            LineEnd::Finished { at_ms }
            | LineEnd::HttpError { at_ms, .. }
            | LineEnd::Failed { at_ms, .. } => *at_ms,
        };
        let times = [self.sent_wall_ms, self.sent_ms, end_at]
            .into_iter()
            .chain(self.head.as_ref().map(|h| h.at_ms))
            .chain(self.reads.iter().map(|r| r.0));
        if let Some(t) = times.into_iter().find(|t| !t.is_finite()) {
            return Err(TimelineError::BadField(format!(
                "the time {t} is not a number"
            )));
        }
        let read_bytes: u64 = self.reads.iter().map(|r| u64::from(r.1)).sum();
        if read_bytes != body_len {
            return Err(TimelineError::Damaged(CaptureError {
                read_bytes,
                body_bytes: body_len,
            }));
        }
        Ok(())
    }

    /// The capture the core replays ([`Capture::record`]), after the checks of [`Self::check`].
    pub fn to_capture(&self) -> Result<Capture, TimelineError> {
        let body = self.body_bytes()?;
        self.check_reads(body.len() as u64)?;
        Ok(Capture {
            sent_at: self.sent_ms,
            head: self.head.as_ref().map(|h| CapturedHead {
                at: h.at_ms,
                status: h.status,
                content_type: h.content_type.clone(),
            }),
            body,
            reads: self
                .reads
                .iter()
                .map(|&(at, bytes)| Read { at, bytes })
                .collect(),
            end: match &self.end {
                LineEnd::Finished { at_ms } => CaptureEnd::Finished { at: *at_ms },
                LineEnd::HttpError { at_ms, body } => CaptureEnd::HttpError {
                    at: *at_ms,
                    body: body.clone(),
                },
                LineEnd::Failed { at_ms, outcome } => CaptureEnd::Failed {
                    at: *at_ms,
                    outcome: outcome.clone(),
                },
            },
        })
    }
}

/// Where a merged request's line came from: the parts of the line that the merge renumbers or
/// folds into the run (its `run`, its `vantage` and its `request`, with the worker's own
/// `index`). Kept on the request ([`crate::report::RequestRecord::origin`]) beside its [`RawCapture`] (the
/// line's send times and reads as written, on its worker's own clocks), so [`crate::timeline_file::export`] writes
/// the line back as it was read: the same worker, index and clock for every request, and a
/// merge of that export is the same run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LineOrigin {
    /// The line's `run`.
    pub run: String,
    /// Who measured it.
    pub vantage: Vantage,
    /// What was asked, with the index within its worker.
    pub request: RequestInfo,
}

/// Why a line or a set of timeline files could not be read. Every message says what to do.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum TimelineError {
    /// The line is not JSON.
    #[error(
        "not JSON ({0}): every line of a timeline file is one JSON object; the file may be cut or not a timeline"
    )]
    NotJson(String),
    /// JSON without a `format`.
    #[error(
        "not a timeline line: it has no \"format\" field (a timeline line starts {{\"format\":\"ttft-timeline/1\", …}}); import report files with Import, not as timelines"
    )]
    NoFormat,
    /// Another format.
    #[error(
        "format {0} is not ttft-timeline/1: a newer format needs a newer studio, anything else is not a timeline file"
    )]
    WrongFormat(String),
    /// A field is missing or has the wrong type.
    #[error(
        "a field is missing or wrong ({0}): see docs/timeline-format.md for what a line holds; fix the recorder that wrote it"
    )]
    BadField(String),
    /// `body` and `body_b64` both present.
    #[error(
        "the line has both \"body\" and \"body_b64\": a recorder writes one of them (body_b64 only when the bytes are not UTF-8)"
    )]
    TwoBodies,
    /// `body_b64` is not base64.
    #[error(
        "\"body_b64\" is not standard base64 ({0}): the line was damaged; record the request again"
    )]
    BadBase64(String),
    /// Reads that do not add up to the body.
    #[error(transparent)]
    Damaged(#[from] CaptureError),
    /// A file without one good line.
    #[error(
        "{file} holds no timeline line{}: a timeline file holds one JSON object per line with \"format\":\"ttft-timeline/1\" (a worker file written by the generated locustfile.py, or the studio's Export timeline)",
        first_problem.as_ref().map(|p| format!(" (first line: {p})")).unwrap_or_default()
    )]
    NoLines {
        /// The file's name.
        file: String,
        /// What was wrong with its first non-empty line, if it had one.
        first_problem: Option<String>,
    },
    /// Nothing to merge.
    #[error("no timeline file given: choose the files of one run (one per worker)")]
    NoFiles,
    /// Only ledgers were given.
    #[error(
        "only a ledger was given: it counts requests but holds none; select the workers' .jsonl timeline files with it"
    )]
    OnlyLedgers,
}
