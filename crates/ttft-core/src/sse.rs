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
    /// The event's `lastEventId`: the stream's last event ID string as this event was dispatched
    /// (the spec carries it over from earlier blocks); `None` while that string is empty.
    pub id: Option<String>,
    /// A valid `retry:` value seen in this event's block (ASCII digits only). The stream-wide
    /// reconnection time it sets is [`SseParser::reconnection_time_ms`].
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
///
/// Besides the events it keeps the two pieces of stream state the spec defines for
/// reconnecting: the reconnection time ([`Self::reconnection_time_ms`], set by a valid
/// `retry:` line as soon as that line is processed) and the last event ID string
/// ([`Self::last_event_id`], taken from the last event ID buffer whenever a block is
/// dispatched, even one that carries no data).
///
/// Framing is linear in the input: every byte is examined once, however the stream is split
/// into reads, because only the unterminated tail of the last line is kept between reads and a
/// read is searched from its own first byte, never from the start of that tail.
#[derive(Debug, Default, Clone)]
pub struct SseParser {
    /// Bytes of the current line that has not seen its terminator yet (and, before the BOM
    /// check, up to three bytes that may still become a BOM).
    pending: Vec<u8>,
    bom_checked: bool,
    /// The previous read ended in CR: an LF opening the next read belongs to that CR.
    skip_lf: bool,
    data: String,
    has_data: bool,
    event_type: String,
    /// The spec's last event ID buffer (never reset by dispatch).
    last_id: String,
    /// The spec's last event ID string: the buffer as of the latest dispatch.
    last_event_id: String,
    /// A valid `retry:` of the current block (reported on its event, cleared at dispatch).
    retry: Option<u64>,
    /// The stream's reconnection time, once a valid `retry:` line set it.
    reconnection_time: Option<u64>,
    comments: u64,
    /// Bytes examined while looking for line terminators (see [`Self::examined`]).
    scanned: u64,
}

impl SseParser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts from the last event ID of an earlier connection (what a client sends back as
    /// `Last-Event-ID` when it reconnects): it is the last event ID string and the last event ID
    /// buffer until the stream sets another one. This is how `EventSource` behaves across a
    /// reconnection (the id survives a block without `id:`), which the spec's per-stream wording
    /// leaves open; chosen on purpose.
    pub fn with_last_event_id(mut self, id: impl Into<String>) -> Self {
        self.last_id = id.into();
        self.last_event_id.clone_from(&self.last_id);
        self
    }

    /// Number of comment lines (`:` keep-alives) seen so far.
    pub fn comments(&self) -> u64 {
        self.comments
    }

    /// Bytes examined so far while looking for line terminators: each byte fed once, whatever
    /// the reads (a work count that tests hold to the input's length).
    pub fn examined(&self) -> u64 {
        self.scanned
    }

    /// The stream's reconnection time in ms, as last set by a `retry:` line whose value is only
    /// ASCII digits (the line counts as soon as it is processed, whether or not its block is
    /// ever dispatched); `None` if no such line was seen. Values beyond `u64` saturate.
    pub fn reconnection_time_ms(&self) -> Option<u64> {
        self.reconnection_time
    }

    /// The last event ID string: the last event ID buffer as of the latest dispatched block
    /// (a block that dispatches no event still updates it), or the id given at construction.
    /// Empty when none was set, or when the server reset it with an empty `id:`.
    pub fn last_event_id(&self) -> &str {
        &self.last_event_id
    }

    /// Feeds the bytes of one read; returns the events it completed, in order.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        let mut bytes = bytes;
        if !self.bom_checked {
            // `pending` holds only a proper prefix of the BOM here.
            let take = (BOM.len() - self.pending.len()).min(bytes.len());
            self.pending.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            let n = self.pending.len();
            if n < BOM.len() && self.pending[..] == BOM[..n] {
                return out; // might still become a BOM
            }
            self.bom_checked = true;
            let head = std::mem::take(&mut self.pending);
            if head[..] != BOM[..] {
                self.scan(&head, &mut out);
            }
        }
        self.scan(bytes, &mut out);
        out
    }

    /// Splits `bytes` into lines, continuing the pending one; each byte is looked at once.
    fn scan(&mut self, mut rest: &[u8], out: &mut Vec<SseEvent>) {
        loop {
            if self.skip_lf && !rest.is_empty() {
                self.skip_lf = false;
                if rest[0] == b'\n' {
                    rest = &rest[1..];
                    self.scanned += 1;
                }
            }
            let Some(pos) = rest.iter().position(|&b| b == b'\n' || b == b'\r') else {
                self.scanned += rest.len() as u64;
                self.pending.extend_from_slice(rest);
                return;
            };
            self.scanned += pos as u64 + 1;
            self.skip_lf = rest[pos] == b'\r';
            if self.pending.is_empty() {
                self.process_line(&rest[..pos], out);
            } else {
                let mut line = std::mem::take(&mut self.pending);
                line.extend_from_slice(&rest[..pos]);
                self.process_line(&line, out);
                line.clear();
                self.pending = line; // keep the allocation
            }
            rest = &rest[pos + 1..];
        }
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

    fn process_line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) {
        // Line terminators are ASCII, so decoding line by line equals decoding the stream.
        let line = String::from_utf8_lossy(line);
        let line: &str = &line;
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
                value.clone_into(&mut self.last_id);
            }
            // An empty value has no integer to interpret: ignored, like any non-digit value.
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                let ms = value.parse().unwrap_or(u64::MAX); // only overflow can fail here
                self.retry = Some(ms);
                self.reconnection_time = Some(ms);
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        // Step 1 comes before the empty-data return: an id-only block still sets the string.
        self.last_event_id.clone_from(&self.last_id);
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
            id: (!self.last_event_id.is_empty()).then(|| self.last_event_id.clone()),
            retry,
        });
    }
}

