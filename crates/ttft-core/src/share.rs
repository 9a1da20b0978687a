//! Share codec: a report as a compact, URL-safe string (no server-side storage).
//!
//! **r3** (what [`encode`] writes): `r3.` + base64url (no padding) of the binary, columnar
//! encoding of the run's measurements (`share/r2.rs`), its per-gap timings range-coded with
//! adaptive models (`share/entropy.rs`) and everything else under raw DEFLATE; opening the
//! link recomputes every figure with the core, from times rounded to a stated precision
//! (0.1 ms by default). To stay under a length that chat tools and trackers accept
//! ([`ShareOptions::max_chars`], 64,000 characters by default) a link first keeps fewer
//! replays, then coarser times (up to 1 ms), then the per-gap timings of only every k-th
//! request — and then carries the full run's statistics so the headline stays exact; the
//! opened report says what was left out ([`crate::report::SharedFrom`]). Each request's client
//! (a run merged from timeline files) is kept, so a probe under load opens as one, its headline
//! and probe chart recomputed from its requests; sampling keeps every probe request and thins
//! the load only.
//!
//! **r2** (links made before r3, still opened; [`encode_r2`]): `r2.` + base64url of the same
//! binary encoding, all of it under raw DEFLATE.
//!
//! **r1** (links made before r2, still opened): `r1.` + base64url of the raw-DEFLATE JSON of
//! the report, made by [`encode_r1`] from a [`compact_for_share`] copy.
//!
//! Decoding is bounded (at most [`MAX_INFLATED`] bytes, every count checked against the bytes
//! that hold it) and every failure is a [`ShareError`] that says what to do.

mod bytes;
mod entropy;
mod r2;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use thiserror::Error;

use crate::report::{Report, ReportFileError};

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
    /// Decompresses, but what it holds is not a whole r2 report.
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

/// Encodes a report as an r3 link, keeping less (see the module doc) until it fits
/// `options.max_chars`.
pub fn encode(report: &Report, options: &ShareOptions) -> SharedLink {
    encode_as(report, options, Format::R3)
}

/// Encodes a report as a link of the second format (the same measurements, all DEFLATE); kept
/// so that links of that format can still be made and tested.
pub fn encode_r2(report: &Report, options: &ShareOptions) -> SharedLink {
    encode_as(report, options, Format::R2)
}

/// The link formats [`encode_as`] can write.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Format {
    R2,
    R3,
}

fn encode_as(report: &Report, options: &ShareOptions, format: Format) -> SharedLink {
    let n = report.requests.len();
    let with_replay = report
        .requests
        .iter()
        .filter(|r| !r.replay.is_empty())
        .count();
    let precision = if options.precision_ms.is_finite() && options.precision_ms > 0.0 {
        options.precision_ms
    } else {
        ShareOptions::default().precision_ms
    };
    // (replays, precision, gap stride, request stride, a probe's requests all kept): each
    // step keeps less.
    let fewer = options.replays.min(1);
    let mut ladder = vec![
        (options.replays, precision, 1usize, 1usize, true),
        (fewer, precision, 1, 1, true),
    ];
    for coarser in [0.2, 0.5, 1.0] {
        if coarser > precision {
            ladder.push((fewer, coarser, 1, 1, true));
        }
    }
    let coarsest = precision.max(1.0);
    let mut stride = 2;
    while stride <= 16 && stride < n * 2 {
        ladder.push((fewer, coarsest, stride, 1, true));
        stride *= 2;
    }
    // A probe too long to keep whole is sampled with the load, last.
    for whole_probe in [true, false] {
        if !whole_probe && !report.is_probe_under_load() {
            break;
        }
        let mut stride = 2;
        while stride < n * 2 {
            ladder.push((fewer, coarsest, 1, stride, whole_probe));
            stride *= 2;
        }
    }
    let mut last = None;
    for (replays, precision_ms, gap_stride, request_stride, whole_probe) in ladder {
        let layout = r2::Layout {
            precision_ms,
            replays,
            gap_stride,
            request_stride,
            whole_probe,
        };
        let link = encode_with(report, layout, with_replay, format);
        let fits = options.max_chars.is_none_or(|max| link.text.len() <= max);
        if fits {
            return link;
        }
        last = Some(link);
    }
    last.expect("the ladder is never empty")
}

