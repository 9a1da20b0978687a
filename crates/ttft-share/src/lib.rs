//! Share codec: a report as a compact, URL-safe string (no server-side storage).
//!
//! **r3** (what [`encode`] writes): `r3.` + base64url (no padding) of the binary, columnar
//! encoding of the run's measurements (`columns`), its per-gap timings range-coded with
//! adaptive models (`entropy`; in the second layout each arrival against the other
//! streams' arrivals of the same server step when that codes shorter, as concurrent streams'
//! do) and everything else, section by section (the header, each column), by a
//! context-mixing byte coder (`context`; the header's models first learn a fixed
//! primer of the header's own shape, `HEADER_PRIMER`, and the replay text's one of everyday
//! words, `TEXT_PRIMER`). That is r3's second layout, marked by a first byte 0 and a second
//! that names its models (links made with the first models, and links of the first layout,
//! everything but the gaps under raw DEFLATE, [`encode_r3_deflate`], keep opening). Opening the
//! link recomputes every figure with the core, from times rounded to a stated precision
//! (0.1 ms by default). To stay under a length that chat tools and trackers accept
//! ([`ShareOptions::max_chars`], 64,000 characters by default) a link first keeps fewer
//! replays, then coarser times (up to 1 ms), then the per-gap timings of only every k-th
//! request — and then carries the full run's statistics so the headline stays exact; the
//! opened report says what was left out ([`ttft_core::report::SharedFrom`]). Each request's client
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
//! Decoding is bounded (at most [`MAX_INFLATED`] bytes, of them at most 8 MiB context-mixed
//! and at most 64 per context-coded byte, at most 2 Mi gaps coded against other streams;
//! every count checked against the bytes
//! that hold it) and every failure is a [`ShareError`] that says what to do. [`breakdown`]
//! says where a link's bytes go, part by part (for the bench).

mod bytes;
mod columns;
mod context;
mod entropy;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use thiserror::Error;

use ttft_core::report::{Aggregates, Report, ReportFileError};

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

/// Encodes a report as an r3 link of its first layout (everything but the gaps under
/// DEFLATE), as studios wrote them before the context-mixing layout; kept so that such links
/// can still be made and tested.
#[doc(hidden)]
pub fn encode_r3_deflate(report: &Report, options: &ShareOptions) -> SharedLink {
    encode_as(report, options, Format::R3Deflate)
}

/// The link formats [`encode_as`] can write.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Format {
    R2,
    /// r3's first layout: the rest under DEFLATE.
    R3Deflate,
    R3,
}

fn encode_as(report: &Report, options: &ShareOptions, format: Format) -> SharedLink {
    encode_layout(report, options, format).0
}

