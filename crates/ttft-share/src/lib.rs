//! Share links: a report as a compact, URL-safe string (no server-side storage), and every
//! older link format read back.
//!
//! **r3** (what [`encode`] writes): `r3.` + base64url (no padding) of the binary, columnar
//! encoding of the run's measurements (`columns`), its per-gap timings range-coded with
//! adaptive models (`entropy`; each arrival against the other streams' arrivals of the same
//! server step when that codes shorter, as concurrent streams' do) and everything else,
//! section by section (the header, each column), by a context-mixing byte coder (`context`;
//! the header's models first learn a fixed primer of the header's own shape and the replay
//! text's one of everyday words, `primers`). That is r3's second layout (`r3`), marked by a
//! first byte 0 and a second that names its models. Opening the link recomputes every figure
//! with the core, from times rounded to a stated precision (0.1 ms by default). To stay under
//! a length that chat tools and trackers accept ([`ShareOptions::max_chars`], 64,000
//! characters by default) a link first keeps fewer replays, then coarser times (up to 1 ms),
//! then the per-gap timings of only every k-th request — and then carries the full run's
//! statistics so the headline stays exact (`ladder`); the opened report says what was left out
//! ([`ttft_core::report::SharedFrom`]). Each request's client (a run merged from timeline
//! files) is kept, so a probe under load opens as one, its headline and probe chart recomputed
//! from its requests; sampling keeps every probe request and thins the load only.
//!
//! Older links keep opening ([`legacy`]): r3 links of the first models and of the first layout
//! (everything but the gaps under raw DEFLATE, [`encode_r3_deflate`]), **r2** links (the same
//! columns, all under raw DEFLATE, [`encode_r2`]) and **r1** links (the report's JSON under raw
//! DEFLATE, [`encode_r1`] of a [`compact_for_share`] copy).
//!
//! Decoding is bounded (at most [`MAX_INFLATED`] bytes, of them at most 8 MiB context-mixed
//! and at most 64 per context-coded byte, at most 2 Mi gaps coded against other streams;
//! every count checked against the bytes that hold it) and every failure is a [`ShareError`]
//! that says what to do. `breakdown` says where a link's bytes go, part by part (for the
//! bench).

mod breakdown;
mod bytes;
mod columns;
mod context;
mod entropy;
mod ladder;
pub mod legacy;
mod primers;
mod r3;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use thiserror::Error;
use ttft_core::report::{Report, ReportFileError};

pub use breakdown::{LinkPart, breakdown};
pub use ladder::{encode_r2, encode_r3_deflate};
pub use legacy::{compact_for_share, encode_r1};

/// The prefix of links in the current format.
pub const PREFIX: &str = "r3.";
/// The prefix of links in the second format.
pub const PREFIX_R2: &str = "r2.";
/// The prefix of links in the first format.
pub const PREFIX_R1: &str = "r1.";
/// Largest decompressed report accepted.
pub const MAX_INFLATED: usize = 32 * 1024 * 1024;

/// Why a share string could not be opened.
#[derive(Debug, Error, PartialEq)]
pub enum ShareError {
    /// Nothing to decode.
    #[error("the link holds no report: copy the whole link, including the part after #")]
    Empty,
    /// Not this format.
    #[error(
        "this is not a ttft-studio report link (it should start with \"{PREFIX}\", \"{PREFIX_R2}\" or \"{PREFIX_R1}\")"
    )]
    BadPrefix,
    /// Not base64url.
    #[error("the link is damaged (not valid base64url at byte {0}): copy it again in full")]
    Base64(usize),
    /// Not DEFLATE, or truncated.
    #[error("the link is damaged or cut short (decompression failed): copy it again in full")]
    Inflate,
    /// Decompresses beyond the limit.
    #[error("the report in this link is larger than 32 MiB and was not opened")]
    TooLarge,
    /// Decompresses, but what it holds is not a whole report of its format.
    #[error("the link is damaged ({0}): copy it again in full")]
    Damaged(String),
    /// Decodes, but the report inside cannot be read (damaged, or a newer format).
    #[error("the link decodes but its report cannot be opened: {0}")]
    Report(#[from] ReportFileError),
}

/// How a link is made.
#[derive(Debug, Clone, PartialEq)]
pub struct ShareOptions {
    /// Step times are rounded to (ms).
    pub precision_ms: f64,
    /// Requests whose replay (text and times) the link keeps, spread over the run.
    pub replays: usize,
    /// Longest link (characters after `#share=`) before the link keeps less; `None` = no limit.
    pub max_chars: Option<usize>,
}

impl Default for ShareOptions {
    fn default() -> Self {
        Self {
            precision_ms: 0.1,
            replays: 5,
            max_chars: Some(64_000),
        }
    }
}

/// A link's text and what it kept.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedLink {
    /// `r3.…`, the part after `#share=`.
    pub text: String,
    /// Step the times were rounded to (ms).
    pub precision_ms: f64,
    /// Requests whose replay it kept.
    pub replays: usize,
    /// Requests it kept.
    pub requests_kept: usize,
    /// Requests whose per-gap timings it kept.
    pub gaps_kept_for: usize,
    /// What it left out, in words.
    pub left_out: Vec<String>,
}

/// Encodes a report as an r3 link, keeping less (see the crate doc) until it fits
/// `options.max_chars`.
pub fn encode(report: &Report, options: &ShareOptions) -> SharedLink {
    ladder::encode_as(report, options, ladder::Format::R3)
}

/// Decodes a share string (the part after `#` or a whole URL), any format.
pub fn decode(input: &str) -> Result<Report, ShareError> {
    let s = input.trim();
    let s = s.rsplit_once('#').map_or(s, |(_, frag)| frag);
    let s = s.strip_prefix("share=").unwrap_or(s);
    if s.is_empty() {
        return Err(ShareError::Empty);
    }
    type Reader = fn(&[u8]) -> Result<Report, ShareError>;
    let (body, read): (&str, Reader) = if let Some(body) = s.strip_prefix(PREFIX) {
        (body, r3::decode)
    } else if let Some(body) = s.strip_prefix(PREFIX_R2) {
        (body, legacy::decode_r2)
    } else if let Some(body) = s.strip_prefix(PREFIX_R1) {
        (body, legacy::decode_r1)
    } else {
        return Err(ShareError::BadPrefix);
    };
    let packed = URL_SAFE_NO_PAD.decode(body).map_err(|e| match e {
        base64::DecodeError::InvalidByte(i, _) => ShareError::Base64(i),
        _ => ShareError::Inflate,
    })?;
    read(&packed)
}
