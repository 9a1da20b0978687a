//! The columns: a run's measurements in a binary, columnar encoding (first written as r2
//! links, and what r3 links carry), from which the core recomputes every figure when the link
//! is opened. This module defines the format (the header, the columns, the flag bits) and
//! what reads it without decoding it all ([`sections`], [`gap_anchors`], [`take_gaps`]);
//! [`mod@write`] writes it, [`mod@read`] reads it back.
//!
//! What is kept per request: group, flags, the client that measured it (a run merged from
//! timeline files), send offset, browser queue, outcome; the first-byte,
//! first-token (any kind), first-reasoning, first-answer, meaningful-token and end times; every
//! arrival gap with the tokens it carried; token counts (prompt-cache hits included) and their
//! source; stalls, server timings, JSON and tool-call times, per-choice summaries; for a few requests their replay
//! (text and times), for the others what each arrival gave a reader
//! ([`ttft_core::experience::ReadingUnits`]) instead of its text. Per-request rates that follow
//! from those (TPOT, decode rate, tokens per arrival) and every run statistic are recomputed.
//! Left out: server request ids and wall-clock send times (they line a run up with a server's
//! records, which the reader of a link does not have), and the timeline lines' raw captures and
//! origins.
//!
//! A link that keeps every k-th request ([`Layout::request_stride`]) or the gaps of every k-th
//! ([`Layout::gap_stride`]) samples the run evenly ([`sample`]); in a probe under load it keeps
//! every probe request with its gaps and samples the load only, so the probe's figures and
//! chart reopen from the requests themselves (a probe too long for the link whole is sampled
//! with the load, as the last resort).
//!
//! Times are rounded to a stated step ([`Layout::precision_ms`], 0.1 ms by default): every time
//! within half a step, every gap within one (a single choice's gaps are the steps between its
//! rounded arrival times, so arrivals never drift). They are stored as integers, relative to
//! the time they follow (the first token after the first byte, the end after the first token,
//! each gap against the request's median gap), zigzag/LEB128-coded, one column per kind of
//! value so that similar bytes sit together for the coder.
//!
//! A kept replay whose answer and reasoning texts are its pieces' joined stores them once
//! (the pieces' lengths in the replay column, their texts unbroken in the text column), and a
//! single choice's end time with kept gaps is stored against its last arrival: two flags added
//! with r3's second layout, in r2 links too.
//!
//! Byte layout (before r2's DEFLATE or r3's coders): `2`, the header's length and JSON ([`Header`]: the report's
//! own fields, the string table, the precision and what was left out), the number of columns,
//! then each column's length and bytes, in [`Col`] order.

mod read;
mod write;

pub(crate) use read::decode;
pub(crate) use write::encode;

use serde::{Deserialize, Serialize};
use ttft_core::experience::{ExperienceConfig, ReadingUnits};
use ttft_core::metrics::{RequestMetrics, TokenSource, TtftKind};
use ttft_core::openers::OpenerEdits;
use ttft_core::report::{Aggregates, EndpointInfo, ReplayPiece, Report, RequestRecord};
use ttft_core::review::BlindVote;
use ttft_core::stats::Thresholds;
use ttft_core::timeline::Outcome;

use crate::ShareError;
use crate::bytes::{Column, Cursor};

/// The format byte that opens an r2 payload.
const FORMAT: u8 = 2;
/// Most requests a link may hold.
const MAX_REQUESTS: usize = 1 << 21;

/// What an encoding keeps (the ladder chooses it to fit a length, `ladder.rs`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Layout {
    /// Step times are rounded to (ms).
    pub precision_ms: f64,
    /// Requests whose replay text is kept (spread evenly over the run).
    pub replays: usize,
    /// Keep per-gap timings of every `gap_stride`-th kept request only (1 = all).
    pub gap_stride: usize,
    /// Keep every `request_stride`-th request only (1 = all).
    pub request_stride: usize,
    /// In a probe under load, keep every probe request with its gaps and apply the strides to
    /// the load only ([`sample`]); `false` samples the probe with the load (a probe too long
    /// for the link whole).
    pub whole_probe: bool,
}

