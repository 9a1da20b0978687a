//! Frozen formats: what older studios wrote, read so that their links keep opening, and written
//! only so that such links can still be made and tested (the bench, the tests). Nothing here
//! may change what it reads or writes; `tests/legacy.rs` opens links older studios made with
//! each, and `tests/golden.rs` checks these writers byte for byte.
//!
//! - **r1** (links made before r2): `r1.` + base64url of the report's JSON under raw DEFLATE,
//!   made by [`encode_r1`] from a [`compact_for_share`] copy; read by the core's report reader.
//! - **r2** (links made before r3): `r2.` + base64url of the columns' bytes
//!   (`columns`, the measurements r3 carries too) under raw DEFLATE (written by [`crate::encode_r2`]).
//! - **r3, first layout** (links made before the context-mixing layout): `r3.` + base64url of
//!   the length of a DEFLATE part, the columns' bytes without their gaps column under DEFLATE,
//!   then the gaps range-coded on their own (written by [`crate::encode_r3_deflate`]). The current writer still
//!   falls back to it for a payload beyond what a decoder context-mixes.
//! - **r3, second layout with the first models** (variant bytes 0 to 2): read by the current
//!   layout's reader (`r3`) with the models the variant byte names.
//!
//! Every reader inflates at most [`MAX_INFLATED`] bytes.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ttft_core::report::Report;

use crate::columns::{self, round_floats};
use crate::entropy;
use crate::{MAX_INFLATED, PREFIX_R1, PREFIX_R2, ShareError, bytes};

/// Encodes a report in the first format (a [`compact_for_share`] copy keeps it short); kept so
/// that links of that format can still be made and tested.
pub fn encode_r1(report: &Report) -> String {
    let json = serde_json::to_vec(report).expect("reports always serialize");
    let packed = miniz_oxide::deflate::compress_to_vec(&json, 9);
    format!("{PREFIX_R1}{}", URL_SAFE_NO_PAD.encode(packed))
}

/// A copy of the report for an r1 link: replay and text kept for `sample` requests only.
///
/// Times are rounded to 1 µs (the browser clock's resolution is 5 µs at best), which removes
/// the floating-point noise digits that otherwise dominate the compressed size.
pub fn compact_for_share(report: &Report, sample: usize) -> Report {
    // A link never carries the raw captures (bytes and times) nor their lines' origins (the
    // workers' hosts): links stay small. Nor a run's place among runs made together (an A/B
    // run's arms, repeats): a shared run is one run.
    let mut bare = report.clone();
    bare.group = None;
    bare.requests.iter_mut().for_each(|q| {
        q.raw = None;
        q.origin = None;
        q.pair = None;
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

/// Opens an r1 link's payload (the report's JSON under DEFLATE).
pub(crate) fn decode_r1(packed: &[u8]) -> Result<Report, ShareError> {
    Ok(ttft_core::report::read_json(&inflate(packed)?)?)
}

/// The text of an r2 link of the columns' bytes `r2_bytes`.
pub(crate) fn r2_text(r2_bytes: &[u8]) -> String {
    let packed = miniz_oxide::deflate::compress_to_vec(r2_bytes, 9);
    format!("{PREFIX_R2}{}", URL_SAFE_NO_PAD.encode(packed))
}

/// Opens an r2 link's payload (the columns' bytes under DEFLATE).
pub(crate) fn decode_r2(packed: &[u8]) -> Result<Report, ShareError> {
    columns::decode(&inflate(packed)?)
}

/// An r3 payload of the first layout: the length of the DEFLATE part, the columns' bytes
/// without their gaps column under DEFLATE, then the gaps range-coded. `None` if the gaps
/// column does not read as the columns' writer writes it.
pub(crate) fn first_layout_payload(r2_bytes: &[u8]) -> Option<Vec<u8>> {
    let (rest, gaps) = columns::take_gaps(r2_bytes).ok()?;
    let coded = entropy::code_gaps(&gaps, None, false)?;
    let packed = miniz_oxide::deflate::compress_to_vec(&rest, 9);
    let mut out = bytes::Column::default();
    out.u(packed.len() as u64);
    out.0.extend_from_slice(&packed);
    out.0.extend_from_slice(&coded);
    Some(out.0)
}

/// The columns' bytes an r3 payload of the first layout holds, never more than
/// [`MAX_INFLATED`].
pub(crate) fn r2_bytes_of_first_layout(payload: &[u8]) -> Result<Vec<u8>, ShareError> {
    let mut r = bytes::Cursor::new(payload, "layout");
    let len = r.count()?;
    let at = payload.len() - r.remaining();
    let packed = &payload[at..at + len];
    let rest = inflate(packed)?;
    let gaps = entropy::gaps_column(&payload[at + len..], MAX_INFLATED - rest.len(), None, false)?;
    columns::put_gaps(&rest, &gaps)
}

/// Raw DEFLATE undone, never past [`MAX_INFLATED`] bytes.
fn inflate(packed: &[u8]) -> Result<Vec<u8>, ShareError> {
    miniz_oxide::inflate::decompress_to_vec_with_limit(packed, MAX_INFLATED).map_err(|e| {
        if matches!(e.status, miniz_oxide::inflate::TINFLStatus::HasMoreOutput) {
            ShareError::TooLarge
        } else {
            ShareError::Inflate
        }
    })
}
