//! Share format r2: a run's measurements in a binary, columnar encoding, from which the core
//! recomputes every figure when the link is opened.
//!
//! What is kept per request: group, flags, the client that measured it (a run merged from
//! timeline files), send offset, browser queue, outcome; the first-byte,
//! first-token (any kind), first-reasoning, first-answer, meaningful-token and end times; every
//! arrival gap with the tokens it carried; token counts (prompt-cache hits included) and their source; stalls, server
//! timings, JSON and tool-call times, per-choice summaries; for a few requests their replay
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
//! rounded arrival times, so arrivals never drift). They are stored as integers, relative to the time they follow (the first token after the first byte, the
//! end after the first token, each gap against the request's median gap), zigzag/LEB128-coded,
//! one column per kind of value so that similar bytes sit together for DEFLATE.
//!
//! A kept replay whose answer and reasoning texts are its pieces' joined stores them once
//! (the pieces' lengths in the replay column, their texts unbroken in the text column), and a
//! single choice's end time with kept gaps is stored against its last arrival: two flags added
//! with r3's second layout, in r2 links too.
//!
//! Byte layout (before DEFLATE): `2`, the header's length and JSON ([`Header`]: the report's
//! own fields, the string table, the precision and what was left out), the number of columns,
//! then each column's length and bytes, in [`Col`] order.

use serde::{Deserialize, Serialize};

use super::ShareError;
use super::bytes::{Column, Cursor};
use ttft_core::agent_json::JsonProgress;
use ttft_core::dialect::{Dialect, ServerTimings};
use ttft_core::experience::{
    ExperienceConfig, ReadingUnits, record_reading_units, token_times, token_times_from_gaps,
};
use ttft_core::metrics::{
    ChoiceSummary, RequestMetrics, Stall, TokenSource, ToolCallTiming, TtftKind,
    single_choice_rates,
};
use ttft_core::report::{
    Aggregates, EndpointInfo, REPORT_VERSION, ReplayPiece, Report, RequestRecord, SharedFrom,
};
use ttft_core::review::BlindVote;
use ttft_core::stats::Thresholds;
use ttft_core::timeline::Outcome;

/// The format byte that opens an r2 payload.
const FORMAT: u8 = 2;
/// Most requests a link may hold.
const MAX_REQUESTS: usize = 1 << 21;

/// What an encoding keeps (the share module chooses it to fit a length).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Layout {
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
}

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
pub(super) const TEXT_SECTION: usize = 3 + Col::Text as usize;

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
const FLAG_LIMIT: u64 = 1 << 22;

/// The texts of a replay's pieces of `kind`, joined.
fn joined(replay: &[ReplayPiece], kind: char) -> String {
    replay
        .iter()
        .filter(|p| p.kind == kind)
        .map(|p| p.text.as_str())
        .collect()
}

