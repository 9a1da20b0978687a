//! How a stream felt, beyond its averages: **deadline fluidity** (Etalon) and the **reading
//! experience** (Andes-style QoE and reader waits).
//!
//! Both work on plain slices (arrival times in ms from t0, text per arrival) so they are
//! tested by hand; [`crate::record_experience`] is the thin adapter from a
//! report's records.
//!
//! # Deadline fluidity
//!
//! Source: Agrawal et al., *Etalon: Holistic Performance Evaluation Framework for LLM
//! Inference Systems* (arXiv 2407.07000), the fluidity-index algorithm; the code followed is
//! `etalon/metrics/metric_utils.py` of `project-etalon/etalon`
//! (`get_request_level_deadline_miss_rate`, `find_min_tbt_deadline_to_meet`,
//! `get_throughput_metrics`), with its defaults in `etalon/config/config.py` (`DeadlineConfig`).
//!
//! Tokens arrive at `t_0 ≤ t_1 ≤ …` (ms from t0; the tokens one arrival carried share its time,
//! as Etalon's client records a chunk of `k` tokens as one gap followed by `k − 1` zero gaps).
//! With `τ_0 = t_0`, `τ_i = t_i − t_{i−1}`, the first-token deadline `D_p` and the gap deadline
//! `D_d`, start with slack `s = 0`, deadlines `N = 0`, missed `M = 0`:
//! - token 0: if `τ_0 ≤ D_p`: `s ← D_p − τ_0`, `N += 1`; else `m = 1 + ⌊(τ_0 − D_p) / D_d⌋`;
//! - token `i ≥ 1`: if `τ_i ≤ D_d + s`: `s ← s + D_d − τ_i`, `N += 1` (early tokens bank slack,
//!   without limit); else `m = ⌊(τ_i − s) / D_d⌋`;
//! - a late token adds `m` to both `M` and `N` (every deadline that elapsed during the stall)
//!   and resets `s ← 0`: the next deadlines are counted from the late token's arrival.
//!
//! **Miss rate** `= M / N`, **fluidity-index** `= 1 − M / N`. An early stall therefore costs more
//! than the same stall after slack has built up. Delaying a token *and everything after it*
//! (a stall) never lowers the miss rate; delaying *one* token alone can, because the late
//! token restarts the schedule (with `D_p = 0`, `D_d = 10`: tokens at 0, 19, 30 miss 2 of 3
//! deadlines, tokens at 0, 20, 30 miss 2 of 4). That is Etalon's rule, kept as is.
//!
//! **Fluid token rate** (per run): for each request the smallest gap deadline `g*` at which its
//! miss rate stays ≤ `1 − fluid_target` with the first token left out (Etalon's
//! `get_throughput_metrics` passes `[0] + gaps` with `should_ignore_first_token=True`), found
//! by bisection; then `rate = 1000 / P(fluid_share)` of the `g*` over requests (type 7
//! percentile, as `numpy.quantile`), in tokens/s: the fastest pace that 99 % of requests keep
//! with fluidity ≥ 0.9. Requests with a single arrival have no gap to judge and are left out
//! (Etalon would give them a near-zero deadline). The run's **P99 miss rate** is Etalon's
//! `QUANTILE_FOR_DEADLINE_MISS_RATE = 0.99` over the requests' miss rates.
//!
//! # Reading experience
//!
//! Source: Liu et al., *Andes: Defining and Enhancing Quality-of-Experience in LLM-Based Text
//! Streaming Services* (arXiv 2404.16283), §3.1: the *expected* token delivery timeline is set by
//! an expected TTFT and an expected delivery speed (the user's reading or listening pace);
//! `QoE = S_actual / S_expected`, the ratio of the areas under the actual and expected
//! timelines, where text ahead of the expected timeline earns nothing (a reader cannot use
//! it). Andes' code is not published, so the exact curves and window are stated here.
//!
//! **Units.** Text is measured in reading time: a word costs `1000 / words_per_s` ms and a
//! Chinese or Japanese character (Han, hiragana, katakana) `1000 / cjk_chars_per_s` ms. A word
//! is a run of characters that are neither whitespace nor Han/kana; it counts once it holds a
//! letter or digit, at the arrival that brought that letter (so `"Hel" + "lo"` is one word at
//! the first piece, and bullets or `**` cost nothing). Hangul is written with spaces and counts
//! by words; scripts written without spaces other than Chinese and Japanese (Thai, …) are
//! undercounted.
//!
//! **Curves** (ms of reading against ms from t0), for arrivals `(a_i, c_i)` with reading cost
//! `c_i > 0`, `L = Σ c_i`:
//! - delivered `D(t) = Σ_{a_i ≤ t} c_i`;
//! - readable `R(t) = Σ_i clamp(t − b_i, 0, c_i)`, where the reader takes up arrival `i` at
//!   `b_i = max(f_{i−1}, a_i)` and finishes it at `f_i = b_i + c_i` (`f_{−1} = −∞`): reading in
//!   order at the reading speed, never faster and never ahead of delivery;
//! - expected `E(t) = clamp(t − T_e, 0, L)`: the whole text read at the reading speed from the
//!   expected first token `T_e`, finishing at `T_E = T_e + L`.
//!
//! **QoE** `= ∫_0^{T_E} min(R, E) dt / ∫_0^{T_E} E dt`, the denominator being `L² / 2`. It is 1
//! exactly when the reader is never behind the expected pace before `T_E` (first text by `T_e`,
//! and no wait that eats more than the reader's lead); a first token `Δ ≤ L` late with text
//! faster than reading gives `((L − Δ) / L)²`; a wait costs its length for the rest of the
//! window, so early waits cost more. The window is fixed at `T_E` so that delaying text never
//! raises the score: a window running to the reader's finish would (delaying the last word of
//! an answer that started late would add near-full area). Text read after `T_E` counts only
//! through what was missing before it; [`ReadingExperience::read_by_ms`] and the waits show
//! the rest.
//!
//! **Reader waits**: the reader has read everything delivered and sits with nothing new, from
//! `f_{i−1}` to the next arrival with readable text `a_i > f_{i−1}` (the wait for the first
//! text is the TTFT, not a reader wait). Waits of at least `min_wait_ms` are counted, with their
//! total and the longest; [`ReadingExperience::idle_ms`] sums every idle moment.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::metrics::{MAX_TOKENS_PER_ARRIVAL, RequestMetrics};
use crate::stats::percentile;

