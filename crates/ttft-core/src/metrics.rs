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
//! - **Time to second token** ([`RequestMetrics::ttst_ms`]): the first output arrival after the
//!   first token's, TTFT + the first gap, from t0 like TTFT (AIPerf's "TTST" is that first gap
//!   alone, this minus TTFT). A first arrival that carried several tokens still counts as one:
//!   the second arrival is when the reader sees the text move on. None with fewer than two
//!   arrivals.
//! - **Per-user output tokens/s** ([`RequestMetrics::user_output_tokens_per_s`]): the tokens
//!   after the first arrival ÷ (last output arrival − first), i.e. 1 / the request's mean
//!   per-token ITL. The tokens are the gaps' own counts when continuous usage gave every one
//!   (a first arrival of several tokens is then not counted as one), else output tokens − 1.
//!   AIPerf's, GenAI-Perf's and GenAI-Bench's "output token throughput per user" (1 / ITL)
//!   divide by (request end − TTFT) instead: that is the **decode rate** below, which also
//!   counts the stream's tail after the last token (finish and usage chunks, `[DONE]`).
//! - **Per-user prefill tokens/s** ([`RequestMetrics::prefill_tokens_per_s`]): prompt tokens ÷
//!   TTFT, the prompt tokens being those the server reported in its usage (AIPerf's "prefill
//!   throughput per user"); none when the server reported none: the prompt's length is never
//!   guessed. Prompt tokens served from the prefix cache count, as they do in TTFT.
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
//!   token describe the *primary* choice: the lowest index with output; so do the opener
//!   cost (its meaningful first token minus *its* first answer token) and the top-level
//!   `server_timings`. Each choice keeps its own server timings (llama.cpp runs each choice
//!   as its own task, with its own `timings` after its finish) and its number of gaps, so
//!   ITL against output position counts positions within each choice.
//!
//!   The time to second token and the per-user output rate follow the primary choice (its
//!   own first token, gaps and token count; none when its gap count or, for the rate, its own
//!   token count is not known).
//!
//! **Not streamed**: a 2xx body that was one JSON document ([`RequestTimeline::streamed`]
//! false) is one arrival at the body's end: TTFT is then the whole answer's arrival, and ITL,
//! TPOT, decode rate, time to second token and the per-user rates are empty, not zero.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::agent_json::{JsonProgress, JsonTracker};
use crate::dialect::{ServerTimings, StreamEvent, Usage};
use crate::openers::{OpenerScan, Openers};
use crate::timeline::{RequestTimeline, TimedEvent};

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
    /// Its first answer (or refusal) text (ms from t0), when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_answer_ms: Option<f64>,
    /// Its gaps in [`RequestMetrics::itl_ms`] (which lists choice 0's gaps, then choice 1's,
    /// …); `None` when not known (reports and links made before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gaps: Option<u32>,
    /// Its own server timings (llama.cpp's `timings` after its finish), when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_timings: Option<ServerTimings>,
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
    /// Server-side timings, when reported (the primary choice's when there are several; each
    /// choice's are in [`ChoiceSummary::server_timings`]).
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
    first_answer: Option<f64>,
    timings: Option<ServerTimings>,
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
        let mut walk = EventWalk::new(cfg, tl.primary_choice());
        for ev in &tl.events {
            walk.event(ev, ev.at - tl.sent_at);
        }
        walk.into_metrics(tl)
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

    /// Time to second token (ms from t0): the primary choice's first output arrival after its
    /// first one (TTFT + its first gap with one choice); `None` for a request that was not
    /// streamed or whose output came in one arrival (see the module doc).
    pub fn ttst_ms(&self) -> Option<f64> {
        let p = self.primary_stream()?;
        Some(p.first_ms + p.gaps.first()?)
    }

    /// Per-user output tokens/s: the primary choice's tokens after its first arrival over the
    /// time from its first output arrival to its last, 1 / its mean per-token ITL (see the
    /// module doc); `None` without two arrivals, a token after the first, or its token count.
    pub fn user_output_tokens_per_s(&self) -> Option<f64> {
        let p = self.primary_stream()?;
        let span: f64 = p.gaps.iter().sum();
        // The gaps' own counts when every one is known (a first arrival of several tokens is
        // then not taken for one), else every token but the first.
        let counted = p
            .gap_tokens
            .get(..p.gaps.len())
            .and_then(|t| t.iter().map(|n| n.map(u64::from)).sum::<Option<u64>>())
            .filter(|n| (1..=p.tokens.unwrap_or(u64::MAX)).contains(n));
        let after_first = match counted {
            Some(n) => n,
            None => p.tokens?.saturating_sub(1),
        };
        (after_first > 0 && span > 0.0 && span.is_finite())
            .then(|| after_first as f64 / span * 1000.0)
    }

    /// Per-user prefill tokens/s: the prompt tokens the server reported over TTFT; `None` when
    /// it reported none (the prompt's length is not guessed) or the request was not streamed
    /// (its TTFT is the whole answer's).
    pub fn prefill_tokens_per_s(&self) -> Option<f64> {
        let prompt = self.prompt_tokens.filter(|p| *p > 0)?;
        let ttft = self.ttft_ms.filter(|t| *t > 0.0 && t.is_finite())?;
        self.streamed.then(|| prompt as f64 / ttft * 1000.0)
    }

    /// The primary choice's stream: its first output, its gaps and their tokens, and its
    /// output tokens (the request's with one choice). `None` when not streamed, and with
    /// several choices when the gap counts are not known (links carry none) or do not add up.
    fn primary_stream(&self) -> Option<PrimaryStream<'_>> {
        if !self.streamed {
            return None;
        }
        if self.choices.len() < 2 {
            return Some(PrimaryStream {
                first_ms: self.ttft_ms?,
                gaps: &self.itl_ms,
                gap_tokens: &self.gap_tokens,
                tokens: Some(self.output_tokens),
            });
        }
        let counts = self.choice_gap_counts()?;
        let at = self
            .choices
            .iter()
            .position(|c| c.first_token_ms.is_some())?;
        let from: usize = counts[..at].iter().sum();
        let to = from + counts[at];
        let primary = &self.choices[at];
        Some(PrimaryStream {
            first_ms: primary.first_token_ms?,
            gaps: &self.itl_ms[from..to],
            gap_tokens: self.gap_tokens.get(from..to).unwrap_or_default(),
            tokens: primary.output_tokens,
        })
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

    /// Time the openers cost: meaningful first token minus first answer token, both of the
    /// primary choice (with several choices, another choice's earlier answer is not where
    /// this one's openers began).
    pub fn opener_cost_ms(&self) -> Option<f64> {
        let first_answer = match self.choices.iter().find(|c| c.first_token_ms.is_some()) {
            Some(primary) => primary.first_answer_ms.or(primary.first_token_ms)?,
            None => self.first_answer_ms?,
        };
        Some(self.meaningful_ms? - first_answer)
    }

    /// Each choice's number of gaps in [`Self::itl_ms`], in order, when every one is known
    /// and they add up to its length.
    fn choice_gap_counts(&self) -> Option<Vec<usize>> {
        let counts: Vec<usize> = self
            .choices
            .iter()
            .map(|c| c.gaps.map(|g| g as usize))
            .collect::<Option<_>>()?;
        (counts.iter().sum::<usize>() == self.itl_ms.len()).then_some(counts)
    }

    /// Where each choice's gaps begin in [`Self::per_token_itl`] (offsets, ascending, the
    /// first 0), for a request that streamed several choices whose gap counts are known;
    /// `None` otherwise (one choice: its gaps are all one sequence).
    pub fn choice_gap_starts(&self) -> Option<Vec<usize>> {
        if self.choices.len() < 2 {
            return None;
        }
        let counts = self.choice_gap_counts()?;
        // The samples each gap becomes, exactly as `extend_per_token_itl` makes them.
        let mut samples = self
            .itl_ms
            .iter()
            .zip(&self.gap_tokens)
            .map(|(_, t)| match t {
                Some(n) if *n > 1 && *n <= MAX_TOKENS_PER_ARRIVAL => *n as usize,
                _ => 1,
            });
        let mut starts = Vec::with_capacity(counts.len());
        let mut at = 0usize;
        for n in counts {
            starts.push(at);
            at += samples.by_ref().take(n).sum::<usize>();
        }
        Some(starts)
    }
}

