//! Writing the columns: the requests a link keeps ([`super::sample`]) as uncompressed r2 bytes.
//!
//! A [`Writer`] holds the twelve columns and the tables they refer to (strings, groups,
//! clients); each request is written column by column, in [`Col`] order, by one method per
//! column (the extras column by one per kind of extra), after [`Kept`] has decided what of it
//! the link keeps. The header ([`Header`]) follows the requests, since it carries the tables
//! they filled. Strings are numbered in the order they are first met, so the order of the
//! calls below is part of the format.

use ttft_core::agent_json::JsonProgress;
use ttft_core::dialect::ServerTimings;
use ttft_core::experience::{ReadingUnits, token_times_from_gaps};
use ttft_core::metrics::RequestMetrics;
use ttft_core::report::{Aggregates, Report, RequestRecord};
use ttft_core::timeline::Outcome;

use super::{
    CACHE_WRITE_TOKENS, CACHED_TOKENS, CLIENT, COALESCED, COLUMNS, Col, E2E, END_AFTER_LAST,
    FIRST_ANSWER, FIRST_REASONING, FORMAT, GAPS_KEPT, Header, JSON, KINDS, Layout, MEANINGFUL,
    PAINT_LAGS_KEPT, PLANNED, PROMPT_TOKENS, QUEUE, REASONING_TOKENS, SAMPLED, SERVER_TIMINGS,
    STREAMED, Steps, Strings, TEXT_AS_PIECES, TOKEN_ARRIVALS, TTFB, TTFT, WARMUP, arrival_times,
    grouped, joined, median, merged_units, outcome_code, piece_kind, round_floats, sampled,
    source_code,
};
use crate::bytes::Column;
use ttft_core::record_experience::{record_reading_units, token_times};

/// Encodes the requests `kept` of `report` ([`super::sample`]) with `layout` (uncompressed
/// bytes).
pub(crate) fn encode(
    report: &Report,
    kept: &[(&RequestRecord, bool)],
    layout: Layout,
    left_out: Vec<String>,
    headline: Option<Aggregates>,
) -> Vec<u8> {
    let keep_replay = sampled(kept.len(), layout.replays);
    let mut writer = Writer::new(report, layout);
    for (i, &(r, keep_gaps)) in kept.iter().enumerate() {
        writer.request(r, keep_gaps, keep_replay(i) && !r.replay.is_empty());
    }
    writer.finish(layout, kept.len(), left_out, headline)
}

/// What a link keeps of one request, decided before any of it is written.
struct Kept {
    /// Its per-gap timings.
    gaps: bool,
    /// Its replay and texts.
    text: bool,
    /// Its gaps in steps (none unless kept): a single choice's are the steps between its
    /// rounded arrival times, so every arrival stays within half a step and a gap within one;
    /// several choices' gaps (one list per choice) are rounded one by one.
    steps: Vec<i64>,
    /// A single choice's end is stored against its last arrival ([`END_AFTER_LAST`]).
    end_after_last: bool,
    /// Its answer and reasoning are its replay pieces' texts joined ([`TEXT_AS_PIECES`]).
    text_as_pieces: bool,
    /// Its token arrivals `(time, tokens)`, where the gaps alone would not give them.
    token_arrivals: Vec<(f64, u32)>,
}

impl Kept {
    fn of(r: &RequestRecord, gaps: bool, text: bool, q: Steps) -> Self {
        let m = &r.metrics;
        let steps = if gaps { gap_steps(m, q) } else { Vec::new() };
        let end_after_last =
            gaps && m.choices.is_empty() && m.ttft_ms.is_some() && m.e2e_ms.is_some();
        let text_as_pieces =
            text && joined(&r.replay, 'a') == m.text && joined(&r.replay, 'r') == m.reasoning_text;
        let token_arrivals = if text || !gaps {
            Vec::new()
        } else {
            token_arrivals_beyond_gaps(r)
        };
        Self {
            gaps,
            text,
            steps,
            end_after_last,
            text_as_pieces,
            token_arrivals,
        }
    }