/// Precision of the fluid-gap search (ms).
const SEARCH_PRECISION_MS: f64 = 1e-3;

/// A setting that cannot be used, with what it must be. The computations never fail on one:
/// they use the default in its place.
#[derive(Debug, Clone, Copy, Error, PartialEq)]
pub enum ExperienceConfigError {
    /// `D_p` negative or not a number.
    #[error("the first-token deadline must be 0 ms or more (got {0})")]
    FirstTokenDeadline(f64),
    /// `D_d` zero, negative or not a number.
    #[error("the gap deadline must be more than 0 ms (got {0})")]
    GapDeadline(f64),
    /// The fluidity a request must keep is outside 0–1.
    #[error("the fluidity target must be between 0 and 1 (got {0})")]
    FluidTarget(f64),
    /// The share of requests is outside (0, 1].
    #[error("the share of requests must be above 0 and at most 1 (got {0})")]
    FluidShare(f64),
    /// A reading speed outside 0.01–1000 per second.
    #[error("reading speeds must be between 0.01 and 1000 per second (got {0})")]
    ReadingSpeed(f64),
    /// The expected first token negative or not a number.
    #[error("the expected first token must be 0 ms or more (got {0})")]
    ExpectedTtft(f64),
    /// The shortest counted wait negative or not a number.
    #[error("the shortest counted wait must be 0 ms or more (got {0})")]
    MinWait(f64),
}

fn non_negative(x: f64) -> bool {
    x.is_finite() && x >= 0.0
}

fn positive(x: f64) -> bool {
    x.is_finite() && x > 0.0
}

/// A reading speed (per second) the arithmetic stays finite with.
fn speed(x: f64) -> bool {
    (0.01..=1000.0).contains(&x)
}

/// Deadlines of the fluidity-index.
///
/// Defaults: `fluid_target` 0.9 and `fluid_share` 0.99 are Etalon's
/// (`target_deadline_miss_rate = 0.1`, P99). `gap_ms` is the reader's pace, one token at 4
/// words/s ([`READER_PACE_GAP_MS`], 187.5 ms), not Etalon's 50 ms (`tbt_deadline = 0.05` s): the
/// studio scores what a reader feels, and a reader never notices a token that arrives before
/// they could read it. `first_token_ms` is 1 s,
/// not Etalon's 100 ms: Etalon sets `D_p` to the predicted prefill time plus a scheduling slack,
/// for a client beside the server; a browser cannot predict a remote server's prefill and its
/// first token also carries the network round trip, so the default is the same one-second
/// budget as the reading experience's expected first token ([`ReadingConfig`]).
/// [`DeadlineConfig::etalon`] gives Etalon's own defaults.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeadlineConfig {
    /// `D_p`: deadline of the first token (ms from t0).
    pub first_token_ms: f64,
    /// `D_d`: deadline of each later token after the one before it (ms).
    pub gap_ms: f64,
    /// Fluidity-index a request must keep for the fluid token rate.
    pub fluid_target: f64,
    /// Share of requests (0–1] that must keep it.
    pub fluid_share: f64,
}

/// Tokens a word costs in English text (≈ 0.75 words a token, OpenAI's rule of thumb for its
/// tokenizers; Llama's and Qwen's are close for prose).
pub const TOKENS_PER_WORD: f64 = 4.0 / 3.0;

/// The default gap deadline: one token at the default reading pace (4 words/s ×
/// [`TOKENS_PER_WORD`] ≈ 5.3 tokens/s, so 187.5 ms). A stream that keeps it never leaves a
/// reader waiting; Etalon's 50 ms (20 tokens/s) is a server's smoothness target, which would
/// score the article's model-a (65 ms a token, which reads fine) as missing every deadline.
pub const READER_PACE_GAP_MS: f64 = 1000.0 / (4.0 * TOKENS_PER_WORD);

