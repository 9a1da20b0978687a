//! Per-request metrics computed from a [`RequestTimeline`].
//!
//! Definitions (all times in ms from t0, the moment just before the request was sent):
//! - **TTFB**: response headers arrived.
//! - **TTFT**: first event with non-empty output text (answer, reasoning or refusal) or, for a
//!   turn that only calls tools, the first tool-call fragment; [`TtftKind`] says which. Role-only
//!   chunks, empty deltas, progress and usage events never count.
//! - **First answer token**: first event with answer text (or a refusal, which takes the
//!   answer's place), after any reasoning; `None` for a turn that only thought or called tools.
//!   With TTFB, TTFT (first token of any kind) and the meaningful first token it makes the four
//!   first-token figures every run shows.
//! - **Meaningful first token**: arrival of the piece holding the first answer character after
//!   boilerplate openers; the [`crate::openers`] decision runs on the text received so far as
//!   each piece arrives, and is final once made (any chunking gives the same split).
//! - **ITL**: gaps between consecutive *arrivals* of output (events of one read arrive
//!   together, so they form one arrival). A gap spanning an arrival that carried several tokens
//!   is also reported per token.
//! - **E2E**: end of the stream. **TPOT** = (E2E − TTFT) / (output tokens − 1).
//! - **Output tokens**: final usage if sent, else the last continuous usage, else server
//!   timings, else an estimate (one per output event, flagged as such). Final usage is usage
//!   on the chunk that carries the finish reason (llama.cpp `/v1/completions`) or after it
//!   (the `choices: []` chunk of `include_usage`); continuous usage is usage on chunks before
//!   the finish (vLLM/SGLang `continuous_usage_stats`).
//! - **Cached prompt tokens**: the last usage that reports them (`prompt_tokens_details` or
//!   `input_tokens_details.cached_tokens`, Anthropic `cache_read_input_tokens`), else llama.cpp's
//!   `timings.cache_n`; `None` when the server did not say ([`RequestMetrics::prompt_cache`]).
//!
//! **Several choices** (`n > 1`): the choices stream interleaved, each with its own role chunk,
//! finish chunk and, on some servers, usage. Each choice `c` keeps its text, tokens and finish
//! reason in [`RequestMetrics::choices`] (left empty for a single choice). With `k` choices
//! that produced output, `T` output tokens over all choices, `first_c` the first output of
//! choice `c` and `end_c` the arrival of its last event (its finish chunk), except that the
//! choice(s) ending last run to E2E:
//! - **TTFT**: first output of *any* choice (what the reader of the first visible answer sees).
//! - **ITL**: gaps between arrivals *of the same choice*, so interleaving does not halve them;
//!   `itl_ms` lists choice 0's gaps, then choice 1's, …; an arrival is a (read, choice) pair.
//! - **TPOT** = Σ_c (end_c − first_c) / (T − k): each answer's time per token after its own
//!   first token, weighted by its tokens. Choices decoding in parallel at 20 ms per token give
//!   20 ms, whatever the interleaving.
//! - **Decode tokens/s** = (T − k) / (E2E − TTFT): the request's aggregate rate over all choices
//!   (about k / TPOT when the choices run side by side).
//!
//!   With one choice these are the usual formulas (end_0 = E2E, k = 1).
//! - **T**: OpenAI and vLLM send one usage for the whole request with `include_usage`
//!   (OpenAI: "token usage statistics for the entire request"; vLLM sums `completion_tokens`
//!   over choices), so one usage chunk without choices is `T` as is. llama.cpp runs each choice
//!   as its own task and ends each with its own usage chunk (`choices: []`, right after that
//!   choice's finish chunk): several usage chunks without choices are summed, each attributed
//!   to the choice that had just finished. Otherwise `T` sums per-choice counts (usage on each
//!   choice's finish chunk, vLLM's per-choice continuous usage, llama.cpp timings).
//! - The top-level `text`, `reasoning_text`, tool calls, JSON tracking and meaningful first
//!   token describe the *primary* choice: the lowest index with output.
//!
//! **Not streamed**: a 2xx body that was one JSON document ([`RequestTimeline::streamed`]
//! false) is one arrival at the body's end: TTFT is then the whole answer's arrival, and ITL,
//! TPOT and decode rate are empty, not zero.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::agent_json::{JsonProgress, JsonTracker};
use crate::dialect::{ServerTimings, StreamEvent};
use crate::openers::{OpenerScan, Openers};
use crate::timeline::RequestTimeline;