/// One choice's stream, as [`RequestMetrics::primary_stream`] finds it.
struct PrimaryStream<'a> {
    /// Its first output (ms from t0).
    first_ms: f64,
    /// Its gaps between output arrivals (ms).
    gaps: &'a [f64],
    /// The tokens the arrival ending each gap carried, where known (may be shorter than
    /// `gaps` in reports made before they were kept).
    gap_tokens: &'a [Option<u32>],
    /// Its output tokens, when known.
    tokens: Option<u64>,
}

/// The first token of each kind, over every choice (ms from t0).
#[derive(Default)]
struct FirstTokens {
    /// The first output of any kind, and its kind: the TTFT.
    any: Option<(f64, TtftKind)>,
    reasoning: Option<f64>,
    /// The first answer or refusal text.
    answer: Option<f64>,
}

impl FirstTokens {
    /// Notes one event; only output counts (a tool-call fragment with neither name nor
    /// arguments does not).
    fn see(&mut self, event: &StreamEvent, at: f64) {
        match event {
            StreamEvent::Content(_) => {
                self.any.get_or_insert((at, TtftKind::Answer));
                self.answer.get_or_insert(at);
            }
            StreamEvent::Reasoning(_) => {
                self.any.get_or_insert((at, TtftKind::Reasoning));
                self.reasoning.get_or_insert(at);
            }
            StreamEvent::Refusal(_) => {
                self.any.get_or_insert((at, TtftKind::Refusal));
                self.answer.get_or_insert(at);
            }
            StreamEvent::ToolCall { .. } if event.is_output() => {
                self.any.get_or_insert((at, TtftKind::ToolCall));
            }
            _ => {}
        }
    }
}