/// The report's own fields and the tables the columns refer to.
#[derive(Debug, Serialize, Deserialize)]
struct Header {
    version: u32,
    title: String,
    created_unix_ms: f64,
    clock_resolution_ms: Option<f64>,
    stamping: Option<String>,
    endpoint: EndpointInfo,
    scenario: String,
    settings: serde_json::Value,
    thresholds: Thresholds,
    experience: ExperienceConfig,
    precision_ms: f64,
    requests: usize,
    /// Group labels with their levels.
    groups: Vec<(String, Option<f64>)>,
    /// Every other repeated string (messages, openers, names, finish reasons, protocols, keys).
    strings: Vec<String>,
    left_out: Vec<String>,
    headline: Option<Box<Aggregates>>,
    /// Who measured the run, for a run read from timeline files (absent from older links).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    vantage: Option<String>,
    /// What reading its timeline files found (absent from older links).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    import_notes: Vec<String>,
    /// Blind review votes (absent from older links).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    votes: Vec<BlindVote>,
    /// The SLO set (absent from older links, and when it is the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    slo: Option<ttft_core::slo::SloSet>,
    /// The client-health verdict (absent from older links and imported runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_health: Option<ttft_core::client_health::ClientHealth>,
    /// The browser that measured the run (absent from older links and imported runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    user_agent: Option<String>,
    /// The clients that measured the requests ([`RequestRecord::client`]: `browser`, `locust`),
    /// each request naming one by position under its [`CLIENT`] flag (absent from older links
    /// and from runs measured in this studio, whose requests name none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    clients: Vec<String>,
    /// The team's changes to the default opener phrases ([`Report::openers`]; absent from
    /// older links and when there are none).
    #[serde(default, skip_serializing_if = "OpenerEdits::is_empty")]
    openers: OpenerEdits,
    /// What the saturation stop did ([`Report::saturation`]; absent from older links and from
    /// runs it did not watch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    saturation: Option<ttft_core::report::saturation::SaturationCheck>,
    /// What the live surface painted ([`Report::painted`], the requests the link keeps, at
    /// most [`PAINT_LAGS_KEPT`] per-chunk lags; absent from older links and from runs drawn
    /// with the surface off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    painted: Option<ttft_core::paint::PaintedRun>,
}

/// The most per-chunk paint lags a link carries (each request's thinned evenly beyond it).
pub(crate) const PAINT_LAGS_KEPT: usize = 4_000;

/// The columns, in stored order.
#[derive(Debug, Clone, Copy)]
enum Col {
    Flags,
    Groups,
    Starts,
    Outcomes,
    Times,
    Tokens,
    Gaps,
    GapTokens,
    Extras,
    Units,
    Replay,
    Text,
}

/// The replay text's section in [`sections`] (after the layout, header and column count).
pub(crate) const TEXT_SECTION: usize = 3 + Col::Text as usize;

const COLUMNS: [(&str, Col); 12] = [
    ("flags", Col::Flags),
    ("groups", Col::Groups),
    ("starts", Col::Starts),
    ("outcomes", Col::Outcomes),
    ("times", Col::Times),
    ("tokens", Col::Tokens),
    ("gaps", Col::Gaps),
    ("gap tokens", Col::GapTokens),
    ("extras", Col::Extras),
    ("reading units", Col::Units),
    ("replay", Col::Replay),
    ("text", Col::Text),
];

