//! The per-request timeline: what happened when, as the client saw it.
//!
//! [`RequestRecorder`] is the sans-IO sink the browser runner drives: it is told the send time,
//! the response headers, every read (timestamp taken *before* this call, bytes as received) and
//! how the request ended. It frames and classifies the bytes and keeps a [`RequestTimeline`] from
//! which [`crate::metrics`] computes every figure. All times are milliseconds on one monotonic
//! clock (`performance.now()` in the browser).

use serde::{Deserialize, Serialize};

use crate::dialect::{Dialect, DialectDecoder, StreamEvent};
use crate::sse::{FrameDecoder, Framing};

/// How a request ended.
///
/// [`Outcome::CutByClient`] is the client's own doing (the run's end, a stop, a cancel), not
/// the server's: such requests are counted apart and never as errors or against goodput. Older
/// files and reports wrote them as `aborted` with the message of the client that cut them;
/// those read back as [`Outcome::CutByClient`] ([`CLIENT_CUT_MESSAGES`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", from = "OutcomeWire")]
pub enum Outcome {
    /// The stream completed and reported no error.
    Ok,
    /// The server answered with a non-2xx status.
    HttpError {
        /// HTTP status.
        status: u16,
        /// Start of the body, for the user.
        message: String,
    },
    /// The server reported an error inside the stream (or sent malformed data).
    StreamError {
        /// The server's message.
        message: String,
    },
    /// The body ended without the dialect's terminal marker, or inside an event.
    Truncated {
        /// What was missing.
        message: String,
    },
    /// The request was aborted for a reason not known to be the client's own end of run.
    Aborted {
        /// Why.
        message: String,
    },
    /// The client cut the request at its own end of run: a time limit (Locust's `-t`), the
    /// user's stop, a peer tool's cancellation. Not the server's failure; partial data is kept.
    CutByClient {
        /// Who cut it and why.
        message: String,
    },
    /// The request exceeded its time limit.
    Timeout {
        /// Which limit.
        message: String,
    },
    /// The request could not be made (network failure, CORS, DNS).
    NetworkError {
        /// The browser's message, with advice.
        message: String,
    },
}

impl Outcome {
    /// A short stable label: `ok`, `http_error`, `stream_error`, …
    pub fn kind(&self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::HttpError { .. } => "http_error",
            Outcome::StreamError { .. } => "stream_error",
            Outcome::Truncated { .. } => "truncated",
            Outcome::Aborted { .. } => "aborted",
            Outcome::CutByClient { .. } => "cut_by_client",
            Outcome::Timeout { .. } => "timeout",
            Outcome::NetworkError { .. } => "network_error",
        }
    }

    /// The message, if not ok.
    pub fn message(&self) -> Option<&str> {
        match self {
            Outcome::Ok => None,
            Outcome::HttpError { message, .. }
            | Outcome::StreamError { message }
            | Outcome::Truncated { message }
            | Outcome::Aborted { message }
            | Outcome::CutByClient { message }
            | Outcome::Timeout { message }
            | Outcome::NetworkError { message } => Some(message),
        }
    }

    /// True for [`Outcome::Ok`].
    pub fn is_ok(&self) -> bool {
        matches!(self, Outcome::Ok)
    }

    /// True for [`Outcome::CutByClient`]: the client's own end of run, not the server's
    /// failure (left out of errors, goodput and the objectives).
    pub fn is_cut_by_client(&self) -> bool {
        matches!(self, Outcome::CutByClient { .. })
    }

    /// True for an outcome that counts as the server's failure: neither ok nor cut by the
    /// client.
    pub fn is_failure(&self) -> bool {
        !self.is_ok() && !self.is_cut_by_client()
    }

    /// The same outcome, with an `aborted` that older clients wrote for their own cut
    /// ([`CLIENT_CUT_MESSAGES`]) read as [`Outcome::CutByClient`].
    pub fn normalised(self) -> Self {
        match self {
            Outcome::Aborted { message }
                if CLIENT_CUT_MESSAGES.iter().any(|m| message.starts_with(m)) =>
            {
                Outcome::CutByClient { message }
            }
            other => other,
        }
    }
}

