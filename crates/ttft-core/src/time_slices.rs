//! A run's figures per time window ("time slices", as AIPerf calls them), the steady state
//! they show, and warm-up by count or by time.
//!
//! **Windows.** The run, from its first send to its last end, is cut into windows of equal
//! length ([`window_ms_for`] picks one from the run's duration, 10–20 windows of a round
//! length, at least [`MIN_WINDOW_MS`]; the caller may give one). The last window ends with the
//! run, so it may be shorter.
//!
//! **Which window a request belongs to.** Its latency figures (TTFT, per-gap ITL, its outcome)
//! belong to the window it was *sent* in, as AIPerf's time slices do (its
//! `TimesliceMetricResultsProcessor` indexes a record by `request_start_ns`): a window's figures
//! are those of the requests that met the server in the state it was in then, and every
//! request is in exactly one window. The load figures are of time itself: a request counts as
//! *completed* in the window it ended in, its output tokens are spread evenly over its
//! streaming (first token to end) so a long stream counts in every window it streamed in, and
//! requests in flight are averaged over the window's time (and their most at once). Latency
//! figures are of the headline requests ([`Report::headline_requests`]: not warm-ups, and in a
//! probe under load only the probe's); load figures count every request the run sent, since
//! the server served warm-ups and load alike.
//!
//! **How sure.** TTFT percentiles carry the distribution-free order-statistic interval
//! ([`percentile_estimate`]), per-gap ITL the cluster bootstrap over the window's requests
//! ([`cluster_estimate`], as the run's headline does); a window with too few requests for one
//! says how many it needs.
//!
//! **Steady state** ([`steady_state`]): the rule is the settling time of control engineering,
//! the time after which a response stays within a band around its final value (commonly ±2 or
//! ±5 %), made fit for noisy windows. TTFT has settled at the first window `k` from which every
//! window's median TTFT reaches within ±[`STEADY_BAND`] of the median over windows `k…` (its
//! interval touches the band; a window too small for an interval cannot tell and passes);
//! throughput likewise, with each window's completions (their exact Poisson interval) against
//! the median count. The windows after the last send are left out of the throughput test: the
//! run drains there. The steady state starts at the later of the two, and at most half the
//! windows may go (the bound MSER-5, the warm-up rule AIPerf's steady-state analysis uses,
//! puts on its cut); a run that never settles has none and says so ([`NoSteadyState`]).
//! [`restrict_to_steady`] marks the requests sent before it as warm-up, so the headline is
//! the steady state's, and [`SteadyState::sentence`] says what went.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::report::{Report, RequestRecord};
use crate::run_intervals::cluster_estimate;
use crate::stats::{percentile_sorted, sorted};
use crate::uncertainty::bootstrap::{Clusters, REPLICATES, seed_of};
use crate::uncertainty::count::poisson_mean_interval;
use crate::uncertainty::quantile::percentile_estimate;
use crate::uncertainty::{Estimate, Interval, sane_level};

/// The shortest window [`window_ms_for`] picks (ms).
pub const MIN_WINDOW_MS: f64 = 1_000.0;

/// The most windows [`window_ms_for`] cuts a run into.
pub const MAX_AUTO_WINDOWS: f64 = 20.0;

/// The most windows of any cut: a window given too short for a long run is lengthened to this.
pub const MAX_WINDOWS: usize = 10_000;

/// The round window lengths [`window_ms_for`] chooses from (ms); beyond the last, whole minutes.
const ROUND_MS: [f64; 14] = [
    1e3, 2e3, 5e3, 10e3, 15e3, 20e3, 30e3, 60e3, 120e3, 300e3, 600e3, 900e3, 1_800e3, 3_600e3,
];

/// How far from the rest of the run a settled window's median TTFT and completions may be:
/// ±20 %.
pub const STEADY_BAND: f64 = 0.2;