/// The primary choice's text as it streams in, with what the meaningful first token and the
/// JSON tracking need of it.
struct PrimaryText {
    answer: String,
    reasoning: String,
    /// Where each answer piece begins in `answer` (bytes), with its arrival.
    marks: Vec<(usize, f64)>,
    opener_scan: OpenerScan,
    json: Option<JsonTracker>,
}

impl PrimaryText {
    fn new(cfg: &MetricsConfig) -> Self {
        Self {
            answer: String::new(),
            reasoning: String::new(),
            marks: Vec::new(),
            opener_scan: OpenerScan::new(),
            json: cfg.track_json.then(|| JsonTracker::new(&cfg.required_keys)),
        }
    }

    /// Appends an event's text; a refusal takes the answer's place but is not tracked as JSON.
    fn see(&mut self, event: &StreamEvent, at: f64, openers: &Openers) {
        match event {
            StreamEvent::Content(t) => {
                self.push_answer(t, at, openers);
                if let Some(j) = self.json.as_mut() {
                    j.push(at, t);
                }
            }
            StreamEvent::Refusal(t) => self.push_answer(t, at, openers),
            StreamEvent::Reasoning(t) => self.reasoning.push_str(t),
            _ => {}
        }
    }

    fn push_answer(&mut self, piece: &str, at: f64, openers: &Openers) {
        self.marks.push((self.answer.len(), at));
        self.answer.push_str(piece);
        self.opener_scan.update(openers, &self.answer);
    }

    /// The opener text and the meaningful first token: the split decided while the answer
    /// streamed in (or now, at its end), and the arrival of the piece holding its first
    /// content byte.
    fn opener_split(&mut self, openers: &Openers) -> (String, Option<f64>) {
        let split = self.opener_scan.finish(openers, &self.answer);
        let meaningful_ms = split.content.and_then(|off| {
            self.marks
                .iter()
                .rev()
                .find(|(start, _)| *start <= off)
                .map(|m| m.1)
        });
        (self.answer[..split.opener].to_owned(), meaningful_ms)
    }
}

/// Tool calls assembled from their fragments, in the order they began.
#[derive(Default)]
struct ToolCalls {
    calls: Vec<(ToolCallTiming, JsonTracker)>,
    /// Call index → position in `calls`.
    position: HashMap<u32, usize>,
}

impl ToolCalls {
    fn fragment(&mut self, index: u32, name: &Option<String>, arguments: &str, at: f64) {
        work::add(1);
        let pos = *self.position.entry(index).or_insert_with(|| {
            self.calls.push((
                ToolCallTiming {
                    index,
                    name: None,
                    arguments: String::new(),
                    first_at_ms: at,
                    valid_at_ms: None,
                },
                JsonTracker::new(&[]),
            ));
            self.calls.len() - 1
        });
        let (call, tracker) = &mut self.calls[pos];
        if call.name.is_none() {
            call.name.clone_from(name);
        }
        call.arguments.push_str(arguments);
        tracker.push(at, arguments);
        call.valid_at_ms = tracker.progress().valid_at;
    }