impl Default for DeadlineConfig {
    /// A 1 s first-token deadline (a browser's first token includes the network) and the
    /// reader's pace between tokens ([`READER_PACE_GAP_MS`]).
    fn default() -> Self {
        Self {
            first_token_ms: 1000.0,
            gap_ms: READER_PACE_GAP_MS,
            fluid_target: 0.9,
            fluid_share: 0.99,
        }
    }
}

impl DeadlineConfig {
    /// Etalon's defaults (`etalon/config/config.py`): 100 ms first token, 50 ms gaps.
    pub fn etalon() -> Self {
        Self {
            first_token_ms: 100.0,
            gap_ms: 50.0,
            ..Self::default()
        }
    }

    /// The studio's defaults before the gap deadline became the reader's pace (1 s first
    /// token, Etalon's 50 ms gaps): what a saved report that stored no deadlines was scored
    /// with.
    pub fn before_reader_pace() -> Self {
        Self {
            gap_ms: 50.0,
            ..Self::default()
        }
    }

    /// Says which setting cannot be used, if any.
    pub fn validate(&self) -> Result<(), ExperienceConfigError> {
        use ExperienceConfigError as E;
        if !non_negative(self.first_token_ms) {
            return Err(E::FirstTokenDeadline(self.first_token_ms));
        }
        if !positive(self.gap_ms) {
            return Err(E::GapDeadline(self.gap_ms));
        }
        if !(0.0..=1.0).contains(&self.fluid_target) {
            return Err(E::FluidTarget(self.fluid_target));
        }
        if !(self.fluid_share > 0.0 && self.fluid_share <= 1.0) {
            return Err(E::FluidShare(self.fluid_share));
        }
        Ok(())
    }

    /// These settings with the default in place of each one that cannot be used.
    fn sanitized(&self) -> Self {
        let d = Self::default();
        Self {
            first_token_ms: if non_negative(self.first_token_ms) {
                self.first_token_ms
            } else {
                d.first_token_ms
            },
            gap_ms: if positive(self.gap_ms) {
                self.gap_ms
            } else {
                d.gap_ms
            },
            fluid_target: if (0.0..=1.0).contains(&self.fluid_target) {
                self.fluid_target
            } else {
                d.fluid_target
            },
            fluid_share: if self.fluid_share > 0.0 && self.fluid_share <= 1.0 {
                self.fluid_share
            } else {
                d.fluid_share
            },
        }
    }
}

/// The reader of the reading experience.
///
/// Defaults: 4 words/s is silent reading of English non-fiction (Brysbaert 2019, *How many
/// words do we read per minute?*, J. Mem. Lang. 109: 238 words/min; fiction 260). 6 Chinese or
/// Japanese characters/s (360/min) sits between oral reading of the IReST texts
/// (Trauzettel-Klosinski & Dietz 2012: Chinese 255, Japanese 357 characters/min) and the
/// silent-reading floor of China's curriculum for grades 7–9 (500 characters/min), and is the
/// English default at about 1.5 characters per Chinese word. The expected first token is 1 s,
/// the limit for a user's flow of thought to stay uninterrupted (Nielsen, *Response Times: The
/// 3 Important Limits*). Waits under 250 ms, about one word at 4 words/s and one reading
/// fixation (≈ 225–250 ms, Rayner 1998), pass within the reading rhythm and are not counted.
/// [`ReadingConfig::speech`] is a listener instead.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReadingConfig {
    /// Words read per second (text written with spaces).
    pub words_per_s: f64,
    /// Chinese and Japanese characters read per second.
    pub cjk_chars_per_s: f64,
    /// `T_e`: when the first text is expected (ms from t0).
    pub expected_ttft_ms: f64,
    /// Shortest reader wait that counts (ms).
    pub min_wait_ms: f64,
    /// Reasoning text is read too (a UI that shows the thinking); otherwise only the answer
    /// is, and thinking time is time the reader waits for the first text.
    pub read_reasoning: bool,
}

impl Default for ReadingConfig {
    fn default() -> Self {
        Self {
            words_per_s: 4.0,
            cjk_chars_per_s: 6.0,
            expected_ttft_ms: 1000.0,
            min_wait_ms: 250.0,
            read_reasoning: false,
        }
    }
}

impl ReadingConfig {
    /// A listener to text read aloud: 2.5 words/s (150 words/min, conversational English) and
    /// 4 characters/s (240/min, Mandarin broadcast pace; 2.5 words/s at ~1.5 characters per
    /// word).
    pub fn speech() -> Self {
        Self {
            words_per_s: 2.5,
            cjk_chars_per_s: 4.0,
            ..Self::default()
        }
    }

    /// Says which setting cannot be used, if any.
    pub fn validate(&self) -> Result<(), ExperienceConfigError> {
        use ExperienceConfigError as E;
        if !speed(self.words_per_s) {
            return Err(E::ReadingSpeed(self.words_per_s));
        }
        if !speed(self.cjk_chars_per_s) {
            return Err(E::ReadingSpeed(self.cjk_chars_per_s));
        }
        if !non_negative(self.expected_ttft_ms) {
            return Err(E::ExpectedTtft(self.expected_ttft_ms));
        }
        if !non_negative(self.min_wait_ms) {
            return Err(E::MinWait(self.min_wait_ms));
        }
        Ok(())
    }

