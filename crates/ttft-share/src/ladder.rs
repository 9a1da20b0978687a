//! Fitting a link to a length: a ladder of layouts ([`Layout`]), each keeping less than the one
//! before, tried in turn until the link fits [`ShareOptions::max_chars`] — fewer replays, then
//! coarser times (up to 1 ms), then the per-gap timings of only every k-th request, then only
//! every k-th request (in a probe under load, every probe request kept and the load thinned,
//! then as the last resort the probe thinned too). A link that samples carries the whole run's
//! statistics ([`headline`]) so that its headline stays exact, and says in words what it left
//! out.

use std::cell::OnceCell;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ttft_core::report::{Aggregates, Report};

use crate::columns::{self, Layout};
use crate::{PREFIX, ShareOptions, SharedLink, legacy, r3};
use ttft_core::run_stats::RunStats;

/// The link formats the ladder can write.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Format {
    /// r2 (all DEFLATE, [`legacy`]).
    R2,
    /// r3's first layout: the rest under DEFLATE ([`legacy`]).
    R3Deflate,
    /// r3's second layout ([`r3`]).
    R3,
}

/// The link of `report` in `format` that fits `options`.
pub(crate) fn encode_as(report: &Report, options: &ShareOptions, format: Format) -> SharedLink {
    encode_layout(report, options, format).0
}

/// The link [`encode_as`] makes and the layout it chose.
pub(crate) fn encode_layout(
    report: &Report,
    options: &ShareOptions,
    format: Format,
) -> (SharedLink, Layout) {
    let with_replay = report
        .requests
        .iter()
        .filter(|r| !r.replay.is_empty())
        .count();
    let (mut last, mut last_layout) = (None, None);
    // The whole run's statistics, computed once for the steps that sample.
    let whole_stats = OnceCell::new();
    for layout in ladder(report, options) {
        last_layout = Some(layout);
        // `None`: this step cannot fit (its gaps alone are too long), not worth coding whole.
        last = encode_with(
            report,
            layout,
            with_replay,
            format,
            options.max_chars,
            &whole_stats,
        );
        if let Some(link) = &last
            && options.max_chars.is_none_or(|max| link.text.len() <= max)
        {
            return (last.take().expect("just matched"), layout);
        }
    }
    let layout = last_layout.expect("the ladder is never empty");
    // Nothing fits: the last step, whole.
    let link = last.unwrap_or_else(|| {
        encode_with(report, layout, with_replay, format, None, &whole_stats)
            .expect("coded without a limit")
    });
    (link, layout)
}

/// The layouts a link of `report` tries, each keeping less than the one before.
fn ladder(report: &Report, options: &ShareOptions) -> Vec<Layout> {
    let n = report.requests.len();
    let precision = if options.precision_ms.is_finite() && options.precision_ms > 0.0 {
        options.precision_ms
    } else {
        ShareOptions::default().precision_ms
    };
    let step = |replays, precision_ms, gap_stride, request_stride, whole_probe| Layout {
        precision_ms,
        replays,
        gap_stride,
        request_stride,
        whole_probe,
    };
    let fewer = options.replays.min(1);
    let mut ladder = vec![
        step(options.replays, precision, 1, 1, true),
        step(fewer, precision, 1, 1, true),
    ];
    for coarser in [0.2, 0.5, 1.0] {
        if coarser > precision {
            ladder.push(step(fewer, coarser, 1, 1, true));
        }
    }
    let coarsest = precision.max(1.0);
    let mut stride = 2;
    while stride <= 16 && stride < n * 2 {
        ladder.push(step(fewer, coarsest, stride, 1, true));
        stride *= 2;
    }
    // A probe too long to keep whole is sampled with the load, last.
    for whole_probe in [true, false] {
        if !whole_probe && !report.is_probe_under_load() {
            break;
        }
        let mut stride = 2;
        while stride < n * 2 {
            ladder.push(step(fewer, coarsest, 1, stride, whole_probe));
            stride *= 2;
        }
    }
    ladder
}

/// The link of `report` with `layout`; `None` when its gaps alone cannot fit `max_chars`.
fn encode_with(
    report: &Report,
    layout: Layout,
    with_replay: usize,
    format: Format,
    max_chars: Option<usize>,
    whole_stats: &OnceCell<Aggregates>,
) -> Option<SharedLink> {
    let kept = columns::sample(report, layout);
    let requests_kept = kept.len();
    let kept_replays = layout.replays.min(with_replay);
    let gaps_kept_for = kept.iter().filter(|k| k.1).count();
    let left_out = left_out(report, layout, with_replay, requests_kept, gaps_kept_for);
    let bytes = columns::encode(
        report,
        &kept,
        layout,
        left_out.clone(),
        headline(report, layout, whole_stats),
    );
    Some(SharedLink {
        text: link_text(&bytes, format, max_chars)?,
        precision_ms: layout.precision_ms,
        replays: kept_replays,
        requests_kept,
        gaps_kept_for,
        left_out,
    })
}

/// What a link with `layout` leaves out, in words.
fn left_out(
    report: &Report,
    layout: Layout,
    with_replay: usize,
    requests_kept: usize,
    gaps_kept_for: usize,
) -> Vec<String> {
    let n = report.requests.len();
    let kept_replays = layout.replays.min(with_replay);
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
    // A probe under load keeps every probe request with its gaps ([`columns::sample`]): only
    // the load is sampled.
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
    left_out
}

/// The text of a link of the columns' bytes `bytes` in `format`: an r2 link where the r3
/// layout cannot code them; `None` when they cannot fit `max_chars` ([`r3::payload`]).
fn link_text(bytes: &[u8], format: Format, max_chars: Option<usize>) -> Option<String> {
    let payload = match format {
        Format::R3 => r3::payload(bytes, max_chars)?,
        Format::R3Deflate => legacy::first_layout_payload(bytes),
        Format::R2 => None,
    };
    Some(match payload {
        Some(payload) => format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(payload)),
        None => legacy::r2_text(bytes),
    })
}

/// The headline a link carries: the whole run's statistics when it samples (`whole_stats`,
/// computed on first use) but for the figures the reader derives from the requests
/// ([`Aggregates::carried_by_links`]), else the one the report carries (a link's, opened
/// again), if any.
pub(crate) fn headline(
    report: &Report,
    layout: Layout,
    whole_stats: &OnceCell<Aggregates>,
) -> Option<Aggregates> {
    if layout.gap_stride > 1 || layout.request_stride > 1 {
        Some(
            whole_stats
                .get_or_init(|| report.aggregates().carried_by_links())
                .clone(),
        )
    } else {
        report
            .shared
            .as_ref()
            .and_then(|s| s.headline.as_deref())
            .cloned()
    }
}

/// Encodes a report as a link of the second format (the same measurements, all DEFLATE); kept
/// so that links of that format can still be made and tested.
pub fn encode_r2(report: &Report, options: &ShareOptions) -> SharedLink {
    encode_as(report, options, Format::R2)
}

/// Encodes a report as an r3 link of its first layout (everything but the gaps under
/// DEFLATE), as studios wrote them before the context-mixing layout; kept so that such links
/// can still be made and tested.
#[doc(hidden)]
pub fn encode_r3_deflate(report: &Report, options: &ShareOptions) -> SharedLink {
    encode_as(report, options, Format::R3Deflate)
}