/// Most tokens one arrival is taken to carry: a larger difference between two usage counts is
/// a bad count from the server (its gap is then kept whole, not split per token).
pub const MAX_TOKENS_PER_ARRIVAL: u32 = 4096;

/// Which output made the first token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TtftKind {
    /// Visible answer text.
    Answer,
    /// Visible reasoning text came first.
    Reasoning,
    /// A refusal.
    Refusal,
    /// A tool call (the turn had no text before it).
    ToolCall,
}

/// Where the output token count came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenSource {
    /// The final `usage` object.
    FinalUsage,
    /// Per-chunk usage (`continuous_usage_stats`).
    ContinuousUsage,
    /// Server timings (`predicted_n`, Ollama `eval_count`).
    ServerTimings,
    /// Counted one per output event: a lower bound when chunks coalesce.
    Estimate,
    /// Reported by the benchmark tool the run was imported from.
    Imported,
}

/// Settings for metric computation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricsConfig {
    /// A gap above this is a stall (ms).
    pub stall_ms: f64,
    /// Opener phrases for the meaningful first token.
    pub openers: Openers,
    /// Track the answer (or tool arguments) as JSON.
    pub track_json: bool,
    /// Keys the JSON object must contain.
    pub required_keys: Vec<String>,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        Self {
            stall_ms: 1000.0,
            openers: Openers::default(),
            track_json: false,
            required_keys: Vec::new(),
        }
    }
}

/// A stall: a gap between output arrivals above the threshold.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stall {
    /// When the gap began (ms from t0).
    pub from_ms: f64,
    /// Its length (ms).
    pub gap_ms: f64,
}

/// A tool call assembled from its fragments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallTiming {
    /// Index in the turn.
    pub index: u32,
    /// Function name.
    pub name: Option<String>,
    /// Arguments as received.
    pub arguments: String,
    /// First fragment (ms from t0).
    pub first_at_ms: f64,
    /// When the arguments first formed valid JSON (ms from t0).
    pub valid_at_ms: Option<f64>,
}

/// One choice of a request that asked for several (`n > 1`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChoiceSummary {
    /// `choices[].index`.
    pub index: u32,
    /// Its first output (ms from t0).
    pub first_token_ms: Option<f64>,
    /// Its output tokens, when the server counted them per choice (per-choice usage, vLLM's
    /// continuous usage, llama.cpp timings); `None` when only a request total was sent.
    pub output_tokens: Option<u64>,
    /// Its finish reason.
    pub finish_reason: Option<String>,
    /// Its answer text.
    pub text: String,
    /// Its reasoning text.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reasoning_text: String,
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