    /// These settings with the default in place of each one that cannot be used.
    fn sanitized(&self) -> Self {
        let d = Self::default();
        let pick = |ok: bool, v: f64, dv: f64| if ok { v } else { dv };
        Self {
            words_per_s: pick(speed(self.words_per_s), self.words_per_s, d.words_per_s),
            cjk_chars_per_s: pick(
                speed(self.cjk_chars_per_s),
                self.cjk_chars_per_s,
                d.cjk_chars_per_s,
            ),
            expected_ttft_ms: pick(
                non_negative(self.expected_ttft_ms),
                self.expected_ttft_ms,
                d.expected_ttft_ms,
            ),
            min_wait_ms: pick(
                non_negative(self.min_wait_ms),
                self.min_wait_ms,
                d.min_wait_ms,
            ),
            read_reasoning: self.read_reasoning,
        }
    }
}

/// Both scores' settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ExperienceConfig {
    /// Fluidity deadlines.
    pub deadlines: DeadlineConfig,
    /// The reader.
    pub reading: ReadingConfig,
}

impl ExperienceConfig {
    /// Says which setting, of the reader's or the deadlines', cannot be used, if any.
    pub fn validate(&self) -> Result<(), ExperienceConfigError> {
        self.reading.validate()?;
        self.deadlines.validate()
    }

    /// The settings a report that stored none was scored with
    /// ([`DeadlineConfig::before_reader_pace`]): opening it again gives the same figures.
    pub fn before_reader_pace() -> Self {
        Self {
            deadlines: DeadlineConfig::before_reader_pace(),
            ..Self::default()
        }
    }
}

/// A request's fluidity-index (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Fluidity {
    /// `M / N`.
    pub miss_rate: f64,
    /// `1 − M / N`.
    pub fluidity_index: f64,
    /// `N`: deadlines met plus deadlines missed.
    pub deadlines: u64,
    /// `M`: deadlines missed.
    pub missed: u64,
    /// `g*`: the smallest gap deadline (ms) this request meets with fluidity ≥ the target, the
    /// first token left out; `None` with a single arrival (no gap to judge).
    pub fluid_gap_ms: Option<f64>,
}

impl Fluidity {
    /// Scores tokens arriving at `token_times_ms` (ms from t0, one entry per token, in order;
    /// a time earlier than the one before counts as arriving with it, non-finite times are
    /// skipped). `None` without tokens.
    pub fn of(token_times_ms: &[f64], cfg: &DeadlineConfig) -> Option<Self> {
        let cfg = cfg.sanitized();
        let gaps = gaps_of(token_times_ms);
        if gaps.is_empty() {
            return None;
        }
        let (missed, deadlines) = count_deadlines(&gaps, Some(cfg.first_token_ms), cfg.gap_ms);
        let miss_rate = if deadlines == 0 {
            0.0
        } else {
            missed as f64 / deadlines as f64
        };
        Some(Self {
            miss_rate,
            fluidity_index: 1.0 - miss_rate,
            deadlines,
            missed,
            fluid_gap_ms: fluid_gap_ms(&gaps, 1.0 - cfg.fluid_target),
        })
    }
}

/// `τ_0 = t_0`, `τ_i = t_i − t_{i−1}` over the finite times made non-decreasing from 0.
fn gaps_of(times: &[f64]) -> Vec<f64> {
    let mut prev = 0.0f64;
    times
        .iter()
        .filter(|t| t.is_finite())
        .map(|&t| {
            let t = t.max(prev);
            let gap = t - prev;
            prev = t;
            gap
        })
        .collect()
}

/// Etalon's deadline count over gaps: `(missed, deadlines)`. `first_ms: None` leaves the first
/// token out (the fluid token rate).
fn count_deadlines(gaps: &[f64], first_ms: Option<f64>, gap_ms: f64) -> (u64, u64) {
    let mut slack = 0.0f64;
    let (mut missed, mut total) = (0u64, 0u64);
    for (i, &tau) in gaps.iter().enumerate() {
        let misses = if i == 0 {
            let Some(first) = first_ms else { continue };
            if tau <= first + slack {
                slack += first - tau;
                total = total.saturating_add(1);
                continue;
            }
            1.0 + ((tau - slack - first) / gap_ms).floor()
        } else {
            if tau <= gap_ms + slack {
                slack += gap_ms - tau;
                total = total.saturating_add(1);
                continue;
            }
            ((tau - slack) / gap_ms).floor()
        };
        // At least one: a late token missed its own deadline, whatever the rounding.
        let m = misses.max(1.0) as u64;
        missed = missed.saturating_add(m);
        total = total.saturating_add(m);
        slack = 0.0;
    }
    (missed, total)
}