    /// The request's flag bits.
    fn flags(&self, r: &RequestRecord) -> u64 {
        let m = &r.metrics;
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
            (self.text, SAMPLED),
            (self.gaps, GAPS_KEPT),
            (!self.token_arrivals.is_empty(), TOKEN_ARRIVALS),
            (m.cached_tokens.is_some(), CACHED_TOKENS),
            (m.cache_write_tokens.is_some(), CACHE_WRITE_TOKENS),
            (r.client.is_some(), CLIENT),
            (self.text_as_pieces, TEXT_AS_PIECES),
            (self.end_after_last, END_AFTER_LAST),
            (r.planned_ms.is_some_and(f64::is_finite), PLANNED),
        ] {
            if on {
                flags |= bit;
            }
        }
        flags
    }
}

/// A request's gaps in steps ([`Kept::steps`]).
fn gap_steps(m: &RequestMetrics, q: Steps) -> Vec<i64> {
    let Some(first) = m.ttft_ms.filter(|_| m.choices.is_empty()) else {
        return m.itl_ms.iter().map(|g| q.of(*g)).collect();
    };
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
}

/// A request's token arrivals for fluidity, unless the gaps give the same ones.
fn token_arrivals_beyond_gaps(r: &RequestRecord) -> Vec<(f64, u32)> {
    let times = token_times(r);
    let from_gaps = token_times_from_gaps(&r.metrics);
    let same = times.len() == from_gaps.len()
        && times
            .iter()
            .zip(&from_gaps)
            .all(|(a, b)| (a - b).abs() <= 1e-6);
    if same { Vec::new() } else { grouped(&times) }
}

/// The index of the first of `arrivals` at `at_ms` (within a nanosecond).
fn arrival_at(arrivals: &[f64], at_ms: f64) -> Option<usize> {
    arrivals.iter().position(|a| (a - at_ms).abs() <= 1e-6)
}

/// The columns being written and the tables they refer to.
struct Writer<'a> {
    report: &'a Report,
    q: Steps,
    cols: Vec<Column>,
    strings: Strings,
    /// Group labels with their levels, by first use.
    groups: Vec<(String, Option<f64>)>,
    /// The clients that measured requests, by first use.
    clients: Vec<String>,
    /// The previous request's send offset (in steps) and index, which the next is stored
    /// against.
    prev_start: i64,
    prev_index: i64,
    /// The indices of the requests written.
    written: std::collections::HashSet<u32>,
}

impl<'a> Writer<'a> {
    fn new(report: &'a Report, layout: Layout) -> Self {
        Self {
            report,
            q: Steps(layout.precision_ms),
            cols: vec![Column::default(); COLUMNS.len()],
            strings: Strings::default(),
            groups: Vec::new(),
            clients: Vec::new(),
            prev_start: 0,
            prev_index: -1,
            written: std::collections::HashSet::new(),
        }
    }

    fn col(&mut self, c: Col) -> &mut Column {
        &mut self.cols[c as usize]
    }

    /// Writes one request, column by column.
    fn request(&mut self, r: &RequestRecord, keep_gaps: bool, keep_text: bool) {
        let m = &r.metrics;
        let kept = Kept::of(r, keep_gaps, keep_text, self.q);
        self.written.insert(r.index);
        self.flags(r, kept.flags(r));
        self.group(r);
        self.start(r);
        self.outcome(&r.outcome);
        let after_first = self.times(m, &kept);
        self.tokens(m);
        if kept.gaps {
            self.gaps(m, &kept.steps);
        }
        self.stalls(m, after_first);
        if let Some(st) = &m.server_timings {
            self.server_timings(st);
        }
        if let Some(j) = &m.json {
            self.json(j, after_first, kept.text);
        }
        self.tool_calls(m, after_first);
        self.choices(m, after_first);
        if kept.text {
            self.texts(m, kept.text_as_pieces);
            self.replay(r, &kept);
        } else if kept.gaps {
            self.reading_units(r, &kept.token_arrivals);
        }
    }

    /// The flags column: the flags, and the index against the previous request's.
    fn flags(&mut self, r: &RequestRecord, flags: u64) {
        let prev_index = self.prev_index;
        let f = self.col(Col::Flags);
        f.u(flags);
        f.i(i64::from(r.index) - (prev_index + 1));
        self.prev_index = i64::from(r.index);
    }

