//! Where a link's bytes go, part by part: the header, each column and the gaps, each with its
//! raw size, its cost in the link as written and its size under DEFLATE alone. For measuring
//! the codec (the bench's `--links-from`, the tests), not for the studio.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ttft_core::report::Report;

use crate::columns;
use crate::context;
use crate::entropy;
use crate::ladder::{self, Format};
use crate::primers::primers;
use crate::r3::{WRITTEN_MODELS, shortest_gaps};
use crate::{PREFIX, ShareOptions, SharedLink};

/// One part of a link and what it takes, from [`breakdown`].
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq)]
pub struct LinkPart {
    /// Which part (`header`, a column's name, `gaps (range-coded)`, `framing`).
    pub name: String,
    /// Its bytes before coding.
    pub raw_bytes: usize,
    /// What it costs in the link as written (bytes; a section's share of the context-mixing
    /// code is its information content under the adaptive model, within a few bytes).
    pub coded_bytes: f64,
    /// What it would cost under DEFLATE on its own (r3's first layout codes all but the gaps
    /// in one DEFLATE stream, which costs less than the sum of these).
    pub deflated_alone_bytes: usize,
}

/// Where the bytes of `report`'s link (with `options`) go, part by part; for measuring the
/// codec (the bench and tests), not for the studio.
#[doc(hidden)]
pub fn breakdown(report: &Report, options: &ShareOptions) -> (SharedLink, Vec<LinkPart>) {
    let (link, layout) = ladder::encode_layout(report, options, Format::R3);
    let kept = columns::sample(report, layout);
    let headline = ladder::headline(report, layout, &std::cell::OnceCell::new());
    let bytes = columns::encode(report, &kept, layout, link.left_out.clone(), headline);
    let mut parts = Vec::new();
    let Ok((rest, gaps)) = columns::take_gaps(&bytes) else {
        return (link, parts);
    };
    let Ok(sections) = columns::sections(&rest) else {
        return (link, parts);
    };
    let slices: Vec<&[u8]> = sections.iter().map(|(_, r)| &rest[r.clone()]).collect();
    let mut e = entropy::Encoder::default();
    let costs = context::encode(&mut e, &slices, &primers(WRITTEN_MODELS), WRITTEN_MODELS);
    let coded_total = e.finish().len();
    for ((name, range), bits) in sections.iter().zip(&costs) {
        parts.push(LinkPart {
            name: (*name).to_owned(),
            raw_bytes: range.len(),
            coded_bytes: bits / 8.0,
            deflated_alone_bytes: miniz_oxide::deflate::compress_to_vec(&rest[range.clone()], 9)
                .len(),
        });
    }
    let coded_gaps = entropy::code_gaps(&gaps, None, false).map_or(0, |own| {
        shortest_gaps(&gaps, &columns::gap_anchors(&rest), own)
            .1
            .len()
    });
    parts.push(LinkPart {
        name: "gaps (range-coded)".into(),
        raw_bytes: gaps.len(),
        coded_bytes: coded_gaps as f64,
        deflated_alone_bytes: miniz_oxide::deflate::compress_to_vec(&gaps, 9).len(),
    });
    let payload = URL_SAFE_NO_PAD
        .decode(link.text.trim_start_matches(PREFIX))
        .map_or(0, |p| p.len());
    let modelled: f64 = costs.iter().sum::<f64>() / 8.0;
    parts.push(LinkPart {
        name: "framing (lengths, coder flush)".into(),
        raw_bytes: 0,
        coded_bytes: payload as f64 - modelled - coded_gaps as f64,
        deflated_alone_bytes: 0,
    });
    // Not a part: what r3's first layout spends on all but the gaps, for comparison.
    let joint = miniz_oxide::deflate::compress_to_vec(&rest, 9).len();
    parts.push(LinkPart {
        name: "(not a part) all but the gaps: context-mixed / one DEFLATE stream".into(),
        raw_bytes: rest.len(),
        coded_bytes: coded_total as f64,
        deflated_alone_bytes: joint,
    });
    (link, parts)
}
