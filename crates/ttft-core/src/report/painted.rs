//! A run's paint figures (#31): the figures of each answer the page's chat surface drew
//! ([`crate::paint::figures`] against the request's recorded arrivals) and the headline over
//! them — first token arrived, first token painted, the delay between the two, arrival-to-paint
//! lag — each with its interval.

use serde::{Deserialize, Serialize};

use super::{Report, RequestRecord};
use crate::paint::{
    ContentChunk, PaintError, PaintFigures, PaintLag, PaintSource, PaintTrace, PaintedRequest,
    PaintedRun, figures, run_lag,
};
use crate::stats::sorted;
use crate::uncertainty::Estimate;
use crate::uncertainty::quantile::percentile_estimate;

/// How far apart a trace's send time and its record's may be to be the same request (ms): both
/// are the same worker stamp plus the same origin, so they agree to rounding.
const SAME_SEND_MS: f64 = 0.5;

/// The request's answer text as it arrived: each answer piece's arrival (ms since t0) and the
/// bytes of text up to its end.
pub fn content_chunks(r: &RequestRecord) -> Vec<ContentChunk> {
    let mut end = 0;
    r.replay
        .iter()
        .filter(|p| p.kind == 'a' && !p.text.is_empty())
        .map(|p| {
            end += p.text.len();
            ContentChunk {
                at_ms: p.at_ms,
                text_end: end,
            }
        })
        .collect()
}

/// Where the meaningful first token starts in the answer (bytes), when an opener was skipped.
pub fn meaningful_offset(r: &RequestRecord) -> Option<usize> {
    let opener = r.metrics.opener_text.len();
    (opener > 0).then_some(opener)
}

/// The paint figures of `trace`, drawn from request `r`'s answer.
pub fn request_figures(r: &RequestRecord, trace: &PaintTrace) -> Result<PaintFigures, PaintError> {
    figures(trace, &content_chunks(r), meaningful_offset(r))
}

/// The surface's record of a run from its `traces`, each keyed by its request's send time on
/// the wall clock ([`RequestRecord::sent_epoch_ms`]): the figures of each trace whose request
/// is in `report`, and the errors of those the core refused (a paint before its arrival).
/// Traces of requests not in the report (a warm-up's, a cancelled run's) are left out.
pub fn painted_run(
    report: &Report,
    strategy: &str,
    traces: &[(f64, PaintTrace)],
) -> (PaintedRun, Vec<PaintError>) {
    let mut requests = Vec::new();
    let mut refused = Vec::new();
    let mut taken = std::collections::HashSet::new();
    for (sent, trace) in traces {
        let Some(r) = drawn_request(report, *sent, trace, &taken) else {
            continue;
        };
        taken.insert(r.index);
        match request_figures(r, trace) {
            Ok(figures) => requests.push(PaintedRequest {
                index: r.index,
                figures,
            }),
            Err(e) => refused.push(e),
        }
    }
    requests.sort_by_key(|p| p.index);
    (
        PaintedRun {
            strategy: strategy.to_owned(),
            requests,
        },
        refused,
    )
}

/// The request `trace` drew: of those not `taken` sent within [`SAME_SEND_MS`] of `sent`
/// (streams that start together can be sent within a clock tick of each other), the one whose
/// answer is as long as the text drawn, whose arrivals the paints do not precede, and whose
/// first answer chunk arrived closest to the surface's first update (the page gets a chunk a
/// moment after the worker stamped it; another stream's first chunk comes at its own time).
fn drawn_request<'a>(
    report: &'a Report,
    sent: f64,
    trace: &PaintTrace,
    taken: &std::collections::HashSet<u32>,
) -> Option<&'a RequestRecord> {
    let drawn = trace.updates.last().map_or(0, |u| u.text_end);
    let answer = |r: &RequestRecord| content_chunks(r).last().map_or(0, |c| c.text_end);
    let distance = |r: &RequestRecord| r.sent_epoch_ms.map_or(f64::INFINITY, |s| (s - sent).abs());
    let first_release = trace.updates.first().map(|u| u.released_ms);
    let key = |r: &RequestRecord| {
        let first_gap = match (first_release, content_chunks(r).first()) {
            (Some(released), Some(c)) => (released - c.at_ms).abs(),
            _ => f64::INFINITY,
        };
        (
            answer(r) != drawn,
            request_figures(r, trace).is_err(),
            first_gap,
            distance(r),
        )
    };
    report
        .requests
        .iter()
        .filter(|r| !taken.contains(&r.index) && distance(r) <= SAME_SEND_MS)
        .map(|r| (key(r), r))
        .min_by(|(a, _), (b, _)| {
            a.0.cmp(&b.0)
                .then(a.1.cmp(&b.1))
                .then(a.2.total_cmp(&b.2))
                .then(a.3.total_cmp(&b.3))
        })
        .map(|(_, r)| r)
}