    /// The groups column: the group (with its level), the protocol and the client.
    fn group(&mut self, r: &RequestRecord) {
        let group =
            match self.groups.iter().position(|(g, l)| {
                *g == r.group && l.map(f64::to_bits) == r.level.map(f64::to_bits)
            }) {
                Some(p) => p,
                None => {
                    self.groups.push((r.group.clone(), r.level));
                    self.groups.len() - 1
                }
            };
        let protocol = r.protocol.as_deref().map_or(0, |p| self.strings.id(p) + 1);
        let g = &mut self.cols[Col::Groups as usize];
        g.u(group as u64);
        g.u(protocol);
        if let Some(client) = &r.client {
            let k = match self.clients.iter().position(|c| c == client) {
                Some(k) => k,
                None => {
                    self.clients.push(client.clone());
                    self.clients.len() - 1
                }
            };
            g.u(k as u64);
        }
    }

    /// The starts column: the send offset against the previous request's, the browser queue,
    /// the planned send against the start.
    fn start(&mut self, r: &RequestRecord) {
        let q = self.q;
        let start = q.of(r.start_ms);
        let prev_start = self.prev_start;
        let s = self.col(Col::Starts);
        s.i(start - prev_start);
        if let Some(b) = r.browser_queue_ms {
            s.i(q.of(b));
        }
        // The planned send against the start: minus its schedule lag, in steps.
        if let Some(p) = r.planned_ms.filter(|p| p.is_finite()) {
            s.i(q.of(p) - start);
        }
        self.prev_start = start;
    }

    /// The outcomes column: the kind, an HTTP status, the message.
    fn outcome(&mut self, outcome: &Outcome) {
        let message = outcome.message().map(|msg| self.strings.id(msg));
        let o = self.col(Col::Outcomes);
        o.u(outcome_code(outcome));
        if let Outcome::HttpError { status, .. } = outcome {
            o.u(u64::from(*status));
        }
        if let Some(id) = message {
            o.u(id);
        }
    }

