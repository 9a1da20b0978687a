//! The raw measurement of one exchange as a client saw it: when it sent, when the headers
//! came, every read's bytes and arrival time, and how it ended. Nothing is parsed yet.
//!
//! A client that stamps reads (the studio's stamping worker, its page fallback, later other
//! recorders) hands a [`Capture`] on; [`Capture::record`] replays it through the
//! [`RequestRecorder`], so every computation starts from the same bytes and times whichever
//! client recorded them, and parsing never runs between two reads' stamps.

use thiserror::Error;

use crate::dialect::Dialect;
use crate::timeline::{Outcome, Read, RequestRecorder, RequestTimeline};

/// The response head, when one arrived.
#[derive(Debug, Clone, PartialEq)]
pub struct CapturedHead {
    /// When the headers arrived (ms, the client's clock).
    pub at: f64,
    /// HTTP status.
    pub status: u16,
    /// `content-type`, if sent.
    pub content_type: Option<String>,
}

/// How the exchange ended.
#[derive(Debug, Clone, PartialEq)]
pub enum CaptureEnd {
    /// The body ended normally.
    Finished {
        /// When (ms).
        at: f64,
    },
    /// A non-2xx answer: its body, read whole (not part of [`Capture::body`]).
    HttpError {
        /// When the body was read (ms).
        at: f64,
        /// The body.
        body: String,
    },
    /// Aborted, timed out or broken; what was read is kept.
    Failed {
        /// When (ms).
        at: f64,
        /// Why, in words for the user.
        outcome: Outcome,
    },
}

/// One exchange: bytes and times, nothing derived.
#[derive(Debug, Clone, PartialEq)]
pub struct Capture {
    /// t0, taken immediately before the request was sent (ms).
    pub sent_at: f64,
    /// The response head.
    pub head: Option<CapturedHead>,
    /// Every byte of the body, reads back to back.
    pub body: Vec<u8>,
    /// Every read: arrival and length, in order; their lengths add up to `body.len()`.
    pub reads: Vec<Read>,
    /// How it ended.
    pub end: CaptureEnd,
}

/// A capture whose reads do not fit its body (a damaged recording).
#[derive(Debug, Clone, PartialEq, Error)]
#[error(
    "the recording is damaged: its reads hold {read_bytes} bytes but its body {body_bytes}; record the run again"
)]
pub struct CaptureError {
    /// Bytes the reads claim.
    pub read_bytes: u64,
    /// Bytes in the body.
    pub body_bytes: u64,
}

impl Capture {
    /// Replays the capture through the core: the request's timeline, exactly as if the reads
    /// had been fed one by one as they arrived.
    pub fn record(&self, dialect: Option<Dialect>) -> Result<RequestTimeline, CaptureError> {
        self.record_asking(dialect, None)
    }

    /// [`Capture::record`] for a request that asked for `choices` answers (`n`, `None` when
    /// unknown; see [`RequestRecorder::asking`]).
    pub fn record_asking(
        &self,
        dialect: Option<Dialect>,
        choices: Option<u32>,
    ) -> Result<RequestTimeline, CaptureError> {
        let read_bytes: u64 = self.reads.iter().map(|r| u64::from(r.bytes)).sum();
        if read_bytes != self.body.len() as u64 {
            return Err(CaptureError {
                read_bytes,
                body_bytes: self.body.len() as u64,
            });
        }
        let mut rec = RequestRecorder::new(self.sent_at, dialect, None).asking(choices);
        if let Some(h) = &self.head {
            rec.on_headers(h.at, h.status, h.content_type.as_deref());
        }
        let mut offset = 0usize;
        for r in &self.reads {
            let end = offset + r.bytes as usize;
            rec.on_read(r.at, &self.body[offset..end]);
            offset = end;
        }
        Ok(match &self.end {
            CaptureEnd::Finished { at } => rec.finish(*at),
            CaptureEnd::HttpError { at, body } => {
                let status = self.head.as_ref().map_or(0, |h| h.status);
                rec.http_error(*at, status, body)
            }
            CaptureEnd::Failed { at, outcome } => rec.fail(*at, outcome.clone()),
        })
    }
}