/// Incremental parser for newline-delimited JSON (Ollama native, TGI without SSE).
/// Each non-blank line becomes one event of type `message`.
#[derive(Debug, Default, Clone)]
pub struct NdjsonParser {
    pending: Vec<u8>,
    /// Bytes examined while looking for newlines (see [`Self::examined`]).
    scanned: u64,
}

impl NdjsonParser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes examined so far while looking for newlines: each byte fed once, whatever the
    /// reads.
    pub fn examined(&self) -> u64 {
        self.scanned
    }

    /// Feeds the bytes of one read; returns the lines it completed. Only the new bytes are
    /// searched, so a long line split over many reads costs linear time.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        let mut rest = bytes;
        self.scanned += bytes.len() as u64;
        while let Some(pos) = rest.iter().position(|&b| b == b'\n') {
            if self.pending.is_empty() {
                push_line(&rest[..pos], &mut out);
            } else {
                self.pending.extend_from_slice(&rest[..pos]);
                push_line(&self.pending, &mut out);
                self.pending.clear();
            }
            rest = &rest[pos + 1..];
        }
        self.pending.extend_from_slice(rest);
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
    /// Bytes examined while sniffing the framing.
    sniffed: u64,
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

    /// Starts from the last event ID of an earlier connection (SSE only; see
    /// [`SseParser::with_last_event_id`]).
    pub fn with_last_event_id(mut self, id: impl Into<String>) -> Self {
        self.sse = std::mem::take(&mut self.sse).with_last_event_id(id);
        self
    }

    /// Comment lines seen (SSE only).
    pub fn comments(&self) -> u64 {
        self.sse.comments()
    }

    /// Bytes examined so far: while sniffing the framing, then by the parser (see
    /// [`SseParser::examined`]); at most twice the bytes fed, whatever the reads.
    pub fn examined(&self) -> u64 {
        self.sniffed + self.sse.examined() + self.ndjson.examined()
    }

    /// The stream's reconnection time set by `retry:` (SSE only; see
    /// [`SseParser::reconnection_time_ms`]).
    pub fn reconnection_time_ms(&self) -> Option<u64> {
        self.sse.reconnection_time_ms()
    }

    /// The last event ID string (SSE only; see [`SseParser::last_event_id`]).
    pub fn last_event_id(&self) -> &str {
        self.sse.last_event_id()
    }

    /// Feeds one read.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        match self.framing {
            Some(Framing::Sse) => self.sse.feed(bytes),
            Some(Framing::Ndjson) => self.ndjson.feed(bytes),
            None => {
                // Everything sniffed so far is whitespace or BOM bytes: look at the new bytes only.
                let first = bytes
                    .iter()
                    .copied()
                    .find(|b| !b.is_ascii_whitespace() && !BOM.contains(b));
                self.sniffed += bytes.len() as u64;
                self.sniff.extend_from_slice(bytes);
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

#[cfg(test)]
mod tests {
    use super::{BOM, SseEvent, SseParser};

    /// Feeds `bytes` in reads of `size` bytes; returns the events and the bytes examined.
    fn feed_in_reads(bytes: &[u8], size: usize) -> (Vec<SseEvent>, u64) {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        for read in bytes.chunks(size) {
            out.extend(p.feed(read));
        }
        assert!(p.finish().is_none());
        (out, p.scanned)
    }

    #[test]
    fn a_long_line_split_over_small_reads_is_examined_once_per_byte() {
        let mut stream = b"\xEF\xBB\xBFdata: ".to_vec();
        stream.extend(std::iter::repeat_n(b'x', 1 << 20));
        stream.extend_from_slice(b"\r\n\r\ndata: y\r\n\r\n");
        for size in [1, 16, stream.len()] {
            let (events, scanned) = feed_in_reads(&stream, size);
            assert_eq!(events.len(), 2, "reads of {size}");
            assert_eq!(events[0].data.len(), 1 << 20);
            assert_eq!(events[1].data, "y");
            // Every byte after the BOM once; rescanning the pending line on every read would
            // examine about 2^39 bytes here.
            assert_eq!(
                scanned,
                (stream.len() - BOM.len()) as u64,
                "reads of {size}"
            );
        }
    }
}
