//! What was painted, when (#31): a request's paint figures from what the page's chat surface
//! recorded while it drew the answer ([`PaintTrace`]) and when each chunk of text reached the
//! page ([`ContentChunk`], the network stamps, from the stamping worker).
//!
//! The surface records each update it made: how much of the answer it showed (bytes of
//! text), when it was handed the text, when the update was painted and what rendering it cost
//! on the main thread. Where the browser has Element Timing, `painted_ms` is the element's
//! `renderTime`; elsewhere it is the next animation frame after the update (an estimate,
//! labelled [`PaintSource::FrameEstimate`]). From that:
//! - **time to first painted token**: the first update that showed text;
//! - **time to first painted meaningful token**: the first update that showed the text up to
//!   the meaningful first token (openers such as "Sure, here's…" skipped);
//! - **arrival-to-paint lag** of each chunk: when the first update showing all of it was
//!   painted, minus when it arrived; per run, P50 and P99 with their intervals;
//! - long frames (over 50 ms while streaming), dropped frames and the main thread's busy
//!   share, as recorded.
//!
//! A paint stamped before its text arrived means the two clocks were not the same (both are
//! `performance.now()` of the page's time origin, the worker's stamps translated to it): it is
//! refused with [`PaintError::BeforeArrival`] rather than shown as a negative lag.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::stats::sorted;
use crate::uncertainty::Estimate;
use crate::uncertainty::quantile::percentile_estimate;

/// A frame longer than this (ms) while streaming is a long frame (the Long Animation Frames
/// API's threshold).
pub const LONG_FRAME_MS: f64 = 50.0;

/// Where the paint times come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PaintSource {
    /// Element Timing's `renderTime` (Chromium): when the pixels were presented.
    ElementTiming,
    /// The next animation frame after the update: an estimate, a frame or so early or late.
    FrameEstimate,
}

impl PaintSource {
    /// Its label on the page.
    pub fn label(self) -> &'static str {
        match self {
            PaintSource::ElementTiming => "Element Timing",
            PaintSource::FrameEstimate => "frame estimate",
        }
    }
}

/// One update of the surface.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PaintedUpdate {
    /// Bytes of the answer's text shown after it.
    pub text_end: usize,
    /// When the surface was handed the text (ms since the request's t0).
    pub released_ms: f64,
    /// When it was painted (ms since t0).
    pub painted_ms: f64,
    /// Main-thread time the update's rendering took (ms).
    pub render_ms: f64,
}

/// A frame longer than [`LONG_FRAME_MS`] while the answer streamed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LongFrame {
    /// When it started (ms since t0).
    pub start_ms: f64,
    /// How long it lasted (ms).
    pub duration_ms: f64,
    /// What it was spent on, where the browser says (the Long Animation Frames API's longest
    /// script, e.g. `markdown render`), else `None`.
    pub spent_on: Option<String>,
}

/// What the surface recorded while drawing one answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaintTrace {
    /// The strategy it drew with (`ttft_render::Strategy::id`).
    pub strategy: String,
    /// Where `painted_ms` comes from.
    pub source: PaintSource,
    /// Its updates, in order.
    pub updates: Vec<PaintedUpdate>,
    /// Long frames while streaming.
    pub long_frames: Vec<LongFrame>,
    /// Frames while streaming.
    pub frames: u32,
    /// Frames dropped: refresh intervals with no frame.
    pub dropped_frames: u32,
    /// Main-thread busy time while streaming (ms).
    pub busy_ms: f64,
    /// How long it streamed (ms).
    pub span_ms: f64,
}

/// A chunk of the answer's text as it reached the page.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContentChunk {
    /// When it arrived (ms since t0).
    pub at_ms: f64,
    /// Bytes of the answer's text up to the end of this chunk.
    pub text_end: usize,
}

/// A paint trace that cannot go with its request's arrivals.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum PaintError {
    /// An update painted before text it shows had arrived: the clocks differ.
    #[error(
        "text painted at {painted_ms:.1} ms had arrived only at {arrived_ms:.1} ms: the paint and network stamps are not on one clock; record both with the page's performance.now()"
    )]
    BeforeArrival {
        /// When it was painted.
        painted_ms: f64,
        /// When the text arrived.
        arrived_ms: f64,
    },
}

/// A request's paint figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaintFigures {
    /// Where the paint times come from.
    pub source: PaintSource,
    /// Time to first painted token (ms since t0).
    pub first_painted_ms: Option<f64>,
    /// Time to first painted meaningful token (ms since t0).
    pub first_painted_meaningful_ms: Option<f64>,
    /// Each chunk's arrival-to-paint lag (ms), in order; chunks never shown are left out.
    pub lags_ms: Vec<f64>,
    /// Long frames while streaming.
    pub long_frames: usize,
    /// Frames dropped, of all frames.
    pub dropped_frames: u32,
    /// Frames while streaming.
    pub frames: u32,
    /// The main thread's busy share while streaming (0–1); `None` without a span.
    pub busy_share: Option<f64>,
}

