//! Per-request metrics computed from a [`RequestTimeline`].
//!
//! Definitions (all times in ms from t0, the moment just before the request was sent):
//! - **TTFB**: response headers arrived.
//! - **TTFT**: first event with non-empty output text (answer, reasoning or refusal) or, for a
//!   turn that only calls tools, the first tool-call fragment; [`TtftKind`] says which. Role-only
//!   chunks, empty deltas, progress and usage events never count.
//! - **Meaningful first token**: first answer character after boilerplate openers.
//! - **ITL**: gaps between consecutive *arrivals* of output (events of one read arrive
//!   together, so they form one arrival). A gap spanning an arrival that carried several tokens
//!   is also reported per token.
//! - **E2E**: end of the stream. **TPOT** = (E2E − TTFT) / (output tokens − 1).
//! - **Output tokens**: final usage if sent, else the last continuous usage, else server
//!   timings, else an estimate (one per output event, flagged as such).

use serde::{Deserialize, Serialize};

use crate::agent_json::{JsonProgress, JsonTracker};
use crate::dialect::{ServerTimings, StreamEvent};
use crate::openers::Openers;
use crate::timeline::RequestTimeline;

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
    /// First answer text (ms).
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
    /// Answer text.
    pub text: String,
    /// Reasoning text.
    pub reasoning_text: String,
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
        let mut arrivals: Vec<(f64, u32)> = Vec::new(); // (at, read)
        let mut output_events = 0u32;
        let mut final_usage = None;
        let mut continuous: Vec<(u32, u64)> = Vec::new(); // (read, completion_tokens)
        let mut prompt_tokens = None;
        let mut reasoning_tokens = None;
        let mut timings = None;
        let mut json = cfg.track_json.then(|| JsonTracker::new(&cfg.required_keys));
        let mut calls: Vec<(ToolCallTiming, JsonTracker)> = Vec::new();

        for ev in &tl.events {
            let at = rel(ev.at);
            if ev.event.is_output() {
                output_events += 1;
                if arrivals.last().is_none_or(|&(_, r)| r != ev.read) {
                    arrivals.push((at, ev.read));
                }
            }
            match &ev.event {
                StreamEvent::Content(t) => {
                    ttft.get_or_insert((at, TtftKind::Answer));
                    first_answer.get_or_insert(at);
                    answer_marks.push((text.len(), at));
                    text.push_str(t);
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
                    text.push_str(t);
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
                    let pos = match calls.iter().position(|(c, _)| c.index == *index) {
                        Some(p) => p,
                        None => {
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
                    if let Some(c) = usage.completion_tokens {
                        if *with_output {
                            continuous.push((ev.read, c));
                        } else {
                            final_usage = Some(c);
                        }
                    }
                }
                StreamEvent::Timings(t) => timings = Some(*t),
                _ => {}
            }
        }

        let ttft_ms = ttft.map(|t| t.0);
        let e2e_ms = tl.ended_at.map(rel);
        let (output_tokens, token_source) = if let Some(n) = final_usage {
            (n, TokenSource::FinalUsage)
        } else if let Some(&(_, n)) = continuous.last() {
            (n, TokenSource::ContinuousUsage)
        } else if let Some(n) = timings.and_then(|t| t.predicted_n) {
            (n, TokenSource::ServerTimings)
        } else {
            (u64::from(output_events), TokenSource::Estimate)
        };

        // Tokens per arrival from continuous usage: difference of the cumulative count.
        let tokens_at_read = |read: u32| {
            continuous
                .iter()
                .rev()
                .find(|(r, _)| *r <= read)
                .map(|&(_, n)| n)
        };
        let mut itl_ms = Vec::new();
        let mut gap_tokens = Vec::new();
        let mut stalls = Vec::new();
        for w in arrivals.windows(2) {
            let gap = w[1].0 - w[0].0;
            itl_ms.push(gap);
            let toks = match (tokens_at_read(w[0].1), tokens_at_read(w[1].1)) {
                (Some(a), Some(b)) if b >= a => Some((b - a) as u32),
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
        let output_arrivals = arrivals.len() as u32;
        let tokens_per_arrival = if output_arrivals > 0 {
            output_tokens as f64 / f64::from(output_arrivals)
        } else {
            0.0
        };
        // Without server counts, text length is the only witness: English runs ≈ 4 characters
        // per token, so arrivals averaging over 16 characters carry several tokens.
        let chars_per_event = (text.chars().count() + reasoning_text.chars().count()) as f64
            / f64::from(output_events.max(1));
        let coalesced = output_arrivals > 0
            && (tokens_per_arrival > 1.2
                || gap_tokens.iter().any(|t| t.is_some_and(|n| n > 1))
                || (token_source == TokenSource::Estimate && chars_per_event > 16.0));
        let tpot_ms = match (e2e_ms, ttft_ms) {
            (Some(e), Some(f)) if output_tokens > 1 => Some((e - f) / (output_tokens - 1) as f64),
            _ => None,
        };
        let decode_tokens_per_s = tpot_ms.filter(|t| *t > 0.0).map(|t| 1000.0 / t);

        let skip = cfg.openers.skip_len(&text);
        let meaningful_ms = text[skip..]
            .char_indices()
            .find(|(_, c)| !c.is_whitespace())
            .map(|(i, _)| skip + i)
            .and_then(|off| {
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
        }
    }

    /// Per-token ITL samples: each gap divided by the tokens its arrival carried, where known.
    pub fn per_token_itl(&self) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.itl_ms.len());
        for (gap, toks) in self.itl_ms.iter().zip(&self.gap_tokens) {
            match toks {
                Some(n) if *n > 1 => {
                    out.extend(std::iter::repeat_n(gap / f64::from(*n), *n as usize))
                }
                _ => out.push(*gap),
            }
        }
        out
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