/// The messages with which older clients wrote their own cut as `aborted`: the locustfile
/// (Locust stopping its users at `-t` or a stop), the studio's Stop, and the imports of
/// AIPerf's cancelled and GuideLLM's incomplete requests. An `aborted` outcome whose message
/// begins with one of them reads as [`Outcome::CutByClient`].
pub const CLIENT_CUT_MESSAGES: [&str; 4] = [
    "stopped by Locust",
    "cancelled by the user",
    "AIPerf cancelled the request",
    "GuideLLM recorded the request as incomplete",
];

/// [`Outcome`] as written, before older clients' cuts are recognised ([`Outcome::normalised`]).
#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum OutcomeWire {
    Ok,
    HttpError { status: u16, message: String },
    StreamError { message: String },
    Truncated { message: String },
    Aborted { message: String },
    CutByClient { message: String },
    Timeout { message: String },
    NetworkError { message: String },
}

impl From<OutcomeWire> for Outcome {
    fn from(w: OutcomeWire) -> Self {
        match w {
            OutcomeWire::Ok => Outcome::Ok,
            OutcomeWire::HttpError { status, message } => Outcome::HttpError { status, message },
            OutcomeWire::StreamError { message } => Outcome::StreamError { message },
            OutcomeWire::Truncated { message } => Outcome::Truncated { message },
            OutcomeWire::Aborted { message } => Outcome::Aborted { message },
            OutcomeWire::CutByClient { message } => Outcome::CutByClient { message },
            OutcomeWire::Timeout { message } => Outcome::Timeout { message },
            OutcomeWire::NetworkError { message } => Outcome::NetworkError { message },
        }
        .normalised()
    }
}

/// One network read.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Read {
    /// Arrival time (ms).
    pub at: f64,
    /// Bytes in the read.
    pub bytes: u32,
}

/// One classified event with the arrival time of the read that completed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimedEvent {
    /// Arrival time of its read (ms); events of one read share it.
    pub at: f64,
    /// Index into [`RequestTimeline::reads`].
    pub read: u32,
    /// The event.
    pub event: StreamEvent,
    /// The choice (`choices[].index`) it belongs to when a stream interleaves several answers
    /// (`n > 1`); `None` for events outside any choice and for single-answer dialects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choice: Option<u32>,
}

/// Everything recorded about one request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestTimeline {
    /// t0: taken immediately before the request was sent (ms).
    pub sent_at: f64,
    /// When the response headers arrived.
    pub headers_at: Option<f64>,
    /// HTTP status.
    pub status: Option<u16>,
    /// When the request ended (last byte, error, abort or timeout).
    pub ended_at: Option<f64>,
    /// Every read.
    pub reads: Vec<Read>,
    /// Every classified event.
    pub events: Vec<TimedEvent>,
    /// The dialect detected or chosen.
    pub dialect: Option<Dialect>,
    /// The framing detected or chosen.
    pub framing: Option<Framing>,
    /// Keep-alive comments seen.
    pub comments: u64,
    /// How it ended.
    pub outcome: Outcome,
    /// False when a 2xx body was one JSON document instead of a stream (the server or a
    /// proxy ignored `stream: true`): its events then form one arrival at the body's end.
    #[serde(default = "streamed_default", skip_serializing_if = "is_streamed")]
    pub streamed: bool,
}

fn streamed_default() -> bool {
    true
}

fn is_streamed(streamed: &bool) -> bool {
    *streamed
}

impl RequestTimeline {
    /// Total bytes received.
    pub fn bytes(&self) -> u64 {
        self.reads.iter().map(|r| u64::from(r.bytes)).sum()
    }

    /// The primary choice when the stream interleaves several (`n > 1`): the lowest
    /// `choices[].index` with output (0 when there is one answer).
    pub fn primary_choice(&self) -> u32 {
        self.events
            .iter()
            .filter(|e| e.event.is_output())
            .map(|e| e.choice.unwrap_or(0))
            .min()
            .unwrap_or(0)
    }
}

