//! A trace becomes a plan: the rows of a time window, sent at their arrival times divided by a
//! speed factor, sampled evenly when the window holds more than a tab can send, each with its
//! prompt's blocks and its output length; and notes, for the page, of what was sampled, clamped
//! or cannot be honoured.

use std::ops::Range;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::prompt::{PromptBlock, blocks, push_block};
use super::{Trace, TraceFormat};
use crate::dialect::Dialect;
use crate::format::thousands;
use crate::request::{GenerationParams, takes_sampling_fields};
use crate::scenario::Job;

/// The requests one tab replays at most, unless the caller says otherwise.
pub const DEFAULT_MAX_REQUESTS: usize = 5_000;

/// The slowest replay: a thousand times slower than recorded.
pub const MIN_SPEED: f64 = 0.001;
/// The fastest replay: a million times faster (a 121-day trace in 10 s).
pub const MAX_SPEED: f64 = 1e6;

/// Which part of a trace to replay, and how fast.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TracePlanOptions {
    /// Where the window starts, seconds after the trace's first arrival.
    pub window_start_s: f64,
    /// How long the window lasts, seconds of the trace; `None`: to the trace's end.
    pub window_s: Option<f64>,
    /// How much faster than recorded (10 = ten times faster: planned times are the trace's
    /// divided by 10, so the rate is 10 times the trace's).
    pub speed: f64,
    /// The most requests to plan (a tab's cap); a window holding more is sampled evenly.
    pub max_requests: usize,
    /// Seeds the sampling's offset and the prompt text: the same seed, the same plan and
    /// prompts. A server with a prefix cache remembers the prompts of an earlier replay with
    /// the same seed, so give each run its own seed unless the cache is meant to be warm.
    pub seed: u64,
}

impl Default for TracePlanOptions {
    fn default() -> Self {
        Self {
            window_start_s: 0.0,
            window_s: None,
            speed: 1.0,
            max_requests: DEFAULT_MAX_REQUESTS,
            seed: 0,
        }
    }
}

/// Options that cannot make a plan, with what to change.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum TracePlanError {
    /// Speed not a number from [`MIN_SPEED`] to [`MAX_SPEED`].
    #[error(
        "the speed must be a number from 0.001 to 1,000,000 (1 = as recorded, 10 = ten times faster), not {0}"
    )]
    BadSpeed(f64),
    /// A window starting before 0 or lasting 0 s or less.
    #[error(
        "the window must start at 0 s or later and last more than 0 s (leave its length empty for the rest of the trace)"
    )]
    BadWindow,
    /// A cap of 0 requests.
    #[error("the most requests to replay must be at least 1")]
    ZeroCap,
    /// No row arrives in the window.
    #[error(
        "no request arrives from {start_s} s to {} of the trace: its requests arrive from 0 to {span_s:.1} s; move the window",
        end_s.map_or("its end".to_owned(), |e| format!("{e} s"))
    )]
    EmptyWindow {
        /// The window's start, s.
        start_s: f64,
        /// The window's end, s (`None`: the trace's end).
        end_s: Option<f64>,
        /// The trace's last arrival, s.
        span_s: f64,
    },
}

/// One request of a trace plan.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceJob {
    /// When to send it, ms from the plan's start (the window's start divided by the speed).
    pub planned_ms: f64,
    /// Its row in the trace (0-based).
    pub row: usize,
    /// Prompt tokens: the trace's input length (at least 1).
    pub input_tokens: u32,
    /// `max_tokens`: the trace's output length (at least 1).
    pub output_tokens: u32,
    /// Its prompt's blocks, in order; their tokens add up to `input_tokens`.
    pub blocks: Vec<PromptBlock>,
    seed: u64,
}

impl TraceJob {
    /// The prompt text: its blocks' texts one after another, `input_tokens` words, each a
    /// space and 1 to 4 ASCII letters (one token each on the reference endpoint; see the
    /// module `prompt`'s docs). Built on demand: a plan of thousands of long prompts would
    /// hold hundreds of MB.
    pub fn prompt(&self) -> String {
        let mut out = String::with_capacity(self.input_tokens as usize * 5);
        for b in &self.blocks {
            push_block(&mut out, *b, self.seed);
        }
        out
    }

    /// The scenario job that sends it: `template`'s model, sampling and extra fields with the
    /// prompt as the one user message (any other messages, tools and response format dropped),
    /// `max_tokens` the output length, `ignore_eos` set where `dialect`'s API has it (see
    /// [`eos_note`]), and its planned time.
    pub fn to_job(&self, template: &GenerationParams, dialect: Option<Dialect>) -> Job {
        let mut params = template.clone();
        params.messages = vec![("user".to_owned(), self.prompt())];
        params.max_tokens = self.output_tokens;
        params.ignore_eos = takes_sampling_fields(dialect);
        params.response_format = None;
        params.tools = None;
        Job {
            group: "trace".to_owned(),
            level: None,
            warmup: false,
            params,
            chained: false,
            arm: 0,
            pair: None,
            planned_ms: Some(self.planned_ms),
        }
    }
}

