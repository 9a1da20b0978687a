//! Byte-level stream framing: WHATWG server-sent events and NDJSON.
//!
//! Both parsers are sans-IO: feed them the bytes of each network read as they arrive and they
//! return the events that read completed. They never decode a network chunk on its own, so a
//! multi-byte UTF-8 character or a CRLF split across two reads is handled exactly as if it had
//! arrived in one piece.

use serde::{Deserialize, Serialize};

/// One dispatched server-sent event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SseEvent {
    /// The `event:` field, `message` when absent.
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The last event id in force when the event was dispatched (the spec carries it over).
    pub id: Option<String>,
    /// A `retry:` value seen in this event's block (digits only).
    pub retry: Option<u64>,
}

/// What was left in the parser when the stream ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Truncation {
    /// Data lines of an event that never saw its terminating blank line.
    pub partial_data: String,
    /// Bytes of an unterminated last line (lossy UTF-8).
    pub partial_line: String,
}

const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// Incremental parser for `text/event-stream` following the WHATWG interpretation rules.
#[derive(Debug, Default, Clone)]
pub struct SseParser {
    pending: Vec<u8>,
    bom_checked: bool,
    skip_lf: bool,
    data: String,
    has_data: bool,
    event_type: String,
    last_id: Option<String>,
    retry: Option<u64>,
    comments: u64,
}

impl SseParser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of comment lines (`:` keep-alives) seen so far.
    pub fn comments(&self) -> u64 {
        self.comments
    }

    /// Feeds the bytes of one read; returns the events it completed, in order.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        self.pending.extend_from_slice(bytes);
        if !self.bom_checked {
            let n = self.pending.len().min(3);
            if self.pending[..n] == BOM[..n] && self.pending.len() < 3 {
                return out; // might still become a BOM
            }
            if self.pending.starts_with(&BOM) {
                self.pending.drain(..3);
            }
            self.bom_checked = true;
        }
        let mut start = 0;
        let mut i = 0;
        while i < self.pending.len() {
            let b = self.pending[i];
            if self.skip_lf {
                self.skip_lf = false;
                if b == b'\n' {
                    start = i + 1;
                    i += 1;
                    continue;
                }
            }
            if b == b'\n' || b == b'\r' {
                let line = String::from_utf8_lossy(&self.pending[start..i]).into_owned();
                self.skip_lf = b == b'\r';
                self.process_line(&line, &mut out);
                start = i + 1;
            }
            i += 1;
        }
        self.pending.drain(..start);
        out
    }

    /// Ends the stream. Per the spec an event without its blank line is not dispatched; it is
    /// returned as a [`Truncation`] so that a benchmark can report it.
    pub fn finish(&mut self) -> Option<Truncation> {
        let partial_line = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        let partial_data = std::mem::take(&mut self.data);
        let had = self.has_data || !partial_line.is_empty();
        self.has_data = false;
        had.then_some(Truncation {
            partial_data,
            partial_line,
        })
    }

    fn process_line(&mut self, line: &str, out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line.starts_with(':') {
            self.comments += 1;
            return;
        }
        let (field, value) = match line.find(':') {
            Some(pos) => {
                let v = &line[pos + 1..];
                (&line[..pos], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (line, ""),
        };
        match field {
            "event" => self.event_type = value.to_owned(),
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
                self.has_data = true;
            }
            "id" if !value.contains('\0') => {
                self.last_id = Some(value.to_owned());
            }
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                self.retry = value.parse().ok();
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event_type = std::mem::take(&mut self.event_type);
        let retry = self.retry.take();
        if !self.has_data {
            self.data.clear();
            return;
        }
        self.has_data = false;
        let mut data = std::mem::take(&mut self.data);
        if data.ends_with('\n') {
            data.pop();
        }
        out.push(SseEvent {
            event: if event_type.is_empty() {
                "message".to_owned()
            } else {
                event_type
            },
            data,
            id: self.last_id.clone(),
            retry,
        });
    }
}

/// Incremental parser for newline-delimited JSON (Ollama native, TGI without SSE).
/// Each non-blank line becomes one event of type `message`.
#[derive(Debug, Default, Clone)]
pub struct NdjsonParser {
    pending: Vec<u8>,
}

impl NdjsonParser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds the bytes of one read; returns the lines it completed.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        self.pending.extend_from_slice(bytes);
        let mut out = Vec::new();
        let mut start = 0;
        for i in 0..self.pending.len() {
            if self.pending[i] == b'\n' {
                push_line(&self.pending[start..i], &mut out);
                start = i + 1;
            }
        }
        self.pending.drain(..start);
        out
    }

    /// Ends the stream: NDJSON may omit the final newline, so a last line is still an event.
    pub fn finish(&mut self) -> Vec<SseEvent> {
        let mut out = Vec::new();
        push_line(&std::mem::take(&mut self.pending), &mut out);
        out
    }
}

