//! The r3 payload, second layout (what [`crate::encode`] writes): the columns' bytes
//! ([`crate::columns`]) with the gaps column range-coded ([`crate::entropy`]) and everything
//! else context-mixed section by section ([`crate::context`], after the [`crate::primers`]).
//!
//! Byte layout: `0` (the layout byte; a payload of r3's first layout starts with the length of
//! its DEFLATE part, never 0: [`crate::legacy`]), the variant byte ([`Variant`]: what the gaps
//! are coded against, which models code the rest), the number of sections of the columns'
//! bytes without their gaps column ([`crate::columns::sections`]: the header, each column) and
//! each one's length, the length of their context-mixing code and that code, then the gaps
//! range-coded.
//!
//! The reader reads every variant byte this layout has had: links made with the first models
//! (variant bytes 0 to 2, [`context::Models::First`], the gaps of concurrent streams coded
//! against the nearest arrival of the others) keep opening through the same models, switched
//! by the variant.

use crate::columns;
use crate::context::{self, Models};
use crate::entropy;
use crate::legacy;
use crate::primers::primers;
use crate::{MAX_INFLATED, ShareError, bytes};
use ttft_core::report::Report;

/// The first byte of an r3 payload of the second layout.
const CONTEXT_LAYOUT: u8 = 0;
/// Most sections a second-layout payload may hold.
const MAX_SECTIONS: usize = 64;
/// The context models new links are written with.
pub(crate) const WRITTEN_MODELS: Models = Models::Refined;

/// What a second-layout payload's gaps are coded against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GapsAgainst {
    /// Each request's own median gap.
    Own = 0,
    /// The other streams' arrival nearest to where the median gap puts it (links made with
    /// the first models).
    OthersNearest = 1,
    /// The latest arrival of that step's cluster, in the models of its size (written with
    /// the refined models only).
    OthersLatest = 2,
}

/// A second-layout payload's second byte: how its gaps are coded and which context models
/// code the rest. New links have 3 (each request's gaps on their own) or 5 (against the other
/// streams' latest arrivals); links made before the refined models have 0 or 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Variant {
    gaps: GapsAgainst,
    models: Models,
}

impl Variant {
    fn byte(self) -> u8 {
        self.gaps as u8 + 3 * u8::from(self.models == Models::Refined)
    }

    fn of(byte: u8) -> Self {
        let gaps = match byte % 3 {
            0 => GapsAgainst::Own,
            1 => GapsAgainst::OthersNearest,
            _ => GapsAgainst::OthersLatest,
        };
        let models = if byte >= 3 {
            Models::Refined
        } else {
            Models::First
        };
        Self { gaps, models }
    }
}

/// The gaps column coded the shorter way: against the other streams' arrivals (a real run's
/// concurrent streams) or each request's on its own (`own`, already coded: streams that share
/// no server steps).
pub(crate) fn shortest_gaps(
    gaps: &[u8],
    anchors: &[Option<i64>],
    own: Vec<u8>,
) -> (GapsAgainst, Vec<u8>) {
    // (A step's latest arrival predicts a real run's gaps better than the nearest one does,
    // and where each step has a single arrival the two are the same arrival, so the nearest
    // is not tried.)
    match entropy::code_gaps(gaps, Some(anchors), true) {
        Some(coded) if coded.len() < own.len() => (GapsAgainst::OthersLatest, coded),
        _ => (GapsAgainst::Own, own),
    }
}