/// What a trace replay sends.
#[derive(Debug, Clone, PartialEq)]
pub struct TracePlan {
    /// The trace's format.
    pub format: TraceFormat,
    /// The requests, in planned order (never decreasing `planned_ms`).
    pub jobs: Vec<TraceJob>,
    /// Rows of the trace in the window, before sampling.
    pub in_window: usize,
    /// ms from the plan's start to its last planned send.
    pub duration_ms: f64,
    /// Sentences for the page: what the plan replays, what was sampled or clamped, what it
    /// cannot honour. The first says what it replays.
    pub notes: Vec<String>,
}

impl TracePlan {
    /// The expected prefix-cache hit rate of the plan ([`super::prefix_reuse`] of its jobs).
    pub fn prefix_reuse(&self) -> super::PrefixReuse {
        super::prefix_reuse(&self.jobs)
    }
}

/// A sentence when `dialect`'s API cannot ignore EOS, so answers may end before the trace's
/// output lengths; `None` where `ignore_eos` is sent (the OpenAI styles and llama.cpp: vLLM,
/// SGLang, llama.cpp and TensorRT-LLM honour it; OpenAI's own API rejects fields it does not
/// know, so [`crate::request::build_request`] leaves the field out for it; say so with
/// [`crate::request::ignore_eos_note`]).
pub fn eos_note(dialect: Option<Dialect>) -> Option<String> {
    let d = dialect.filter(|d| !takes_sampling_fields(Some(*d)))?;
    Some(format!(
        "{} has no ignore_eos: answers may stop before the trace's output lengths (max_tokens only caps them), so output tokens and decode load can fall short of production's",
        d.label()
    ))
}

fn check(o: &TracePlanOptions) -> Result<(), TracePlanError> {
    if !(MIN_SPEED..=MAX_SPEED).contains(&o.speed) {
        return Err(TracePlanError::BadSpeed(o.speed));
    }
    let start_ok = o.window_start_s.is_finite() && o.window_start_s >= 0.0;
    if !start_ok || o.window_s.is_some_and(|w| !(w.is_finite() && w > 0.0)) {
        return Err(TracePlanError::BadWindow);
    }
    if o.max_requests == 0 {
        return Err(TracePlanError::ZeroCap);
    }
    Ok(())
}

/// The rows arriving in `[start_ms, end_ms)` (rows are sorted by arrival).
fn window(trace: &Trace, start_ms: f64, end_ms: Option<f64>) -> Range<usize> {
    let lo = trace.rows.partition_point(|r| r.arrival_ms < start_ms);
    let hi = end_ms.map_or(trace.rows.len(), |e| {
        trace.rows.partition_point(|r| r.arrival_ms < e)
    });
    lo..hi.max(lo)
}

/// `cap` of the rows in `range`, evenly spread: the k-th is at `(k + u) · n / cap` with one
/// offset `u` in [0, 1) drawn from `seed`, so every stretch of the window keeps its share.
fn sample(range: Range<usize>, cap: usize, seed: u64) -> Vec<usize> {
    let n = range.len();
    if n <= cap {
        return range.collect();
    }
    let u = fastrand::Rng::with_seed(seed).f64();
    let stride = n as f64 / cap as f64;
    (0..cap)
        .map(|k| range.start + (((k as f64 + u) * stride) as usize).min(n - 1))
        .collect()
}

/// Turns `trace` into the requests to send ([`TracePlan`]), or says which option is wrong.
pub fn plan(trace: &Trace, options: &TracePlanOptions) -> Result<TracePlan, TracePlanError> {
    check(options)?;
    let start_ms = options.window_start_s * 1e3;
    let end_ms = options.window_s.map(|w| start_ms + w * 1e3);
    let range = window(trace, start_ms, end_ms);
    if range.is_empty() {
        return Err(TracePlanError::EmptyWindow {
            start_s: options.window_start_s,
            end_s: end_ms.map(|e| e / 1e3),
            span_s: trace.span_ms() / 1e3,
        });
    }
    let in_window = range.len();
    let mut tally = Tally::default();
    let jobs: Vec<TraceJob> = sample(range.clone(), options.max_requests, options.seed)
        .into_iter()
        .map(|i| {
            let row = &trace.rows[i];
            tally.zero_input += usize::from(row.input_tokens == 0);
            tally.zero_output += usize::from(row.output_tokens == 0);
            let input_tokens = row.input_tokens.max(1);
            let (blocks, extra) = blocks(row, i, input_tokens);
            tally.extra_ids += usize::from(extra);
            if trace.format == TraceFormat::Mooncake {
                let own = blocks
                    .last()
                    .is_some_and(|b| matches!(b.key, super::BlockKey::Own(_)));
                tally.no_ids += usize::from(row.hash_ids.is_empty());
                tally.uncovered += usize::from(own && !row.hash_ids.is_empty());
            }
            TraceJob {
                planned_ms: (row.arrival_ms - start_ms) / options.speed,
                row: i,
                input_tokens,
                output_tokens: row.output_tokens.max(1),
                blocks,
                seed: options.seed,
            }
        })
        .collect();
    let duration_ms = jobs.last().map_or(0.0, |j| j.planned_ms);
    let mut plan = TracePlan {
        format: trace.format,
        jobs,
        in_window,
        duration_ms,
        notes: Vec::new(),
    };
    plan.notes = notes(trace, options, range, &plan, &tally);
    Ok(plan)
}