    fn into_timings(self) -> Vec<ToolCallTiming> {
        self.calls.into_iter().map(|(c, _)| c).collect()
    }
}

/// The counts the server reported for the whole request, the last of each kind.
#[derive(Default)]
struct ReportedCounts {
    /// Completion tokens of the last final usage (on or after a finish).
    final_usage: Option<u64>,
    /// Completion tokens of the last continuous usage (on a chunk still streaming).
    continuous_last: Option<u64>,
    /// Usage chunks without choices: (completion tokens, the choice that had just finished).
    request_usage: Vec<(u64, Option<u32>)>,
    prompt_tokens: Option<u64>,
    reasoning_tokens: Option<u64>,
    cached_tokens: Option<u64>,
    cache_write_tokens: Option<u64>,
    timings: Option<ServerTimings>,
}

/// One pass over a timeline's events: everything [`RequestMetrics::compute`] derives its
/// figures from. Choices (n > 1, see the module doc) each keep their own state; the top-level
/// text, reasoning, tool calls and JSON follow the primary choice, the lowest index with output.
struct EventWalk<'c> {
    cfg: &'c MetricsConfig,
    primary: u32,
    first: FirstTokens,
    text: PrimaryText,
    calls: ToolCalls,
    counts: ReportedCounts,
    per: BTreeMap<u32, ChoiceAcc>,
    last_finished: Option<u32>,
    output_events: u32,
}

impl<'c> EventWalk<'c> {
    fn new(cfg: &'c MetricsConfig, primary: u32) -> Self {
        Self {
            cfg,
            primary,
            first: FirstTokens::default(),
            text: PrimaryText::new(cfg),
            calls: ToolCalls::default(),
            counts: ReportedCounts::default(),
            per: BTreeMap::new(),
            last_finished: None,
            output_events: 0,
        }
    }

    /// Takes one event, `at` ms from t0.
    fn event(&mut self, ev: &TimedEvent, at: f64) {
        let choice = ev.choice.unwrap_or(0);
        self.choice_event(ev, choice, at);
        // Other choices count for the first token; their text is kept in `per`.
        self.first.see(&ev.event, at);
        match &ev.event {
            StreamEvent::Content(_) | StreamEvent::Reasoning(_) | StreamEvent::Refusal(_)
                if choice == self.primary =>
            {
                self.text.see(&ev.event, at, &self.cfg.openers);
            }
            StreamEvent::ToolCall {
                index,
                name,
                arguments,
                ..
            } if choice == self.primary => self.calls.fragment(*index, name, arguments, at),
            StreamEvent::Usage { usage, with_output } => self.usage(ev, usage, *with_output),
            StreamEvent::Timings(t) => {
                self.counts.timings = Some(*t);
                if let Some(ch) = ev.choice.or(self.last_finished) {
                    let acc = self.per.entry(ch).or_default();
                    acc.timings = Some(*t);
                    if let Some(n) = t.predicted_n {
                        acc.timings_tokens = Some(n);
                    }
                }
            }
            _ => {}
        }
    }

    /// Keeps a choice's own text, finish, first output and arrivals.
    fn choice_event(&mut self, ev: &TimedEvent, choice: u32, at: f64) {
        let of_choice = ev.choice.is_some()
            || ev.event.is_output()
            || matches!(ev.event, StreamEvent::Finish(_));
        if !of_choice || matches!(ev.event, StreamEvent::Usage { .. }) {
            return;
        }
        let acc = self.per.entry(choice).or_default();
        acc.last_at = Some(at);
        match &ev.event {
            StreamEvent::Content(t) | StreamEvent::Refusal(t) => {
                acc.text.push_str(t);
                acc.first_answer.get_or_insert(at);
            }
            StreamEvent::Reasoning(t) => acc.reasoning.push_str(t),
            StreamEvent::Finish(r) => {
                acc.finish = Some(r.clone());
                self.last_finished = Some(choice);
            }
            _ => {}
        }
        if ev.event.is_output() {
            self.output_events += 1;
            acc.first_at.get_or_insert(at);
            if acc.arrivals.last().is_none_or(|&(_, r)| r != ev.read) {
                acc.arrivals.push((at, ev.read));
            }
        }
    }