fn push_line(line: &[u8], out: &mut Vec<SseEvent>) {
    let line = line.strip_prefix(&BOM[..]).unwrap_or(line);
    let text = String::from_utf8_lossy(line);
    let text = text.trim();
    if !text.is_empty() {
        out.push(SseEvent {
            event: "message".into(),
            data: text.to_owned(),
            id: None,
            retry: None,
        });
    }
}

/// How a response body is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Framing {
    /// `text/event-stream`.
    Sse,
    /// One JSON object per line.
    Ndjson,
}

impl Framing {
    /// Picks the framing from a `Content-Type` header, if it says.
    pub fn from_content_type(content_type: &str) -> Option<Self> {
        let ct = content_type.to_ascii_lowercase();
        if ct.contains("event-stream") {
            Some(Framing::Sse)
        } else if ct.contains("ndjson") || ct.contains("jsonl") || ct.contains("application/json") {
            Some(Framing::Ndjson)
        } else {
            None
        }
    }
}

/// A framing decoder that settles on SSE or NDJSON from the header or, failing that, from the
/// first non-blank byte of the body (`{` means NDJSON).
#[derive(Debug, Clone, Default)]
pub struct FrameDecoder {
    framing: Option<Framing>,
    sse: SseParser,
    ndjson: NdjsonParser,
    sniff: Vec<u8>,
}

impl FrameDecoder {
    /// A decoder with the framing chosen (`None` = detect).
    pub fn new(framing: Option<Framing>) -> Self {
        Self {
            framing,
            ..Self::default()
        }
    }

    /// The framing in use, once known.
    pub fn framing(&self) -> Option<Framing> {
        self.framing
    }

    /// Comment lines seen (SSE only).
    pub fn comments(&self) -> u64 {
        self.sse.comments()
    }

    /// Feeds one read.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        match self.framing {
            Some(Framing::Sse) => self.sse.feed(bytes),
            Some(Framing::Ndjson) => self.ndjson.feed(bytes),
            None => {
                self.sniff.extend_from_slice(bytes);
                let first = self
                    .sniff
                    .iter()
                    .copied()
                    .find(|b| !b.is_ascii_whitespace() && !BOM.contains(b));
                match first {
                    None => Vec::new(),
                    Some(b) => {
                        self.framing = Some(if b == b'{' {
                            Framing::Ndjson
                        } else {
                            Framing::Sse
                        });
                        let buffered = std::mem::take(&mut self.sniff);
                        self.feed(&buffered)
                    }
                }
            }
        }
    }

    /// Ends the stream: trailing events (NDJSON) and any truncation (SSE).
    pub fn finish(&mut self) -> (Vec<SseEvent>, Option<Truncation>) {
        match self.framing {
            Some(Framing::Ndjson) => (self.ndjson.finish(), None),
            _ => (Vec::new(), self.sse.finish()),
        }
    }
}