/// Everything measured for one request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestMetrics {
    /// Response headers (ms).
    pub ttfb_ms: Option<f64>,
    /// First token (ms).
    pub ttft_ms: Option<f64>,
    /// What the first token was.
    pub ttft_kind: Option<TtftKind>,
    /// First reasoning text (ms).
    pub first_reasoning_ms: Option<f64>,
    /// First answer (or refusal) text (ms).
    pub first_answer_ms: Option<f64>,
    /// First answer text after openers (ms).
    pub meaningful_ms: Option<f64>,
    /// The opener text skipped.
    pub opener_text: String,
    /// End of the stream (ms).
    pub e2e_ms: Option<f64>,
    /// Time per output token after the first (ms).
    pub tpot_ms: Option<f64>,
    /// Gaps between output arrivals (ms).
    pub itl_ms: Vec<f64>,
    /// Tokens carried by the arrival that ends each gap, where known (continuous usage).
    pub gap_tokens: Vec<Option<u32>>,
    /// Output tokens.
    pub output_tokens: u64,
    /// Where `output_tokens` came from.
    pub token_source: TokenSource,
    /// Prompt tokens, when reported.
    pub prompt_tokens: Option<u64>,
    /// Reasoning tokens, when reported (hidden reasoning included).
    pub reasoning_tokens: Option<u64>,
    /// Prompt tokens the server served from its prefix cache, when it said ([`crate::dialect::Usage::cached_tokens`],
    /// else llama.cpp's `timings.cache_n`); part of `prompt_tokens`. `None` when the server did
    /// not report it, which is not a miss.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
    /// Prompt tokens this request wrote to the cache (Anthropic `cache_creation_input_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<u64>,
    /// Output events (chunks with output).
    pub output_events: u32,
    /// Distinct arrivals carrying output.
    pub output_arrivals: u32,
    /// Output tokens per arrival.
    pub tokens_per_arrival: f64,
    /// Arrivals carry several tokens: per-arrival gaps overstate the per-token ITL.
    pub coalesced: bool,
    /// Gaps above the stall threshold.
    pub stalls: Vec<Stall>,
    /// Output tokens per second over the streaming phase.
    pub decode_tokens_per_s: Option<f64>,
    /// Server-side timings, when reported.
    pub server_timings: Option<ServerTimings>,
    /// JSON tracking of the answer.
    pub json: Option<JsonProgress>,
    /// Tool calls.
    pub tool_calls: Vec<ToolCallTiming>,
    /// Answer text (of the primary choice when there are several).
    pub text: String,
    /// Reasoning text (of the primary choice when there are several).
    pub reasoning_text: String,
    /// Every choice, when the request streamed several (`n > 1`); empty for one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<ChoiceSummary>,
    /// False when the server answered in one piece instead of streaming (see the module doc).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub streamed: bool,
}

/// Per-choice state while computing metrics.
#[derive(Default)]
struct ChoiceAcc {
    first_at: Option<f64>,
    last_at: Option<f64>,
    /// Output arrivals: (at, read).
    arrivals: Vec<(f64, u32)>,
    /// Cumulative completion tokens from usage on this choice's chunks: (read, tokens).
    series: Vec<(u32, u64)>,
    final_tokens: Option<u64>,
    continuous_tokens: Option<u64>,
    timings_tokens: Option<u64>,
    finish: Option<String>,
    text: String,
    reasoning: String,
}

/// A choice's cumulative usage looked up by read: the count of the last usage (in stream
/// order) sent with a read at or before it. A binary search, so gaps cost n log n, not n².
struct UsageAt<'a> {
    series: &'a [(u32, u64)],
    /// The smallest read from each entry on (non-decreasing).
    min_from: Vec<u32>,
}

impl<'a> UsageAt<'a> {
    fn new(series: &'a [(u32, u64)]) -> Self {
        let mut min_from = vec![0; series.len()];
        let mut min = u32::MAX;
        for (i, &(r, _)) in series.iter().enumerate().rev() {
            min = min.min(r);
            min_from[i] = min;
        }
        Self { series, min_from }
    }