fn encode_with(
    report: &Report,
    layout: r2::Layout,
    with_replay: usize,
    format: Format,
) -> SharedLink {
    let n = report.requests.len();
    let kept = r2::sample(report, layout);
    let requests_kept = kept.len();
    let kept_replays = layout.replays.min(with_replay);
    let gaps_kept_for = kept.iter().filter(|k| k.1).count();
    let mut left_out = vec![
        "server request ids and wall-clock send times (they line a run up with server records)"
            .to_owned(),
    ];
    if with_replay > kept_replays {
        left_out.push(format!(
            "replay text of {} of {with_replay} requests (the reading experience is scored from the word counts kept instead)",
            with_replay - kept_replays
        ));
    }
    let whole_run =
        "the headline figures are the whole run's; charts and the request table show what was kept";
    // A probe under load keeps every probe request with its gaps ([`r2::sample`]): only the
    // load is sampled.
    let probe = layout.whole_probe && report.is_probe_under_load();
    if layout.request_stride > 1 {
        let stride = layout.request_stride;
        let which = if probe {
            format!(
                "every {stride}th load request kept and every probe request; the load in flight is counted from the load requests kept"
            )
        } else {
            format!("every {stride}th kept")
        };
        left_out.push(format!(
            "{} of {n} requests ({which}): {whole_run}",
            n - requests_kept
        ));
    }
    if layout.gap_stride > 1 {
        let stride = layout.gap_stride;
        let which = if probe {
            format!("every {stride}th load request and every probe request")
        } else {
            format!("every {stride}th")
        };
        left_out.push(format!(
            "per-gap timings of {} of {requests_kept} requests (kept for {which}): {whole_run}",
            requests_kept - gaps_kept_for
        ));
    }
    let carried = report.shared.as_ref().and_then(|s| s.headline.as_deref());
    let headline = if layout.gap_stride > 1 || layout.request_stride > 1 {
        Some(report.aggregates())
    } else {
        carried.cloned()
    };
    let bytes = r2::encode(report, &kept, layout, left_out.clone(), headline);
    let text = match format {
        Format::R3 => {
            r3_payload(&bytes).map(|payload| format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(payload)))
        }
        Format::R2 => None,
    }
    .unwrap_or_else(|| {
        let packed = miniz_oxide::deflate::compress_to_vec(&bytes, 9);
        format!("{PREFIX_R2}{}", URL_SAFE_NO_PAD.encode(packed))
    });
    SharedLink {
        text,
        precision_ms: layout.precision_ms,
        replays: kept_replays,
        requests_kept,
        gaps_kept_for,
        left_out,
    }
}

/// An r3 payload from r2 bytes: the length of the DEFLATE part, the r2 bytes without their
/// gaps column under DEFLATE, then the gaps range-coded (`share/entropy.rs`). `None` if the
/// gaps column does not read as this encoder writes it (the link is then an r2 link).
fn r3_payload(r2_bytes: &[u8]) -> Option<Vec<u8>> {
    let (rest, gaps) = r2::take_gaps(r2_bytes).ok()?;
    let coded = entropy::code_gaps(&gaps)?;
    let packed = miniz_oxide::deflate::compress_to_vec(&rest, 9);
    let mut out = bytes::Column::default();
    out.u(packed.len() as u64);
    out.0.extend_from_slice(&packed);
    out.0.extend_from_slice(&coded);
    Some(out.0)
}

/// The r2 bytes an r3 payload holds, never more than [`MAX_INFLATED`].
fn r2_bytes_of_r3(payload: &[u8]) -> Result<Vec<u8>, ShareError> {
    let mut r = bytes::Cursor::new(payload, "layout");
    let len = r.count()?;
    let at = payload.len() - r.remaining();
    let packed = &payload[at..at + len];
    let rest = inflate(packed)?;
    let gaps = entropy::gaps_column(&payload[at + len..], MAX_INFLATED - rest.len())?;
    r2::put_gaps(&rest, &gaps)
}

fn inflate(packed: &[u8]) -> Result<Vec<u8>, ShareError> {
    miniz_oxide::inflate::decompress_to_vec_with_limit(packed, MAX_INFLATED).map_err(|e| {
        if matches!(e.status, miniz_oxide::inflate::TINFLStatus::HasMoreOutput) {
            ShareError::TooLarge
        } else {
            ShareError::Inflate
        }
    })
}

/// Encodes a report in the first format (a [`compact_for_share`] copy keeps it short); kept so
/// that links of that format can still be made and tested.
pub fn encode_r1(report: &Report) -> String {
    let json = serde_json::to_vec(report).expect("reports always serialize");
    let packed = miniz_oxide::deflate::compress_to_vec(&json, 9);
    format!("{PREFIX_R1}{}", URL_SAFE_NO_PAD.encode(packed))
}

/// Decodes a share string (the part after `#` or a whole URL), either format.
pub fn decode(input: &str) -> Result<Report, ShareError> {
    let s = input.trim();
    let s = s.rsplit_once('#').map_or(s, |(_, frag)| frag);
    let s = s.strip_prefix("share=").unwrap_or(s);
    if s.is_empty() {
        return Err(ShareError::Empty);
    }
    let (body, format) = if let Some(body) = s.strip_prefix(PREFIX) {
        (body, 3)
    } else if let Some(body) = s.strip_prefix(PREFIX_R2) {
        (body, 2)
    } else if let Some(body) = s.strip_prefix(PREFIX_R1) {
        (body, 1)
    } else {
        return Err(ShareError::BadPrefix);
    };
    let packed = URL_SAFE_NO_PAD.decode(body).map_err(|e| match e {
        base64::DecodeError::InvalidByte(i, _) => ShareError::Base64(i),
        _ => ShareError::Inflate,
    })?;
    match format {
        3 => {
            let mut report = r2::decode(&r2_bytes_of_r3(&packed)?)?;
            if let Some(shared) = &mut report.shared {
                shared.format = "r3".into();
            }
            Ok(report)
        }
        2 => r2::decode(&inflate(&packed)?),
        _ => Ok(crate::report::read_json(&inflate(&packed)?)?),
    }
}

/// A copy of the report for an r1 link: replay and text kept for `sample` requests only.
///
/// Times are rounded to 1 µs (the browser clock's resolution is 5 µs at best), which removes
/// the floating-point noise digits that otherwise dominate the compressed size.
pub fn compact_for_share(report: &Report, sample: usize) -> Report {
    // A link never carries the raw captures (bytes and times) nor their lines' origins (the
    // workers' hosts): links stay small.
    let mut bare = report.clone();
    bare.requests.iter_mut().for_each(|q| {
        q.raw = None;
        q.origin = None;
    });
    let mut r = round_floats(&bare);
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