// Flag bits of a request.
const WARMUP: u64 = 1;
const STREAMED: u64 = 1 << 1;
const COALESCED: u64 = 1 << 2;
const TTFB: u64 = 1 << 3;
const TTFT: u64 = 1 << 4;
const FIRST_REASONING: u64 = 1 << 5;
const FIRST_ANSWER: u64 = 1 << 6;
const MEANINGFUL: u64 = 1 << 7;
const E2E: u64 = 1 << 8;
const QUEUE: u64 = 1 << 9;
const PROMPT_TOKENS: u64 = 1 << 10;
const REASONING_TOKENS: u64 = 1 << 11;
const JSON: u64 = 1 << 12;
const SERVER_TIMINGS: u64 = 1 << 13;
const SAMPLED: u64 = 1 << 14;
const GAPS_KEPT: u64 = 1 << 15;
const TOKEN_ARRIVALS: u64 = 1 << 16;
// Added after the first r2 links: a link without them reads as before (no cache figures); a
// studio from before them refuses a link that sets them, as it refuses any unknown flag.
const CACHED_TOKENS: u64 = 1 << 17;
const CACHE_WRITE_TOKENS: u64 = 1 << 18;
// Added with the clients of merged runs: the request's client, by position in
// [`Header::clients`], follows its protocol in the groups column (the same rule for older
// studios as above).
const CLIENT: u64 = 1 << 19;
// Added with r3's context-mixing layout: a kept replay's answer and reasoning texts are its
// pieces' (`a` and `r`) joined, so they are not stored again; each piece's length is in the
// replay column and the pieces' texts follow one another in the text column, unbroken.
const TEXT_AS_PIECES: u64 = 1 << 20;
// Added with it too: a single choice's end time, when its gaps are kept, is stored against its
// last arrival (first token plus the gaps' steps), not against the first token.
const END_AFTER_LAST: u64 = 1 << 21;
// Added with load shapes: the request's planned send follows its start (and browser queue) in
// the starts column, as steps from its start (the same rule for older studios as above).
const PLANNED: u64 = 1 << 22;
const FLAG_LIMIT: u64 = 1 << 23;

/// The texts of a replay's pieces of `kind`, joined.
fn joined(replay: &[ReplayPiece], kind: char) -> String {
    replay
        .iter()
        .filter(|p| p.kind == kind)
        .map(|p| p.text.as_str())
        .collect()
}

/// Outcome kinds by code; a new kind only ever goes last, so older links keep their codes.
const OUTCOMES: [&str; 8] = [
    "ok",
    "http_error",
    "stream_error",
    "truncated",
    "aborted",
    "timeout",
    "network_error",
    "cut_by_client",
];
const SOURCES: [TokenSource; 5] = [
    TokenSource::FinalUsage,
    TokenSource::ContinuousUsage,
    TokenSource::ServerTimings,
    TokenSource::Estimate,
    TokenSource::Imported,
];
const KINDS: [TtftKind; 4] = [
    TtftKind::Answer,
    TtftKind::Reasoning,
    TtftKind::Refusal,
    TtftKind::ToolCall,
];

/// Strings stored once, referred to by position.
#[derive(Default)]
struct Strings {
    list: Vec<String>,
    index: std::collections::HashMap<String, u64>,
}

impl Strings {
    fn id(&mut self, s: &str) -> u64 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.list.len() as u64;
        self.list.push(s.to_owned());
        self.index.insert(s.to_owned(), i);
        i
    }
}

/// Rounds times to integer steps.
#[derive(Clone, Copy)]
struct Steps(f64);

impl Steps {
    fn of(self, ms: f64) -> i64 {
        if ms.is_finite() {
            (ms / self.0).round() as i64
        } else {
            0
        }
    }

    fn ms(self, steps: i64) -> f64 {
        steps as f64 * self.0
    }
}

/// Which requests keep their replay: `n` spread evenly (the first always).
fn sampled(total: usize, n: usize) -> impl Fn(usize) -> bool {
    let step = if n == 0 {
        usize::MAX
    } else {
        total.div_ceil(n).max(1)
    };
    move |i| n > 0 && i % step == 0
}

/// `a + b`, or the link is damaged (no value this encoder writes overflows).
fn plus(a: i64, b: i64) -> Result<i64, ShareError> {
    a.checked_add(b)
        .ok_or_else(|| ShareError::Damaged("a time out of range".into()))
}