/// The sans-IO sink a runner drives for one request.
#[derive(Debug, Clone)]
pub struct RequestRecorder {
    frames: FrameDecoder,
    decoder: DialectDecoder,
    timeline: RequestTimeline,
    saw_done: bool,
    saw_finish: bool,
    error: Option<String>,
    /// The body so far while it may be one JSON document (starts with `{` or `[`, not SSE,
    /// not yet proven NDJSON by two well-formed lines); dropped beyond [`MAX_DOCUMENT`].
    document: Option<Vec<u8>>,
    /// The body was still one JSON document when it grew past [`MAX_DOCUMENT`]: the request
    /// ends with an error that names the limit instead of reading its lines as a stream.
    document_too_large: bool,
    /// The body's first byte other than whitespace or a BOM was seen (and opened a document).
    document_opened: bool,
    /// JSON-object frames decoded without a malformed event (two make an NDJSON stream).
    well_formed_frames: u32,
    /// Bytes examined outside the framing (see [`Self::examined`]).
    examined: u64,
    /// One answer was asked for ([`Self::asking`]): every event is the one answer's.
    single_choice: bool,
}

/// Largest body read as one JSON document (a non-streamed answer): 64 MiB. A larger one ends
/// the request with an error that says so (a stream of any length is not held to it).
pub const MAX_DOCUMENT: usize = 64 * 1024 * 1024;

impl RequestRecorder {
    /// Starts a request sent at `sent_at`; `dialect`/`framing` `None` mean detect.
    pub fn new(sent_at: f64, dialect: Option<Dialect>, framing: Option<Framing>) -> Self {
        Self {
            frames: FrameDecoder::new(framing),
            decoder: DialectDecoder::new(dialect),
            timeline: RequestTimeline {
                sent_at,
                headers_at: None,
                status: None,
                ended_at: None,
                reads: Vec::new(),
                events: Vec::new(),
                dialect,
                framing,
                comments: 0,
                outcome: Outcome::Ok,
                streamed: true,
            },
            saw_done: false,
            saw_finish: false,
            error: None,
            document: Some(Vec::new()),
            document_too_large: false,
            document_opened: false,
            well_formed_frames: 0,
            examined: 0,
            single_choice: false,
        }
    }

    /// Says how many answers the request asked for (`n`, see [`crate::request::choices_asked`];
    /// `None` when unknown). With one, every event belongs to that answer whatever
    /// `choices[].index` the server gives it: a server that numbers a single answer's chunks
    /// wrongly does not split it. With several (or unknown), the indexes tell answers apart.
    pub fn asking(mut self, choices: Option<u32>) -> Self {
        self.single_choice = choices == Some(1);
        self
    }

    /// Response headers arrived at `at`.
    pub fn on_headers(&mut self, at: f64, status: u16, content_type: Option<&str>) {
        self.timeline.headers_at = Some(at);
        self.timeline.status = Some(status);
        if self.frames.framing().is_none()
            && let Some(f) = content_type.and_then(Framing::from_content_type)
        {
            self.frames = FrameDecoder::new(Some(f));
        }
    }

    /// A read of `bytes` arrived at `at` (timestamp taken before this call).
    pub fn on_read(&mut self, at: f64, bytes: &[u8]) {
        let read = self.timeline.reads.len() as u32;
        self.timeline.reads.push(Read {
            at,
            bytes: bytes.len() as u32,
        });
        self.keep_document(bytes);
        for frame in self.frames.feed(bytes) {
            self.push_frame(at, read, &frame);
        }
    }

    /// Events recorded so far (for live views).
    pub fn timeline(&self) -> &RequestTimeline {
        &self.timeline
    }