    /// Tokens generated up to `read`. The last entry with a read ≤ `read` is the last one
    /// whose `min_from` is ≤ `read`: every later entry, and so their minimum, is above it.
    fn at(&self, read: u32) -> Option<u64> {
        let (mut lo, mut hi) = (0, self.min_from.len());
        while lo < hi {
            work::add(1);
            let mid = lo + (hi - lo) / 2;
            if self.min_from[mid] <= read {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo.checked_sub(1).map(|i| self.series[i].1)
    }
}

/// Lookups done while computing metrics, counted in tests only (see the test module).
mod work {
    #[cfg(test)]
    thread_local! {
        pub static DONE: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }

    #[inline]
    pub fn add(_n: u64) {
        #[cfg(test)]
        DONE.with(|d| d.set(d.get() + _n));
    }
}

impl ChoiceAcc {
    /// The per-choice count and where it came from.
    fn tokens(&self) -> Option<(u64, TokenSource)> {
        self.final_tokens
            .map(|n| (n, TokenSource::FinalUsage))
            .or(self
                .continuous_tokens
                .map(|n| (n, TokenSource::ContinuousUsage)))
            .or(self.timings_tokens.map(|n| (n, TokenSource::ServerTimings)))
    }
}

/// A streamed single choice's TPOT `(E2E − TTFT) / (tokens − 1)` and decode rate (1000 /
/// TPOT, when TPOT is positive), as the module doc defines them.
pub fn single_choice_rates(
    e2e_ms: Option<f64>,
    ttft_ms: Option<f64>,
    output_tokens: u64,
) -> (Option<f64>, Option<f64>) {
    let tpot = match (e2e_ms, ttft_ms) {
        (Some(e), Some(f)) if output_tokens > 1 => Some((e - f) / (output_tokens - 1) as f64),
        _ => None,
    };
    (tpot, tpot.filter(|t| *t > 0.0).map(|t| 1000.0 / t))
}

impl RequestMetrics {
    /// Computes the metrics of one timeline.
    pub fn compute(tl: &RequestTimeline, cfg: &MetricsConfig) -> Self {
        let t0 = tl.sent_at;
        let rel = |t: f64| t - t0;
        let mut ttft: Option<(f64, TtftKind)> = None;
        let mut first_reasoning = None;
        let mut first_answer = None;
        let mut text = String::new();
        let mut reasoning_text = String::new();
        let mut answer_marks: Vec<(usize, f64)> = Vec::new();
        let mut opener_scan = OpenerScan::new();
        let mut output_events = 0u32;
        let mut final_usage = None;
        let mut continuous_last = None;
        // Choices (n > 1, see the module doc): per-choice state; the top-level text, reasoning,
        // tool calls and JSON follow the primary choice, the lowest index with output.
        let mut per: BTreeMap<u32, ChoiceAcc> = BTreeMap::new();
        let primary = tl.primary_choice();
        let mut last_finished: Option<u32> = None;
        // Usage chunks without choices: (completion tokens, the choice that had just finished).
        let mut request_usage: Vec<(u64, Option<u32>)> = Vec::new();
        let mut prompt_tokens = None;
        let mut reasoning_tokens = None;
        let mut cached_tokens = None;
        let mut cache_write_tokens = None;
        let mut timings = None;
        let mut json = cfg.track_json.then(|| JsonTracker::new(&cfg.required_keys));
        let mut calls: Vec<(ToolCallTiming, JsonTracker)> = Vec::new();
        // Call index → position in `calls`.
        let mut call_at: HashMap<u32, usize> = HashMap::new();

        for ev in &tl.events {
            let at = rel(ev.at);
            let choice = ev.choice.unwrap_or(0);
            let is_primary = choice == primary;
            let of_choice = ev.choice.is_some()
                || ev.event.is_output()
                || matches!(ev.event, StreamEvent::Finish(_));
            if of_choice && !matches!(ev.event, StreamEvent::Usage { .. }) {
                let acc = per.entry(choice).or_default();
                acc.last_at = Some(at);
                match &ev.event {
                    StreamEvent::Content(t) | StreamEvent::Refusal(t) => acc.text.push_str(t),
                    StreamEvent::Reasoning(t) => acc.reasoning.push_str(t),
                    StreamEvent::Finish(r) => {
                        acc.finish = Some(r.clone());
                        last_finished = Some(choice);
                    }
                    _ => {}
                }
                if ev.event.is_output() {
                    output_events += 1;
                    acc.first_at.get_or_insert(at);
                    if acc.arrivals.last().is_none_or(|&(_, r)| r != ev.read) {
                        acc.arrivals.push((at, ev.read));
                    }
                }
            }
            match &ev.event {
                // Other choices count for the first token; their text is kept in `per`.
                StreamEvent::Content(_) if !is_primary => {
                    ttft.get_or_insert((at, TtftKind::Answer));
                    first_answer.get_or_insert(at);
                }
                StreamEvent::Reasoning(_) if !is_primary => {
                    ttft.get_or_insert((at, TtftKind::Reasoning));
                    first_reasoning.get_or_insert(at);
                }
                StreamEvent::Refusal(_) if !is_primary => {
                    ttft.get_or_insert((at, TtftKind::Refusal));
                    first_answer.get_or_insert(at);
                }
                StreamEvent::ToolCall { .. } if !is_primary && ev.event.is_output() => {
                    ttft.get_or_insert((at, TtftKind::ToolCall));
                }
                StreamEvent::ToolCall { .. } if !is_primary => {}
                StreamEvent::Content(t) => {
                    ttft.get_or_insert((at, TtftKind::Answer));
                    first_answer.get_or_insert(at);
                    answer_marks.push((text.len(), at));
                    text.push_str(t);
                    opener_scan.update(&cfg.openers, &text);
                    if let Some(j) = json.as_mut() {
                        j.push(at, t);
                    }
                }
                StreamEvent::Reasoning(t) => {
                    ttft.get_or_insert((at, TtftKind::Reasoning));
                    first_reasoning.get_or_insert(at);
                    reasoning_text.push_str(t);
                }
                StreamEvent::Refusal(t) => {
                    ttft.get_or_insert((at, TtftKind::Refusal));
                    first_answer.get_or_insert(at);
                    answer_marks.push((text.len(), at));
                    text.push_str(t);
                    opener_scan.update(&cfg.openers, &text);
                }
                StreamEvent::ToolCall {
                    index,
                    id: _,
                    name,
                    arguments,
                } => {
                    if name.is_some() || !arguments.is_empty() {
                        ttft.get_or_insert((at, TtftKind::ToolCall));
                    }
                    work::add(1);
                    let pos = match call_at.get(index) {
                        Some(&p) => p,
                        None => {
                            call_at.insert(*index, calls.len());
                            calls.push((
                                ToolCallTiming {
                                    index: *index,
                                    name: None,
                                    arguments: String::new(),
                                    first_at_ms: at,
                                    valid_at_ms: None,
                                },
                                JsonTracker::new(&[]),
                            ));
                            calls.len() - 1
                        }
                    };
                    let (call, tracker) = &mut calls[pos];
                    if call.name.is_none() {
                        call.name.clone_from(name);
                    }
                    call.arguments.push_str(arguments);
                    tracker.push(at, arguments);
                    call.valid_at_ms = tracker.progress().valid_at;
                }
                StreamEvent::Usage { usage, with_output } => {
                    prompt_tokens = usage.prompt_tokens.or(prompt_tokens);
                    reasoning_tokens = usage.reasoning_tokens.or(reasoning_tokens);
                    cached_tokens = usage.cached_tokens.or(cached_tokens);
                    cache_write_tokens = usage.cache_write_tokens.or(cache_write_tokens);
                    if let Some(c) = usage.completion_tokens {
                        if *with_output {
                            continuous_last = Some(c);
                        } else {
                            final_usage = Some(c);
                        }
                        match ev.choice {
                            // Usage on one choice's chunk: per-choice (vLLM continuous usage
                            // counts each choice; llama.cpp completions' finish chunk).
                            Some(ch) => {
                                let acc = per.entry(ch).or_default();
                                acc.series.push((ev.read, c));
                                if *with_output {
                                    acc.continuous_tokens = Some(c);
                                } else {
                                    acc.final_tokens = Some(c);
                                }
                            }
                            None if !*with_output => request_usage.push((c, last_finished)),
                            None => {}
                        }
                    }
                }
                StreamEvent::Timings(t) => {
                    timings = Some(*t);
                    if let (Some(ch), Some(n)) = (ev.choice.or(last_finished), t.predicted_n) {
                        per.entry(ch).or_default().timings_tokens = Some(n);
                    }
                }
                _ => {}
            }
        }

        let ttft_ms = ttft.map(|t| t.0);
        let e2e_ms = tl.ended_at.map(rel);
        let multi = per.len() > 1;
        if multi && request_usage.len() > 1 {
            // llama.cpp: one usage chunk per choice, right after that choice's finish chunk.
            for &(n, owner) in &request_usage {
                if let Some(acc) = owner.and_then(|c| per.get_mut(&c))
                    && acc.final_tokens.is_none()
                {
                    acc.final_tokens = Some(n);
                }
            }
        }
        let (output_tokens, token_source) = if !multi {
            if let Some(n) = final_usage {
                (n, TokenSource::FinalUsage)
            } else if let Some(n) = continuous_last {
                (n, TokenSource::ContinuousUsage)
            } else if let Some(n) = timings.and_then(|t| t.predicted_n) {
                (n, TokenSource::ServerTimings)
            } else {
                (u64::from(output_events), TokenSource::Estimate)
            }
        } else if let [(n, _)] = request_usage[..] {
            (n, TokenSource::FinalUsage) // one usage for the whole request (OpenAI, vLLM)
        } else if !request_usage.is_empty() {
            let sum = request_usage
                .iter()
                .fold(0u64, |acc, &(n, _)| acc.saturating_add(n));
            (sum, TokenSource::FinalUsage) // one per choice (llama.cpp)
        } else if per
            .values()
            .all(|a| a.first_at.is_none() || a.tokens().is_some())
        {
            let counts: Vec<(u64, TokenSource)> =
                per.values().filter_map(ChoiceAcc::tokens).collect();
            let source = if counts.iter().any(|c| c.1 == TokenSource::ServerTimings) {
                TokenSource::ServerTimings
            } else if counts.iter().any(|c| c.1 == TokenSource::ContinuousUsage) {
                TokenSource::ContinuousUsage
            } else {
                TokenSource::FinalUsage
            };
            (
                counts.iter().fold(0u64, |acc, c| acc.saturating_add(c.0)),
                source,
            )
        } else {
            (u64::from(output_events), TokenSource::Estimate)
        };

        // Gaps per choice; tokens per arrival from the choice's cumulative usage.
        let mut itl_ms = Vec::new();
        let mut gap_tokens = Vec::new();
        let mut stalls = Vec::new();
        for acc in per.values() {
            let usage = UsageAt::new(&acc.series);
            let tokens: Vec<Option<u64>> = acc.arrivals.iter().map(|a| usage.at(a.1)).collect();
            for (w, t) in acc.arrivals.windows(2).zip(tokens.windows(2)) {
                let gap = w[1].0 - w[0].0;
                itl_ms.push(gap);
                let toks = match (t[0], t[1]) {
                    // More than a chunk can carry is a server's bad count, not tokens.
                    (Some(a), Some(b)) if b >= a => u32::try_from(b - a)
                        .ok()
                        .filter(|n| *n <= MAX_TOKENS_PER_ARRIVAL),
                    _ => None,
                };
                gap_tokens.push(toks);
                if gap > cfg.stall_ms {
                    stalls.push(Stall {
                        from_ms: w[0].0,
                        gap_ms: gap,
                    });
                }
            }
        }
        let output_arrivals = per.values().map(|a| a.arrivals.len() as u32).sum::<u32>();
        let tokens_per_arrival = if output_arrivals > 0 {
            output_tokens as f64 / f64::from(output_arrivals)
        } else {
            0.0
        };
        // Without server counts, text length is the only witness: English runs ≈ 4 characters
        // per token, so arrivals averaging over 16 characters carry several tokens.
        let chars: usize = per
            .values()
            .map(|a| a.text.chars().count() + a.reasoning.chars().count())
            .sum();
        let chars_per_event = chars as f64 / f64::from(output_events.max(1));
        let coalesced = tl.streamed
            && output_arrivals > 0
            && (tokens_per_arrival > 1.2
                || gap_tokens.iter().any(|t| t.is_some_and(|n| n > 1))
                || (token_source == TokenSource::Estimate && chars_per_event > 16.0));
        // k choices with output; TPOT and decode rate as defined in the module doc.
        let k = per.values().filter(|a| a.first_at.is_some()).count() as u64;
        let (tpot_ms, decode_tokens_per_s) = if !tl.streamed {
            (None, None)
        } else if !multi {
            single_choice_rates(e2e_ms, ttft_ms, output_tokens)
        } else {
            match (e2e_ms, ttft_ms) {
                (Some(e), Some(f)) if output_tokens > k => {
                    let started = || per.values().filter(|a| a.first_at.is_some());
                    let latest = started()
                        .filter_map(|a| a.last_at)
                        .fold(f64::NEG_INFINITY, f64::max);
                    let span: f64 = started()
                        .filter_map(|a| {
                            let end = a.last_at.filter(|l| *l < latest).unwrap_or(e);
                            Some(end - a.first_at?)
                        })
                        .sum();
                    let after_first = (output_tokens - k) as f64;
                    let tpot = span / after_first;
                    let rate = (e > f).then(|| after_first / (e - f) * 1000.0);
                    (Some(tpot), rate)
                }
                _ => (None, None),
            }
        };
        let choices = if multi {
            per.iter()
                .map(|(&index, a)| ChoiceSummary {
                    index,
                    first_token_ms: a.first_at,
                    output_tokens: a.tokens().map(|t| t.0),
                    finish_reason: a.finish.clone(),
                    text: a.text.clone(),
                    reasoning_text: a.reasoning.clone(),
                })
                .collect()
        } else {
            Vec::new()
        };

        // The split decided while the answer streamed in (or now, at its end); the meaningful
        // first token is the arrival of the piece holding its first content byte.
        let split = opener_scan.finish(&cfg.openers, &text);
        let skip = split.opener;
        let meaningful_ms = split.content.and_then(|off| {
            answer_marks
                .iter()
                .rev()
                .find(|(start, _)| *start <= off)
                .map(|m| m.1)
        });

        Self {
            ttfb_ms: tl.headers_at.map(rel),
            ttft_ms,
            ttft_kind: ttft.map(|t| t.1),
            first_reasoning_ms: first_reasoning,
            first_answer_ms: first_answer,
            meaningful_ms,
            opener_text: text[..skip].to_owned(),
            e2e_ms,
            tpot_ms,
            itl_ms,
            gap_tokens,
            output_tokens,
            token_source,
            prompt_tokens,
            reasoning_tokens,
            cached_tokens: cached_tokens.or(timings.and_then(|t| t.cache_n)),
            cache_write_tokens,
            output_events,
            output_arrivals,
            tokens_per_arrival,
            coalesced,
            stalls,
            decode_tokens_per_s,
            server_timings: timings,
            json: json.map(|j| j.progress().clone()),
            tool_calls: calls.into_iter().map(|(c, _)| c).collect(),
            text,
            reasoning_text,
            choices,
            streamed: tl.streamed,
        }
    }

    /// The prompt and how much of it the server's prefix cache served, `(prompt tokens,
    /// cached tokens)`, when the server reported both: the prompt from usage, else llama.cpp's
    /// timings (`prompt_n` processed + `cache_n` cached). Cached tokens are capped at the
    /// prompt; an empty prompt reports nothing.
    pub fn prompt_cache(&self) -> Option<(u64, u64)> {
        let cached = self.cached_tokens?;
        let prompt = self.prompt_tokens.or_else(|| {
            let t = self.server_timings?;
            Some(t.prompt_n?.saturating_add(t.cache_n?))
        })?;
        (prompt > 0).then_some((prompt, cached.min(prompt)))
    }

    /// Per-token ITL samples: each gap divided by the tokens its arrival carried, where known.
    pub fn per_token_itl(&self) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.itl_ms.len());
        self.extend_per_token_itl(&mut out);
        out
    }