/// Windows with requests sent a steady state is looked for in: with fewer, the rule cannot
/// tell a warm-up from noise.
pub const MIN_STEADY_WINDOWS: usize = 4;

/// The window length for a run of `duration_ms`: the shortest round length (1, 2, 5, 10, 15,
/// 20, 30 s, 1, 2, 5, 10, 15, 30, 60 min, then whole minutes) that cuts it into at most
/// [`MAX_AUTO_WINDOWS`] windows, at least [`MIN_WINDOW_MS`]: a 60 s run gets 12 windows of
/// 5 s, a 10 min run 20 of 30 s.
pub fn window_ms_for(duration_ms: f64) -> f64 {
    if duration_ms.is_nan() || duration_ms <= 0.0 {
        return MIN_WINDOW_MS;
    }
    let raw = duration_ms / MAX_AUTO_WINDOWS;
    ROUND_MS
        .iter()
        .copied()
        .find(|s| *s >= raw)
        .unwrap_or_else(|| (raw / 60e3).ceil() * 60e3)
}

/// One time window of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimeWindow {
    /// Its place, from 0.
    pub index: usize,
    /// Its start (ms from the run's start, as [`RequestRecord::start_ms`]).
    pub start_ms: f64,
    /// Its end (the next window's start; the last window's is the run's end).
    pub end_ms: f64,
    /// Requests sent in it (every request of the run: warm-ups and, in a probe under load, the
    /// load's too).
    pub started: usize,
    /// The headline requests sent in it: the sample of its latency figures.
    pub measured: usize,
    /// Of those, the server's failures.
    pub failed: usize,
    /// Median TTFT of its successful headline requests, with its interval.
    pub ttft_p50: Option<Estimate>,
    /// P99 TTFT, with its interval (or the requests it needs).
    pub ttft_p99: Option<Estimate>,
    /// Median per-token gap (ITL) pooled over its successful headline requests, with the
    /// cluster-bootstrap interval over requests.
    pub itl_p50: Option<Estimate>,
    /// P99 per-token gap.
    pub itl_p99: Option<Estimate>,
    /// Requests that ended in it (any outcome; every request of the run).
    pub completed: usize,
    /// Output tokens the successful requests streamed in it (each request's spread evenly
    /// from its first token to its end).
    pub output_tokens: f64,
    /// Requests in flight, averaged over its time.
    pub in_flight_mean: f64,
    /// Most requests in flight at once within it.
    pub in_flight_max: u32,
}

impl TimeWindow {
    /// Its length (ms).
    pub fn duration_ms(&self) -> f64 {
        (self.end_ms - self.start_ms).max(0.0)
    }

    fn per_s(&self, x: f64) -> Option<f64> {
        let d = self.duration_ms();
        (d > 0.0).then(|| x / d * 1e3)
    }

    /// Output tokens per second.
    pub fn output_tokens_per_s(&self) -> Option<f64> {
        self.per_s(self.output_tokens)
    }

    /// Requests completed per second.
    pub fn completed_per_s(&self) -> Option<f64> {
        self.per_s(self.completed as f64)
    }

    /// Requests sent per second.
    pub fn started_per_s(&self) -> Option<f64> {
        self.per_s(self.started as f64)
    }
}

/// A run's figures per time window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimeSlices {
    /// The windows' length (ms).
    pub window_ms: f64,
    /// Where the first window starts: the run's first send (ms from the run's start).
    pub origin_ms: f64,
    /// The intervals' confidence level.
    pub level: f64,
    /// The windows, in time order; they partition the run (empty for a run without requests).
    pub windows: Vec<TimeWindow>,
}

/// The end of a request on the run's time axis (its send when it has no duration).
fn end_of(r: &RequestRecord) -> f64 {
    r.start_ms
        + r.metrics
            .e2e_ms
            .filter(|e| e.is_finite() && *e > 0.0)
            .unwrap_or(0.0)
}