fn median(sorted_or_not: &[i64]) -> i64 {
    let mut v = sorted_or_not.to_vec();
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

/// The arrival times of a single-choice request (first token, then each gap), to refer to.
fn arrival_times(m: &RequestMetrics) -> Vec<f64> {
    let Some(first) = m.ttft_ms.filter(|_| m.choices.is_empty()) else {
        return Vec::new();
    };
    let mut at = first;
    let mut out = Vec::with_capacity(m.itl_ms.len() + 1);
    out.push(at);
    for g in &m.itl_ms {
        at += g;
        out.push(at);
    }
    out
}

/// Token times as `(time, tokens)` per arrival.
fn grouped(times: &[f64]) -> Vec<(f64, u32)> {
    let mut out: Vec<(f64, u32)> = Vec::new();
    for &t in times {
        match out.last_mut() {
            Some((at, n)) if *at == t => *n = n.saturating_add(1),
            _ => out.push((t, 1)),
        }
    }
    out
}

/// Reading units merged per arrival time (a reader treats pieces of one moment as one).
fn merged_units(units: Vec<ReadingUnits>) -> Vec<ReadingUnits> {
    let mut out: Vec<ReadingUnits> = Vec::with_capacity(units.len());
    for u in units.into_iter().filter(|u| u.words + u.cjk_chars > 0) {
        match out.last_mut() {
            Some(last) if last.at_ms == u.at_ms => {
                last.words = last.words.saturating_add(u.words);
                last.cjk_chars = last.cjk_chars.saturating_add(u.cjk_chars);
            }
            _ => out.push(u),
        }
    }
    out
}

fn source_code(s: TokenSource) -> u64 {
    SOURCES.iter().position(|x| *x == s).unwrap_or(3) as u64
}

fn outcome_code(o: &Outcome) -> u64 {
    OUTCOMES.iter().position(|k| *k == o.kind()).unwrap_or(0) as u64
}

fn piece_kind(c: char) -> u64 {
    match c {
        'a' => 0,
        'r' => 1,
        't' => 2,
        other => 3 + u64::from(other),
    }
}

/// The requests a link with `layout` keeps, in the run's order, each with whether it keeps its
/// per-gap timings: every `request_stride`-th request, and of those every `gap_stride`-th with
/// its gaps. In a probe under load ([`Report::is_probe_under_load`]) every probe request is
/// kept with its gaps and the strides count the load's requests only (unless
/// [`Layout::whole_probe`] is off): the probe is the few streams the run was made to measure,
/// the load its many.
pub(crate) fn sample(report: &Report, layout: Layout) -> Vec<(&RequestRecord, bool)> {
    let probe_kept = layout.whole_probe && report.is_probe_under_load();
    let (request_stride, gap_stride) = (layout.request_stride.max(1), layout.gap_stride.max(1));
    let (mut seen, mut kept) = (0usize, 0usize);
    report
        .requests
        .iter()
        .filter_map(|r| {
            if probe_kept && r.client.as_deref() == Some(ttft_core::probe::PROBE_CLIENT) {
                return Some((r, true));
            }
            seen += 1;
            if (seen - 1) % request_stride != 0 {
                return None;
            }
            kept += 1;
            Some((r, (kept - 1) % gap_stride == 0))
        })
        .collect()
}

/// Where an r2 payload's pieces lie: the header's JSON, where the columns begin (after their
/// count) and each column's bytes.
struct Parts {
    header: std::ops::Range<usize>,
    columns_start: usize,
    columns: Vec<std::ops::Range<usize>>,
}

impl Parts {
    fn of(bytes: &[u8]) -> Result<Self, ShareError> {
        let mut top = Cursor::new(bytes, "layout");
        if bytes.first() != Some(&FORMAT) {
            return Err(ShareError::Damaged("not an r2 payload".into()));
        }
        top.code(256)?;
        let header_len = top.count()?;
        let header_start = bytes.len() - top.remaining();
        let header = header_start..header_start + header_len;
        let mut top = Cursor::new(&bytes[header.end..], "layout");
        let ncols = top.count_of(COLUMNS.len())?;
        if ncols != COLUMNS.len() {
            return Err(ShareError::Damaged(format!(
                "{ncols} columns where this studio writes {}",
                COLUMNS.len()
            )));
        }
        let columns_start = bytes.len() - top.remaining();
        let mut offset = columns_start;
        let mut columns = Vec::with_capacity(ncols);
        for _ in COLUMNS {
            let mut len_reader = Cursor::new(&bytes[offset..], "layout");
            let len = len_reader.count()?;
            offset = bytes.len() - len_reader.remaining();
            columns.push(offset..offset + len);
            offset += len;
        }
        if offset != bytes.len() {
            return Err(ShareError::Damaged("bytes after the last column".into()));
        }
        Ok(Self {
            header,
            columns_start,
            columns,
        })
    }

    /// The payload again, with the gaps column replaced.
    fn with_gaps(&self, bytes: &[u8], gaps: &[u8]) -> Vec<u8> {
        let mut out = Column(bytes[..self.columns_start].to_vec());
        for (i, range) in self.columns.iter().enumerate() {
            let col = if i == Col::Gaps as usize {
                gaps
            } else {
                &bytes[range.clone()]
            };
            out.u(col.len() as u64);
            out.0.extend_from_slice(col);
        }
        out.0
    }
}

/// An r2 payload cut into contiguous sections that cover it, each named: the format byte and
/// header length, the header, the column count, then each column with its length.
pub(crate) fn sections(
    bytes: &[u8],
) -> Result<Vec<(&'static str, std::ops::Range<usize>)>, ShareError> {
    let parts = Parts::of(bytes)?;
    let mut out = vec![
        ("layout", 0..parts.header.start),
        ("header", parts.header.clone()),
        ("column count", parts.header.end..parts.columns_start),
    ];
    let mut from = parts.columns_start;
    for (range, (name, _)) in parts.columns.iter().zip(COLUMNS) {
        out.push((name, from..range.end));
        from = range.end;
    }
    Ok(out)
}

/// For each request of an r2 payload that keeps its gaps, in order, when its first token
/// arrived in the run (send offset plus TTFT, in steps), if it has one: what the gaps' coder
/// predicts each arrival from the other streams' with (`entropy::code_gaps`). Reads only the
/// flags, starts and times columns; a payload that does not read gives fewer anchors, never
/// an error (the gaps then code without them, on both sides alike).
pub(crate) fn gap_anchors(bytes: &[u8]) -> Vec<Option<i64>> {
    let mut out = Vec::new();
    let Ok(parts) = Parts::of(bytes) else {
        return out;
    };
    let col = |c: Col, name| Cursor::new(&bytes[parts.columns[c as usize].clone()], name);
    let (mut f, mut st, mut t) = (
        col(Col::Flags, "flags"),
        col(Col::Starts, "starts"),
        col(Col::Times, "times"),
    );
    let mut start = 0i64;
    let mut one = || -> Result<Option<Option<i64>>, ShareError> {
        let flags = f.u()?;
        f.i()?;
        start = start.wrapping_add(st.i()?);
        if flags & QUEUE != 0 {
            st.i()?;
        }
        if flags & PLANNED != 0 {
            st.i()?;
        }
        let ttfb = if flags & TTFB != 0 { t.i()? } else { 0 };
        let ttft = if flags & TTFT != 0 {
            Some(ttfb.wrapping_add(t.i()?))
        } else {
            None
        };
        for bit in [FIRST_REASONING, FIRST_ANSWER, MEANINGFUL, E2E] {
            if flags & bit != 0 {
                t.i()?;
            }
        }
        Ok((flags & GAPS_KEPT != 0).then(|| ttft.map(|v| start.wrapping_add(v))))
    };
    while let Ok(anchor) = one() {
        if let Some(anchor) = anchor {
            out.push(anchor);
        }
    }
    out
}

/// Splits an r2 payload into the payload with its gaps column left empty, and that column.
pub(crate) fn take_gaps(bytes: &[u8]) -> Result<(Vec<u8>, Vec<u8>), ShareError> {
    let parts = Parts::of(bytes)?;
    let gaps = bytes[parts.columns[Col::Gaps as usize].clone()].to_vec();
    Ok((parts.with_gaps(bytes, &[]), gaps))
}

/// Puts a gaps column back into a payload from [`take_gaps`].
pub(crate) fn put_gaps(bytes: &[u8], gaps: &[u8]) -> Result<Vec<u8>, ShareError> {
    let parts = Parts::of(bytes)?;
    if !parts.columns[Col::Gaps as usize].is_empty() {
        return Err(ShareError::Damaged("gaps stored twice".into()));
    }
    Ok(parts.with_gaps(bytes, gaps))
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