    /// Appends [`Self::per_token_itl`] to `out` (a run's statistics gather every request's
    /// into one buffer); `true` when what it appended is [`Self::itl_ms`] itself (no arrival
    /// split into several tokens).
    pub fn extend_per_token_itl(&self, out: &mut Vec<f64>) -> bool {
        let mut same = self.gap_tokens.len() >= self.itl_ms.len();
        for (gap, toks) in self.itl_ms.iter().zip(&self.gap_tokens) {
            match toks {
                Some(n) if *n > 1 && *n <= MAX_TOKENS_PER_ARRIVAL => {
                    same = false;
                    out.extend(std::iter::repeat_n(gap / f64::from(*n), *n as usize))
                }
                _ => out.push(*gap),
            }
        }
        same
    }

    /// Percentiles of this request's per-token gaps ([`Self::per_token_itl`]), if it has any.
    pub fn itl_summary(&self) -> Option<crate::stats::Summary> {
        crate::stats::Summary::of(&self.per_token_itl())
    }

    /// When the answer became valid JSON or, for tool calls, when every call's arguments had
    /// (ms from t0).
    pub fn json_valid_ms(&self) -> Option<f64> {
        self.json.as_ref().and_then(|j| j.valid_at).or_else(|| {
            if self.tool_calls.is_empty() {
                None
            } else {
                self.tool_calls
                    .iter()
                    .map(|c| c.valid_at_ms)
                    .try_fold(0f64, |a, v| v.map(|v| a.max(v)))
            }
        })
    }

