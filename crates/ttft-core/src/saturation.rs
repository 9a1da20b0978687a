//! The saturation stop's detector: whether an open-loop run is sending into a server whose
//! queue grows without bound, decided while the run goes on from the requests that finished.
//!
//! Sans-IO and incremental: the run loop feeds it each finished request
//! ([`SaturationDetector::finished`]) and, as it sends, the count of requests the plan had sent
//! so far ([`SaturationDetector::planned`]), and asks [`SaturationDetector::check`]; the answer,
//! once "saturated", stays so and carries its evidence ([`Saturation`]).
//!
//! **Windows by completion.** The detector cuts the run's time into windows of
//! [`SaturationConfig::window_ms`] and puts each request in the window it *ended* in. Only
//! a window whose requests have all come in can be judged while the run goes on, and a window
//! of sends is never complete while its slowest requests still wait (its median would be
//! biased low exactly when the queue grows); a window of ends is complete once it is over
//! (plus [`SaturationConfig::grace_ms`] for the batches the page receives). The report's time
//! slices ([`crate::time_slices`]) window by send instead, as AIPerf does, once every request
//! is in.
//!
//! **The rule.** Over the last [`SaturationConfig::windows`] complete windows, all four hold:
//! 1. *TTFT rises*: the windows' median TTFTs have an upward Mann–Kendall trend (one-sided
//!    p ≤ [`SaturationConfig::alpha`]; [`crate::uncertainty::trend`]), a rank test that
//!    assumes nothing of the distribution, so heavy-tailed TTFT noise does not trip it;
//! 2. *by a margin*: the last window's median is at least (1 + [`SaturationConfig::min_rise`])
//!    times the first judged window's or the run's lowest window median so far, whichever is
//!    lower (a queue that grows without bound leaves the run's baseline far behind, while a
//!    trend of a few percent is drift);
//! 3. *completions fall behind the sends*: by Little's law a server that keeps up completes,
//!    over the windows, what was sent one request duration earlier (the mean duration of the
//!    requests it completed in them); it completed fewer, by at least
//!    [`SaturationConfig::min_deficit`] of those sends and by [`SaturationConfig::deficit_z`]
//!    standard deviations of two Poisson counts (`(sent − completed)/√(sent + completed)`).
//!    Comparing with the sends one duration earlier is what keeps a server that is only
//!    filling up (long requests, all still in flight) from looking saturated;
//! 4. *and have stopped rising*: the completions did not rise in every judged window, as those
//!    of a server still filling up do.
//!
//! The first two say the server got slower, the last two that requests pile up; either pair
//! alone misleads (TTFT alone rises on a stable queue's excursions, 357 of the 500 simulated
//! stable runs below; completions alone fall behind the plan when the browser, not the server,
//! cannot keep up). The margins are set from the seeded simulations in
//! `tests/it/saturation.rs`: M/M/1 queues at 50–80 % utilisation with heavy-tailed TTFT noise
//! (none of 500 fired), ramps to 85 % of capacity (none of 200), an open loop filling a
//! server that serves every request at once for 4–20 s (none of 100), and overloaded queues
//! at 1.3–2× capacity (all 100 found, most at the first judgement after 5 windows, the
//! latest after 15). A closed loop cannot saturate this way (its requests in flight are
//! capped by its concurrency); the detector is for open-loop runs (a rate, a trace, a load
//! shape).

use serde::{Deserialize, Serialize};

use crate::report::RequestRecord;
pub use crate::report::saturation::{Saturation, SaturationCheck, SaturationWindow};
use crate::stats::percentile_select;
use crate::timeline::Outcome;
use crate::uncertainty::count::rate_interval;
use crate::uncertainty::quantile::percentile_estimate;
use crate::uncertainty::trend::mann_kendall;

/// The saturation stop's settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SaturationConfig {
    /// The stop is on: when off, [`SaturationDetector::check`] never says "saturated".
    pub enabled: bool,
    /// The windows' length (ms).
    pub window_ms: f64,
    /// How many of the last complete windows are judged together.
    pub windows: usize,
    /// The Mann–Kendall test's one-sided level for a rise.
    pub alpha: f64,
    /// How much the last window's median TTFT must exceed the first's, as a fraction.
    pub min_rise: f64,
    /// How far completions must fall behind the requests sent one duration earlier, as a
    /// fraction of them.
    pub min_deficit: f64,
    /// How far, in standard deviations of two Poisson counts.
    pub deficit_z: f64,
    /// How long after a window ends its requests are waited for (ms).
    pub grace_ms: f64,
}