const OUTCOMES: [&str; 7] = [
    "ok",
    "http_error",
    "stream_error",
    "truncated",
    "aborted",
    "timeout",
    "network_error",
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
pub(super) fn sample(report: &Report, layout: Layout) -> Vec<(&RequestRecord, bool)> {
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

/// Encodes the requests `kept` of `report` ([`sample`]) with `layout` (uncompressed bytes).
pub(super) fn encode(
    report: &Report,
    kept: &[(&RequestRecord, bool)],
    layout: Layout,
    left_out: Vec<String>,
    headline: Option<Aggregates>,
) -> Vec<u8> {
    let q = Steps(layout.precision_ms);
    let n = kept.len();
    let keep_replay = sampled(n, layout.replays);
    let mut cols: Vec<Column> = vec![Column::default(); COLUMNS.len()];
    let mut strings = Strings::default();
    let mut groups: Vec<(String, Option<f64>)> = Vec::new();
    let mut clients: Vec<String> = Vec::new();
    let mut prev_start = 0i64;
    let mut prev_index = -1i64;
    for (i, &(r, keep_gaps)) in kept.iter().enumerate() {
        let m = &r.metrics;
        let keep_text = keep_replay(i) && !r.replay.is_empty();
        // A single choice's gaps are the steps between its rounded arrival times, so every
        // arrival (first token plus the gaps before it) stays within half a step, and a gap
        // within one; several choices' gaps (one list per choice) are rounded one by one.
        let steps: Vec<i64> = if !keep_gaps {
            Vec::new()
        } else if let Some(first) = m.ttft_ms.filter(|_| m.choices.is_empty()) {
            let (mut at, mut prev) = (first, q.of(first));
            m.itl_ms
                .iter()
                .map(|g| {
                    at += g;
                    let step = q.of(at);
                    let gap = step - prev;
                    prev = step;
                    gap
                })
                .collect()
        } else {
            m.itl_ms.iter().map(|g| q.of(*g)).collect()
        };
        let end_after_last =
            keep_gaps && m.choices.is_empty() && m.ttft_ms.is_some() && m.e2e_ms.is_some();
        let text_as_pieces = keep_text
            && joined(&r.replay, 'a') == m.text
            && joined(&r.replay, 'r') == m.reasoning_text;
        // Token arrivals for fluidity, where the gaps alone would not give them.
        let token_arrivals = if keep_text || !keep_gaps {
            Vec::new()
        } else {
            let times = token_times(r);
            let from_gaps = token_times_from_gaps(m);
            let same = times.len() == from_gaps.len()
                && times
                    .iter()
                    .zip(&from_gaps)
                    .all(|(a, b)| (a - b).abs() <= 1e-6);
            if same { Vec::new() } else { grouped(&times) }
        };
        let mut flags = 0;
        for (on, bit) in [
            (r.warmup, WARMUP),
            (m.streamed, STREAMED),
            (m.coalesced, COALESCED),
            (m.ttfb_ms.is_some(), TTFB),
            (m.ttft_ms.is_some(), TTFT),
            (m.first_reasoning_ms.is_some(), FIRST_REASONING),
            (m.first_answer_ms.is_some(), FIRST_ANSWER),
            (m.meaningful_ms.is_some(), MEANINGFUL),
            (m.e2e_ms.is_some(), E2E),
            (r.browser_queue_ms.is_some(), QUEUE),
            (m.prompt_tokens.is_some(), PROMPT_TOKENS),
            (m.reasoning_tokens.is_some(), REASONING_TOKENS),
            (m.json.is_some(), JSON),
            (m.server_timings.is_some(), SERVER_TIMINGS),
            (keep_text, SAMPLED),
            (keep_gaps, GAPS_KEPT),
            (!token_arrivals.is_empty(), TOKEN_ARRIVALS),
            (m.cached_tokens.is_some(), CACHED_TOKENS),
            (m.cache_write_tokens.is_some(), CACHE_WRITE_TOKENS),
            (r.client.is_some(), CLIENT),
            (text_as_pieces, TEXT_AS_PIECES),
            (end_after_last, END_AFTER_LAST),
        ] {
            if on {
                flags |= bit;
            }
        }
        let c = &mut cols;
        c[Col::Flags as usize].u(flags);
        c[Col::Flags as usize].i(i64::from(r.index) - (prev_index + 1));
        prev_index = i64::from(r.index);

        let group = match groups
            .iter()
            .position(|(g, l)| *g == r.group && l.map(f64::to_bits) == r.level.map(f64::to_bits))
        {
            Some(p) => p,
            None => {
                groups.push((r.group.clone(), r.level));
                groups.len() - 1
            }
        };
        c[Col::Groups as usize].u(group as u64);
        c[Col::Groups as usize].u(r.protocol.as_deref().map_or(0, |p| strings.id(p) + 1));
        if let Some(client) = &r.client {
            let k = match clients.iter().position(|c| c == client) {
                Some(k) => k,
                None => {
                    clients.push(client.clone());
                    clients.len() - 1
                }
            };
            c[Col::Groups as usize].u(k as u64);
        }

        let start = q.of(r.start_ms);
        c[Col::Starts as usize].i(start - prev_start);
        prev_start = start;
        if let Some(b) = r.browser_queue_ms {
            c[Col::Starts as usize].i(q.of(b));
        }

        let out = &mut c[Col::Outcomes as usize];
        out.u(outcome_code(&r.outcome));
        if let Outcome::HttpError { status, .. } = r.outcome {
            out.u(u64::from(status));
        }
        if let Some(msg) = r.outcome.message() {
            out.u(strings.id(msg));
        }

        // Each time relative to the one it follows.
        let t = &mut c[Col::Times as usize];
        let base = |v: Option<f64>| v.map_or(0, |v| q.of(v));
        if let Some(v) = m.ttfb_ms {
            t.i(q.of(v));
        }
        if let Some(v) = m.ttft_ms {
            t.i(q.of(v) - base(m.ttfb_ms));
        }
        let after_first = base(m.ttft_ms.or(m.ttfb_ms));
        if let Some(v) = m.first_reasoning_ms {
            t.i(q.of(v) - after_first);
        }
        if let Some(v) = m.first_answer_ms {
            t.i(q.of(v) - after_first);
        }
        if let Some(v) = m.meaningful_ms {
            t.i(q.of(v) - base(m.first_answer_ms.or(m.ttft_ms)));
        }
        if let Some(v) = m.e2e_ms {
            let last = if end_after_last {
                after_first + steps.iter().sum::<i64>()
            } else {
                after_first
            };
            t.i(q.of(v) - last);
        }

        let k = &mut c[Col::Tokens as usize];
        k.u(m.output_tokens);
        k.u(source_code(m.token_source));
        if let Some(p) = m.prompt_tokens {
            k.u(p);
        }
        if let Some(p) = m.reasoning_tokens {
            k.u(p);
        }
        for p in [m.cached_tokens, m.cache_write_tokens]
            .into_iter()
            .flatten()
        {
            k.u(p);
        }
        k.u(u64::from(m.output_events));
        k.u(u64::from(m.output_arrivals));
        k.u(m.ttft_kind.map_or(0, |kind| {
            KINDS.iter().position(|x| *x == kind).unwrap_or(0) as u64 + 1
        }));
        k.u(strings.id(&m.opener_text));

        if keep_gaps {
            let mid = median(&steps);
            let g = &mut c[Col::Gaps as usize];
            g.u(steps.len() as u64);
            if !steps.is_empty() {
                g.i(mid);
                for s in &steps {
                    g.i(s - mid);
                }
            }
            for tokens in &m.gap_tokens {
                c[Col::GapTokens as usize].u(tokens.map_or(0, |n| u64::from(n) + 1));
            }
        }

        let x = &mut c[Col::Extras as usize];
        x.u(m.stalls.len() as u64);
        for s in &m.stalls {
            x.i(q.of(s.from_ms) - after_first);
            x.i(q.of(s.gap_ms));
        }
        if let Some(st) = &m.server_timings {
            let counts = [st.prompt_n, st.predicted_n, st.cache_n];
            let times = [st.prompt_ms, st.predicted_ms, st.predicted_per_token_ms];
            let mut present = 0u64;
            for (bit, on) in counts
                .iter()
                .map(Option::is_some)
                .chain(times.iter().map(Option::is_some))
                .enumerate()
            {
                if on {
                    present |= 1 << bit;
                }
            }
            x.u(present);
            counts.iter().flatten().for_each(|v| x.u(*v));
            times.iter().flatten().for_each(|v| x.f(*v));
        }
        if let Some(j) = &m.json {
            let present = u64::from(j.first_bracket_at.is_some())
                | u64::from(j.valid_at.is_some()) << 1
                | u64::from(keep_text && j.value.is_some()) << 2;
            x.u(present);
            if let Some(v) = j.first_bracket_at {
                x.i(q.of(v) - after_first);
            }
            if let Some(v) = j.valid_at {
                x.i(q.of(v) - after_first);
            }
            x.u(j.missing_keys.len() as u64);
            for key in &j.missing_keys {
                x.u(strings.id(key));
            }
            x.u(u64::from(j.invalid_candidates));
            if keep_text && let Some(v) = &j.value {
                c[Col::Text as usize].s(v);
            }
        }
        let x = &mut c[Col::Extras as usize];
        x.u(m.tool_calls.len() as u64);
        for call in &m.tool_calls {
            x.u(u64::from(call.index));
            x.u(call.name.as_deref().map_or(0, |n| strings.id(n) + 1));
            x.i(q.of(call.first_at_ms) - after_first);
            match call.valid_at_ms {
                Some(v) => {
                    x.u(1);
                    x.i(q.of(v) - q.of(call.first_at_ms));
                }
                None => x.u(0),
            }
        }
        x.u(m.choices.len() as u64);
        for ch in &m.choices {
            x.u(u64::from(ch.index));
            match ch.first_token_ms {
                Some(v) => {
                    x.u(1);
                    x.i(q.of(v) - after_first);
                }
                None => x.u(0),
            }
            x.u(ch.output_tokens.map_or(0, |v| v + 1));
            x.u(ch.finish_reason.as_deref().map_or(0, |f| strings.id(f) + 1));
        }
        if !m.choices.is_empty() {
            // Several choices: TPOT and rate follow from per-choice spans a link does not keep.
            for v in [m.tpot_ms, m.decode_tokens_per_s] {
                match v {
                    Some(v) => {
                        x.u(1);
                        x.f(v);
                    }
                    None => x.u(0),
                }
            }
        }

        if keep_text {
            let text = &mut c[Col::Text as usize];
            if !text_as_pieces {
                text.s(&m.text);
                text.s(&m.reasoning_text);
            }
            for ch in &m.choices {
                text.s(&ch.text);
                text.s(&ch.reasoning_text);
            }
            for call in &m.tool_calls {
                text.s(&call.arguments);
            }
            // Each piece at an arrival of the gaps (a reference to it), or at its own time.
            let arrivals = if keep_gaps {
                arrival_times(m)
            } else {
                Vec::new()
            };
            let mut refs = Vec::with_capacity(r.replay.len());
            let mut next = 0;
            for p in &r.replay {
                match arrivals
                    .get(next..)
                    .and_then(|rest| rest.iter().position(|a| (a - p.at_ms).abs() <= 1e-6))
                {
                    Some(k) => {
                        refs.push(next + k);
                        next += k;
                    }
                    None => break,
                }
            }
            let aligned = refs.len() == r.replay.len();
            let rp = &mut c[Col::Replay as usize];
            rp.u(r.replay.len() as u64);
            rp.u(u64::from(aligned));
            let (mut prev, mut prev_ref) = (0i64, 0usize);
            for (k, p) in r.replay.iter().enumerate() {
                rp.u(piece_kind(p.kind));
                if text_as_pieces {
                    rp.u(p.text.len() as u64);
                }
                if aligned {
                    rp.u((refs[k] - prev_ref) as u64);
                    prev_ref = refs[k];
                } else {
                    let at = q.of(p.at_ms);
                    rp.i(at - prev);
                    prev = at;
                }
            }
            for p in &r.replay {
                if text_as_pieces {
                    c[Col::Text as usize].0.extend_from_slice(p.text.as_bytes());
                } else {
                    c[Col::Text as usize].s(&p.text);
                }
            }
        } else if keep_gaps {
            // What each arrival gave a reader, referring to the arrival it came with (a link
            // that left out a request's gaps carries the run's headline instead).
            let mut units = merged_units(record_reading_units(r, &report.experience));
            let arrivals = arrival_times(m);
            let u = &mut c[Col::Units as usize];
            // At the gaps' arrivals (most streams): one count per arrival, words then
            // characters; otherwise each unit names its arrival or time.
            let mut at_arrival = vec![(0u32, 0u32); arrivals.len()];
            let mut aligned = !arrivals.is_empty();
            let mut next = 0;
            for unit in &units {
                match arrivals[next.min(arrivals.len())..]
                    .iter()
                    .position(|a| (a - unit.at_ms).abs() <= 1e-6)
                {
                    Some(p) if aligned => {
                        at_arrival[next + p] = (unit.words, unit.cjk_chars);
                        next += p + 1;
                    }
                    _ => aligned = false,
                }
            }
            u.u(u64::from(aligned));
            if aligned {
                at_arrival.iter().for_each(|a| u.u(u64::from(a.0)));
                at_arrival.iter().for_each(|a| u.u(u64::from(a.1)));
                units.clear();
            }
            u.u(units.len() as u64);
            let (mut prev_j, mut prev_at) = (-1i64, 0i64);
            for unit in &units {
                let from = usize::try_from(prev_j + 1).unwrap_or(0);
                let found = arrivals
                    .iter()
                    .skip(from)
                    .position(|a| (a - unit.at_ms).abs() <= 1e-6)
                    .map(|p| (p + from) as i64);
                match found {
                    Some(j) => {
                        u.u((j - prev_j) as u64);
                        prev_j = j;
                    }
                    None => {
                        u.u(0);
                        u.i(q.of(unit.at_ms) - prev_at);
                    }
                }
                prev_at = q.of(unit.at_ms);
                u.u(u64::from(unit.words));
                u.u(u64::from(unit.cjk_chars));
            }
            if !token_arrivals.is_empty() {
                // At the gaps' arrivals (only the token counts differ: pieces that came in one
                // read), or at times of their own.
                let aligned = token_arrivals.len() == arrivals.len()
                    && token_arrivals
                        .iter()
                        .zip(&arrivals)
                        .all(|(t, a)| (t.0 - a).abs() <= 1e-6);
                u.u(u64::from(!aligned));
                u.u(token_arrivals.len() as u64);
                let mut prev = 0i64;
                for &(at, n) in &token_arrivals {
                    if !aligned {
                        u.i(q.of(at) - prev);
                        prev = q.of(at);
                    }
                    u.u(u64::from(n));
                }
            }
        }
    }
    let header = Header {
        version: report.version,
        title: report.title.clone(),
        created_unix_ms: report.created_unix_ms,
        clock_resolution_ms: report.clock_resolution_ms,
        stamping: report.stamping.clone(),
        endpoint: report.endpoint.clone(),
        scenario: report.scenario.clone(),
        settings: report.settings.clone(),
        thresholds: report.thresholds,
        experience: report.experience,
        precision_ms: layout.precision_ms,
        requests: n,
        groups,
        strings: strings.list,
        left_out,
        headline: headline.map(Box::new),
        vantage: report.vantage.clone(),
        import_notes: report.import_notes.clone(),
        votes: report.votes.clone(),
        slo: (report.slo != ttft_core::slo::SloSet::default()).then(|| report.slo.clone()),
        // Its times to 1 µs (the digits past that are the clock's float noise).
        client_health: report.client_health.as_ref().map(super::round_floats),
        user_agent: report.user_agent.clone(),
        clients,
    };
    let header = serde_json::to_vec(&header).expect("headers always serialize");
    let mut out = Column::default();
    out.0.push(FORMAT);
    out.u(header.len() as u64);
    out.0.extend_from_slice(&header);
    out.u(cols.len() as u64);
    for c in &cols {
        out.u(c.0.len() as u64);
        out.0.extend_from_slice(&c.0);
    }
    out.0
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
pub(super) fn sections(
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
pub(super) fn gap_anchors(bytes: &[u8]) -> Vec<Option<i64>> {
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
pub(super) fn take_gaps(bytes: &[u8]) -> Result<(Vec<u8>, Vec<u8>), ShareError> {
    let parts = Parts::of(bytes)?;
    let gaps = bytes[parts.columns[Col::Gaps as usize].clone()].to_vec();
    Ok((parts.with_gaps(bytes, &[]), gaps))
}

/// Puts a gaps column back into a payload from [`take_gaps`].
pub(super) fn put_gaps(bytes: &[u8], gaps: &[u8]) -> Result<Vec<u8>, ShareError> {
    let parts = Parts::of(bytes)?;
    if !parts.columns[Col::Gaps as usize].is_empty() {
        return Err(ShareError::Damaged("gaps stored twice".into()));
    }
    Ok(parts.with_gaps(bytes, gaps))
}

/// Decodes uncompressed r2 bytes into a report, recomputing what follows from the times.
pub(super) fn decode(bytes: &[u8]) -> Result<Report, ShareError> {
    let parts = Parts::of(bytes)?;
    let header: Header = serde_json::from_slice(&bytes[parts.header.clone()])
        .map_err(|e| ShareError::Damaged(format!("its header does not read ({e})")))?;
    if header.version > REPORT_VERSION {
        return Err(ShareError::Report(
            ttft_core::report::ReportFileError::NewerVersion(header.version),
        ));
    }
    let mut cols: Vec<Cursor> = parts
        .columns
        .iter()
        .zip(COLUMNS)
        .map(|(range, (name, _))| Cursor::new(&bytes[range.clone()], name))
        .collect();
    let n = header.requests;
    if n > MAX_REQUESTS || n > cols[Col::Flags as usize].remaining() {
        return Err(ShareError::Damaged(
            "more requests than the link holds".into(),
        ));
    }
    let q = Steps(header.precision_ms);
    if !(header.precision_ms.is_finite() && header.precision_ms > 0.0) {
        return Err(ShareError::Damaged(
            "its time step is not a positive number".into(),
        ));
    }
    let string = |i: u64| -> Result<String, ShareError> {
        usize::try_from(i)
            .ok()
            .and_then(|i| header.strings.get(i))
            .cloned()
            .ok_or_else(|| ShareError::Damaged("a reference to a missing string".into()))
    };
    let opt_string = |i: u64| -> Result<Option<String>, ShareError> {
        if i == 0 {
            Ok(None)
        } else {
            string(i - 1).map(Some)
        }
    };
    let mut requests = Vec::with_capacity(n);
    let mut prev_start = 0i64;
    let mut prev_index = -1i64;
    for _ in 0..n {
        let c = &mut cols;
        let flags = c[Col::Flags as usize].code(FLAG_LIMIT)?;
        let has = |bit: u64| flags & bit != 0;
        prev_index = plus(prev_index + 1, c[Col::Flags as usize].i()?)?;
        let index = u32::try_from(prev_index)
            .map_err(|_| ShareError::Damaged("a request index out of range".into()))?;
        let group = c[Col::Groups as usize].u()?;
        let (group, level) = usize::try_from(group)
            .ok()
            .and_then(|g| header.groups.get(g))
            .cloned()
            .ok_or_else(|| ShareError::Damaged("a reference to a missing group".into()))?;
        let protocol = opt_string(c[Col::Groups as usize].u()?)?;
        let client = if has(CLIENT) {
            let k = c[Col::Groups as usize].u()?;
            let named = usize::try_from(k).ok().and_then(|k| header.clients.get(k));
            Some(named.cloned().ok_or_else(|| {
                ShareError::Damaged(format!(
                    "request {index} names client {k} but the link lists {}",
                    header.clients.len()
                ))
            })?)
        } else {
            None
        };

        prev_start = plus(prev_start, c[Col::Starts as usize].i()?)?;
        let start_ms = q.ms(prev_start);
        let browser_queue_ms = if has(QUEUE) {
            Some(q.ms(c[Col::Starts as usize].i()?))
        } else {
            None
        };

        let o = &mut c[Col::Outcomes as usize];
        let kind = o.code(OUTCOMES.len() as u64)?;
        let status = if kind == 1 {
            Some(u16::try_from(o.u()?).unwrap_or(0))
        } else {
            None
        };
        let message = if kind == 0 {
            String::new()
        } else {
            string(o.u()?)?
        };
        let outcome = match kind {
            0 => Outcome::Ok,
            1 => Outcome::HttpError {
                status: status.unwrap_or(0),
                message,
            },
            2 => Outcome::StreamError { message },
            3 => Outcome::Truncated { message },
            4 => Outcome::Aborted { message },
            5 => Outcome::Timeout { message },
            _ => Outcome::NetworkError { message },
        };

        let t = &mut c[Col::Times as usize];
        let mut read = |bit: u64, base: i64| -> Result<Option<i64>, ShareError> {
            if has(bit) {
                Ok(Some(plus(base, t.i()?)?))
            } else {
                Ok(None)
            }
        };
        let ttfb = read(TTFB, 0)?;
        let ttft = read(TTFT, ttfb.unwrap_or(0))?;
        let after_first = ttft.or(ttfb).unwrap_or(0);
        let first_reasoning = read(FIRST_REASONING, after_first)?;
        let first_answer = read(FIRST_ANSWER, after_first)?;
        let meaningful = read(MEANINGFUL, first_answer.or(ttft).unwrap_or(0))?;
        let mut e2e = read(E2E, after_first)?;
        let ms = |v: Option<i64>| v.map(|v| q.ms(v));

        let k = &mut c[Col::Tokens as usize];
        let output_tokens = k.u()?;
        let token_source = SOURCES[k.code(SOURCES.len() as u64)? as usize];
        let prompt_tokens = if has(PROMPT_TOKENS) {
            Some(k.u()?)
        } else {
            None
        };
        let reasoning_tokens = if has(REASONING_TOKENS) {
            Some(k.u()?)
        } else {
            None
        };
        let cached_tokens = if has(CACHED_TOKENS) {
            Some(k.u()?)
        } else {
            None
        };
        let cache_write_tokens = if has(CACHE_WRITE_TOKENS) {
            Some(k.u()?)
        } else {
            None
        };
        let output_events = u32::try_from(k.u()?).unwrap_or(u32::MAX);
        let output_arrivals = u32::try_from(k.u()?).unwrap_or(u32::MAX);
        let ttft_kind = match k.code(KINDS.len() as u64 + 1)? {
            0 => None,
            v => Some(KINDS[v as usize - 1]),
        };
        let opener_text = string(k.u()?)?;

        let (mut itl_ms, mut gap_tokens) = (Vec::new(), Vec::new());
        if has(GAPS_KEPT) {
            let g = &mut c[Col::Gaps as usize];
            let count = g.count()?;
            if count > 0 {
                let mid = g.i()?;
                itl_ms.reserve(count);
                let mut sum = 0i64;
                for _ in 0..count {
                    let step = plus(mid, g.i()?)?;
                    sum = plus(sum, step)?;
                    itl_ms.push(q.ms(step));
                }
                if has(END_AFTER_LAST)
                    && let Some(end) = e2e.as_mut()
                {
                    *end = plus(*end, sum)?;
                }
            }
            let gt = &mut c[Col::GapTokens as usize];
            if count > gt.remaining() {
                return Err(ShareError::Damaged(
                    "fewer gap token counts than gaps".into(),
                ));
            }
            gap_tokens.reserve(count);
            for _ in 0..count {
                gap_tokens.push(match gt.u()? {
                    0 => None,
                    v => Some(u32::try_from(v - 1).unwrap_or(u32::MAX)),
                });
            }
        }

        let x = &mut c[Col::Extras as usize];
        let stalls_n = x.count()?;
        let mut stalls = Vec::with_capacity(stalls_n);
        for _ in 0..stalls_n {
            let from = plus(after_first, x.i()?)?;
            stalls.push(Stall {
                from_ms: q.ms(from),
                gap_ms: q.ms(x.i()?),
            });
        }
        let server_timings = if has(SERVER_TIMINGS) {
            let present = x.code(64)?;
            let mut counts = [None; 3];
            let mut times = [None; 3];
            for (b, slot) in counts.iter_mut().enumerate() {
                if present & (1 << b) != 0 {
                    *slot = Some(x.u()?);
                }
            }
            for (b, slot) in times.iter_mut().enumerate() {
                if present & (1 << (b + 3)) != 0 {
                    *slot = Some(x.f()?);
                }
            }
            Some(ServerTimings {
                prompt_n: counts[0],
                predicted_n: counts[1],
                cache_n: counts[2],
                prompt_ms: times[0],
                predicted_ms: times[1],
                predicted_per_token_ms: times[2],
            })
        } else {
            None
        };
        let mut json_value_kept = false;
        let mut json = if has(JSON) {
            let present = x.code(8)?;
            let first_bracket_at = if present & 1 != 0 {
                Some(q.ms(plus(after_first, x.i()?)?))
            } else {
                None
            };
            let valid_at = if present & 2 != 0 {
                Some(q.ms(plus(after_first, x.i()?)?))
            } else {
                None
            };
            let keys = x.count()?;
            let mut missing_keys = Vec::with_capacity(keys);
            for _ in 0..keys {
                missing_keys.push(string(x.u()?)?);
            }
            let invalid_candidates = u32::try_from(x.u()?).unwrap_or(u32::MAX);
            json_value_kept = present & 4 != 0;
            Some(JsonProgress {
                first_bracket_at,
                valid_at,
                value: None,
                missing_keys,
                invalid_candidates,
            })
        } else {
            None
        };
        let calls_n = x.count()?;
        let mut tool_calls = Vec::with_capacity(calls_n);
        for _ in 0..calls_n {
            let index = u32::try_from(x.u()?).unwrap_or(u32::MAX);
            let name = opt_string(x.u()?)?;
            let first = plus(after_first, x.i()?)?;
            let valid_at_ms = match x.code(2)? {
                1 => Some(q.ms(plus(first, x.i()?)?)),
                _ => None,
            };
            tool_calls.push(ToolCallTiming {
                index,
                name,
                arguments: String::new(),
                first_at_ms: q.ms(first),
                valid_at_ms,
            });
        }
        let choices_n = x.count()?;
        let mut choices = Vec::with_capacity(choices_n);
        for _ in 0..choices_n {
            let index = u32::try_from(x.u()?).unwrap_or(u32::MAX);
            let first_token_ms = match x.code(2)? {
                1 => Some(q.ms(plus(after_first, x.i()?)?)),
                _ => None,
            };
            let output_tokens = match x.u()? {
                0 => None,
                v => Some(v - 1),
            };
            let finish_reason = opt_string(x.u()?)?;
            choices.push(ChoiceSummary {
                index,
                first_token_ms,
                output_tokens,
                finish_reason,
                text: String::new(),
                reasoning_text: String::new(),
            });
        }
        let streamed = has(STREAMED);
        let (ttft_ms, e2e_ms) = (ms(ttft), ms(e2e));
        let (tpot_ms, decode_tokens_per_s) = if choices.is_empty() {
            if streamed {
                single_choice_rates(e2e_ms, ttft_ms, output_tokens)
            } else {
                (None, None)
            }
        } else {
            let mut v = [None, None];
            for slot in &mut v {
                if x.code(2)? == 1 {
                    *slot = Some(x.f()?);
                }
            }
            (v[0], v[1])
        };

        let mut text = String::new();
        let mut reasoning_text = String::new();
        let mut replay = Vec::new();
        let mut reading_units = Vec::new();
        let mut token_arrivals = Vec::new();
        // The arrivals the gaps give (a single choice's), which pieces and units refer to.
        let arrivals = if has(GAPS_KEPT) && ttft.is_some() && choices.is_empty() {
            let mut at = ttft_ms.unwrap_or(0.0);
            let mut v = Vec::with_capacity(itl_ms.len() + 1);
            v.push(at);
            for g in &itl_ms {
                at += g;
                v.push(at);
            }
            v
        } else {
            Vec::new()
        };
        if has(SAMPLED) {
            let tx = &mut c[Col::Text as usize];
            if json_value_kept && let Some(j) = json.as_mut() {
                j.value = Some(tx.s()?);
            }
            if !has(TEXT_AS_PIECES) {
                text = tx.s()?;
                reasoning_text = tx.s()?;
            }
            for ch in &mut choices {
                ch.text = tx.s()?;
                ch.reasoning_text = tx.s()?;
            }
            for call in &mut tool_calls {
                call.arguments = tx.s()?;
            }
            let rp = &mut c[Col::Replay as usize];
            let pieces = rp.count()?;
            let aligned = rp.code(2)? == 1;
            let (mut prev, mut prev_ref) = (0i64, 0usize);
            let mut times = Vec::with_capacity(pieces);
            for _ in 0..pieces {
                let kind = rp.code(3 + u64::from(char::MAX) + 1)?;
                let kind = match kind {
                    0 => 'a',
                    1 => 'r',
                    2 => 't',
                    v => char::from_u32((v - 3) as u32).unwrap_or('a'),
                };
                let len = if has(TEXT_AS_PIECES) {
                    Some(rp.u()?)
                } else {
                    None
                };
                let at = if aligned {
                    prev_ref = usize::try_from(rp.u()?)
                        .ok()
                        .and_then(|d| prev_ref.checked_add(d))
                        .ok_or_else(|| ShareError::Damaged("a replay piece out of range".into()))?;
                    *arrivals.get(prev_ref).ok_or_else(|| {
                        ShareError::Damaged("a replay piece of a missing arrival".into())
                    })?
                } else {
                    prev = plus(prev, rp.i()?)?;
                    q.ms(prev)
                };
                times.push((kind, at, len));
            }
            replay.reserve(pieces);
            for (kind, at_ms, len) in times {
                let tx = &mut c[Col::Text as usize];
                let text = match len {
                    Some(len) => tx.s_of(len)?,
                    None => tx.s()?,
                };
                replay.push(ReplayPiece { at_ms, kind, text });
            }
            if has(TEXT_AS_PIECES) {
                text = joined(&replay, 'a');
                reasoning_text = joined(&replay, 'r');
            }
        } else if has(GAPS_KEPT) {
            let u = &mut c[Col::Units as usize];
            if u.code(2)? == 1 {
                if arrivals.len() * 2 > u.remaining() {
                    return Err(ShareError::Damaged(
                        "fewer reading units than arrivals".into(),
                    ));
                }
                let words: Vec<u64> = (0..arrivals.len())
                    .map(|_| u.u())
                    .collect::<Result<_, _>>()?;
                for (k, w) in words.into_iter().enumerate() {
                    let cjk = u.u()?;
                    if w + cjk > 0 {
                        reading_units.push(ReadingUnits {
                            at_ms: arrivals[k],
                            words: u32::try_from(w).unwrap_or(u32::MAX),
                            cjk_chars: u32::try_from(cjk).unwrap_or(u32::MAX),
                        });
                    }
                }
            }
            let count = u.count()?;
            reading_units.reserve(count);
            let (mut prev_j, mut prev_at) = (-1i64, 0i64);
            for _ in 0..count {
                let at_ms = match u.u()? {
                    0 => {
                        prev_at = plus(prev_at, u.i()?)?;
                        q.ms(prev_at)
                    }
                    step => {
                        prev_j = prev_j.saturating_add(i64::try_from(step).unwrap_or(i64::MAX));
                        let at = usize::try_from(prev_j)
                            .ok()
                            .and_then(|j| arrivals.get(j))
                            .copied()
                            .ok_or_else(|| {
                                ShareError::Damaged("a reading unit of a missing arrival".into())
                            })?;
                        prev_at = q.of(at);
                        at
                    }
                };
                reading_units.push(ReadingUnits {
                    at_ms,
                    words: u32::try_from(u.u()?).unwrap_or(u32::MAX),
                    cjk_chars: u32::try_from(u.u()?).unwrap_or(u32::MAX),
                });
            }
            if has(TOKEN_ARRIVALS) {
                let own_times = u.code(2)? == 1;
                let count = u.count()?;
                if !own_times && count != arrivals.len() {
                    return Err(ShareError::Damaged(
                        "token counts for arrivals that are not there".into(),
                    ));
                }
                token_arrivals.reserve(count);
                let mut prev = 0i64;
                for k in 0..count {
                    let at = if own_times {
                        prev = plus(prev, u.i()?)?;
                        q.ms(prev)
                    } else {
                        arrivals.get(k).copied().unwrap_or_default()
                    };
                    let n = u32::try_from(u.u()?).unwrap_or(u32::MAX);
                    token_arrivals.push((at, n));
                }
            }
        }
        let tokens_per_arrival = if output_arrivals > 0 {
            output_tokens as f64 / f64::from(output_arrivals)
        } else {
            0.0
        };
        requests.push(RequestRecord {
            index,
            group,
            level,
            warmup: has(WARMUP),
            start_ms,
            browser_queue_ms,
            outcome,
            metrics: RequestMetrics {
                ttfb_ms: ms(ttfb),
                ttft_ms,
                ttft_kind,
                first_reasoning_ms: ms(first_reasoning),
                first_answer_ms: ms(first_answer),
                meaningful_ms: ms(meaningful),
                opener_text,
                e2e_ms,
                tpot_ms,
                itl_ms,
                gap_tokens,
                output_tokens,
                token_source,
                prompt_tokens,
                reasoning_tokens,
                cached_tokens,
                cache_write_tokens,
                output_events,
                output_arrivals,
                tokens_per_arrival,
                coalesced: has(COALESCED),
                stalls,
                decode_tokens_per_s,
                server_timings,
                json,
                tool_calls,
                text,
                reasoning_text,
                choices,
                streamed,
            },
            replay,
            server_request_id: None,
            sent_epoch_ms: None,
            protocol,
            reading_units,
            token_arrivals,
            raw: None,
            client,
            origin: None,
        });
    }
    for c in &cols {
        c.finish()?;
    }
    let dialect: Option<Dialect> = header.endpoint.dialect;
    let mut report = Report::new(
        header.title,
        EndpointInfo {
            dialect,
            ..header.endpoint
        },
        header.scenario,
    )
    .created_at(header.created_unix_ms)
    .with_clock_resolution(header.clock_resolution_ms)
    .with_user_agent(header.user_agent)
    .with_settings(header.settings)
    .with_experience(header.experience)
    .with_requests(requests);
    report.version = header.version;
    report.stamping = header.stamping;
    report.thresholds = header.thresholds;
    report.vantage = header.vantage;
    report.import_notes = header.import_notes;
    report.votes = header.votes;
    report.slo = header
        .slo
        .filter(|s| s.validate().is_ok())
        .unwrap_or_default();
    report.client_health = header.client_health;
    report.shared = Some(SharedFrom {
        format: "r2".into(),
        precision_ms: header.precision_ms,
        left_out: header.left_out,
        headline: header.headline,
    });
    Ok(report)
}