/// The cut of a run's time into windows.
#[derive(Debug, Clone, Copy)]
struct Cut {
    origin: f64,
    end: f64,
    window: f64,
    count: usize,
}

impl Cut {
    fn of(requests: &[RequestRecord], window_ms: Option<f64>) -> Option<Self> {
        let timed = requests.iter().filter(|r| r.start_ms.is_finite());
        let origin = timed
            .clone()
            .map(|r| r.start_ms)
            .fold(f64::INFINITY, f64::min);
        let end = timed.map(end_of).fold(f64::NEG_INFINITY, f64::max);
        if !origin.is_finite() || !end.is_finite() {
            return None;
        }
        let span = end - origin;
        let mut window = window_ms
            .filter(|w| w.is_finite() && *w > 0.0)
            .unwrap_or_else(|| window_ms_for(span));
        if span / window > MAX_WINDOWS as f64 {
            window = span / MAX_WINDOWS as f64;
        }
        let count = ((span / window).ceil() as usize).max(1);
        Some(Self {
            origin,
            end,
            window,
            count,
        })
    }

    /// The window `t` falls in (the last one holds the run's end).
    fn index(&self, t: f64) -> usize {
        (((t - self.origin) / self.window).floor().max(0.0) as usize).min(self.count - 1)
    }

    fn bounds(&self, i: usize) -> (f64, f64) {
        let start = self.origin + i as f64 * self.window;
        let end = if i + 1 == self.count {
            self.end
        } else {
            self.origin + (i + 1) as f64 * self.window
        };
        (start, end)
    }
}

/// The run's figures per window of `window_ms` (`None`: [`window_ms_for`] the run's duration),
/// intervals at `level`.
pub fn time_slices(report: &Report, window_ms: Option<f64>, level: f64) -> TimeSlices {
    let level = sane_level(level);
    let Some(cut) = Cut::of(&report.requests, window_ms) else {
        return TimeSlices {
            window_ms: window_ms
                .filter(|w| w.is_finite() && *w > 0.0)
                .unwrap_or(MIN_WINDOW_MS),
            origin_ms: 0.0,
            level,
            windows: Vec::new(),
        };
    };
    let mut members: Vec<Vec<&RequestRecord>> = vec![Vec::new(); cut.count];
    for r in report
        .headline_requests()
        .filter(|r| r.start_ms.is_finite())
    {
        members[cut.index(r.start_ms)].push(r);
    }
    let load = load_figures(&report.requests, &cut);
    let windows = members
        .iter()
        .zip(load)
        .enumerate()
        .map(|(i, (m, load))| {
            let (start_ms, end_ms) = cut.bounds(i);
            let [ttft_p50, ttft_p99, itl_p50, itl_p99] = latency_figures(m, i, level);
            TimeWindow {
                index: i,
                start_ms,
                end_ms,
                started: load.started,
                measured: m.len(),
                failed: m.iter().filter(|r| r.outcome.is_failure()).count(),
                ttft_p50,
                ttft_p99,
                itl_p50,
                itl_p99,
                completed: load.completed,
                output_tokens: load.tokens,
                in_flight_mean: load.in_flight_mean,
                in_flight_max: load.in_flight_max,
            }
        })
        .collect();
    TimeSlices {
        window_ms: cut.window,
        origin_ms: cut.origin,
        level,
        windows,
    }
}

/// TTFT P50 and P99 and per-gap ITL P50 and P99 of a window's headline requests.
fn latency_figures(members: &[&RequestRecord], index: usize, level: f64) -> [Option<Estimate>; 4] {
    let ok: Vec<&RequestRecord> = members
        .iter()
        .copied()
        .filter(|r| r.outcome.is_ok())
        .collect();
    let ttft: Vec<f64> = ok.iter().filter_map(|r| r.metrics.ttft_ms).collect();
    let ttft = sorted(&ttft);
    let gaps: Vec<Vec<f64>> = ok.iter().map(|r| r.metrics.per_token_itl()).collect();
    let clusters = Clusters::new(gaps.iter().map(Vec::as_slice));
    let seed = seed_of("time window") ^ (index as u64) ^ ((clusters.values() as u64) << 20);
    let itl = |p: f64| {
        cluster_estimate(&clusters, p, level, || {
            Some(Arc::new(clusters.replicates(p, REPLICATES, seed)))
        })
    };
    [
        percentile_estimate(&ttft, 0.5, level),
        percentile_estimate(&ttft, 0.99, level),
        itl(0.5),
        itl(0.99),
    ]
}