    /// Bytes examined by the reads so far: by the framing ([`FrameDecoder::examined`]), while
    /// looking for the start of a JSON document, and in the framed events handed to the
    /// dialect decoder. Each byte of the body counts a bounded number of times however it was
    /// split into reads, so this stays linear in the body (tests hold it to that).
    pub fn examined(&self) -> u64 {
        self.frames.examined() + self.examined
    }

    /// Keeps the body while it may still be one JSON document (see [`Self::document`]).
    fn keep_document(&mut self, bytes: &[u8]) {
        let Some(doc) = self.document.as_mut() else {
            return;
        };
        doc.extend_from_slice(bytes);
        if !self.document_opened {
            // Everything before these bytes was whitespace or BOM bytes: look at them only.
            let first = bytes
                .iter()
                .position(|b| !b.is_ascii_whitespace() && ![0xEF, 0xBB, 0xBF].contains(b));
            self.examined += first.map_or(bytes.len(), |i| i + 1) as u64;
            match first.map(|i| bytes[i]) {
                None => {}
                Some(b'{' | b'[') => self.document_opened = true,
                Some(_) => {
                    self.document = None;
                    return;
                }
            }
        }
        if self.well_formed_frames >= 2 {
            self.document = None; // an NDJSON stream
        } else if doc.len() > MAX_DOCUMENT {
            self.document = None;
            self.document_too_large = true;
        }
    }

    /// A 2xx body that is one JSON document holding a whole answer (or an error) replaces
    /// whatever the framing made of its lines: the answer becomes one arrival at the time of
    /// the last read, and the timeline is marked as not streamed. True when it did.
    fn read_document(&mut self, at: f64) -> bool {
        let Some(doc) = self.document.take() else {
            return false;
        };
        if self
            .timeline
            .status
            .is_some_and(|s| !(200..300).contains(&s))
        {
            return false;
        }
        let text = String::from_utf8_lossy(&doc);
        let text = text.trim_start_matches('\u{feff}');
        let Ok(value) = serde_json::from_str::<serde_json::Value>(text) else {
            return false; // not JSON, or several documents (NDJSON)
        };
        let (events, streamed) = match self.decoder.decode_document(&value) {
            Some(events) => (events, false),
            None if value.get("error").is_some_and(|e| !e.is_null()) => {
                let frame = crate::sse::SseEvent {
                    event: "message".into(),
                    data: value.to_string(),
                    id: None,
                    retry: None,
                };
                (self.decoder.decode_choices(&frame), true)
            }
            None => return false,
        };
        let (read, at) = match self.timeline.reads.len() {
            0 => (0, at),
            n => (n as u32 - 1, self.timeline.reads[n - 1].at),
        };
        self.timeline.events.clear();
        self.saw_done = false;
        self.saw_finish = false;
        self.error = None;
        self.timeline.streamed = streamed;
        self.push_events(at, read, events);
        true
    }

    /// Records decoded events that arrived with read `read` at `at`.
    fn push_events(&mut self, at: f64, read: u32, events: Vec<(Option<u32>, StreamEvent)>) {
        for (choice, event) in events {
            let choice = if self.single_choice {
                choice.map(|_| 0)
            } else {
                choice
            };
            self.note(&event);
            self.timeline.events.push(TimedEvent {
                at,
                read,
                event,
                choice,
            });
        }
    }