/// The link [`encode_as`] makes and the layout it chose.
fn encode_layout(
    report: &Report,
    options: &ShareOptions,
    format: Format,
) -> (SharedLink, columns::Layout) {
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
    let (mut last, mut last_layout) = (None, None);
    // The whole run's statistics, computed once for the steps that sample.
    let whole_stats = std::cell::OnceCell::new();
    for (replays, precision_ms, gap_stride, request_stride, whole_probe) in ladder {
        let layout = columns::Layout {
            precision_ms,
            replays,
            gap_stride,
            request_stride,
            whole_probe,
        };
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

fn encode_with(
    report: &Report,
    layout: columns::Layout,
    with_replay: usize,
    format: Format,
    max_chars: Option<usize>,
    whole_stats: &std::cell::OnceCell<Aggregates>,
) -> Option<SharedLink> {
    let n = report.requests.len();
    let kept = columns::sample(report, layout);
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
    // A probe under load keeps every probe request with its gaps ([`columns::sample`]): only the
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
    let bytes = columns::encode(
        report,
        &kept,
        layout,
        left_out.clone(),
        headline(report, layout, whole_stats),
    );
    let payload = match format {
        Format::R3 => r3_payload(&bytes, max_chars)?,
        Format::R3Deflate => r3_deflate_payload(&bytes),
        Format::R2 => None,
    };
    let text = payload
        .map(|payload| format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(payload)))
        .unwrap_or_else(|| {
            let packed = miniz_oxide::deflate::compress_to_vec(&bytes, 9);
            format!("{PREFIX_R2}{}", URL_SAFE_NO_PAD.encode(packed))
        });
    Some(SharedLink {
        text,
        precision_ms: layout.precision_ms,
        replays: kept_replays,
        requests_kept,
        gaps_kept_for,
        left_out,
    })
}

/// The headline a link carries: the whole run's statistics when it samples (`whole_stats`,
/// computed on first use), else the one the report carries (a link's, opened again), if any.
fn headline(
    report: &Report,
    layout: columns::Layout,
    whole_stats: &std::cell::OnceCell<Aggregates>,
) -> Option<Aggregates> {
    if layout.gap_stride > 1 || layout.request_stride > 1 {
        Some(whole_stats.get_or_init(|| report.aggregates()).clone())
    } else {
        report
            .shared
            .as_ref()
            .and_then(|s| s.headline.as_deref())
            .cloned()
    }
}

/// The first byte of an r3 payload of the second layout (a first-layout payload starts with
/// the length of its DEFLATE part, never 0).
const CONTEXT_LAYOUT: u8 = 0;
/// Most sections a second-layout payload may hold.
const MAX_SECTIONS: usize = 64;

/// What the context-mixing models learn before a second-layout link's header (its JSON,
/// `share/r2.rs`): the header's own shape, with the studio's own defaults and sentences, so
/// that its keys and usual values cost little. Only the studio's words, never a server's; it
/// is part of the format: changing it needs a new layout byte.
const HEADER_PRIMER: &str = concat!(
    r#"{"version":1,"title":"chat · model · 2026-01-01T00:00:00","created_unix_ms":1700000000000.0,"#,
    r#""clock_resolution_ms":0.005,"stamping":"1 stamping worker","endpoint":{"base_url":"http://127.0.0.1:8080","#,
    r#""model":"","dialect":null},"scenario":"chat","settings":{"concurrency":4,"continuous_usage":false,"#,
    r#""custom_prompt":"","extra_body":"","ignore_eos":false,"kind":"chat","levels":"1, 4, 8, 16","max_tokens":256,"#,
    r#""preset":1,"prompt_levels":"100, 500, 1000, 2000","rate_per_s":0.0,"requests":20,"required_keys":"city, days","#,
    r#""rounds":4,"seed":null,"system_prompt":"","temperature":0.0,"timeout_s":60.0,"use_tools":false,"warmup":1},"#,
    r#""thresholds":{"ttft_ms":2000.0,"itl_ms":120.0,"p95_ttft_ms":2000.0},"experience":{"deadlines":"#,
    r#"{"first_token_ms":1000.0,"gap_ms":187.5,"fluid_target":0.9,"fluid_share":0.99},"reading":{"words_per_s":4.0,"#,
    r#""cjk_chars_per_s":6.0,"expected_ttft_ms":1000.0,"min_wait_ms":250.0,"read_reasoning":false}},"#,
    r#""precision_ms":0.1,"requests":20,"groups":[["c=4",4.0]],"strings":[""],"left_out":["server request ids "#,
    r#"and wall-clock send times (they line a run up with server records)","replay text of 15 of 20 requests "#,
    r#"(the reading experience is scored from the word counts kept instead)"],"headline":null,"vantage":"browser","#,
    r#""client_health":{"verdict":{"may_have_added":{"up_to_ms":9.8}},"lag_samples":480,"lag_p50_ms":0.25,"#,
    r#""lag_p99_ms":11.0,"lag_max_ms":41.2,"hidden_ms":0.0,"requests_while_hidden":0,"queue_p99_ms":9.8,"#,
    r#""causes":[{"kind":"connection_queue","up_to_ms":9.8,"sentence":"12 requests waited more than 5.00 ms "#,
    r#"in the browser before being sent (P99 9.8 ms, max 12.1 ms): the browser holds a request while its "#,
    r#"connections to the origin are busy (6 per origin over HTTP/1.1) or being opened. That wait is part "#,
    r#"of their TTFT, not of their ITL, and it is the client's, not the server's.","short":"connection queue: "#,
    r#"P99 9.8 ms before sending"},{"kind":"main_thread_lag","up_to_ms":0.0,"sentence":"The page's main "#,
    r#"thread was busy while requests streamed: its timers fired up to 41.2 ms late (P99 11.0 ms, above the "#,
    r#"16.7 ms of one frame) while 8 requests streamed. Reads were stamped in a worker, so the stamps are "#,
    r#"unaffected (0 ms added); only drawing was delayed.","short":""},{"kind":"hidden_tab","up_to_ms":0.0,"#,
    r#""sentence":"The tab was hidden for 2.0 s while 3 requests streamed: a hidden tab's timers are throttled"#,
    r#"","short":"tab hidden while nothing streamed"}]},"user_agent":"Mozilla/5.0 (X11; Linux x86_64) "#,
    r#"AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36","clients":["browser","locust"]}"#,
);

/// What the models learn before a link's replay text (the text section, since the refined
/// models): everyday English and an assistant's usual openings, a few common Chinese ones,
/// so that the first words of a short replay do not each cost a byte. Generic text written
/// for this, never a server's or the reference endpoint's; part of the format like
/// [`HEADER_PRIMER`].
const TEXT_PRIMER: &str = concat!(
    "Sure, here is a short answer. Of course! I would be happy to help with that. Here are ",
    "the main points, and then an example.\n\n1. **First**, the most important thing is that ",
    "it works for people who use it every day, not only in a test.\n2. **Second**, when you ",
    "compare two options, look at what each one does well and where it falls short.\n\nIn ",
    "other words, there is no single best choice: it depends on what you need, how much time ",
    "you have and what you are willing to give up. For example, a faster way may be less ",
    "accurate, while a more careful one takes longer. The same is true of many things in life ",
    "and in work. If you have any questions about this, let me know and I can explain in more ",
    "detail.\n\nThe question is also about how we think about the problem. We can start with ",
    "what we know, then ask what would change if one of those facts were different. This makes ",
    "it easier to see which parts matter and which do not. It is often better to measure than ",
    "to guess, because the numbers show what really happens, and they can be shared with ",
    "others who were not there.\n\n好的，以下是主要的几点。当然可以，我来解释一下：这个问题的关键在于",
    "我们需要什么，以及时间和成本。",
);

/// What each section of a second-layout payload's models learn first: the header's primer,
/// and with the refined models the text's; the other sections start empty.
fn primers(models: context::Models) -> Vec<&'static [u8]> {
    let mut primers: Vec<&'static [u8]> = vec![b"", HEADER_PRIMER.as_bytes()];
    if models == context::Models::Refined {
        primers.resize(columns::TEXT_SECTION + 1, b"");
        primers[columns::TEXT_SECTION] = TEXT_PRIMER.as_bytes();
    }
    primers
}