/// A window's load figures.
#[derive(Debug, Clone, Copy, Default)]
struct Load {
    started: usize,
    completed: usize,
    tokens: f64,
    in_flight_mean: f64,
    in_flight_max: u32,
}

/// Sends, ends, output tokens and requests in flight per window, over every request.
fn load_figures(requests: &[RequestRecord], cut: &Cut) -> Vec<Load> {
    let mut out = vec![Load::default(); cut.count];
    let timed = || requests.iter().filter(|r| r.start_ms.is_finite());
    for r in timed() {
        out[cut.index(r.start_ms)].started += 1;
        out[cut.index(end_of(r))].completed += 1;
    }
    for r in timed().filter(|r| r.outcome.is_ok() && r.metrics.output_tokens > 0) {
        let tokens = r.metrics.output_tokens as f64;
        let to = end_of(r);
        let from = r
            .metrics
            .ttft_ms
            .map_or(to, |t| (r.start_ms + t).clamp(r.start_ms, to));
        if to <= from {
            out[cut.index(to)].tokens += tokens;
            continue;
        }
        let (first, last) = (cut.index(from), cut.index(to));
        for (i, load) in out.iter_mut().enumerate().take(last + 1).skip(first) {
            let (a, b) = cut.bounds(i);
            let overlap = (to.min(b) - from.max(a)).max(0.0);
            load.tokens += tokens * overlap / (to - from);
        }
    }
    // In flight: each request from its send to its end, as a step function swept once.
    let mut events: Vec<(f64, i64)> = timed()
        .filter(|r| end_of(r) > r.start_ms)
        .flat_map(|r| [(r.start_ms, 1), (end_of(r), -1)])
        .collect();
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let (mut now, mut next) = (0i64, 0usize);
    for (i, load) in out.iter_mut().enumerate() {
        let (a, b) = cut.bounds(i);
        while next < events.len() && events[next].0 <= a {
            now += events[next].1;
            next += 1;
        }
        let (mut area, mut at, mut most) = (0.0, a, now);
        while next < events.len() && (events[next].0 < b || i + 1 == cut.count) {
            area += now as f64 * (events[next].0 - at);
            at = events[next].0;
            now += events[next].1;
            most = most.max(now);
            next += 1;
        }
        area += now as f64 * (b - at).max(0.0);
        load.in_flight_mean = if b > a { area / (b - a) } else { 0.0 };
        load.in_flight_max = most.max(0) as u32;
    }
    out
}

/// Why a run has no steady state.
#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize, Deserialize)]
pub enum NoSteadyState {
    /// Too few windows had requests sent in them to tell a warm-up from noise.
    #[error(
        "No steady state to look for: the run sent requests over {windows} time window(s), and telling a warm-up from noise needs {needs}; run longer or choose shorter windows"
    )]
    TooFewWindows {
        /// Windows up to the last send.
        windows: usize,
        /// [`MIN_STEADY_WINDOWS`].
        needs: usize,
    },
    /// What never settled within the last half of the run.
    #[error(
        "No steady state: {what} never stayed within ±{band_pct:.0} % of the rest of the run, even over its last half (a ramp, a drift, or a server past saturation); the headline keeps every request"
    )]
    NeverSettled {
        /// `TTFT`, `throughput` or both.
        what: String,
        /// [`STEADY_BAND`] in percent.
        band_pct: f64,
    },
}