    fn note(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::Done => self.saw_done = true,
            StreamEvent::Finish(_) => self.saw_finish = true,
            StreamEvent::Error(e) if self.error.is_none() => {
                let kind = e
                    .kind
                    .as_deref()
                    .map(|k| format!(" ({k})"))
                    .unwrap_or_default();
                self.error = Some(format!(
                    "server reported an error mid-stream{kind}: {}",
                    e.message
                ));
            }
            _ => {}
        }
    }

    fn push_frame(&mut self, at: f64, read: u32, frame: &crate::sse::SseEvent) {
        self.examined += frame.data.len() as u64;
        let events = self.decoder.decode_choices(frame);
        if frame.data.trim_start().starts_with('{')
            && !events
                .iter()
                .any(|(_, e)| matches!(e, StreamEvent::Malformed(_)))
        {
            self.well_formed_frames += 1;
        }
        self.push_events(at, read, events);
    }

    fn close(mut self, at: f64, outcome: Option<Outcome>) -> RequestTimeline {
        let read = self.timeline.reads.len().saturating_sub(1) as u32;
        let (frames, mut truncation) = self.frames.finish();
        for frame in frames {
            self.push_frame(at, read, &frame);
        }
        if outcome.is_none() && self.read_document(at) {
            truncation = None; // the lines of one JSON document are not a broken stream
        }
        self.timeline.ended_at = Some(at);
        self.timeline.dialect = self.decoder.dialect().or(self.timeline.dialect);
        self.timeline.framing = self.frames.framing().or(self.timeline.framing);
        self.timeline.comments = self.frames.comments();
        if outcome.is_none() && self.document_too_large && self.well_formed_frames < 2 {
            // Its lines are not a stream: what the framing made of them is not the answer.
            self.timeline.events.clear();
            self.timeline.streamed = false;
            self.timeline.outcome = Outcome::StreamError {
                message: format!(
                    "the answer is one JSON document (not streamed) larger than {} MiB, the most the studio reads as one answer: ask for a shorter answer or turn streaming on",
                    MAX_DOCUMENT / (1024 * 1024)
                ),
            };
            return self.timeline;
        }
        let malformed = self.timeline.events.iter().find_map(|e| match &e.event {
            StreamEvent::Malformed(m) => Some(m.clone()),
            _ => None,
        });
        self.timeline.outcome = if let Some(o) = outcome {
            o
        } else if let Some(e) = self.error.take() {
            Outcome::StreamError { message: e }
        } else if let Some(t) = truncation {
            Outcome::Truncated {
                message: format!(
                    "the stream ended inside an event (no blank line after it): {:?}",
                    if t.partial_data.is_empty() {
                        t.partial_line
                    } else {
                        t.partial_data
                    }
                ),
            }
        } else if let Some(m) = malformed {
            Outcome::StreamError {
                message: format!("malformed event: {m}"),
            }
        } else if !self.saw_done && !self.saw_finish {
            Outcome::Truncated {
                message: "the stream ended without a finish reason or end marker: the server or a proxy closed it early"
                    .to_owned(),
            }
        } else {
            Outcome::Ok
        };
        self.timeline
    }

    /// The body ended normally at `at`.
    pub fn finish(self, at: f64) -> RequestTimeline {
        self.close(at, None)
    }

    /// The server answered `status` with `body` instead of a stream.
    pub fn http_error(mut self, at: f64, status: u16, body: &str) -> RequestTimeline {
        self.timeline.status = Some(status);
        let message = http_error_message(status, body);
        self.close(at, Some(Outcome::HttpError { status, message }))
    }

    /// The request ended abnormally (abort, timeout, network) at `at`; partial data is kept.
    pub fn fail(self, at: f64, outcome: Outcome) -> RequestTimeline {
        self.close(at, Some(outcome))
    }
}

/// A message for an HTTP error: the server's own message when its body is JSON, plus advice.
pub fn http_error_message(status: u16, body: &str) -> String {
    let server = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            let e = v.get("error").unwrap_or(&v);
            e.get("message")
                .and_then(|m| m.as_str())
                .map(str::to_owned)
                .or_else(|| e.as_str().map(str::to_owned))
        })
        .unwrap_or_else(|| body.chars().take(300).collect());
    let advice = match status {
        400 => "check the request fields the server accepts (TRT-LLM rejects unknown fields)",
        401 | 403 => "check the API key and its header",
        404 => "check the base URL path and the model name",
        408 | 504 => "the server or a gateway timed out; lower the load or raise its timeout",
        413 => "the prompt is too large for the server",
        429 => {
            "the server is rate limiting or its queue is full; lower concurrency or wait (Retry-After)"
        }
        500..=599 => "the server failed; see its logs",
        _ => "see the server's response",
    };
    format!("HTTP {status}: {server} — {advice}")
}