    /// The times column, each time against the one it follows; returns the first token's (or
    /// first byte's) time in steps, which later times are stored against.
    fn times(&mut self, m: &RequestMetrics, kept: &Kept) -> i64 {
        let q = self.q;
        let base = |v: Option<f64>| v.map_or(0, |v| q.of(v));
        let after_first = base(m.ttft_ms.or(m.ttfb_ms));
        let t = self.col(Col::Times);
        if let Some(v) = m.ttfb_ms {
            t.i(q.of(v));
        }
        if let Some(v) = m.ttft_ms {
            t.i(q.of(v) - base(m.ttfb_ms));
        }
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
            let last = if kept.end_after_last {
                after_first + kept.steps.iter().sum::<i64>()
            } else {
                after_first
            };
            t.i(q.of(v) - last);
        }
        after_first
    }

    /// The tokens column: counts, their source, the first token's kind and the opener.
    fn tokens(&mut self, m: &RequestMetrics) {
        let opener = self.strings.id(&m.opener_text);
        let k = self.col(Col::Tokens);
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
        k.u(opener);
    }

    /// The gaps column (the count, the median step, each step against it) and the gap tokens
    /// column.
    fn gaps(&mut self, m: &RequestMetrics, steps: &[i64]) {
        let mid = median(steps);
        let g = self.col(Col::Gaps);
        g.u(steps.len() as u64);
        if !steps.is_empty() {
            g.i(mid);
            for s in steps {
                g.i(s - mid);
            }
        }
        let gt = self.col(Col::GapTokens);
        for tokens in &m.gap_tokens {
            gt.u(tokens.map_or(0, |n| u64::from(n) + 1));
        }
    }

    /// The extras column's stalls.
    fn stalls(&mut self, m: &RequestMetrics, after_first: i64) {
        let q = self.q;
        let x = self.col(Col::Extras);
        x.u(m.stalls.len() as u64);
        for s in &m.stalls {
            x.i(q.of(s.from_ms) - after_first);
            x.i(q.of(s.gap_ms));
        }
    }

    /// The extras column's server timings: which are present, the counts, the times.
    fn server_timings(&mut self, st: &ServerTimings) {
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
        let x = self.col(Col::Extras);
        x.u(present);
        counts.iter().flatten().for_each(|v| x.u(*v));
        times.iter().flatten().for_each(|v| x.f(*v));
    }

    /// The extras column's agent JSON progress (its value, if the text is kept, in the text
    /// column).
    fn json(&mut self, j: &JsonProgress, after_first: i64, keep_text: bool) {
        let q = self.q;
        let keys: Vec<u64> = j.missing_keys.iter().map(|k| self.strings.id(k)).collect();
        let x = self.col(Col::Extras);
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
        x.u(keys.len() as u64);
        keys.iter().for_each(|k| x.u(*k));
        x.u(u64::from(j.invalid_candidates));
        if keep_text && let Some(v) = &j.value {
            self.col(Col::Text).s(v);
        }
    }

    /// The extras column's tool calls: index, name, first and valid times.
    fn tool_calls(&mut self, m: &RequestMetrics, after_first: i64) {
        let q = self.q;
        let x = &mut self.cols[Col::Extras as usize];
        x.u(m.tool_calls.len() as u64);
        for call in &m.tool_calls {
            x.u(u64::from(call.index));
            x.u(call.name.as_deref().map_or(0, |n| self.strings.id(n) + 1));
            x.i(q.of(call.first_at_ms) - after_first);
            match call.valid_at_ms {
                Some(v) => {
                    x.u(1);
                    x.i(q.of(v) - q.of(call.first_at_ms));
                }
                None => x.u(0),
            }
        }
    }

    /// The extras column's choices (index, first token, tokens, finish reason) and, with
    /// several, TPOT and the decode rate, which follow from per-choice spans a link does not
    /// keep.
    fn choices(&mut self, m: &RequestMetrics, after_first: i64) {
        let q = self.q;
        let x = &mut self.cols[Col::Extras as usize];
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
            x.u(ch
                .finish_reason
                .as_deref()
                .map_or(0, |f| self.strings.id(f) + 1));
        }
        if !m.choices.is_empty() {
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
    }

    /// The text column's texts of a kept request: answer and reasoning (unless its replay
    /// pieces hold them), each choice's, each tool call's arguments.
    fn texts(&mut self, m: &RequestMetrics, text_as_pieces: bool) {
        let text = self.col(Col::Text);
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
    }

    /// The replay column (each piece's kind, its length if the pieces hold the texts, and its
    /// time: a reference to an arrival of the gaps, or its own) and the pieces' texts in the
    /// text column.
    fn replay(&mut self, r: &RequestRecord, kept: &Kept) {
        let q = self.q;
        let arrivals = if kept.gaps {
            arrival_times(&r.metrics)
        } else {
            Vec::new()
        };
        let refs = arrival_refs(&arrivals, r);
        let aligned = refs.len() == r.replay.len();
        let rp = self.col(Col::Replay);
        rp.u(r.replay.len() as u64);
        rp.u(u64::from(aligned));
        let (mut prev, mut prev_ref) = (0i64, 0usize);
        for (k, p) in r.replay.iter().enumerate() {
            rp.u(piece_kind(p.kind));
            if kept.text_as_pieces {
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
        let text = self.col(Col::Text);
        for p in &r.replay {
            if kept.text_as_pieces {
                text.0.extend_from_slice(p.text.as_bytes());
            } else {
                text.s(&p.text);
            }
        }
    }

    /// The units column of a request whose text is not kept: what each arrival gave a reader
    /// (a link that left out a request's gaps carries the run's headline instead), and its
    /// token arrivals where the gaps do not give them.
    fn reading_units(&mut self, r: &RequestRecord, token_arrivals: &[(f64, u32)]) {
        let units = merged_units(record_reading_units(r, &self.report.experience));
        let arrivals = arrival_times(&r.metrics);
        let aligned = self.units_at_arrivals(&units, &arrivals);
        let listed = if aligned { &[][..] } else { &units[..] };
        self.listed_units(listed, &arrivals);
        if !token_arrivals.is_empty() {
            self.token_arrivals(token_arrivals, &arrivals);
        }
    }

    /// Whether every unit came with an arrival of the gaps, in order (most streams); if so,
    /// one count per arrival, words then characters.
    fn units_at_arrivals(&mut self, units: &[ReadingUnits], arrivals: &[f64]) -> bool {
        let mut at_arrival = vec![(0u32, 0u32); arrivals.len()];
        let mut aligned = !arrivals.is_empty();
        let mut next = 0;
        for unit in units {
            match arrival_at(&arrivals[next.min(arrivals.len())..], unit.at_ms) {
                Some(p) if aligned => {
                    at_arrival[next + p] = (unit.words, unit.cjk_chars);
                    next += p + 1;
                }
                _ => aligned = false,
            }
        }
        let u = self.col(Col::Units);
        u.u(u64::from(aligned));
        if aligned {
            at_arrival.iter().for_each(|a| u.u(u64::from(a.0)));
            at_arrival.iter().for_each(|a| u.u(u64::from(a.1)));
        }
        aligned
    }

    /// Units listed one by one, each naming its arrival or its own time.
    fn listed_units(&mut self, units: &[ReadingUnits], arrivals: &[f64]) {
        let q = self.q;
        let u = self.col(Col::Units);
        u.u(units.len() as u64);
        let (mut prev_j, mut prev_at) = (-1i64, 0i64);
        for unit in units {
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
    }

    /// Token arrivals: at the gaps' arrivals (only the token counts differ: pieces that came
    /// in one read), or at times of their own.
    fn token_arrivals(&mut self, token_arrivals: &[(f64, u32)], arrivals: &[f64]) {
        let q = self.q;
        let aligned = token_arrivals.len() == arrivals.len()
            && token_arrivals
                .iter()
                .zip(arrivals)
                .all(|(t, a)| (t.0 - a).abs() <= 1e-6);
        let u = self.col(Col::Units);
        u.u(u64::from(!aligned));
        u.u(token_arrivals.len() as u64);
        let mut prev = 0i64;
        for &(at, n) in token_arrivals {
            if !aligned {
                u.i(q.of(at) - prev);
                prev = q.of(at);
            }
            u.u(u64::from(n));
        }
    }

    /// The payload: the format byte, the header (which carries the tables the requests
    /// filled), then each column with its length.
    fn finish(
        self,
        layout: Layout,
        requests: usize,
        left_out: Vec<String>,
        headline: Option<Aggregates>,
    ) -> Vec<u8> {
        let report = self.report;
        let mut left_out = left_out;
        let painted = report.painted.as_ref().map(|p| {
            let (painted, thinned) = p.for_link(|i| self.written.contains(&i), PAINT_LAGS_KEPT);
            if let Some((travel, total)) = thinned {
                left_out.push(format!(
                    "per-chunk paint lags beyond {travel} of {total} (thinned evenly in each drawn answer)"
                ));
            }
            round_floats(&painted)
        });
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
            requests,
            groups: self.groups,
            strings: self.strings.list,
            left_out,
            headline: headline.map(Box::new),
            vantage: report.vantage.clone(),
            import_notes: report.import_notes.clone(),
            votes: report.votes.clone(),
            slo: (report.slo != ttft_core::slo::SloSet::default()).then(|| report.slo.clone()),
            // Its times to 1 µs (the digits past that are the clock's float noise).
            client_health: report.client_health.as_ref().map(round_floats),
            user_agent: report.user_agent.clone(),
            clients: self.clients,
            openers: report.openers.clone(),
            // Its times to 1 µs, as the client-health verdict's.
            saturation: report.saturation.as_ref().map(round_floats),
            painted,
        };
        let header = serde_json::to_vec(&header).expect("headers always serialize");
        let mut out = Column::default();
        out.0.push(FORMAT);
        out.u(header.len() as u64);
        out.0.extend_from_slice(&header);
        out.u(self.cols.len() as u64);
        for c in &self.cols {
            out.u(c.0.len() as u64);
            out.0.extend_from_slice(&c.0);
        }
        out.0
    }
}

/// Each replay piece's arrival among `arrivals` (in order, each at or after the one before);
/// fewer than the pieces when one is at no arrival.
fn arrival_refs(arrivals: &[f64], r: &RequestRecord) -> Vec<usize> {
    let mut refs = Vec::with_capacity(r.replay.len());
    let mut next = 0;
    for p in &r.replay {
        match arrivals
            .get(next..)
            .and_then(|rest| arrival_at(rest, p.at_ms))
        {
            Some(k) => {
                refs.push(next + k);
                next += k;
            }
            None => break,
        }
    }
    refs
}