/// `g*`: bisection for the smallest gap deadline whose miss rate (first token left out) is at
/// most `max_miss`, between 0 and the longest gap (where nothing is missed).
fn fluid_gap_ms(gaps: &[f64], max_miss: f64) -> Option<f64> {
    let longest = gaps.get(1..)?.iter().copied().fold(0.0, f64::max);
    if longest <= 0.0 {
        return None;
    }
    let miss = |d: f64| {
        let (m, n) = count_deadlines(gaps, None, d);
        if n == 0 { 0.0 } else { m as f64 / n as f64 }
    };
    let (mut lo, mut hi) = (0.0f64, longest);
    for _ in 0..200 {
        if hi - lo <= SEARCH_PRECISION_MS.max(hi * 1e-12) {
            break;
        }
        let mid = 0.5 * (lo + hi);
        // The tolerance keeps `1 − 0.9` from rejecting a miss rate of exactly 0.1.
        if miss(mid) <= max_miss + 1e-12 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// Fluid token rate (tokens/s) from the requests' `g*` ([`Fluidity::fluid_gap_ms`]):
/// `1000 / P(share × 100)` (type 7). `None` without any.
pub fn fluid_token_rate(fluid_gaps_ms: &[f64], share: f64) -> Option<f64> {
    let p = percentile(fluid_gaps_ms, share.clamp(0.0, 1.0) * 100.0)?;
    (p > 0.0).then_some(1000.0 / p)
}

/// A request's reading experience (see the module doc for every formula).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ReadingExperience {
    /// `∫min(R, E) / ∫E` over `[0, T_E]`, in [0, 1].
    pub qoe: f64,
    /// Reader waits of at least `min_wait_ms`.
    pub waits: u32,
    /// Their total (ms).
    pub wait_total_ms: f64,
    /// The longest of them (ms; 0 without any).
    pub wait_longest_ms: f64,
    /// Every moment the reader sat with nothing new after the first text, short ones included
    /// (ms).
    pub idle_ms: f64,
    /// `L`: time the whole text takes to read at the configured speed (ms).
    pub reading_ms: f64,
    /// When the reader has read everything (ms from t0).
    pub read_by_ms: f64,
    /// `T_E = T_e + L`: when it was expected to be read (ms from t0).
    pub expected_by_ms: f64,
    /// Words in the text.
    pub words: u32,
    /// Chinese and Japanese characters in the text.
    pub cjk_chars: u32,
}

/// The three curves of the reading experience as `(ms from t0, ms of reading)` points, joined
/// by straight lines (a vertical step is two points at one time).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadingCurves {
    /// `E(t)`: the whole text read at the reading speed from the expected first token.
    pub expected: Vec<(f64, f64)>,
    /// `D(t)`: text delivered.
    pub delivered: Vec<(f64, f64)>,
    /// `R(t)`: text a reader at the reading speed has read, never ahead of delivery.
    pub readable: Vec<(f64, f64)>,
    /// The counted reader waits (at least `min_wait_ms`) as `(from, until, read)`: ms from t0
    /// and the ms of reading done while the reader sits (the flat steps of `readable`).
    #[serde(default)]
    pub waits: Vec<(f64, f64, f64)>,
}

/// Arrivals with readable text and how the reader got through them.
#[derive(Debug, Clone)]
struct Reader {
    /// `(a_i, c_i)`: arrival time and reading cost (ms), `c_i > 0`.
    arrivals: Vec<(f64, f64)>,
    /// Reading periods `(start, length, read before start)`; each one's `read before` is the
    /// previous one's plus its length, so `R` is continuous to the last bit.
    busy: Vec<(f64, f64, f64)>,
    /// Idle moments between reading periods (ms).
    idle: Vec<f64>,
    /// `L` (ms).
    total: f64,
    words: u32,
    cjk: u32,
}

impl Reader {
    fn new(units: &[ReadingUnits], cfg: &ReadingConfig) -> Self {
        let (word_ms, char_ms) = (1000.0 / cfg.words_per_s, 1000.0 / cfg.cjk_chars_per_s);
        let mut prev = 0.0f64;
        let mut out = Self {
            arrivals: Vec::new(),
            busy: Vec::new(),
            idle: Vec::new(),
            total: 0.0,
            words: 0,
            cjk: 0,
        };
        for u in units {
            let at = if u.at_ms.is_finite() {
                u.at_ms.max(prev)
            } else {
                prev
            };
            prev = at;
            out.words = out.words.saturating_add(u.words);
            out.cjk = out.cjk.saturating_add(u.cjk_chars);
            let cost = f64::from(u.words) * word_ms + f64::from(u.cjk_chars) * char_ms;
            if cost <= 0.0 {
                continue;
            }
            out.arrivals.push((at, cost));
            match out.busy.last_mut() {
                Some(period) if period.0 + period.1 >= at => period.1 += cost,
                Some(&mut (start, length, before)) => {
                    out.idle.push(at - (start + length));
                    out.busy.push((at, cost, before + length));
                }
                None => out.busy.push((at, cost, 0.0)),
            }
        }
        out.total = out.busy.last().map_or(0.0, |p| p.2 + p.1);
        out
    }