/// The confidence level of the evidence's intervals (the windows' medians, the completion rate).
pub const EVIDENCE_LEVEL: f64 = 0.95;

/// Requests a window should see at the planned rate ([`SaturationConfig::for_rate`]).
pub const SENDS_PER_WINDOW: f64 = 25.0;

impl Default for SaturationConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            window_ms: 5_000.0,
            windows: 5,
            alpha: 0.05,
            min_rise: 0.5,
            min_deficit: 0.1,
            deficit_z: 2.0,
            grace_ms: 1_000.0,
        }
    }
}

impl SaturationConfig {
    /// The defaults, with windows long enough for [`SENDS_PER_WINDOW`] sends at
    /// `rate_per_s` (2–30 s, in whole half seconds): a slow plan needs longer windows for
    /// their medians to mean something.
    pub fn for_rate(rate_per_s: f64) -> Self {
        let window_ms = if rate_per_s.is_finite() && rate_per_s > 0.0 {
            ((SENDS_PER_WINDOW / rate_per_s * 2.0).ceil() * 500.0).clamp(2_000.0, 30_000.0)
        } else {
            Self::default().window_ms
        };
        Self {
            window_ms,
            ..Self::default()
        }
    }
}

/// A finished request as the detector sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Finished {
    /// When it was sent (ms from the run's start).
    pub start_ms: f64,
    /// When it ended.
    pub end_ms: f64,
    /// Its TTFT; for a request that timed out before its first token, its whole duration (a
    /// lower bound, which is what a median of a growing queue needs).
    pub ttft_ms: Option<f64>,
}

impl Finished {
    /// What the detector takes of a record.
    pub fn of(r: &RequestRecord) -> Self {
        let e2e = r.metrics.e2e_ms.filter(|e| e.is_finite() && *e >= 0.0);
        let ttft_ms = match (&r.outcome, r.metrics.ttft_ms) {
            (Outcome::Ok, t) => t,
            (Outcome::Timeout { .. }, None) => e2e,
            _ => None,
        };
        Self {
            start_ms: r.start_ms,
            end_ms: r.start_ms + e2e.unwrap_or(0.0),
            ttft_ms: ttft_ms.filter(|t| t.is_finite()),
        }
    }
}

/// A window's finished requests.
#[derive(Debug, Clone, Default)]
struct Window {
    ttft: Vec<f64>,
    completed: usize,
    /// The completed requests' durations, summed (ms).
    durations: f64,
}

/// The saturation stop's detector (see the module doc).
#[derive(Debug, Clone)]
pub struct SaturationDetector {
    config: SaturationConfig,
    windows: Vec<Window>,
    /// `(ms, requests the plan had sent by then)`, in time order.
    planned: Vec<(f64, f64)>,
    /// Complete windows when last judged.
    judged: usize,
    /// The lowest median TTFT of a complete window so far: the run's baseline.
    lowest: Option<f64>,
    verdict: Option<Saturation>,
}

impl SaturationDetector {
    /// A detector with these settings.
    pub fn new(config: SaturationConfig) -> Self {
        Self {
            config,
            windows: Vec::new(),
            planned: Vec::new(),
            judged: 0,
            lowest: None,
            verdict: None,
        }
    }

    /// Its settings.
    pub fn config(&self) -> &SaturationConfig {
        &self.config
    }

    /// A request finished (any outcome; warm-ups too, if the planned count has them).
    pub fn finished(&mut self, record: &RequestRecord) {
        self.observe(Finished::of(record));
    }

    /// A request finished, as plain figures.
    pub fn observe(&mut self, f: Finished) {
        if !f.end_ms.is_finite() || self.config.window_ms.is_nan() || self.config.window_ms <= 0.0 {
            return;
        }
        let i = (f.end_ms.max(0.0) / self.config.window_ms) as usize;
        if i >= self.windows.len() {
            // A bad time could ask for a huge window index; nothing in a run ends that late.
            if i > 1_000_000 {
                return;
            }
            self.windows.resize_with(i + 1, Window::default);
        }
        let w = &mut self.windows[i];
        w.completed += 1;
        w.ttft.extend(f.ttft_ms);
        let duration = f.end_ms - f.start_ms;
        if duration.is_finite() && duration > 0.0 {
            w.durations += duration;
        }
    }

    /// By `now_ms` the plan had sent `planned_so_far` requests (the run loop says so as it
    /// sends; the count never goes down).
    pub fn planned(&mut self, now_ms: f64, planned_so_far: u64) {
        if !now_ms.is_finite() {
            return;
        }
        let n = planned_so_far as f64;
        match self.planned.last() {
            Some(&(t, c)) if now_ms < t || n < c => {}
            _ => self.planned.push((now_ms, n)),
        }
    }

