//! Reading the columns back: uncompressed r2 bytes into a report, recomputing what follows from
//! the times (per-request rates, every run statistic).
//!
//! A [`Reader`] holds the header (with the tables the columns refer to) and one cursor per
//! column; each request is read column by column in the order [`super::write`] wrote it, one
//! method per column (the extras column by one per kind of extra). Every count is checked
//! against the bytes that hold it, every reference against its table, every sum of times for
//! overflow: a damaged or hostile payload gives a [`ShareError`], never a panic, and the same
//! error for the same bytes (the order of the reads is part of that).

use ttft_core::agent_json::JsonProgress;
use ttft_core::dialect::{Dialect, ServerTimings};
use ttft_core::experience::ReadingUnits;
use ttft_core::metrics::{
    ChoiceSummary, RequestMetrics, Stall, TokenSource, ToolCallTiming, TtftKind,
    single_choice_rates,
};
use ttft_core::report::{
    EndpointInfo, REPORT_VERSION, ReplayPiece, Report, ReportFileError, RequestRecord, SharedFrom,
};
use ttft_core::timeline::Outcome;

use super::{
    CACHE_WRITE_TOKENS, CACHED_TOKENS, CLIENT, COALESCED, COLUMNS, Col, E2E, END_AFTER_LAST,
    FIRST_ANSWER, FIRST_REASONING, FLAG_LIMIT, GAPS_KEPT, Header, JSON, KINDS, MAX_REQUESTS,
    MEANINGFUL, OUTCOMES, PLANNED, PROMPT_TOKENS, Parts, QUEUE, REASONING_TOKENS, SAMPLED,
    SERVER_TIMINGS, SOURCES, STREAMED, Steps, TEXT_AS_PIECES, TOKEN_ARRIVALS, TTFB, TTFT, WARMUP,
    joined, plus,
};
use crate::ShareError;
use crate::bytes::Cursor;

/// Decodes uncompressed r2 bytes into a report, recomputing what follows from the times.
pub(crate) fn decode(bytes: &[u8]) -> Result<Report, ShareError> {
    let mut reader = Reader::new(bytes)?;
    let mut requests = Vec::with_capacity(reader.header.requests);
    for _ in 0..reader.header.requests {
        requests.push(reader.request()?);
    }
    reader.finish(requests)
}

/// A request's flag bits.
#[derive(Clone, Copy)]
struct Flags(u64);

impl Flags {
    fn has(self, bit: u64) -> bool {
        self.0 & bit != 0
    }
}

/// A request's group (with its level), protocol and client.
struct Membership {
    group: String,
    level: Option<f64>,
    protocol: Option<String>,
    client: Option<String>,
}

/// A request's times, in steps, as stored (each against the one it follows).
struct Times {
    ttfb: Option<i64>,
    ttft: Option<i64>,
    /// The first token's time, else the first byte's, else 0: what later times follow.
    after_first: i64,
    first_reasoning: Option<i64>,
    first_answer: Option<i64>,
    meaningful: Option<i64>,
    e2e: Option<i64>,
}

/// A request's token counts, their source, the first token's kind and the opener.
struct Tokens {
    output_tokens: u64,
    token_source: TokenSource,
    prompt_tokens: Option<u64>,
    reasoning_tokens: Option<u64>,
    cached_tokens: Option<u64>,
    cache_write_tokens: Option<u64>,
    output_events: u32,
    output_arrivals: u32,
    ttft_kind: Option<TtftKind>,
    opener_text: String,
}

/// What a request shows a reader: its texts and replay if kept, else what each arrival gave a
/// reader and its token arrivals.
#[derive(Default)]
struct Reading {
    text: String,
    reasoning_text: String,
    replay: Vec<ReplayPiece>,
    reading_units: Vec<ReadingUnits>,
    token_arrivals: Vec<(f64, u32)>,
}

/// The header and one cursor per column, read request by request.
struct Reader<'a> {
    header: Header,
    cols: Vec<Cursor<'a>>,
    q: Steps,
    /// The previous request's send offset (in steps) and index, which the next is stored
    /// against.
    prev_start: i64,
    prev_index: i64,
}