    /// When the reader has read everything (ms from t0).
    fn read_by(&self) -> f64 {
        self.busy.last().map_or(0.0, |p| p.0 + p.1)
    }

    /// `R(t)`.
    fn read_at(&self, t: f64) -> f64 {
        let k = self.busy.partition_point(|p| p.0 <= t);
        match k.checked_sub(1).map(|i| self.busy[i]) {
            Some((s, length, before)) if t >= s + length => before + length,
            Some((s, _, before)) => before + (t - s).max(0.0),
            None => 0.0,
        }
    }

    /// `∫_0^{T_E} min(R, E) dt / (L² / 2)`.
    fn qoe(&self, te: f64) -> f64 {
        let l = self.total;
        let end = te + l;
        let expected = |t: f64| (t - te).clamp(0.0, l);
        let mut xs = vec![0.0, te, end];
        for &(s, length, _) in &self.busy {
            xs.push(s);
            xs.push(s + length);
        }
        xs.retain(|x| (0.0..=end).contains(x));
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        let area: f64 = xs
            .windows(2)
            .map(|w| {
                let (x0, x1) = (w[0], w[1]);
                min_area(
                    x1 - x0,
                    (self.read_at(x0), self.read_at(x1)),
                    (expected(x0), expected(x1)),
                )
            })
            .sum();
        (area / (0.5 * l * l)).clamp(0.0, 1.0)
    }
}

/// `∫ min(r, e)` over a width where both are straight lines from `(r0, e0)` to `(r1, e1)`.
fn min_area(width: f64, (r0, r1): (f64, f64), (e0, e1): (f64, f64)) -> f64 {
    let (d0, d1) = (r0 - e0, r1 - e1);
    if d0 >= 0.0 && d1 >= 0.0 {
        0.5 * width * (e0 + e1)
    } else if d0 <= 0.0 && d1 <= 0.0 {
        0.5 * width * (r0 + r1)
    } else {
        // They cross at `x`; the lower line changes there.
        let x = width * d0 / (d0 - d1);
        let at_x = r0 + (r1 - r0) * x / width;
        let (lo0, lo1) = (r0.min(e0), r1.min(e1));
        0.5 * x * (lo0 + at_x) + 0.5 * (width - x) * (at_x + lo1)
    }
}

/// Words and Chinese/Japanese characters of a stream, counted as its pieces arrive.
#[derive(Default)]
struct UnitCounter {
    /// The current run of word characters already counted as a word.
    counted: bool,
}

impl UnitCounter {
    /// `(new words, new characters)` in the next piece.
    fn push(&mut self, text: &str) -> (u32, u32) {
        let (mut words, mut chars) = (0u32, 0u32);
        for c in text.chars() {
            if c.is_whitespace() {
                self.counted = false;
            } else if is_han_or_kana(c) {
                chars = chars.saturating_add(1);
                self.counted = false;
            } else if !self.counted && c.is_alphanumeric() {
                words = words.saturating_add(1);
                self.counted = true;
            }
        }
        (words, chars)
    }
}

/// What one arrival gives a reader: new words and new Chinese/Japanese characters (a word
/// split over two pieces counts once, in the piece where it starts). Share links carry these
/// counts instead of the text for the requests whose replay they drop.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ReadingUnits {
    /// Arrival (ms from t0).
    pub at_ms: f64,
    /// Words that start in this piece.
    pub words: u32,
    /// Han and kana characters in this piece.
    pub cjk_chars: u32,
}

/// The reading units of text arriving as `(ms from t0, text)` pieces in stream order.
pub fn reading_units(arrivals: &[(f64, &str)]) -> Vec<ReadingUnits> {
    let mut counter = UnitCounter::default();
    arrivals
        .iter()
        .map(|&(at_ms, text)| {
            let (words, cjk_chars) = counter.push(text);
            ReadingUnits {
                at_ms,
                words,
                cjk_chars,
            }
        })
        .collect()
}

/// Han ideographs (with extensions and compatibility forms), hiragana, katakana: read one
/// character at a time. CJK punctuation is not among them.
fn is_han_or_kana(c: char) -> bool {
    matches!(
        c as u32,
        0x3040..=0x30FA | 0x30FC..=0x30FF // hiragana, katakana (not the middle dot ・)
            | 0x31F0..=0x31FF // katakana extensions
            | 0x3400..=0x4DBF // Han extension A
            | 0x4E00..=0x9FFF // Han
            | 0xF900..=0xFAFF // Han compatibility
            | 0xFF66..=0xFF9D // half-width katakana
            | 0x20000..=0x3134F // Han extensions B–G
    )
}

impl ReadingExperience {
    /// The reading experience of text arriving as `(ms from t0, text)` pieces in stream order
    /// (a time earlier than the one before counts as arriving with it; a non-finite time, with
    /// the piece before). `None` when the text holds nothing to read.
    pub fn of(arrivals: &[(f64, &str)], cfg: &ReadingConfig) -> Option<Self> {
        Self::of_units(&reading_units(arrivals), cfg)
    }