/// The figures of `trace` given its request's `chunks` (in order) and where the meaningful
/// first token starts in the text (`meaningful_at`, a byte offset; `None` = no opener was
/// skipped, so the first painted token is also the meaningful one).
pub fn figures(
    trace: &PaintTrace,
    chunks: &[ContentChunk],
    meaningful_at: Option<usize>,
) -> Result<PaintFigures, PaintError> {
    let shown = |text_end: usize| trace.updates.iter().find(|u| u.text_end >= text_end);
    let mut lags_ms = Vec::with_capacity(chunks.len());
    for c in chunks.iter().filter(|c| c.text_end > 0) {
        if let Some(u) = shown(c.text_end) {
            if u.painted_ms < c.at_ms {
                return Err(PaintError::BeforeArrival {
                    painted_ms: u.painted_ms,
                    arrived_ms: c.at_ms,
                });
            }
            lags_ms.push(u.painted_ms - c.at_ms);
        }
    }
    let first_painted_ms = shown(1).map(|u| u.painted_ms);
    let first_painted_meaningful_ms = match meaningful_at {
        None => first_painted_ms,
        Some(at) => shown(at + 1).map(|u| u.painted_ms),
    };
    Ok(PaintFigures {
        source: trace.source,
        first_painted_ms,
        first_painted_meaningful_ms,
        lags_ms,
        long_frames: trace
            .long_frames
            .iter()
            .filter(|f| f.duration_ms > LONG_FRAME_MS)
            .count(),
        dropped_frames: trace.dropped_frames,
        frames: trace.frames,
        busy_share: (trace.span_ms > 0.0).then(|| (trace.busy_ms / trace.span_ms).clamp(0.0, 1.0)),
    })
}

/// A run's arrival-to-paint lag: P50 and P99 over every chunk of every request, with their
/// order-statistic intervals at `level` (or the chunks an interval needs). Chunks of one
/// request are not independent, so the intervals are a lower bound on the uncertainty when
/// requests differ; `None` without a lag.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaintLag {
    /// Chunks measured.
    pub chunks: usize,
    /// Median lag (ms).
    pub p50_ms: Estimate,
    /// P99 lag (ms).
    pub p99_ms: Estimate,
}

/// [`PaintLag`] of `requests`' figures at `level`.
pub fn run_lag<'a>(
    requests: impl IntoIterator<Item = &'a PaintFigures>,
    level: f64,
) -> Option<PaintLag> {
    let lags: Vec<f64> = requests
        .into_iter()
        .flat_map(|f| f.lags_ms.iter().copied())
        .filter(|l| l.is_finite())
        .collect();
    let s = sorted(&lags);
    Some(PaintLag {
        chunks: s.len(),
        p50_ms: percentile_estimate(&s, 0.5, level)?,
        p99_ms: percentile_estimate(&s, 0.99, level)?,
    })
}

/// Render cost against answer length, for the chart where re-rendering everything shows its
/// growth: `(bytes shown, render ms)` of each update.
pub fn render_cost_by_length(trace: &PaintTrace) -> Vec<(usize, f64)> {
    trace
        .updates
        .iter()
        .map(|u| (u.text_end, u.render_ms))
        .collect()
}

/// The median render cost (ms) of the first fifth of a trace's updates and of its last fifth
/// (`None` with fewer than 10 updates): what rendering cost at the start of the answer and at
/// its end.
pub fn render_cost_ends(trace: &PaintTrace) -> Option<(f64, f64)> {
    let n = trace.updates.len();
    if n < 10 {
        return None;
    }
    let fifth = n / 5;
    let median = |us: &[PaintedUpdate]| {
        let s = sorted(&us.iter().map(|u| u.render_ms).collect::<Vec<_>>());
        s[s.len() / 2]
    };
    Some((
        median(&trace.updates[..fifth]),
        median(&trace.updates[n - fifth..]),
    ))
}

/// Whether a trace's render cost grows with the answer: the median cost of the last fifth of
/// its updates over that of the first fifth ([`render_cost_ends`]; `None` with fewer than 10
/// updates or a first fifth that cost nothing measurable).
pub fn render_cost_growth(trace: &PaintTrace) -> Option<f64> {
    let (first, last) = render_cost_ends(trace)?;
    (first > 0.0).then(|| last / first)
}

/// What the page's chat surface drew during a run: the strategy it drew the answers with
/// (`ttft_render::Strategy::id`) and the figures of each answer it drew (one at a time, so
/// with several streams only some requests have figures).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaintedRun {
    /// The strategy.
    pub strategy: String,
    /// Each drawn request's figures, by its index in the run.
    pub requests: Vec<PaintedRequest>,
}

/// One drawn request's paint figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaintedRequest {
    /// The request's index in the run (`RequestRecord::index`).
    pub index: u32,
    /// Its figures.
    pub figures: PaintFigures,
}

impl PaintedRun {
    /// This record cut to travel in a link: only the requests `kept` says the link keeps, and
    /// at most `max_lags` per-chunk lags in all (each request's lags thinned evenly, its first
    /// and last kept, when there are more). Returns the record and, when lags were thinned, how
    /// many of how many travel.
    pub fn for_link(
        &self,
        kept: impl Fn(u32) -> bool,
        max_lags: usize,
    ) -> (PaintedRun, Option<(usize, usize)>) {
        let mut requests: Vec<PaintedRequest> = self
            .requests
            .iter()
            .filter(|p| kept(p.index))
            .cloned()
            .collect();
        let total: usize = requests.iter().map(|p| p.figures.lags_ms.len()).sum();
        let mut thinned = None;
        if total > max_lags {
            let per_request = (max_lags / requests.len().max(1)).max(2);
            for p in &mut requests {
                p.figures.lags_ms = thin(&p.figures.lags_ms, per_request);
            }
            let travel = requests.iter().map(|p| p.figures.lags_ms.len()).sum();
            thinned = Some((travel, total));
        }
        (
            PaintedRun {
                strategy: self.strategy.clone(),
                requests,
            },
            thinned,
        )
    }
}

/// At most `n` (≥ 2) of `values`, evenly spaced, the first and the last among them.
fn thin(values: &[f64], n: usize) -> Vec<f64> {
    if values.len() <= n {
        return values.to_vec();
    }
    let last = values.len() - 1;
    (0..n)
        .map(|k| values[(k * last).div_ceil(n - 1).min(last)])
        .collect()
}