impl<'a> Reader<'a> {
    /// The payload's header, checked (a version this studio reads, no more requests than the
    /// flags column can hold, a positive time step), and its columns.
    fn new(bytes: &'a [u8]) -> Result<Self, ShareError> {
        let parts = Parts::of(bytes)?;
        let header: Header = serde_json::from_slice(&bytes[parts.header.clone()])
            .map_err(|e| ShareError::Damaged(format!("its header does not read ({e})")))?;
        if header.version > REPORT_VERSION {
            return Err(ShareError::Report(ReportFileError::NewerVersion(
                header.version,
            )));
        }
        let cols: Vec<Cursor> = parts
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
        if !(header.precision_ms.is_finite() && header.precision_ms > 0.0) {
            return Err(ShareError::Damaged(
                "its time step is not a positive number".into(),
            ));
        }
        Ok(Self {
            q: Steps(header.precision_ms),
            header,
            cols,
            prev_start: 0,
            prev_index: -1,
        })
    }

    fn col(&mut self, c: Col) -> &mut Cursor<'a> {
        &mut self.cols[c as usize]
    }

    /// The string the header's table holds at `i`.
    fn string(&self, i: u64) -> Result<String, ShareError> {
        usize::try_from(i)
            .ok()
            .and_then(|i| self.header.strings.get(i))
            .cloned()
            .ok_or_else(|| ShareError::Damaged("a reference to a missing string".into()))
    }

    /// No string (0), or the string at `i - 1`.
    fn opt_string(&self, i: u64) -> Result<Option<String>, ShareError> {
        if i == 0 {
            Ok(None)
        } else {
            self.string(i - 1).map(Some)
        }
    }

    /// Reads one request, column by column.
    fn request(&mut self) -> Result<RequestRecord, ShareError> {
        let flags = Flags(self.col(Col::Flags).code(FLAG_LIMIT)?);
        self.prev_index = plus(self.prev_index + 1, self.col(Col::Flags).i()?)?;
        let index = u32::try_from(self.prev_index)
            .map_err(|_| ShareError::Damaged("a request index out of range".into()))?;
        let Membership {
            group,
            level,
            protocol,
            client,
        } = self.group(flags, index)?;
        let (start_ms, browser_queue_ms, planned_ms) = self.start(flags)?;
        let outcome = self.outcome()?;
        let (metrics, reading) = self.metrics(flags)?;
        Ok(RequestRecord {
            index,
            group,
            level,
            warmup: flags.has(WARMUP),
            start_ms,
            browser_queue_ms,
            outcome,
            metrics,
            replay: reading.replay,
            server_request_id: None,
            sent_epoch_ms: None,
            protocol,
            reading_units: reading.reading_units,
            token_arrivals: reading.token_arrivals,
            raw: None,
            client,
            origin: None,
            // A shared run is one run: links keep no A/B pairing (docs/share-link-format.md).
            pair: None,
            planned_ms,
        })
    }

    /// The groups column: the group with its level, the protocol and the client.
    fn group(&mut self, flags: Flags, index: u32) -> Result<Membership, ShareError> {
        let g = self.col(Col::Groups).u()?;
        let (group, level) = usize::try_from(g)
            .ok()
            .and_then(|g| self.header.groups.get(g))
            .cloned()
            .ok_or_else(|| ShareError::Damaged("a reference to a missing group".into()))?;
        let protocol = self.col(Col::Groups).u()?;
        let protocol = self.opt_string(protocol)?;
        let client = if flags.has(CLIENT) {
            let k = self.col(Col::Groups).u()?;
            let named = usize::try_from(k)
                .ok()
                .and_then(|k| self.header.clients.get(k));
            Some(named.cloned().ok_or_else(|| {
                ShareError::Damaged(format!(
                    "request {index} names client {k} but the link lists {}",
                    self.header.clients.len()
                ))
            })?)
        } else {
            None
        };
        Ok(Membership {
            group,
            level,
            protocol,
            client,
        })
    }

    /// The starts column: the send offset, the browser queue and the planned send (ms).
    fn start(&mut self, flags: Flags) -> Result<(f64, Option<f64>, Option<f64>), ShareError> {
        self.prev_start = plus(self.prev_start, self.col(Col::Starts).i()?)?;
        let start_ms = self.q.ms(self.prev_start);
        let browser_queue_ms = if flags.has(QUEUE) {
            Some(self.q.ms(self.col(Col::Starts).i()?))
        } else {
            None
        };
        let planned_ms = if flags.has(PLANNED) {
            let steps = plus(self.prev_start, self.col(Col::Starts).i()?)?;
            Some(self.q.ms(steps))
        } else {
            None
        };
        Ok((start_ms, browser_queue_ms, planned_ms))
    }

    /// The outcomes column: the kind, an HTTP status, the message.
    fn outcome(&mut self) -> Result<Outcome, ShareError> {
        let o = self.col(Col::Outcomes);
        let kind = o.code(OUTCOMES.len() as u64)?;
        let status = if kind == 1 {
            Some(u16::try_from(o.u()?).unwrap_or(0))
        } else {
            None
        };
        let message = if kind == 0 {
            String::new()
        } else {
            let i = self.col(Col::Outcomes).u()?;
            self.string(i)?
        };
        Ok(match kind {
            0 => Outcome::Ok,
            1 => Outcome::HttpError {
                status: status.unwrap_or(0),
                message,
            },
            2 => Outcome::StreamError { message },
            3 => Outcome::Truncated { message },
            4 => Outcome::Aborted { message }.normalised(),
            5 => Outcome::Timeout { message },
            6 => Outcome::NetworkError { message },
            _ => Outcome::CutByClient { message },
        })
    }

    /// The request's metrics from the times, tokens, gaps and extras columns, and what it
    /// shows a reader from the text and replay columns or the units column.
    fn metrics(&mut self, flags: Flags) -> Result<(RequestMetrics, Reading), ShareError> {
        let mut times = self.times(flags)?;
        let tokens = self.tokens(flags)?;
        let (itl_ms, gap_tokens) = self.gaps(flags, &mut times.e2e)?;
        let after_first = times.after_first;
        let stalls = self.stalls(after_first)?;
        let server_timings = if flags.has(SERVER_TIMINGS) {
            Some(self.server_timings()?)
        } else {
            None
        };
        let (mut json, json_value_kept) = if flags.has(JSON) {
            let (json, value_kept) = self.json(after_first)?;
            (Some(json), value_kept)
        } else {
            (None, false)
        };
        let mut tool_calls = self.tool_calls(after_first)?;
        let mut choices = self.choices(after_first)?;
        let q = self.q;
        let ms = |v: Option<i64>| v.map(|v| q.ms(v));
        let (ttft_ms, e2e_ms) = (ms(times.ttft), ms(times.e2e));
        let (tpot_ms, decode_tokens_per_s) =
            self.rates(flags, &choices, ttft_ms, e2e_ms, tokens.output_tokens)?;
        // The arrivals the gaps give (a single choice's), which pieces and units refer to.
        let arrivals = if flags.has(GAPS_KEPT) && times.ttft.is_some() && choices.is_empty() {
            arrivals_of(ttft_ms.unwrap_or(0.0), &itl_ms)
        } else {
            Vec::new()
        };
        let mut reading = if flags.has(SAMPLED) {
            let json_value = if json_value_kept { json.as_mut() } else { None };
            self.kept_texts(flags, json_value, &mut choices, &mut tool_calls, &arrivals)?
        } else if flags.has(GAPS_KEPT) {
            self.reading_units(flags, &arrivals)?
        } else {
            Reading::default()
        };
        let tokens_per_arrival = if tokens.output_arrivals > 0 {
            tokens.output_tokens as f64 / f64::from(tokens.output_arrivals)
        } else {
            0.0
        };
        let metrics = RequestMetrics {
            ttfb_ms: ms(times.ttfb),
            ttft_ms,
            ttft_kind: tokens.ttft_kind,
            first_reasoning_ms: ms(times.first_reasoning),
            first_answer_ms: ms(times.first_answer),
            meaningful_ms: ms(times.meaningful),
            opener_text: tokens.opener_text,
            e2e_ms,
            tpot_ms,
            itl_ms,
            gap_tokens,
            output_tokens: tokens.output_tokens,
            token_source: tokens.token_source,
            prompt_tokens: tokens.prompt_tokens,
            reasoning_tokens: tokens.reasoning_tokens,
            cached_tokens: tokens.cached_tokens,
            cache_write_tokens: tokens.cache_write_tokens,
            output_events: tokens.output_events,
            output_arrivals: tokens.output_arrivals,
            tokens_per_arrival,
            coalesced: flags.has(COALESCED),
            stalls,
            decode_tokens_per_s,
            server_timings,
            json,
            tool_calls,
            text: std::mem::take(&mut reading.text),
            reasoning_text: std::mem::take(&mut reading.reasoning_text),
            choices,
            streamed: flags.has(STREAMED),
        };
        Ok((metrics, reading))
    }

    /// The times column, each time against the one it follows.
    fn times(&mut self, flags: Flags) -> Result<Times, ShareError> {
        let t = self.col(Col::Times);
        let mut read = |bit: u64, base: i64| -> Result<Option<i64>, ShareError> {
            if flags.has(bit) {
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
        let e2e = read(E2E, after_first)?;
        Ok(Times {
            ttfb,
            ttft,
            after_first,
            first_reasoning,
            first_answer,
            meaningful,
            e2e,
        })
    }

    /// The tokens column.
    fn tokens(&mut self, flags: Flags) -> Result<Tokens, ShareError> {
        let k = self.col(Col::Tokens);
        let output_tokens = k.u()?;
        let token_source = SOURCES[k.code(SOURCES.len() as u64)? as usize];
        let mut optional = |bit: u64| -> Result<Option<u64>, ShareError> {
            if flags.has(bit) {
                Ok(Some(k.u()?))
            } else {
                Ok(None)
            }
        };
        let prompt_tokens = optional(PROMPT_TOKENS)?;
        let reasoning_tokens = optional(REASONING_TOKENS)?;
        let cached_tokens = optional(CACHED_TOKENS)?;
        let cache_write_tokens = optional(CACHE_WRITE_TOKENS)?;
        let output_events = u32::try_from(k.u()?).unwrap_or(u32::MAX);
        let output_arrivals = u32::try_from(k.u()?).unwrap_or(u32::MAX);
        let ttft_kind = match k.code(KINDS.len() as u64 + 1)? {
            0 => None,
            v => Some(KINDS[v as usize - 1]),
        };
        let opener = k.u()?;
        Ok(Tokens {
            output_tokens,
            token_source,
            prompt_tokens,
            reasoning_tokens,
            cached_tokens,
            cache_write_tokens,
            output_events,
            output_arrivals,
            ttft_kind,
            opener_text: self.string(opener)?,
        })
    }

    /// The gaps column (ms) and the gap tokens column, if the request kept its gaps; a single
    /// choice's end stored against its last arrival ([`END_AFTER_LAST`]) moves `e2e` there.
    fn gaps(
        &mut self,
        flags: Flags,
        e2e: &mut Option<i64>,
    ) -> Result<(Vec<f64>, Vec<Option<u32>>), ShareError> {
        let (mut itl_ms, mut gap_tokens) = (Vec::new(), Vec::new());
        if !flags.has(GAPS_KEPT) {
            return Ok((itl_ms, gap_tokens));
        }
        let q = self.q;
        let g = self.col(Col::Gaps);
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
            if flags.has(END_AFTER_LAST)
                && let Some(end) = e2e.as_mut()
            {
                *end = plus(*end, sum)?;
            }
        }
        let gt = self.col(Col::GapTokens);
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
        Ok((itl_ms, gap_tokens))
    }

    /// The extras column's stalls.
    fn stalls(&mut self, after_first: i64) -> Result<Vec<Stall>, ShareError> {
        let q = self.q;
        let x = self.col(Col::Extras);
        let n = x.count()?;
        let mut stalls = Vec::with_capacity(n);
        for _ in 0..n {
            let from = plus(after_first, x.i()?)?;
            stalls.push(Stall {
                from_ms: q.ms(from),
                gap_ms: q.ms(x.i()?),
            });
        }
        Ok(stalls)
    }

    /// The extras column's server timings.
    fn server_timings(&mut self) -> Result<ServerTimings, ShareError> {
        let x = self.col(Col::Extras);
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
        Ok(ServerTimings {
            prompt_n: counts[0],
            predicted_n: counts[1],
            cache_n: counts[2],
            prompt_ms: times[0],
            predicted_ms: times[1],
            predicted_per_token_ms: times[2],
        })
    }

    /// The extras column's agent JSON progress, and whether the text column holds its value.
    fn json(&mut self, after_first: i64) -> Result<(JsonProgress, bool), ShareError> {
        let q = self.q;
        let x = self.col(Col::Extras);
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
            let i = self.col(Col::Extras).u()?;
            missing_keys.push(self.string(i)?);
        }
        let invalid_candidates = u32::try_from(self.col(Col::Extras).u()?).unwrap_or(u32::MAX);
        let json = JsonProgress {
            first_bracket_at,
            valid_at,
            value: None,
            missing_keys,
            invalid_candidates,
        };
        Ok((json, present & 4 != 0))
    }

    /// The extras column's tool calls (their arguments, if kept, are in the text column).
    fn tool_calls(&mut self, after_first: i64) -> Result<Vec<ToolCallTiming>, ShareError> {
        let q = self.q;
        let n = self.col(Col::Extras).count()?;
        let mut tool_calls = Vec::with_capacity(n);
        for _ in 0..n {
            let x = self.col(Col::Extras);
            let index = u32::try_from(x.u()?).unwrap_or(u32::MAX);
            let name = x.u()?;
            let name = self.opt_string(name)?;
            let x = self.col(Col::Extras);
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
        Ok(tool_calls)
    }

    /// The extras column's choices (their texts, if kept, are in the text column).
    fn choices(&mut self, after_first: i64) -> Result<Vec<ChoiceSummary>, ShareError> {
        let q = self.q;
        let n = self.col(Col::Extras).count()?;
        let mut choices = Vec::with_capacity(n);
        for _ in 0..n {
            let x = self.col(Col::Extras);
            let index = u32::try_from(x.u()?).unwrap_or(u32::MAX);
            let first_token_ms = match x.code(2)? {
                1 => Some(q.ms(plus(after_first, x.i()?)?)),
                _ => None,
            };
            let output_tokens = match x.u()? {
                0 => None,
                v => Some(v - 1),
            };
            let finish_reason = x.u()?;
            choices.push(ChoiceSummary {
                index,
                first_token_ms,
                output_tokens,
                finish_reason: self.opt_string(finish_reason)?,
                text: String::new(),
                reasoning_text: String::new(),
                first_answer_ms: None,
                gaps: None,
                server_timings: None,
            });
        }
        Ok(choices)
    }

    /// TPOT and the decode rate: recomputed for a single streamed choice, read from the extras
    /// column for several.
    fn rates(
        &mut self,
        flags: Flags,
        choices: &[ChoiceSummary],
        ttft_ms: Option<f64>,
        e2e_ms: Option<f64>,
        output_tokens: u64,
    ) -> Result<(Option<f64>, Option<f64>), ShareError> {
        if choices.is_empty() {
            return Ok(if flags.has(STREAMED) {
                single_choice_rates(e2e_ms, ttft_ms, output_tokens)
            } else {
                (None, None)
            });
        }
        let x = self.col(Col::Extras);
        let mut v = [None, None];
        for slot in &mut v {
            if x.code(2)? == 1 {
                *slot = Some(x.f()?);
            }
        }
        Ok((v[0], v[1]))
    }

    /// A kept request's texts (the text column: the JSON value, answer and reasoning unless the
    /// pieces hold them, each choice's, each tool call's arguments) and its replay (the replay
    /// column, then the pieces' texts).
    fn kept_texts(
        &mut self,
        flags: Flags,
        json_value: Option<&mut JsonProgress>,
        choices: &mut [ChoiceSummary],
        tool_calls: &mut [ToolCallTiming],
        arrivals: &[f64],
    ) -> Result<Reading, ShareError> {
        let mut reading = Reading::default();
        let tx = self.col(Col::Text);
        if let Some(j) = json_value {
            j.value = Some(tx.s()?);
        }
        if !flags.has(TEXT_AS_PIECES) {
            reading.text = tx.s()?;
            reading.reasoning_text = tx.s()?;
        }
        for ch in choices {
            ch.text = tx.s()?;
            ch.reasoning_text = tx.s()?;
        }
        for call in tool_calls {
            call.arguments = tx.s()?;
        }
        let pieces = self.replay_pieces(flags, arrivals)?;
        reading.replay.reserve(pieces.len());
        let tx = self.col(Col::Text);
        for (kind, at_ms, len) in pieces {
            let text = match len {
                Some(len) => tx.s_of(len)?,
                None => tx.s()?,
            };
            reading.replay.push(ReplayPiece { at_ms, kind, text });
        }
        if flags.has(TEXT_AS_PIECES) {
            reading.text = joined(&reading.replay, 'a');
            reading.reasoning_text = joined(&reading.replay, 'r');
        }
        Ok(reading)
    }

    /// The replay column: each piece's kind, time (at an arrival of the gaps, or its own) and,
    /// when the pieces hold the texts, its text's length.
    fn replay_pieces(
        &mut self,
        flags: Flags,
        arrivals: &[f64],
    ) -> Result<Vec<(char, f64, Option<u64>)>, ShareError> {
        let q = self.q;
        let rp = self.col(Col::Replay);
        let pieces = rp.count()?;
        let aligned = rp.code(2)? == 1;
        let (mut prev, mut prev_ref) = (0i64, 0usize);
        let mut out = Vec::with_capacity(pieces);
        for _ in 0..pieces {
            let kind = match rp.code(3 + u64::from(char::MAX) + 1)? {
                0 => 'a',
                1 => 'r',
                2 => 't',
                v => char::from_u32((v - 3) as u32).unwrap_or('a'),
            };
            let len = if flags.has(TEXT_AS_PIECES) {
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
            out.push((kind, at, len));
        }
        Ok(out)
    }

    /// The units column of a request whose text is not kept: what each arrival gave a reader
    /// (one count per arrival, then units listed one by one) and its token arrivals.
    fn reading_units(&mut self, flags: Flags, arrivals: &[f64]) -> Result<Reading, ShareError> {
        let mut reading = Reading::default();
        self.units_at_arrivals(arrivals, &mut reading.reading_units)?;
        self.listed_units(arrivals, &mut reading.reading_units)?;
        if flags.has(TOKEN_ARRIVALS) {
            reading.token_arrivals = self.token_arrivals(arrivals)?;
        }
        Ok(reading)
    }

    /// Units at the gaps' arrivals, if the request has them so: words per arrival, then
    /// characters.
    fn units_at_arrivals(
        &mut self,
        arrivals: &[f64],
        units: &mut Vec<ReadingUnits>,
    ) -> Result<(), ShareError> {
        let u = self.col(Col::Units);
        if u.code(2)? != 1 {
            return Ok(());
        }
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
                units.push(ReadingUnits {
                    at_ms: arrivals[k],
                    words: u32::try_from(w).unwrap_or(u32::MAX),
                    cjk_chars: u32::try_from(cjk).unwrap_or(u32::MAX),
                });
            }
        }
        Ok(())
    }

    /// Units listed one by one, each at an arrival (a step from the one before) or at its own
    /// time.
    fn listed_units(
        &mut self,
        arrivals: &[f64],
        units: &mut Vec<ReadingUnits>,
    ) -> Result<(), ShareError> {
        let q = self.q;
        let u = self.col(Col::Units);
        let count = u.count()?;
        units.reserve(count);
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
            units.push(ReadingUnits {
                at_ms,
                words: u32::try_from(u.u()?).unwrap_or(u32::MAX),
                cjk_chars: u32::try_from(u.u()?).unwrap_or(u32::MAX),
            });
        }
        Ok(())
    }

    /// Token arrivals `(time, tokens)`: at the gaps' arrivals, or at times of their own.
    fn token_arrivals(&mut self, arrivals: &[f64]) -> Result<Vec<(f64, u32)>, ShareError> {
        let q = self.q;
        let u = self.col(Col::Units);
        let own_times = u.code(2)? == 1;
        let count = u.count()?;
        if !own_times && count != arrivals.len() {
            return Err(ShareError::Damaged(
                "token counts for arrivals that are not there".into(),
            ));
        }
        let mut out = Vec::with_capacity(count);
        let mut prev = 0i64;
        for k in 0..count {
            let at = if own_times {
                prev = plus(prev, u.i()?)?;
                q.ms(prev)
            } else {
                arrivals.get(k).copied().unwrap_or_default()
            };
            let n = u32::try_from(u.u()?).unwrap_or(u32::MAX);
            out.push((at, n));
        }
        Ok(out)
    }

    /// The report: every column read to its end, then the header's fields and the requests.
    fn finish(self, requests: Vec<RequestRecord>) -> Result<Report, ShareError> {
        for c in &self.cols {
            c.finish()?;
        }
        let header = self.header;
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
        report.openers = header.openers;
        report.saturation = header.saturation;
        report.painted = header.painted;
        report.shared = Some(SharedFrom {
            format: "r2".into(),
            precision_ms: header.precision_ms,
            left_out: header.left_out,
            headline: header.headline,
        });
        Ok(report)
    }
}

/// A single choice's arrivals: the first token, then one after each gap.
fn arrivals_of(first_ms: f64, itl_ms: &[f64]) -> Vec<f64> {
    let mut at = first_ms;
    let mut v = Vec::with_capacity(itl_ms.len() + 1);
    v.push(at);
    for g in itl_ms {
        at += g;
        v.push(at);
    }
    v
}