    /// Keeps a usage's counts: the request's, and a choice's when it rode on that choice's chunk.
    fn usage(&mut self, ev: &TimedEvent, usage: &Usage, with_output: bool) {
        let counts = &mut self.counts;
        counts.prompt_tokens = usage.prompt_tokens.or(counts.prompt_tokens);
        counts.reasoning_tokens = usage.reasoning_tokens.or(counts.reasoning_tokens);
        counts.cached_tokens = usage.cached_tokens.or(counts.cached_tokens);
        counts.cache_write_tokens = usage.cache_write_tokens.or(counts.cache_write_tokens);
        let Some(c) = usage.completion_tokens else {
            return;
        };
        if with_output {
            counts.continuous_last = Some(c);
        } else {
            counts.final_usage = Some(c);
        }
        match ev.choice {
            // Usage on one choice's chunk: per-choice (vLLM continuous usage counts each
            // choice; llama.cpp completions' finish chunk).
            Some(ch) => {
                let acc = self.per.entry(ch).or_default();
                acc.series.push((ev.read, c));
                if with_output {
                    acc.continuous_tokens = Some(c);
                } else {
                    acc.final_tokens = Some(c);
                }
            }
            None if !with_output => counts.request_usage.push((c, self.last_finished)),
            None => {}
        }
    }

    /// The figures, once every event is in.
    fn into_metrics(mut self, tl: &RequestTimeline) -> RequestMetrics {
        let rel = |t: f64| t - tl.sent_at;
        let ttft_ms = self.first.any.map(|t| t.0);
        let e2e_ms = tl.ended_at.map(rel);
        let multi = self.per.len() > 1;
        if multi && self.counts.request_usage.len() > 1 {
            attribute_request_usage(&mut self.per, &self.counts.request_usage);
        }
        let (output_tokens, token_source) =
            output_token_count(&self.per, &self.counts, self.output_events);
        let gaps = Gaps::of(&self.per, self.cfg.stall_ms);
        let arrivals = Arrivals::of(
            &self.per,
            self.output_events,
            output_tokens,
            token_source,
            &gaps,
            tl.streamed,
        );
        let (tpot_ms, decode_tokens_per_s) = if !tl.streamed {
            (None, None)
        } else if !multi {
            single_choice_rates(e2e_ms, ttft_ms, output_tokens)
        } else {
            multi_choice_rates(&self.per, e2e_ms, ttft_ms, output_tokens)
        };
        let choices = if multi {
            choice_summaries(&self.per)
        } else {
            Vec::new()
        };
        let (opener_text, meaningful_ms) = self.text.opener_split(&self.cfg.openers);
        let counts = self.counts;
        // With several choices, the primary's own timings (each choice reports its own).
        let server_timings = if multi {
            self.per
                .get(&self.primary)
                .and_then(|a| a.timings)
                .or(counts.timings)
        } else {
            counts.timings
        };
        RequestMetrics {
            ttfb_ms: tl.headers_at.map(rel),
            ttft_ms,
            ttft_kind: self.first.any.map(|t| t.1),
            first_reasoning_ms: self.first.reasoning,
            first_answer_ms: self.first.answer,
            meaningful_ms,
            opener_text,
            e2e_ms,
            tpot_ms,
            itl_ms: gaps.itl_ms,
            gap_tokens: gaps.gap_tokens,
            output_tokens,
            token_source,
            prompt_tokens: counts.prompt_tokens,
            reasoning_tokens: counts.reasoning_tokens,
            cached_tokens: counts
                .cached_tokens
                .or(counts.timings.and_then(|t| t.cache_n)),
            cache_write_tokens: counts.cache_write_tokens,
            output_events: self.output_events,
            output_arrivals: arrivals.count,
            tokens_per_arrival: arrivals.tokens_per_arrival,
            coalesced: arrivals.coalesced,
            stalls: gaps.stalls,
            decode_tokens_per_s,
            server_timings,
            json: self.text.json.map(|j| j.progress().clone()),
            tool_calls: self.calls.into_timings(),
            text: self.text.answer,
            reasoning_text: self.text.reasoning,
            choices,
            streamed: tl.streamed,
        }
    }
}

/// llama.cpp: one usage chunk per choice, right after that choice's finish chunk; each is the
/// count of the choice that had just finished, unless that choice counted itself.
fn attribute_request_usage(per: &mut BTreeMap<u32, ChoiceAcc>, usage: &[(u64, Option<u32>)]) {
    for &(n, owner) in usage {
        if let Some(acc) = owner.and_then(|c| per.get_mut(&c))
            && acc.final_tokens.is_none()
        {
            acc.final_tokens = Some(n);
        }
    }
}