/// An r3 payload of the columns' bytes `r2_bytes`, in the second layout (see the module doc).
///
/// `None` when the coded gaps alone are longer than `max_chars` allow: the link cannot fit
/// whatever the rest costs (a ladder step passed over). `Some(None)` if the gaps column does
/// not read as the columns' writer writes it (the link is then an r2 link); a payload beyond
/// what a decoder context-mixes is written in the first layout.
pub(crate) fn payload(r2_bytes: &[u8], max_chars: Option<usize>) -> Option<Option<Vec<u8>>> {
    let Ok((rest, gaps)) = columns::take_gaps(r2_bytes) else {
        return Some(None);
    };
    // Against the other streams' arrivals where that is shorter (a real run's concurrent
    // streams), else each request on its own (streams that share no server steps).
    let anchors = columns::gap_anchors(&rest);
    let Some(own) = entropy::code_gaps(&gaps, None, false) else {
        return Some(None);
    };
    // Coding against the other streams saves a fifth to a third on real runs, never half: a
    // step whose own gaps are twice too long is passed over without trying.
    if max_chars.is_some_and(|max| own.len() * 4 / 3 > 2 * max) {
        return None;
    }
    let (gaps_against, coded_gaps) = shortest_gaps(&gaps, &anchors, own);
    if max_chars.is_some_and(|max| coded_gaps.len() * 4 / 3 > max) {
        return None;
    }
    let Ok(sections) = columns::sections(&rest) else {
        return Some(None);
    };
    let mut e = entropy::Encoder::default();
    let slices: Vec<&[u8]> = sections.iter().map(|(_, r)| &rest[r.clone()]).collect();
    let models = WRITTEN_MODELS;
    context::encode(&mut e, &slices, &primers(models), models);
    let coded = e.finish();
    if rest.len() > coded.len() * context::MAX_EXPANSION || rest.len() > context::MAX_CONTEXT_MIXED
    {
        // Beyond what a decoder accepts (a payload of many megabytes, or one far more
        // repetitive than a real run's columns).
        return Some(legacy::first_layout_payload(r2_bytes));
    }
    let variant = Variant {
        gaps: gaps_against,
        models,
    };
    let mut out = bytes::Column(vec![CONTEXT_LAYOUT, variant.byte()]);
    out.u(slices.len() as u64);
    slices.iter().for_each(|s| out.u(s.len() as u64));
    out.u(coded.len() as u64);
    out.0.extend_from_slice(&coded);
    out.0.extend_from_slice(&coded_gaps);
    Some(Some(out.0))
}

/// Opens an r3 payload (either layout) as a report.
pub(crate) fn decode(payload: &[u8]) -> Result<Report, ShareError> {
    let r2_bytes = match payload.split_first() {
        Some((&CONTEXT_LAYOUT, rest)) => r2_bytes_of_context_layout(rest)?,
        _ => legacy::r2_bytes_of_first_layout(payload)?,
    };
    let mut report = columns::decode(&r2_bytes)?;
    if let Some(shared) = &mut report.shared {
        shared.format = "r3".into();
    }
    Ok(report)
}

/// The columns' bytes a second-layout payload holds (after its first byte), never more than
/// [`MAX_INFLATED`] nor [`context::MAX_CONTEXT_MIXED`] context-mixed, nor more than
/// [`context::MAX_EXPANSION`] per coded byte.
fn r2_bytes_of_context_layout(payload: &[u8]) -> Result<Vec<u8>, ShareError> {
    let mut r = bytes::Cursor::new(payload, "layout");
    let variant = Variant::of(r.code(6)? as u8);
    let n = r.count_of(MAX_SECTIONS)?;
    let mut lengths = Vec::with_capacity(n);
    let mut total = 0usize;
    for _ in 0..n {
        let len = usize::try_from(r.u()?).unwrap_or(usize::MAX);
        total = total.saturating_add(len);
        lengths.push(len);
    }
    let coded_len = r.count()?;
    let at = payload.len() - r.remaining();
    let coded = &payload[at..at + coded_len];
    if total > MAX_INFLATED || total > context::MAX_CONTEXT_MIXED {
        return Err(ShareError::TooLarge);
    }
    if total > coded_len.saturating_mul(context::MAX_EXPANSION) {
        return Err(ShareError::Damaged(
            "more bytes than its code can hold".into(),
        ));
    }
    let mut d = entropy::Decoder::new(coded)?;
    let rest = context::decode(&mut d, &lengths, &primers(variant.models), variant.models)?;
    d.finish()?;
    let anchors = (variant.gaps != GapsAgainst::Own).then(|| columns::gap_anchors(&rest));
    let gaps = entropy::gaps_column(
        &payload[at + coded_len..],
        MAX_INFLATED - rest.len(),
        anchors.as_deref(),
        variant.gaps == GapsAgainst::OthersLatest,
    )?;
    columns::put_gaps(&rest, &gaps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variant_bytes_name_the_gaps_and_the_models_both_ways() {
        for byte in 0..6u8 {
            assert_eq!(Variant::of(byte).byte(), byte);
        }
        let written = |gaps| Variant {
            gaps,
            models: WRITTEN_MODELS,
        };
        assert_eq!(written(GapsAgainst::Own).byte(), 3);
        assert_eq!(written(GapsAgainst::OthersLatest).byte(), 5);
        assert_eq!(Variant::of(1).models, Models::First);
        assert_eq!(Variant::of(1).gaps, GapsAgainst::OthersNearest);
    }
}