    /// The reading experience of arrivals already counted in [`ReadingUnits`].
    pub fn of_units(units: &[ReadingUnits], cfg: &ReadingConfig) -> Option<Self> {
        let cfg = cfg.sanitized();
        let reader = Reader::new(units, &cfg);
        if reader.total <= 0.0 {
            return None;
        }
        let counted: Vec<f64> = reader
            .idle
            .iter()
            .copied()
            .filter(|w| *w >= cfg.min_wait_ms)
            .collect();
        Some(Self {
            qoe: reader.qoe(cfg.expected_ttft_ms),
            waits: u32::try_from(counted.len()).unwrap_or(u32::MAX),
            wait_total_ms: counted.iter().sum(),
            wait_longest_ms: counted.iter().copied().fold(0.0, f64::max),
            idle_ms: reader.idle.iter().sum(),
            reading_ms: reader.total,
            read_by_ms: reader.read_by(),
            expected_by_ms: cfg.expected_ttft_ms + reader.total,
            words: reader.words,
            cjk_chars: reader.cjk,
        })
    }

    /// The expected, delivered and readable curves of the same arrivals, for a chart. `None`
    /// when the text holds nothing to read.
    pub fn curves(arrivals: &[(f64, &str)], cfg: &ReadingConfig) -> Option<ReadingCurves> {
        let cfg = cfg.sanitized();
        let reader = Reader::new(&reading_units(arrivals), &cfg);
        if reader.total <= 0.0 {
            return None;
        }
        let te = cfg.expected_ttft_ms;
        let mut delivered = vec![(0.0, 0.0)];
        let mut sum = 0.0;
        for &(at, cost) in &reader.arrivals {
            delivered.push((at, sum));
            sum += cost;
            delivered.push((at, sum));
        }
        let mut readable = vec![(0.0, 0.0)];
        for &(s, length, before) in &reader.busy {
            readable.push((s, before));
            readable.push((s + length, before + length));
        }
        let waits = reader
            .busy
            .windows(2)
            .map(|w| (w[0].0 + w[0].1, w[1].0, w[1].2))
            .filter(|(from, until, _)| until - from >= cfg.min_wait_ms)
            .collect();
        Some(ReadingCurves {
            expected: vec![(0.0, 0.0), (te, 0.0), (te + reader.total, reader.total)],
            delivered,
            readable,
            waits,
        })
    }
}

/// Where a reader at the configured speed is in a stream at any moment, for a typewriter
/// replay paced at reading speed: the same reader as [`ReadingExperience`] (reading in order,
/// never faster than the speed, never ahead of delivery), mapped back onto the text.
///
/// Within one piece the reader's progress is spread evenly over its bytes; a piece that costs
/// nothing to read (spaces, punctuation, markup) counts as read once it has arrived and the
/// text before it has been read.
#[derive(Debug, Clone)]
pub struct ReaderPace {
    reader: Reader,
    /// Per piece: arrival (ms, made monotonic as the reader sees it), bytes up to its end in
    /// the concatenated text, reading cost up to its start and its own cost (ms).
    pieces: Vec<(f64, usize, f64, f64)>,
    /// The concatenated text.
    text: String,
    /// Counted reader waits `(from, until)` (ms from t0).
    waits: Vec<(f64, f64)>,
}

impl ReaderPace {
    /// The reader's pace through text arriving as `(ms from t0, text)` pieces; `None` when it
    /// holds nothing to read.
    pub fn of(arrivals: &[(f64, &str)], cfg: &ReadingConfig) -> Option<Self> {
        let cfg = cfg.sanitized();
        let units = reading_units(arrivals);
        let reader = Reader::new(&units, &cfg);
        if reader.total <= 0.0 {
            return None;
        }
        let (word_ms, char_ms) = (1000.0 / cfg.words_per_s, 1000.0 / cfg.cjk_chars_per_s);
        let mut text = String::new();
        let mut pieces = Vec::with_capacity(arrivals.len());
        let (mut prev, mut before) = (0.0f64, 0.0f64);
        for (&(_, piece), u) in arrivals.iter().zip(&units) {
            let at = if u.at_ms.is_finite() {
                u.at_ms.max(prev)
            } else {
                prev
            };
            prev = at;
            let cost = f64::from(u.words) * word_ms + f64::from(u.cjk_chars) * char_ms;
            text.push_str(piece);
            pieces.push((at, text.len(), before, cost));
            before += cost;
        }
        let waits = reader
            .busy
            .windows(2)
            .map(|w| (w[0].0 + w[0].1, w[1].0))
            .filter(|(from, until)| until - from >= cfg.min_wait_ms)
            .collect();
        Some(Self {
            reader,
            pieces,
            text,
            waits,
        })
    }

    /// The whole text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Bytes of [`ReaderPace::text`] read by `t` (ms from t0), always at a character boundary.
    pub fn read_bytes_at(&self, t: f64) -> usize {
        // A little slack so that a piece read exactly by `t` counts whole despite rounding.
        let read = self.reader.read_at(t) + 1e-9;
        let mut start = 0usize;
        let mut done = 0usize;
        for &(at, end, before, cost) in &self.pieces {
            if at > t || before > read {
                break;
            }
            if before + cost <= read {
                done = end;
            } else {
                let part = ((read - before) / cost).clamp(0.0, 1.0);
                let cut = start + ((end - start) as f64 * part) as usize;
                done = (start..=cut)
                    .rev()
                    .find(|i| self.text.is_char_boundary(*i))
                    .unwrap_or(start);
                break;
            }
            start = end;
        }
        done
    }