/// What the plan had to change in the rows it kept.
#[derive(Debug, Default)]
struct Tally {
    zero_input: usize,
    zero_output: usize,
    extra_ids: usize,
    no_ids: usize,
    uncovered: usize,
}

/// `n` with thousands separators: 23608 → "23,608".
fn count(n: usize) -> String {
    thousands(n as u64)
}

/// "1 request", "5,000 requests".
fn requests(n: usize) -> String {
    if n == 1 {
        "1 request".to_owned()
    } else {
        format!("{} requests", count(n))
    }
}

/// "every 2nd", "every 3rd", "every 4.7th".
fn every(stride: f64) -> String {
    let tenths = (stride * 10.0).round() / 10.0;
    if tenths.fract() != 0.0 {
        return format!("every {tenths:.1}th");
    }
    let n = tenths as u64;
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("every {n}{suffix}")
}

/// "1 request has", "3 requests have".
fn have(n: usize) -> String {
    format!("{} {}", requests(n), if n == 1 { "has" } else { "have" })
}

fn notes(
    trace: &Trace,
    o: &TracePlanOptions,
    range: Range<usize>,
    plan: &TracePlan,
    t: &Tally,
) -> Vec<String> {
    let sent = plan.jobs.len();
    let start_s = o.window_start_s;
    let end_s = o.window_s.map(|w| start_s + w);
    let span_s = trace.span_ms() / 1e3;
    let mut out = vec![format!(
        "replays {} of the {} trace, from {start_s} s to {}, at {}× speed: sends over {:.1} s",
        requests(sent),
        trace.format,
        end_s.map_or_else(|| format!("its end at {span_s:.1} s"), |e| format!("{e} s")),
        o.speed,
        plan.duration_ms / 1e3,
    )];
    if sent < range.len() {
        let stride = range.len() as f64 / sent as f64;
        let keep_to = (trace.rows[range.start + sent].arrival_ms / 1e3 - start_s) * 10.0;
        out.push(format!(
            "sampled {} of {} requests ({}), evenly through the window: the replay offers 1/{stride:.1} of the trace's rate and loses the prefix sharing with the requests left out; to replay at the trace's own rate, shorten the window to {:.1} s (it holds at most {})",
            count(sent),
            count(range.len()),
            every(stride),
            keep_to.floor() / 10.0,
            count(sent),
        ));
    }
    if let Some(e) = end_s.filter(|e| *e > span_s) {
        out.push(format!(
            "the trace ends at {span_s:.1} s, before the window's end at {e} s"
        ));
    }
    if trace.failed_rows > 0 {
        out.push(format!(
            "left out the trace's failed requests ({}: BurstGPT rows with Response tokens 0): their arrivals are not replayed",
            count(trace.failed_rows)
        ));
    }
    let changed = [
        (
            t.zero_input,
            "0 input tokens: sent with a 1-token prompt".to_owned(),
        ),
        (
            t.zero_output,
            "0 output tokens: sent with max_tokens 1".to_owned(),
        ),
        (
            t.uncovered,
            format!(
                "fewer hash ids than the input length needs (one a {}-token block): the rest of the prompt is text no other request shares",
                super::BLOCK_TOKENS
            ),
        ),
        (
            t.no_ids,
            "no hash ids: the prompt is text no other request shares".to_owned(),
        ),
        (
            t.extra_ids,
            "more hash ids than the input length fills: the extra ids are ignored".to_owned(),
        ),
    ];
    out.extend(
        changed
            .into_iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{} {what}", have(n))),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_strides_read_as_words() {
        assert_eq!(count(5000), "5,000");
        assert_eq!(count(23_608), "23,608");
        assert_eq!(count(999), "999");
        assert_eq!(count(1_000_000), "1,000,000");
        assert_eq!(every(23_608.0 / 5_000.0), "every 4.7th");
        assert_eq!(every(2.0), "every 2nd");
        assert_eq!(every(3.01), "every 3rd");
        assert_eq!(every(11.0), "every 11th");
        assert_eq!(every(21.0), "every 21st");
    }
}