    /// Requests the plan had sent by `t`: linear between the counts it was told, 0 at the
    /// run's start (and before), the last count after it.
    fn planned_at(&self, t: f64) -> f64 {
        if t <= 0.0 {
            return 0.0;
        }
        let i = self.planned.partition_point(|(at, _)| *at <= t);
        let (t0, c0) = if i == 0 {
            (0.0, 0.0)
        } else {
            self.planned[i - 1]
        };
        match self.planned.get(i) {
            Some(&(t1, c1)) if t1 > t0 => c0 + (c1 - c0) * ((t - t0) / (t1 - t0)).clamp(0.0, 1.0),
            _ => c0,
        }
    }

    /// The evidence, once the run is past saturation: it judges the windows complete by
    /// `now_ms` (when it has not judged them yet) and stays saturated once it is. `None`
    /// while it is not, and always when the setting is off.
    pub fn check(&mut self, now_ms: f64) -> Option<&Saturation> {
        if !self.config.enabled {
            return None;
        }
        if self.verdict.is_none() {
            let complete = ((now_ms - self.config.grace_ms) / self.config.window_ms).floor();
            if complete.is_finite() && complete >= 0.0 {
                let complete = complete as usize;
                if complete > self.judged {
                    for i in self.judged..complete.min(self.windows.len()) {
                        let mut ttft = self.windows[i].ttft.clone();
                        if let Some(m) = percentile_select(&mut ttft, 50.0) {
                            self.lowest = Some(self.lowest.map_or(m, |l| l.min(m)));
                        }
                    }
                    self.judged = complete;
                    self.verdict = self.judge(complete, now_ms);
                }
            }
        }
        self.verdict.as_ref()
    }

    /// The verdict, when saturated, without judging anything new.
    pub fn verdict(&self) -> Option<&Saturation> {
        self.verdict.as_ref().filter(|_| self.config.enabled)
    }

    /// The rule over the `windows` windows before window `complete`.
    fn judge(&self, complete: usize, now_ms: f64) -> Option<Saturation> {
        let c = &self.config;
        let k = c.windows.max(3);
        let first = complete.checked_sub(k)?;
        let mut judged = Vec::with_capacity(k);
        let empty = Window::default();
        for i in first..complete {
            let w = self.windows.get(i).unwrap_or(&empty);
            let mut ttft = w.ttft.clone();
            ttft.sort_by(f64::total_cmp);
            let median = percentile_estimate(&ttft, 0.5, EVIDENCE_LEVEL)?;
            let (start, end) = (i as f64 * c.window_ms, (i + 1) as f64 * c.window_ms);
            judged.push(SaturationWindow {
                start_ms: start,
                end_ms: end,
                ttft_p50_ms: median.value,
                ttft_p50_interval: median.interval,
                completed: w.completed,
                planned: self.planned_at(end) - self.planned_at(start),
            });
        }
        let medians: Vec<f64> = judged.iter().map(|w| w.ttft_p50_ms).collect();
        let trend = mann_kendall(&medians)?;
        let base = self.lowest.map_or(medians[0], |l| l.min(medians[0]));
        if trend.p_rising > c.alpha || medians[k - 1] < base * (1.0 + c.min_rise) {
            return None;
        }
        // Little's law: a server that keeps up completes, over the windows, what was sent one
        // request's duration earlier (the mean duration of those it completed).
        let done = judged.iter().map(|w| w.completed).sum::<usize>() as f64;
        let durations: f64 = (first..complete)
            .filter_map(|i| self.windows.get(i))
            .map(|w| w.durations)
            .sum();
        let lag = if done > 0.0 { durations / done } else { 0.0 };
        let (a, b) = (first as f64 * c.window_ms, complete as f64 * c.window_ms);
        let sent = self.planned_at(b - lag) - self.planned_at(a - lag);
        let deficit = sent - done;
        if sent <= 0.0
            || deficit < c.min_deficit * sent
            || deficit < c.deficit_z * (sent + done).sqrt()
        {
            return None;
        }
        if judged.windows(2).all(|p| p[1].completed > p[0].completed) {
            return None;
        }
        let span_s = k as f64 * c.window_ms / 1e3;
        Some(Saturation {
            at_ms: now_ms,
            window_ms: c.window_ms,
            windows: judged,
            trend_s: trend.s,
            trend_p: trend.p_rising,
            duration_ms: lag,
            sent_per_s: sent / span_s,
            completed_per_s: done / span_s,
            completed_interval: rate_interval(done as u64, span_s, EVIDENCE_LEVEL),
        })
    }
}