    /// Bytes of [`ReaderPace::text`] delivered by `t` (ms from t0).
    pub fn delivered_bytes_at(&self, t: f64) -> usize {
        let k = self.pieces.partition_point(|p| p.0 <= t);
        k.checked_sub(1).map_or(0, |i| self.pieces[i].1)
    }

    /// The counted reader wait (at least `min_wait_ms`) that `t` falls in, as `(from, until)`.
    pub fn wait_at(&self, t: f64) -> Option<(f64, f64)> {
        self.waits
            .iter()
            .copied()
            .find(|(from, until)| *from <= t && t < *until)
    }

    /// Every counted reader wait `(from, until)`.
    pub fn waits(&self) -> &[(f64, f64)] {
        &self.waits
    }

    /// When the reader has read everything (ms from t0).
    pub fn read_by_ms(&self) -> f64 {
        self.reader.read_by()
    }
}

/// A single choice's token times from its TTFT, gaps and the tokens each gap carried (none
/// for several choices): what [`crate::record_experience::token_times`] falls back on without replay.
pub fn token_times_from_gaps(m: &RequestMetrics) -> Vec<f64> {
    let Some(first) = m.ttft_ms.filter(|_| m.choices.is_empty()) else {
        return Vec::new();
    };
    let mut at = first;
    let mut arrivals = vec![(first, 1u64)];
    for (i, gap) in m.itl_ms.iter().enumerate() {
        at += gap;
        let n = m.gap_tokens.get(i).copied().flatten().map_or(1, u64::from);
        arrivals.push((at, n.max(1)));
    }
    let cap = u64::from(MAX_TOKENS_PER_ARRIVAL);
    arrivals
        .into_iter()
        .flat_map(|(at, n)| std::iter::repeat_n(at, n.min(cap) as usize))
        .collect()
}

/// Both scores of one request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestExperience {
    /// Its fluidity, when it produced tokens.
    pub fluidity: Option<Fluidity>,
    /// Its reading experience, when its replay holds readable text.
    pub reading: Option<ReadingExperience>,
}

/// A run's experience (empty by default: no request scored).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExperienceSummary {
    /// Requests with a fluidity score.
    pub fluidity_requests: usize,
    /// P99 of their miss rates (type 7).
    pub fluidity_p99_miss_rate: Option<f64>,
    /// Mean fluidity-index.
    pub fluidity_mean: Option<f64>,
    /// Requests with a `g*` (more than one arrival).
    pub fluid_requests: usize,
    /// Fluid token rate (tokens/s; see the module doc).
    pub fluid_token_rate: Option<f64>,
    /// Requests with a reading experience.
    pub reading_requests: usize,
    /// Median QoE.
    pub qoe_p50: Option<f64>,
    /// 10th-percentile QoE: the worse tail.
    pub qoe_p10: Option<f64>,
    /// Mean QoE.
    pub qoe_mean: Option<f64>,
    /// Requests with at least one counted reader wait.
    pub with_waits: usize,
    /// Longest reader wait of the run (ms).
    pub wait_longest_ms: Option<f64>,
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

impl ExperienceSummary {
    /// Summarises per-request scores; `cfg` gives the fluid token rate's share of requests.
    pub fn of(requests: &[RequestExperience], cfg: &DeadlineConfig) -> Self {
        let cfg = cfg.sanitized();
        let fluid: Vec<&Fluidity> = requests
            .iter()
            .filter_map(|r| r.fluidity.as_ref())
            .collect();
        let miss: Vec<f64> = fluid.iter().map(|f| f.miss_rate).collect();
        let index: Vec<f64> = fluid.iter().map(|f| f.fluidity_index).collect();
        let gaps: Vec<f64> = fluid.iter().filter_map(|f| f.fluid_gap_ms).collect();
        let reading: Vec<&ReadingExperience> =
            requests.iter().filter_map(|r| r.reading.as_ref()).collect();
        let qoe: Vec<f64> = reading.iter().map(|r| r.qoe).collect();
        let with_waits: Vec<&&ReadingExperience> = reading.iter().filter(|r| r.waits > 0).collect();
        Self {
            fluidity_requests: fluid.len(),
            fluidity_p99_miss_rate: percentile(&miss, 99.0),
            fluidity_mean: mean(&index),
            fluid_requests: gaps.len(),
            fluid_token_rate: fluid_token_rate(&gaps, cfg.fluid_share),
            reading_requests: reading.len(),
            qoe_p50: percentile(&qoe, 50.0),
            qoe_p10: percentile(&qoe, 10.0),
            qoe_mean: mean(&qoe),
            with_waits: with_waits.len(),
            wait_longest_ms: with_waits
                .iter()
                .map(|r| r.wait_longest_ms)
                .reduce(f64::max),
        }
    }
}