/// The context models new links are written with.
const WRITTEN_MODELS: context::Models = context::Models::Refined;

/// What a second-layout payload's gaps are coded against (its second byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GapsAgainst {
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
/// code the rest (links made before the refined models have 0 or 1).
fn variant_byte(gaps: GapsAgainst, models: context::Models) -> u8 {
    gaps as u8 + 3 * u8::from(models == context::Models::Refined)
}

fn variant_of(byte: u8) -> (GapsAgainst, context::Models) {
    let gaps = match byte % 3 {
        0 => GapsAgainst::Own,
        1 => GapsAgainst::OthersNearest,
        _ => GapsAgainst::OthersLatest,
    };
    let models = if byte >= 3 {
        context::Models::Refined
    } else {
        context::Models::First
    };
    (gaps, models)
}

/// The gaps column coded the shorter way: against the other streams' arrivals (a real run's
/// concurrent streams) or each request's on its own (`own`, already coded: streams that share
/// no server steps).
fn shortest_gaps(gaps: &[u8], anchors: &[Option<i64>], own: Vec<u8>) -> (GapsAgainst, Vec<u8>) {
    // (A step's latest arrival predicts a real run's gaps better than the nearest one does,
    // and where each step has a single arrival the two are the same arrival, so the nearest
    // is not tried.)
    match entropy::code_gaps(gaps, Some(anchors), true) {
        Some(coded) if coded.len() < own.len() => (GapsAgainst::OthersLatest, coded),
        _ => (GapsAgainst::Own, own),
    }
}