/// The output tokens and where the count came from, in the module doc's order of preference;
/// `output_events` is the estimate when the server counted nothing.
fn output_token_count(
    per: &BTreeMap<u32, ChoiceAcc>,
    counts: &ReportedCounts,
    output_events: u32,
) -> (u64, TokenSource) {
    let request_usage = &counts.request_usage;
    if per.len() <= 1 {
        if let Some(n) = counts.final_usage {
            (n, TokenSource::FinalUsage)
        } else if let Some(n) = counts.continuous_last {
            (n, TokenSource::ContinuousUsage)
        } else if let Some(n) = counts.timings.and_then(|t| t.predicted_n) {
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
        let counts: Vec<(u64, TokenSource)> = per.values().filter_map(ChoiceAcc::tokens).collect();
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
    }
}

/// The gaps between each choice's arrivals (choice 0's, then choice 1's, …), with the tokens
/// the closing arrival carried (from the choice's cumulative usage) and the stalls among them.
struct Gaps {
    itl_ms: Vec<f64>,
    gap_tokens: Vec<Option<u32>>,
    stalls: Vec<Stall>,
}

impl Gaps {
    fn of(per: &BTreeMap<u32, ChoiceAcc>, stall_ms: f64) -> Self {
        let mut gaps = Self {
            itl_ms: Vec::new(),
            gap_tokens: Vec::new(),
            stalls: Vec::new(),
        };
        for acc in per.values() {
            let usage = UsageAt::new(&acc.series);
            let tokens: Vec<Option<u64>> = acc.arrivals.iter().map(|a| usage.at(a.1)).collect();
            for (w, t) in acc.arrivals.windows(2).zip(tokens.windows(2)) {
                let gap = w[1].0 - w[0].0;
                gaps.itl_ms.push(gap);
                let toks = match (t[0], t[1]) {
                    // More than a chunk can carry is a server's bad count, not tokens.
                    (Some(a), Some(b)) if b >= a => u32::try_from(b - a)
                        .ok()
                        .filter(|n| *n <= MAX_TOKENS_PER_ARRIVAL),
                    _ => None,
                };
                gaps.gap_tokens.push(toks);
                if gap > stall_ms {
                    gaps.stalls.push(Stall {
                        from_ms: w[0].0,
                        gap_ms: gap,
                    });
                }
            }
        }
        gaps
    }
}

/// How the output arrived: in how many arrivals, with how many tokens each, and whether
/// arrivals carried several tokens.
struct Arrivals {
    count: u32,
    tokens_per_arrival: f64,
    coalesced: bool,
}

impl Arrivals {
    fn of(
        per: &BTreeMap<u32, ChoiceAcc>,
        output_events: u32,
        output_tokens: u64,
        token_source: TokenSource,
        gaps: &Gaps,
        streamed: bool,
    ) -> Self {
        let count = per.values().map(|a| a.arrivals.len() as u32).sum::<u32>();
        let tokens_per_arrival = if count > 0 {
            output_tokens as f64 / f64::from(count)
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
        let coalesced = streamed
            && count > 0
            && (tokens_per_arrival > 1.2
                || gaps.gap_tokens.iter().any(|t| t.is_some_and(|n| n > 1))
                || (token_source == TokenSource::Estimate && chars_per_event > 16.0));
        Self {
            count,
            tokens_per_arrival,
            coalesced,
        }
    }
}

/// TPOT and decode rate of a streamed request with several choices, as the module doc defines
/// them over the k choices with output.
fn multi_choice_rates(
    per: &BTreeMap<u32, ChoiceAcc>,
    e2e_ms: Option<f64>,
    ttft_ms: Option<f64>,
    output_tokens: u64,
) -> (Option<f64>, Option<f64>) {
    let k = per.values().filter(|a| a.first_at.is_some()).count() as u64;
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
}

fn choice_summaries(per: &BTreeMap<u32, ChoiceAcc>) -> Vec<ChoiceSummary> {
    per.iter()
        .map(|(&index, a)| ChoiceSummary {
            index,
            first_token_ms: a.first_at,
            output_tokens: a.tokens().map(|t| t.0),
            finish_reason: a.finish.clone(),
            text: a.text.clone(),
            reasoning_text: a.reasoning.clone(),
            first_answer_ms: a.first_answer,
            gaps: Some(a.arrivals.len().saturating_sub(1) as u32),
            server_timings: a.timings,
        })
        .collect()
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