/// The headline of what the surface drew: over the measured (not warm-up) answers it drew.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaintHeadline {
    /// The strategy drawn with.
    pub strategy: String,
    /// Answers drawn.
    pub drawn: usize,
    /// Where the paint times come from: Element Timing only if every drawn answer had it.
    pub source: PaintSource,
    /// P50 of the first answer token's arrival (ms since t0) of the drawn answers.
    pub arrived: Option<Estimate>,
    /// P50 of the first painted token (ms since t0).
    pub painted: Option<Estimate>,
    /// P50 of the first painted meaningful token (ms since t0).
    pub meaningful_painted: Option<Estimate>,
    /// P50 of each answer's first paint less its first arrival (ms): what drawing added to
    /// the first token.
    pub first_paint_delay: Option<Estimate>,
    /// Arrival-to-paint lag over every chunk drawn.
    pub lag: Option<PaintLag>,
    /// Long frames while streaming, over every drawn answer.
    pub long_frames: usize,
    /// Frames dropped, of `frames`.
    pub dropped_frames: u32,
    /// Frames while streaming.
    pub frames: u32,
    /// The main thread's busy share while streaming, averaged over the drawn answers.
    pub busy_share: Option<f64>,
}

/// The P50 of `values` with its interval at `level`.
fn median(values: impl IntoIterator<Item = f64>, level: f64) -> Option<Estimate> {
    let v: Vec<f64> = values.into_iter().filter(|v| v.is_finite()).collect();
    percentile_estimate(&sorted(&v), 0.5, level)
}

/// The headline of `report`'s painted answers at `level`; `None` when the surface drew none.
pub fn paint_headline(report: &Report, level: f64) -> Option<PaintHeadline> {
    let run = report.painted.as_ref()?;
    let drawn: Vec<(&RequestRecord, &PaintFigures)> = run
        .requests
        .iter()
        .filter_map(|p| {
            let r = report
                .requests
                .iter()
                .find(|r| r.index == p.index && !r.warmup)?;
            Some((r, &p.figures))
        })
        .collect();
    if drawn.is_empty() {
        return None;
    }
    // From the replay where it is kept, else the request's first answer token (a link's
    // requests without their replay).
    let first_arrival = |r: &RequestRecord| {
        content_chunks(r)
            .first()
            .map(|c| c.at_ms)
            .or(r.metrics.first_answer_ms)
    };
    let shares: Vec<f64> = drawn.iter().filter_map(|(_, f)| f.busy_share).collect();
    Some(PaintHeadline {
        strategy: run.strategy.clone(),
        drawn: drawn.len(),
        source: if drawn
            .iter()
            .all(|(_, f)| f.source == PaintSource::ElementTiming)
        {
            PaintSource::ElementTiming
        } else {
            PaintSource::FrameEstimate
        },
        arrived: median(drawn.iter().filter_map(|(r, _)| first_arrival(r)), level),
        painted: median(drawn.iter().filter_map(|(_, f)| f.first_painted_ms), level),
        meaningful_painted: median(
            drawn
                .iter()
                .filter_map(|(_, f)| f.first_painted_meaningful_ms),
            level,
        ),
        first_paint_delay: median(
            drawn
                .iter()
                .filter_map(|(r, f)| Some(f.first_painted_ms? - first_arrival(r)?)),
            level,
        ),
        lag: run_lag(drawn.iter().map(|(_, f)| *f), level),
        long_frames: drawn.iter().map(|(_, f)| f.long_frames).sum(),
        dropped_frames: drawn.iter().map(|(_, f)| f.dropped_frames).sum(),
        frames: drawn.iter().map(|(_, f)| f.frames).sum(),
        busy_share: (!shares.is_empty()).then(|| shares.iter().sum::<f64>() / shares.len() as f64),
    })
}