/// An r3 payload from r2 bytes, second layout: `0`, the variant ([`variant_byte`]: what the
/// gaps are coded against, which models code the rest), the number of sections of the r2 bytes
/// without their gaps column (`columns::sections`: its header, each column) and each one's length,
/// the length of their context-mixing code (`context`) and that code, then the gaps
/// range-coded (`entropy`).
///
/// `None` when the coded gaps alone are longer than `max_chars` allow: the link cannot fit
/// whatever the rest costs (a ladder step passed over). `Some(None)` if the gaps column does
/// not read as this encoder writes it (the link is then an r2 link).
fn r3_payload(r2_bytes: &[u8], max_chars: Option<usize>) -> Option<Option<Vec<u8>>> {
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
    let (against_others, coded_gaps) = shortest_gaps(&gaps, &anchors, own);
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
        return Some(r3_deflate_payload(r2_bytes));
    }
    let mut out = bytes::Column(vec![CONTEXT_LAYOUT, variant_byte(against_others, models)]);
    out.u(slices.len() as u64);
    slices.iter().for_each(|s| out.u(s.len() as u64));
    out.u(coded.len() as u64);
    out.0.extend_from_slice(&coded);
    out.0.extend_from_slice(&coded_gaps);
    Some(Some(out.0))
}

/// The r2 bytes a second-layout r3 payload holds (after its first byte), never more than
/// [`MAX_INFLATED`] nor [`context::MAX_CONTEXT_MIXED`] context-mixed, nor more than
/// [`context::MAX_EXPANSION`] per coded byte.
fn r2_bytes_of_context_layout(payload: &[u8]) -> Result<Vec<u8>, ShareError> {
    let mut r = bytes::Cursor::new(payload, "layout");
    let (against_others, models) = variant_of(r.code(6)? as u8);
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
    let rest = context::decode(&mut d, &lengths, &primers(models), models)?;
    d.finish()?;
    let anchors = (against_others != GapsAgainst::Own).then(|| columns::gap_anchors(&rest));
    let gaps = entropy::gaps_column(
        &payload[at + coded_len..],
        MAX_INFLATED - rest.len(),
        anchors.as_deref(),
        against_others == GapsAgainst::OthersLatest,
    )?;
    columns::put_gaps(&rest, &gaps)
}

/// An r3 payload of the first layout (links made before the second): the length of the
/// DEFLATE part, the r2 bytes without their gaps column under DEFLATE, then the gaps
/// range-coded. `None` as for [`r3_payload`].
fn r3_deflate_payload(r2_bytes: &[u8]) -> Option<Vec<u8>> {
    let (rest, gaps) = columns::take_gaps(r2_bytes).ok()?;
    let coded = entropy::code_gaps(&gaps, None, false)?;
    let packed = miniz_oxide::deflate::compress_to_vec(&rest, 9);
    let mut out = bytes::Column::default();
    out.u(packed.len() as u64);
    out.0.extend_from_slice(&packed);
    out.0.extend_from_slice(&coded);
    Some(out.0)
}

/// The r2 bytes an r3 payload holds (either layout), never more than [`MAX_INFLATED`].
fn r2_bytes_of_r3(payload: &[u8]) -> Result<Vec<u8>, ShareError> {
    if let Some((&CONTEXT_LAYOUT, rest)) = payload.split_first() {
        return r2_bytes_of_context_layout(rest);
    }
    let mut r = bytes::Cursor::new(payload, "layout");
    let len = r.count()?;
    let at = payload.len() - r.remaining();
    let packed = &payload[at..at + len];
    let rest = inflate(packed)?;
    let gaps = entropy::gaps_column(&payload[at + len..], MAX_INFLATED - rest.len(), None, false)?;
    columns::put_gaps(&rest, &gaps)
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
            let mut report = columns::decode(&r2_bytes_of_r3(&packed)?)?;
            if let Some(shared) = &mut report.shared {
                shared.format = "r3".into();
            }
            Ok(report)
        }
        2 => columns::decode(&inflate(&packed)?),
        _ => Ok(ttft_core::report::read_json(&inflate(&packed)?)?),
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

/// `x` (a report, a part of one) with every fractional number rounded to 0.001 (1 µs for
/// times); as it was if it does not go through JSON.
pub(crate) fn round_floats<T: serde::Serialize + serde::de::DeserializeOwned + Clone>(x: &T) -> T {
    match serde_json::to_value(x) {
        Ok(mut v) => {
            round_value(&mut v);
            serde_json::from_value(v).unwrap_or_else(|_| x.clone())
        }
        Err(_) => x.clone(),
    }
}

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
    let (link, layout) = encode_layout(report, options, Format::R3);
    let kept = columns::sample(report, layout);
    let headline = headline(report, layout, &std::cell::OnceCell::new());
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