/// Where a run's steady state is, found by [`steady_state`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteadyState {
    /// The first steady window.
    pub first_window: usize,
    /// The last: the last window a request was sent in.
    pub last_window: usize,
    /// Where it starts (ms from the run's start): requests sent before are its warm-up.
    pub start_ms: f64,
    /// Where it ends: the last steady window's end.
    pub end_ms: f64,
    /// The warm-up's length (ms from the first send).
    pub excluded_ms: f64,
    /// Headline requests sent in the warm-up.
    pub excluded_requests: usize,
    /// The window from which TTFT stays in the band.
    pub ttft_from: usize,
    /// The window from which completions per window stay in the band.
    pub throughput_from: usize,
    /// The band ([`STEADY_BAND`]).
    pub band: f64,
    /// The windows' length (ms).
    pub window_ms: f64,
}

/// Seconds for a sentence: `12.0 s`.
fn secs(ms: f64) -> String {
    format!("{:.1} s", ms / 1e3)
}

/// A window length for a sentence: `5 s`, `0.5 s`.
fn window_words(ms: f64) -> String {
    if (ms / 1e3).fract() == 0.0 {
        format!("{:.0} s", ms / 1e3)
    } else {
        secs(ms)
    }
}

impl SteadyState {
    /// What settled last, in words.
    fn settled_last(&self) -> &'static str {
        match self.ttft_from.cmp(&self.throughput_from) {
            std::cmp::Ordering::Greater => "TTFT",
            std::cmp::Ordering::Less => "throughput",
            std::cmp::Ordering::Equal => "TTFT and throughput",
        }
    }

    /// What the steady state left out, for the page: `Warm-up excluded: the first 12.0 s,
    /// 41 requests, before TTFT settled (from 12.0 s on, every 5 s window's median TTFT and
    /// completions stay within ±20 % of the rest of the run's).`
    pub fn sentence(&self) -> String {
        let band = self.band * 100.0;
        let w = window_words(self.window_ms);
        if self.first_window == 0 {
            return format!(
                "Steady from the start: every {w} window's median TTFT and completions stayed within ±{band:.0} % of the run's; no warm-up to exclude."
            );
        }
        format!(
            "Warm-up excluded: the first {}, {} request{}, before {} settled (from there on, every {w} window's median TTFT and completions stay within ±{band:.0} % of the rest of the run's).",
            secs(self.excluded_ms),
            self.excluded_requests,
            if self.excluded_requests == 1 { "" } else { "s" },
            self.settled_last(),
        )
    }

    /// The warm-up as a [`Warmup`] for [`mark_warmup`]: the requests sent before it starts.
    pub fn warmup(&self) -> Warmup {
        Warmup::Time(self.start_ms)
    }
}

/// A window's value for the settling rule: its point and, when it has one, its interval.
type Point = Option<(f64, Option<Interval>)>;

/// The first window `k ≤ max_cut` from which every window's value reaches within `band` of the
/// median of windows `k…` (a window without a value, or without an interval, passes).
fn settled_from(points: &[Point], max_cut: usize, band: f64) -> Option<usize> {
    (0..=max_cut.min(points.len())).find(|&k| {
        let rest = &points[k..];
        let values = sorted(
            &rest
                .iter()
                .filter_map(|p| p.map(|x| x.0))
                .collect::<Vec<_>>(),
        );
        let Some(m) = percentile_sorted(&values, 50.0) else {
            return true;
        };
        let (lo, hi) = (m * (1.0 - band), m * (1.0 + band));
        rest.iter().all(|p| match p {
            Some((_, Some(i))) => i.hi >= lo && i.lo <= hi,
            _ => true,
        })
    })
}