    /// Time the openers cost: meaningful first token minus first answer token.
    pub fn opener_cost_ms(&self) -> Option<f64> {
        Some(self.meaningful_ms? - self.first_answer_ms?)
    }
}

#[cfg(test)]
mod tests {
    use super::{MetricsConfig, RequestMetrics, UsageAt, work};
    use crate::timeline::RequestRecorder;

    /// Usage on every chunk and a new tool call in each: looking up the tokens of each gap and
    /// the call of each fragment stays logarithmic per chunk. Searching the usage series from
    /// its end for every gap, or the calls one by one, made ~n²/2 steps.
    #[test]
    fn usage_and_tool_call_lookups_stay_n_log_n() {
        let n = 10_000u32;
        let mut rec = RequestRecorder::new(0.0, None, None);
        rec.on_headers(1.0, 200, Some("text/event-stream"));
        for i in 0..n {
            let chunk = serde_json::json!({
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": {
                    "content": "x",
                    "tool_calls": [{"index": i, "function": {"name": "f", "arguments": "{}"}}],
                }, "finish_reason": null}],
                "usage": {"completion_tokens": i + 1},
            });
            rec.on_read(2.0 + f64::from(i), format!("data: {chunk}\n\n").as_bytes());
        }
        let tl = rec.finish(1e6);
        work::DONE.with(|d| d.set(0));
        let m = RequestMetrics::compute(&tl, &MetricsConfig::default());
        let done = work::DONE.with(|d| d.get());
        assert_eq!(m.tool_calls.len(), n as usize);
        assert_eq!(m.gap_tokens.len(), n as usize - 1);
        assert!(m.gap_tokens.iter().all(|t| *t == Some(1)));
        let bound = u64::from(n) * u64::from(n.ilog2() + 4);
        assert!(
            done <= bound,
            "{done} lookups for {n} chunks (bound {bound})"
        );
    }

    /// The binary search gives what searching the series from its end gives, whatever the
    /// order of its reads.
    #[test]
    fn usage_lookup_is_the_last_count_sent_at_or_before_a_read() {
        for series in [
            vec![],
            vec![(3, 10)],
            vec![(1, 1), (1, 2), (4, 5), (9, 9)],
            vec![(5, 1), (2, 2), (7, 3), (4, 4), (4, 5), (0, 6)],
            vec![(8, 1), (6, 2), (3, 3)],
        ] {
            let usage = UsageAt::new(&series);
            for read in 0..12 {
                let naive = series.iter().rev().find(|(r, _)| *r <= read).map(|s| s.1);
                assert_eq!(usage.at(read), naive, "{series:?} at {read}");
            }
        }
    }
}
