//! Share codec: a report as a compact, URL-safe string (no server-side storage).
//!
//! Format: `r1.` + base64url (no padding) of the raw-DEFLATE-compressed JSON of the report.
//! Decoding is bounded (at most [`MAX_INFLATED`] bytes) and every failure is a
//! [`ShareError`] that says what to do. [`compact_for_share`] drops replay text except for a
//! sample of requests so links stay short: the 100-request report of the
//! `share_round_trip_size_and_bad_links` test (60 tokens each, 5 replays kept) encodes to
//! 6,346 characters, against 27,541 with every replay kept (the test prints both figures).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use thiserror::Error;

use crate::report::{Report, ReportFileError};

/// The prefix of links in this format.
pub const PREFIX: &str = "r1.";
/// Largest decompressed report accepted.
pub const MAX_INFLATED: usize = 32 * 1024 * 1024;

/// Why a share string could not be opened.
#[derive(Debug, Error, PartialEq)]
pub enum ShareError {
    /// Nothing to decode.
    #[error("the link holds no report: copy the whole link, including the part after #")]
    Empty,
    /// Not this format.
    #[error("this is not a ttft-studio report link (it should start with \"{PREFIX}\")")]
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
    /// Decodes, but the report inside cannot be read (damaged, or a newer format).
    #[error("the link decodes but its report cannot be opened: {0}")]
    Report(#[from] ReportFileError),
}

/// Encodes a report.
pub fn encode(report: &Report) -> String {
    let json = serde_json::to_vec(report).expect("reports always serialize");
    let packed = miniz_oxide::deflate::compress_to_vec(&json, 9);
    format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(packed))
}

/// Decodes a share string (the part after `#` or a whole URL).
pub fn decode(input: &str) -> Result<Report, ShareError> {
    let s = input.trim();
    let s = s.rsplit_once('#').map_or(s, |(_, frag)| frag);
    let s = s.strip_prefix("share=").unwrap_or(s);
    if s.is_empty() {
        return Err(ShareError::Empty);
    }
    let body = s.strip_prefix(PREFIX).ok_or(ShareError::BadPrefix)?;
    let packed = URL_SAFE_NO_PAD.decode(body).map_err(|e| match e {
        base64::DecodeError::InvalidByte(i, _) => ShareError::Base64(i),
        _ => ShareError::Inflate,
    })?;
    let json =
        miniz_oxide::inflate::decompress_to_vec_with_limit(&packed, MAX_INFLATED).map_err(|e| {
            if matches!(e.status, miniz_oxide::inflate::TINFLStatus::HasMoreOutput) {
                ShareError::TooLarge
            } else {
                ShareError::Inflate
            }
        })?;
    Ok(crate::report::read_json(&json)?)
}

/// A copy of the report for a link: replay and text kept for `sample` requests only.
///
/// Times are rounded to 1 µs (the browser clock's resolution is 5 µs at best), which removes
/// the floating-point noise digits that otherwise dominate the compressed size.
pub fn compact_for_share(report: &Report, sample: usize) -> Report {
    let mut r = round_floats(report);
    let n = r.requests.len().max(1);
    let step = n.div_ceil(sample.max(1)).max(1);
    for (i, req) in r.requests.iter_mut().enumerate() {
        if i % step != 0 {
            req.replay.clear();
            req.metrics.text.clear();
            req.metrics.reasoning_text.clear();
            for c in &mut req.metrics.choices {
                c.text.clear();
                c.reasoning_text.clear();
            }
            for c in &mut req.metrics.tool_calls {
                c.arguments.clear();
            }
            if let Some(j) = req.metrics.json.as_mut() {
                j.value = None;
            }
        }
    }
    r
}

fn round_value(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Number(n) if n.is_f64() => {
            if let Some(x) = n.as_f64().map(|x| (x * 1000.0).round() / 1000.0)
                && let Some(m) = serde_json::Number::from_f64(x)
            {
                *n = m;
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(round_value),
        serde_json::Value::Object(o) => o.values_mut().for_each(round_value),
        _ => {}
    }
}

/// The report with every fractional number rounded to 0.001 (1 µs for times).
fn round_floats(report: &Report) -> Report {
    match serde_json::to_value(report) {
        Ok(mut v) => {
            round_value(&mut v);
            serde_json::from_value(v).unwrap_or_else(|_| report.clone())
        }
        Err(_) => report.clone(),
    }
}