/// The steady state of a run's time slices (see the module doc for the rule).
pub fn steady_state(slices: &TimeSlices) -> Result<SteadyState, NoSteadyState> {
    let Some(last) = slices.windows.iter().rposition(|w| w.measured > 0) else {
        return Err(NoSteadyState::TooFewWindows {
            windows: 0,
            needs: MIN_STEADY_WINDOWS,
        });
    };
    let sending = &slices.windows[..=last];
    if sending.len() < MIN_STEADY_WINDOWS {
        return Err(NoSteadyState::TooFewWindows {
            windows: sending.len(),
            needs: MIN_STEADY_WINDOWS,
        });
    }
    let max_cut = sending.len() / 2;
    let ttft: Vec<Point> = sending
        .iter()
        .map(|w| w.ttft_p50.map(|e| (e.value, e.interval)))
        .collect();
    // Whole windows while the run still sent (the last sending window may drain).
    let throughput: Vec<Point> = sending[..last]
        .iter()
        .map(|w| {
            let i = poisson_mean_interval(w.completed as u64, slices.level);
            Some((w.completed as f64, Some(i)))
        })
        .collect();
    let ttft_from = settled_from(&ttft, max_cut, STEADY_BAND);
    let throughput_from = settled_from(&throughput, max_cut, STEADY_BAND);
    let (ttft_from, throughput_from) = match (ttft_from, throughput_from) {
        (Some(a), Some(b)) => (a, b),
        (a, b) => {
            let what = match (a, b) {
                (None, None) => "TTFT and throughput",
                (None, _) => "TTFT",
                _ => "throughput",
            };
            return Err(NoSteadyState::NeverSettled {
                what: what.into(),
                band_pct: STEADY_BAND * 100.0,
            });
        }
    };
    let first = ttft_from.max(throughput_from);
    let start_ms = sending[first].start_ms;
    Ok(SteadyState {
        first_window: first,
        last_window: last,
        start_ms,
        end_ms: sending[last].end_ms,
        excluded_ms: start_ms - slices.origin_ms,
        excluded_requests: sending[..first].iter().map(|w| w.measured).sum(),
        ttft_from,
        throughput_from,
        band: STEADY_BAND,
        window_ms: slices.window_ms,
    })
}

/// A copy of the run whose headline is its steady state: the requests sent before it marked
/// as warm-up (kept, out of the statistics), as [`mark_warmup`] does. A share link's carried
/// headline (the whole run's, [`crate::report::SharedFrom::headline`]) goes when a request is
/// left out, so the headline is computed from the steady requests the link kept.
pub fn restrict_to_steady(report: &Report, steady: &SteadyState) -> Report {
    let mut out = report.clone();
    if mark_warmup(&mut out.requests, steady.warmup()) > 0
        && let Some(shared) = out.shared.as_mut()
    {
        shared.headline = None;
    }
    out
}

/// Which requests are a run's warm-up.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Warmup {
    /// The first `n` requests sent.
    Count(usize),
    /// The requests sent before this time (ms from the run's start, as
    /// [`RequestRecord::start_ms`]).
    Time(f64),
}

/// Marks the warm-up requests as such ([`RequestRecord::warmup`]: kept, out of the
/// statistics); returns how many it marked that were not already. By count, the first sent
/// (ties in the order of the run); by time, those sent before it.
pub fn mark_warmup(requests: &mut [RequestRecord], warmup: Warmup) -> usize {
    let chosen: Vec<usize> = match warmup {
        Warmup::Count(n) => {
            let mut order: Vec<usize> = (0..requests.len()).collect();
            order.sort_by(|&a, &b| {
                let (ra, rb) = (&requests[a], &requests[b]);
                ra.start_ms
                    .total_cmp(&rb.start_ms)
                    .then(ra.index.cmp(&rb.index))
            });
            order.truncate(n);
            order
        }
        Warmup::Time(t) => (0..requests.len())
            .filter(|&i| requests[i].start_ms < t)
            .collect(),
    };
    let mut marked = 0;
    for i in chosen {
        if !requests[i].warmup {
            requests[i].warmup = true;
            marked += 1;
        }
    }
    marked
}
